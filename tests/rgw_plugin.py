"""pytest plugin: a throw-away Ceph RADOS Gateway, started once per session.

Fixtures: ``rgw_server`` (session; endpoint and keys), ``rgw_client`` (a boto3 client made by
``make_s3_client``), ``rgw_bucket`` (a fresh bucket per test, emptied and removed afterwards),
``rgw_tls`` (the server's HTTPS endpoint, its certificate as PEM and as a JKS trust store;
skips when the server has none).
Helpers: :func:`empty_and_delete_bucket`, :func:`add_s3_key` (a second key pair for clients
whose credentials are fixed elsewhere, e.g. Spark workers).

The server comes from ``scripts/rgw-start.sh`` (which apt-installs radosgw when missing) with
its state in a fresh temp dir, and is stopped by PID at the end of the session.  When it cannot
start (not Debian, not root, no network to the package mirror…) every test using it is
*skipped* with the reason.  Environment:

* ``S3_ENDPOINT`` (+ ``AWS_ACCESS_KEY_ID``/``AWS_SECRET_ACCESS_KEY``) and ``ZR_RGW_EXTERNAL=1``:
  use an already running RGW (CI that started one itself) instead of starting one; its TLS
  side from ``S3_ENDPOINT_TLS``, ``S3_TLS_CA_BUNDLE``, ``S3_TLS_TRUSTSTORE`` and
  ``S3_TLS_TRUSTSTORE_PASSWORD`` (what ``rgw-start.sh`` exports), when set.

Why TLS: Hadoop's S3A (AWS SDK v2) cannot write an empty object to Ceph RGW 16.2 over plain
http — the SDK signs the empty body as one ``aws-chunked`` chunk, and RGW answers ``400
XAmzContentSHA256Mismatch`` — while over HTTPS it can.  The plain endpoint stays for every
other test.
* ``ZR_RGW=0``: skip RGW tests without trying.
* ``ZR_RGW_REQUIRED=1``: fail instead of skip when the server cannot start (for a CI job whose
  purpose is the RGW tier, so a broken start is not silently green).
"""

from __future__ import annotations

import atexit
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import types
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[1]
START = REPO / "scripts" / "rgw-start.sh"
STOP = REPO / "scripts" / "rgw-stop.sh"
START_TIMEOUT = 300.0  # apt-get update + install (~20 s measured) + start (~2-3 s)


@dataclass(frozen=True)
class RGWServer:
    """A running RGW: where it is, how to sign in, and how long it took to get it."""

    endpoint: str
    access_key: str
    secret_key: str
    region: str
    base: str | None  # state dir when we started it; None for an external server
    start_seconds: float
    log: str = ""
    tls: RGWTLS | None = None  # the HTTPS side, when the server has one


@dataclass(frozen=True)
class RGWTLS:
    """The server's HTTPS endpoint and the self-signed certificate that proves it.

    ``ca_bundle`` is the certificate as PEM (boto3: ``AWS_CA_BUNDLE`` or ``verify=``);
    ``truststore`` the same in a JKS file for a JVM (``-Djavax.net.ssl.trustStore=``), or
    None when there was no ``keytool`` to make one."""

    endpoint: str
    ca_bundle: str
    truststore: str | None
    truststore_password: str = "changeit"


def _tls_from(env: dict[str, str]) -> RGWTLS | None:
    """The TLS side named by ``rgw-start.sh``'s exports (or the environment), if any."""
    endpoint, ca_bundle = env.get("S3_ENDPOINT_TLS"), env.get("S3_TLS_CA_BUNDLE")
    if not endpoint or not ca_bundle:
        return None
    return RGWTLS(endpoint=endpoint, ca_bundle=ca_bundle,
                  truststore=env.get("S3_TLS_TRUSTSTORE") or None,
                  truststore_password=env.get("S3_TLS_TRUSTSTORE_PASSWORD", "changeit"))


