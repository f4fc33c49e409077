"""moto's ThreadedMotoServer on 127.0.0.1 in a child process, for the benchmarks.

Why a child process: in the benchmark's own process the server would share the GIL with the
client threads being measured.  Parts may be as small as 1 byte (moto reads
``S3_UPLOAD_PART_MIN_SIZE`` at import), so benchmarks can use small multipart files.
"""

from __future__ import annotations

import os
import subprocess
import sys

_MOTO_CHILD = """
import logging, os, sys
os.environ["S3_UPLOAD_PART_MIN_SIZE"] = "1"   # read by moto at import: allow tiny parts
logging.getLogger("werkzeug").setLevel(logging.ERROR)
from moto.server import ThreadedMotoServer
server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
server.start()
print("%s:%d" % server.get_host_and_port(), flush=True)
sys.stdin.read()          # until the parent closes our stdin
server.stop()
"""


class MotoServer:
    """ThreadedMotoServer on 127.0.0.1 in a child process (its own GIL, so the server does not
    slow the committer's threads).  Started early, waited for lazily: moto's import takes a few
    seconds, which the benchmark spends on the parts that need no server."""

    def __init__(self) -> None:
        env = dict(os.environ, S3_UPLOAD_PART_MIN_SIZE="1")
        self._proc = subprocess.Popen([sys.executable, "-c", _MOTO_CHILD],
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
