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
no RGW figures rather than failing.  The script's RGW also serves HTTPS (``S3Endpoint.tls``):
Hadoop's S3A can write to it only that way.

**Requests counted at the server**, whoever sent them (a JVM's S3A, Python workers, the
driver): :meth:`MotoServer.counts` asks the moto child, whose WSGI app counts every request by
S3 operation; :class:`RGWRequestLog` reads radosgw's access log (one ``beast:`` line per
request, at its default log level).  Both name operations with
:func:`zerorename_bridge.embedded_s3.classify`; the access log does not show
``x-amz-copy-source``, so on RGW a copy counts as the PUT it is sent as.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
import uuid
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "model"))  # classify: zerorename_bridge (zerorename-research)

from zerorename_bridge.embedded_s3 import classify  # noqa: E402

#: the moto child's own path that answers with its request counts (not counted itself)
COUNTS_PATH = "/moto-api/zr-bench-counts"

MOTO_KEY_BUFFER = 8 * 1024 * 1024  # bytes of an object moto keeps in memory (see above)

_MOTO_CHILD = """
import logging, os, sys
os.environ["S3_UPLOAD_PART_MIN_SIZE"] = "1"   # read by moto at import: allow tiny parts
os.environ["MOTO_S3_DEFAULT_KEY_BUFFER_SIZE"] = str(MOTO_KEY_BUFFER)  # objects in memory
logging.getLogger("werkzeug").setLevel(logging.ERROR)
import json, threading
from collections import Counter
from moto.server import ThreadedMotoServer
from zerorename_bridge.embedded_s3 import classify, make_conditional_writes_atomic
make_conditional_writes_atomic()  # our test server's property: fenced's check passes on it
server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
server.start()
counts, lock = Counter(), threading.Lock()
app = server._server.app
def counting(environ, start_response):  # every request, by S3 operation
    if environ.get("PATH_INFO") == COUNTS_PATH:
        with lock:
            body = json.dumps(dict(counts)).encode()
        start_response("200 OK", [("Content-Type", "application/json"),
                                  ("Content-Length", str(len(body)))])
        return [body]
    op = classify(environ.get("REQUEST_METHOD", ""), environ.get("PATH_INFO", ""),
                  environ.get("QUERY_STRING", ""), environ.get("HTTP_X_AMZ_COPY_SOURCE"))
    if op is not None:
        with lock:
            counts[op] += 1
    return app(environ, start_response)
server._server.app = counting
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
    tls: TLSEndpoint | None = None  # the same server over HTTPS, when it serves that


@dataclass(frozen=True)
class TLSEndpoint:
    """A server's HTTPS endpoint and its self-signed certificate: ``ca_bundle`` (PEM, for
    boto3's ``AWS_CA_BUNDLE``) and ``truststore`` (JKS, for a JVM; None without keytool)."""

    url: str
    ca_bundle: str
    truststore: str | None
    truststore_password: str = "changeit"


def _tls(env: dict[str, str]) -> TLSEndpoint | None:
    if not env.get("S3_ENDPOINT_TLS") or not env.get("S3_TLS_CA_BUNDLE"):
        return None
    return TLSEndpoint(env["S3_ENDPOINT_TLS"], env["S3_TLS_CA_BUNDLE"],
                       env.get("S3_TLS_TRUSTSTORE") or None,
                       env.get("S3_TLS_TRUSTSTORE_PASSWORD", "changeit"))


#: one request in radosgw's access log (beast frontend, Ceph 16.2)
_ACCESS = re.compile(r' beast: \S+: \S+ - \S+ \[[^\]]*\] "([A-Z]+) (\S+) HTTP/[0-9.]+" \d+ ')
#: the path of the request :meth:`RGWRequestLog.counts` sends to find its own line
SENTINEL = "/zr-bench-sentinel-"