# One server per process even if this file is imported twice under two names (registered as
# ``tests.rgw_plugin`` by conftest, imported as ``rgw_plugin`` by test modules): the state lives
# in a process-wide holder module, not in this module's globals.
_HOLDER_NAME = "_zerorename_rgw_plugin_state"
_holder = sys.modules.setdefault(_HOLDER_NAME, types.ModuleType(_HOLDER_NAME))
if not hasattr(_holder, "state"):
    _holder.state = {}
    _holder.lock = threading.Lock()
_state: dict[str, Any] = _holder.state
_lock: threading.Lock = _holder.lock


def _parse_env(text: str) -> dict[str, str]:
    env: dict[str, str] = {}
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("export ") and "=" in line:
            name, _, value = line[len("export "):].partition("=")
            env[name] = value
    return env


def _start() -> RGWServer | str:
    """Start (or find) RGW; a string is the reason it cannot run here."""
    if os.environ.get("ZR_RGW") == "0":
        return "ZR_RGW=0: RGW tests disabled"
    if os.environ.get("ZR_RGW_EXTERNAL") == "1":
        endpoint = os.environ.get("S3_ENDPOINT")
        if not endpoint:
            return "ZR_RGW_EXTERNAL=1 but S3_ENDPOINT is not set"
        return RGWServer(
            endpoint=endpoint,
            access_key=os.environ.get("AWS_ACCESS_KEY_ID", "testaccesskey"),
            secret_key=os.environ.get("AWS_SECRET_ACCESS_KEY", "testsecretkey"),
            region=os.environ.get("AWS_DEFAULT_REGION", "us-east-1"),
            base=None,
            start_seconds=0.0,
            tls=_tls_from(dict(os.environ)),
        )
    if not START.exists():
        return f"{START} is missing"
    base = tempfile.mkdtemp(prefix="zr-rgw-")
    env = dict(os.environ, CEPH_BASE=base)
    t0 = time.monotonic()
    try:
        proc = subprocess.run(
            ["bash", str(START)], env=env, capture_output=True, text=True,
            timeout=START_TIMEOUT, check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        _stop_base(base)
        return f"rgw-start.sh did not finish: {exc}"
    elapsed = time.monotonic() - t0
    if proc.returncode != 0:
        _stop_base(base)
        tail = "\n".join(proc.stderr.strip().splitlines()[-12:])
        return f"Ceph RGW could not start here (rgw-start.sh exit {proc.returncode}):\n{tail}"
    found = _parse_env(proc.stdout)
    if "S3_ENDPOINT" not in found:
        _stop_base(base)
        return f"rgw-start.sh printed no S3_ENDPOINT: {proc.stdout[-500:]}"
    return RGWServer(
        endpoint=found["S3_ENDPOINT"],
        access_key=found.get("AWS_ACCESS_KEY_ID", "testaccesskey"),
        secret_key=found.get("AWS_SECRET_ACCESS_KEY", "testsecretkey"),
        region=found.get("AWS_DEFAULT_REGION", "us-east-1"),
        base=base,
        start_seconds=elapsed,
        log=proc.stderr,
        tls=_tls_from(found),
    )


def _stop_base(base: str) -> None:
    env = dict(os.environ, CEPH_BASE=base, CEPH_STOP_SIGNAL="KILL")
    subprocess.run(["bash", str(STOP)], env=env, capture_output=True, timeout=60, check=False)
    shutil.rmtree(base, ignore_errors=True)  # rgw-stop.sh leaves it when nothing had started


def ensure_rgw() -> RGWServer | str:
    """The process-wide RGW (started at most once), or why there is none."""
    with _lock:
        if "result" not in _state:
            _state["result"] = _start()
            result = _state["result"]
            if isinstance(result, RGWServer) and result.base is not None:
                atexit.register(stop_rgw)  # also covers a session that dies before teardown
        result = _state["result"]
    assert isinstance(result, (RGWServer, str))
    return result


def stop_rgw() -> None:
    """Stop the RGW this process started (by its recorded PIDs); idempotent."""
    with _lock:
        result = _state.get("result")
        if isinstance(result, RGWServer) and result.base is not None and not _state.get("stopped"):
            _state["stopped"] = True
            _stop_base(result.base)


def add_s3_key(server: RGWServer, access_key: str, secret_key: str) -> bool:
    """Let ``server``'s user also sign in with (``access_key``, ``secret_key``).

    For clients whose credentials are fixed before the test can choose them — Spark's JVM and
    Python workers inherit the environment of the moment the session started — the server
    learns their keys instead.  Returns False when it cannot (an external server, which we do
    not administer); raises when ``radosgw-admin`` fails on a server we started.  Once per
    key pair and process (~0.1 s)."""
    if (access_key, secret_key) == (server.access_key, server.secret_key):
        return True
    if server.base is None:
        return False
    done: set[tuple[str, str]] = _state.setdefault("keys", set())
    if (access_key, secret_key) in done:
        return True
    proc = subprocess.run(
        ["radosgw-admin", "-c", str(Path(server.base) / "ceph.conf"), "-n", "client.admin",
         "key", "create", "--uid=test", "--key-type=s3", f"--access-key={access_key}",
         f"--secret-key={secret_key}"],
        capture_output=True, text=True, timeout=60, check=False,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"radosgw-admin key create failed ({proc.returncode}): "
                           f"{proc.stderr.strip()[-500:]}")
    done.add((access_key, secret_key))
    return True


@pytest.fixture(scope="session")
def rgw_server() -> Iterator[RGWServer]:
    result = ensure_rgw()
    if isinstance(result, str):
        if os.environ.get("ZR_RGW_REQUIRED") == "1":
            pytest.fail(result)
        pytest.skip(result)
    yield result
    stop_rgw()


@pytest.fixture(scope="session")
def rgw_tls(rgw_server: RGWServer) -> RGWTLS:
    """The server's HTTPS side; skips (fails under ``ZR_RGW_REQUIRED=1``) when it has none."""
    if rgw_server.tls is None:
        reason = ("this RGW serves no HTTPS (started with RGW_TLS=0, or an external server "
                  "without S3_ENDPOINT_TLS and S3_TLS_CA_BUNDLE)")
        if os.environ.get("ZR_RGW_REQUIRED") == "1":
            pytest.fail(reason)
        pytest.skip(reason)
    return rgw_server.tls


@pytest.fixture
def rgw_client(rgw_server: RGWServer) -> Any:
    from zerorename.stores import make_s3_client

    return make_s3_client(
        rgw_server.endpoint, rgw_server.region,
        access_key=rgw_server.access_key, secret_key=rgw_server.secret_key,
    )


def empty_and_delete_bucket(client: Any, bucket: str) -> None:
    """Abort uploads, delete objects, delete the bucket: RGW's memstore keeps data in RAM."""
    try:
        for page in client.get_paginator("list_multipart_uploads").paginate(Bucket=bucket):
            for u in page.get("Uploads", []):
                client.abort_multipart_upload(Bucket=bucket, Key=u["Key"], UploadId=u["UploadId"])
        for page in client.get_paginator("list_objects_v2").paginate(Bucket=bucket):
            keys = [{"Key": o["Key"]} for o in page.get("Contents", [])]
            if keys:
                client.delete_objects(Bucket=bucket, Delete={"Objects": keys, "Quiet": True})
        client.delete_bucket(Bucket=bucket)
    except Exception:  # cleanup must not turn a passing test into an error
        pass


@pytest.fixture
def rgw_bucket(rgw_client: Any) -> Iterator[str]:
    bucket = f"zr-{uuid.uuid4().hex[:12]}"
    rgw_client.create_bucket(Bucket=bucket)
    yield bucket
    empty_and_delete_bucket(rgw_client, bucket)
