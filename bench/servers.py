"""The S3 servers the benchmarks run against: moto in a child process, and a throw-away Ceph RGW.

Why a child process for moto: in the benchmark's own process the server would share the GIL
with the client threads being measured.  Parts may be as small as 1 byte (moto reads
``S3_UPLOAD_PART_MIN_SIZE`` at import), so benchmarks can use small multipart files.  moto
keeps an object in memory up to ``MOTO_S3_DEFAULT_KEY_BUFFER_SIZE`` bytes and in a temporary
file beyond; its default is ``S3_UPLOAD_PART_MIN_SIZE - 1024``, negative here, which would put
every object in a file of its own (one descriptor each: a 10,000-file job ran the server out
of descriptors), so the child sets it to 8 MiB.

RGW comes from ``scripts/rgw-start.sh`` (which apt-installs radosgw when missing; state in a
fresh temporary directory, 127.0.0.1 only) and is stopped by ``scripts/rgw-stop.sh``; with
``ZR_RGW_EXTERNAL=1`` an already running server named by ``S3_ENDPOINT`` is used instead.
When it cannot start, :func:`rgw_server` yields the reason, so a benchmark records why it has
no RGW figures rather than failing.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

MOTO_KEY_BUFFER = 8 * 1024 * 1024  # bytes of an object moto keeps in memory (see above)

_MOTO_CHILD = """
import logging, os, sys
os.environ["S3_UPLOAD_PART_MIN_SIZE"] = "1"   # read by moto at import: allow tiny parts
os.environ["MOTO_S3_DEFAULT_KEY_BUFFER_SIZE"] = str(MOTO_KEY_BUFFER)  # objects in memory
logging.getLogger("werkzeug").setLevel(logging.ERROR)
from moto.server import ThreadedMotoServer
from zerorename_bridge.embedded_s3 import make_conditional_writes_atomic
make_conditional_writes_atomic()  # our test server's property: fenced's check passes on it
server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
server.start()
print("%s:%d" % server.get_host_and_port(), flush=True)
sys.stdin.read()          # until the parent closes our stdin
server.stop()
"""


@dataclass(frozen=True)
class S3Endpoint:
    """Where a server answers and how to sign in.  ``note`` says how it came to be (for the
    results: "started in 4.2 s", "external")."""

    name: str
    url: str
    access_key: str
    secret_key: str
    note: str = ""
    state_dir: str = ""  # a throw-away RGW's: its daemons' command lines name it


class MotoServer:
    """ThreadedMotoServer on 127.0.0.1 (port 0) in a child process (its own GIL, so the server
    does not slow the committer's threads).  Started early, waited for lazily: moto's import
    takes a few seconds, which the benchmark spends on the parts that need no server."""

    def __init__(self) -> None:
        env = dict(os.environ, S3_UPLOAD_PART_MIN_SIZE="1",
                   MOTO_S3_DEFAULT_KEY_BUFFER_SIZE=str(MOTO_KEY_BUFFER))
        self._proc = subprocess.Popen([sys.executable, "-c", _MOTO_CHILD.replace(
            "MOTO_KEY_BUFFER", str(MOTO_KEY_BUFFER))],
                                      stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                                      env=env)
        self._endpoint: str | None = None

    def endpoint(self) -> str:
        if self._endpoint is None:
            assert self._proc.stdout is not None
            hostport = self._proc.stdout.readline().strip()
            if not hostport:
                raise RuntimeError("moto server did not start")
            self._endpoint = f"http://{hostport}"
        return self._endpoint

    @property
    def pid(self) -> int:
        """The server's process (what :mod:`quiet` watches between runs)."""
        return self._proc.pid

    def s3_endpoint(self) -> S3Endpoint:
        return S3Endpoint("moto", self.endpoint(), "testing", "testing",
                          "ThreadedMotoServer in a child process")

    def __enter__(self) -> MotoServer:
        return self

    def __exit__(self, *exc: object) -> None:
        if self._proc.stdin is not None:
            self._proc.stdin.close()
        try:
            self._proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()


def start_rgw(timeout: float = 300.0) -> tuple[S3Endpoint | None, str | None, str]:
    """(endpoint or None, state directory this call must stop or None, note)."""
    if os.environ.get("ZR_RGW_EXTERNAL") == "1" and os.environ.get("S3_ENDPOINT"):
        return S3Endpoint("rgw", os.environ["S3_ENDPOINT"],
                          os.environ.get("AWS_ACCESS_KEY_ID", "testaccesskey"),
                          os.environ.get("AWS_SECRET_ACCESS_KEY", "testsecretkey"),
                          "external"), None, "external"
    base = tempfile.mkdtemp(prefix="zr-rgw-bench-")
    t0 = time.monotonic()
    try:
        proc = subprocess.run(
            ["bash", str(REPO / "scripts" / "rgw-start.sh")],
            env=dict(os.environ, CEPH_BASE=base), capture_output=True, text=True,
            timeout=timeout, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        stop_rgw(base)
        return None, None, f"rgw-start.sh did not finish: {exc}"
    if proc.returncode != 0:
        stop_rgw(base)
        return None, None, f"rgw-start.sh exit {proc.returncode}: {proc.stderr[-400:]}"
    env: dict[str, str] = {}
    for line in proc.stdout.splitlines():
        if line.startswith("export ") and "=" in line:
            k, _, v = line[7:].partition("=")
            env[k] = v
    if "S3_ENDPOINT" not in env:
        stop_rgw(base)
        return None, None, f"rgw-start.sh printed no S3_ENDPOINT: {proc.stdout[-300:]}"
    note = f"started in {time.monotonic() - t0:.1f} s"
    return S3Endpoint("rgw", env["S3_ENDPOINT"], env.get("AWS_ACCESS_KEY_ID", "testaccesskey"),
                      env.get("AWS_SECRET_ACCESS_KEY", "testsecretkey"), note, base), base, note


def stop_rgw(base: str) -> None:
    subprocess.run(["bash", str(REPO / "scripts" / "rgw-stop.sh")],
                   env=dict(os.environ, CEPH_BASE=base, CEPH_STOP_SIGNAL="KILL"),
                   capture_output=True, timeout=60, check=False)
    shutil.rmtree(base, ignore_errors=True)


@contextlib.contextmanager
def rgw_server() -> Iterator[S3Endpoint | str]:
    """A running RGW for the ``with`` block, or the reason there is none (a string)."""
    endpoint, base, note = start_rgw()
    try:
        yield endpoint if endpoint is not None else note
    finally:
        if base is not None:
            stop_rgw(base)


def radosgw_version() -> str:
    try:
        out = subprocess.run(["radosgw", "--version"], capture_output=True, text=True,
                             timeout=10, check=False).stdout
    except OSError:
        return "not installed"
    return out.split(" (")[0].strip() or "?"