class RGWRequestLog:
    """Requests a throw-away RGW has received, by S3 operation, read from its access log.

    radosgw writes its log from a thread of its own, so a line may land a moment after the
    response; :meth:`counts` therefore first sends a sentinel request (an anonymous GET of a
    bucket that does not exist, not counted) and reads until that line is there: every
    request answered before the call is then counted."""

    def __init__(self, log: Path, url: str) -> None:
        self.log, self.url = log, url.rstrip("/")
        self._counts: Counter[str] = Counter()
        self._offset = 0
        self._partial = b""

    @classmethod
    def of(cls, endpoint: S3Endpoint) -> RGWRequestLog | None:
        """The log of an RGW ``rgw-start.sh`` started (None for an external server)."""
        if not endpoint.state_dir:
            return None
        return cls(Path(endpoint.state_dir) / "log" / "client.rgw.x.log", endpoint.url)

    def counts(self, timeout: float = 30.0) -> dict[str, int]:
        """Requests answered so far, by S3 operation."""
        marker = f"{SENTINEL}{uuid.uuid4().hex}"
        with contextlib.suppress(urllib.error.HTTPError):  # 404: the answer expected
            urllib.request.urlopen(self.url + marker, timeout=timeout).close()
        deadline = time.monotonic() + timeout
        while not self._read_until(marker):
            if time.monotonic() > deadline:
                raise RuntimeError(f"{self.log}: no access-log line for {marker} in {timeout} s")
            time.sleep(0.02)
        return dict(self._counts)

    def _read_until(self, marker: str) -> bool:
        with self.log.open("rb") as f:
            f.seek(self._offset)
            data = self._partial + f.read()
            self._offset = f.tell()
        *lines, self._partial = data.split(b"\n")
        seen = False
        for raw in lines:
            match = _ACCESS.search(raw.decode("utf-8", "replace"))
            if match is None:
                continue
            method, target = match.groups()
            path, _, query = target.partition("?")
            if path.startswith(SENTINEL):
                seen = seen or path == marker
                continue
            op = classify(method, path, query, None)
            if op is not None:
                self._counts[op] += 1
        return seen


class MotoServer:
    """ThreadedMotoServer on 127.0.0.1 (port 0) in a child process (its own GIL, so the server
    does not slow the committer's threads).  Started early, waited for lazily: moto's import
    takes a few seconds, which the benchmark spends on the parts that need no server."""

    def __init__(self) -> None:
        env = dict(os.environ, S3_UPLOAD_PART_MIN_SIZE="1",
                   MOTO_S3_DEFAULT_KEY_BUFFER_SIZE=str(MOTO_KEY_BUFFER))
        child = _MOTO_CHILD.replace("MOTO_KEY_BUFFER", str(MOTO_KEY_BUFFER)).replace(
            "COUNTS_PATH", repr(COUNTS_PATH))
        self._proc = subprocess.Popen([sys.executable, "-c", child],
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

    def counts(self) -> dict[str, int]:
        """Requests the server has received so far, by S3 operation (from every client)."""
        with urllib.request.urlopen(self.endpoint() + COUNTS_PATH, timeout=30) as answer:
            found: dict[str, int] = json.loads(answer.read())
        return found

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


#: a benchmark writes and deletes gigabytes: a larger memstore than the tests' 4 GiB, and RGW's
#: collector freeing deleted parts within the run (its default waits two hours), so that more
#: rounds fit (a 4-round run of spark_native filled 4 GiB: the OSD full, S3A's uploads hung).
#: The environment overrides either.
BENCH_RGW = {"CEPH_MEMSTORE_BYTES": str(12 * 2**30), "CEPH_RGW_GC_SECONDS": "60"}


def start_rgw(timeout: float = 300.0) -> tuple[S3Endpoint | None, str | None, str]:
    """(endpoint or None, state directory this call must stop or None, note)."""
    if os.environ.get("ZR_RGW_EXTERNAL") == "1" and os.environ.get("S3_ENDPOINT"):
        return S3Endpoint("rgw", os.environ["S3_ENDPOINT"],
                          os.environ.get("AWS_ACCESS_KEY_ID", "testaccesskey"),
                          os.environ.get("AWS_SECRET_ACCESS_KEY", "testsecretkey"),
                          "external", _external_state_dir(), _tls(dict(os.environ))), \
            None, "external"
    base = tempfile.mkdtemp(prefix="zr-rgw-bench-")
    t0 = time.monotonic()
    try:
        proc = subprocess.run(
            ["bash", str(REPO / "scripts" / "rgw-start.sh")],
            env={**BENCH_RGW, **os.environ, "CEPH_BASE": base}, capture_output=True, text=True,
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
                      env.get("AWS_SECRET_ACCESS_KEY", "testsecretkey"), note, base,
                      _tls(env)), base, note


def _external_state_dir() -> str:
    """``CEPH_BASE`` of an external server that ``rgw-start.sh`` started (its access log is
    then readable: requests get counted), else ""."""
    base = os.environ.get("CEPH_BASE", "")
    return base if base and (Path(base) / "log" / "client.rgw.x.log").exists() else ""


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
