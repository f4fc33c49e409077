"""The s3fs strategy: one job written inside an fsspec transaction, in a process of its own.

What it measures.  ``fs.transaction`` defers every file's publication: inside it, s3fs opens a
multipart upload for each file written (even a small one) and uploads its part when the file
is closed, and the transaction's end completes the uploads — one by one, in the order the
files were opened (fsspec's ``Transaction.complete``), whatever thread count the job has.
So the job is: start a transaction; tasks (threads sharing the file system object, as the
transaction is the object's) write their files; no task commit (s3fs has none); the
"job commit" ends the transaction and PUTs ``_SUCCESS``.  A transaction lives in one process,
so this works only when every task runs in the driver's process, and a crash loses the
uncompleted uploads' record — the price of having no committer.

Why another process and virtualenv.  s3fs 2026.9.0 needs aiobotocore 3.10.0, which pins
``botocore>=1.43.115,<1.43.118``, while the project's boto3 (1.44) needs botocore 1.44; an
unpinned install backtracks to s3fs 0.4.2 (2020).  So the parent finds an interpreter with a
recent s3fs (``--s3fs-python``, the current one if it has it, or a virtualenv it creates once
under ``~/.cache/zerorename-bench/``) and runs this file there as ``--child``; the child counts
requests with the same hooks (:mod:`wire`) and prints its figures as JSON.

    # what the bench extra holds, in a virtualenv apart from the project's boto3:
    python -m venv /tmp/s3fs-venv
    /tmp/s3fs-venv/bin/pip install 's3fs==2026.9.0' 'aiobotocore==3.10.0' \\
        'botocore>=1.43.115,<1.43.118'
    python bench/side_by_side.py --s3fs-python /tmp/s3fs-venv/bin/python
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import os
import subprocess
import sys
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from wire import WireCounter  # noqa: E402

#: the pins of the bench extra (aiobotocore 3.10.0 allows only these botocore releases)
S3FS_PINS = ("s3fs==2026.9.0", "aiobotocore==3.10.0", "botocore>=1.43.115,<1.43.118")
S3FS_MIN_VERSION = (2023, 1)  # older s3fs (0.4.x) has another transaction and client API
VENV = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / \
    "zerorename-bench" / "s3fs-2026.9.0"
INSTALL_HINT = (
    "s3fs is not installed: install the bench extra's pins "
    f"({', '.join(S3FS_PINS)}) into a virtualenv apart from the project's (its botocore "
    "conflicts with boto3 1.44) and pass --s3fs-python PATH, or let the benchmark create "
    f"{VENV} (drop --no-s3fs-venv)")


# -- parent side --------------------------------------------------------------------------


def _s3fs_version(python: str) -> tuple[int, ...] | None:
    try:
        out = subprocess.run([python, "-c", "import s3fs; print(s3fs.__version__)"],
                             capture_output=True, text=True, timeout=120, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if out.returncode != 0:
        return None
    try:
        return tuple(int(x) for x in out.stdout.strip().split(".")[:2])
    except ValueError:
        return None


def find_s3fs_python(explicit: str | None, create_venv: bool) -> tuple[str | None, str]:
    """(interpreter with a recent s3fs, or None; how it was found or why there is none)."""
    if explicit:
        version = _s3fs_version(explicit)
        if version is None or version < S3FS_MIN_VERSION:
            return None, f"--s3fs-python {explicit}: no s3fs >= 2023.1 there. {INSTALL_HINT}"
        return explicit, f"--s3fs-python {explicit}"
    try:
        here = importlib.metadata.version("s3fs")
        if tuple(int(x) for x in here.split(".")[:2]) >= S3FS_MIN_VERSION:
            return sys.executable, f"s3fs {here} in the benchmark's own interpreter"
    except (importlib.metadata.PackageNotFoundError, ValueError):
        pass
    python = str(VENV / "bin" / "python")
    version = _s3fs_version(python) if Path(python).exists() else None
    if version is not None and version >= S3FS_MIN_VERSION:
        return python, f"virtualenv {VENV}"
    if not create_venv:
        return None, INSTALL_HINT
    print(f"  creating {VENV} for s3fs ({', '.join(S3FS_PINS)})", flush=True)
    try:
        subprocess.run([sys.executable, "-m", "venv", "--clear", str(VENV)], check=True,
                       capture_output=True, timeout=300)
        subprocess.run([python, "-m", "pip", "install", "--quiet", *S3FS_PINS], check=True,
                       capture_output=True, text=True, timeout=900)
    except (OSError, subprocess.SubprocessError) as exc:
        detail = getattr(exc, "stderr", "") or ""
        return None, f"could not create {VENV}: {exc} {str(detail)[-300:]}. {INSTALL_HINT}"
    return python, f"virtualenv {VENV} (created now)"


def run_s3fs_job(python: str, endpoint: str, access_key: str, secret_key: str, bucket: str,
                 prefix: str, paths: Sequence[Sequence[str]], size: int, slots: int,
                 timeout: float = 3600.0) -> dict[str, Any]:
    """Run the job in ``python`` (see the module docstring); its phases' seconds and counts."""
    job = {"endpoint": endpoint, "access_key": access_key, "secret_key": secret_key,
           "bucket": bucket, "prefix": prefix, "paths": [list(p) for p in paths],
           "size": size, "slots": slots}
    proc = subprocess.run([python, str(Path(__file__).resolve()), "--child"],
                          input=json.dumps(job), capture_output=True, text=True,
                          timeout=timeout, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"s3fs job failed ({proc.returncode}): {proc.stderr[-2000:]}")
    result: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


# -- child side ---------------------------------------------------------------------------


def child(job: dict[str, Any]) -> dict[str, Any]:
    import s3fs  # type: ignore[import-not-found]  # only in the child's interpreter

    fs = s3fs.S3FileSystem(
        key=job["access_key"], secret=job["secret_key"], skip_instance_cache=True,
        use_listings_cache=False,
        client_kwargs={"endpoint_url": job["endpoint"], "region_name": "us-east-1"},
        # as zerorename's client: CRC checksums only where the API requires them
        config_kwargs={"request_checksum_calculation": "when_required",
                       "response_checksum_validation": "when_required",
                       "max_pool_connections": max(10, 2 * job["slots"])})
    fs.connect()
    counter = WireCounter()
    counter.attach(fs.s3)
    root = f"{job['bucket']}/{job['prefix']}"
    body = b"z" * job["size"]
    phases: dict[str, Any] = {}

    def phase(name: str, fn: Any) -> None:
        before, start = counter.snapshot(), time.perf_counter()
        fn()
        phases[name] = {"seconds": time.perf_counter() - start,
                        **counter.snapshot().minus(before).as_dict()}

    def write(paths: list[str]) -> None:
        for path in paths:
            with fs.open(f"{root}/{path}", "wb") as f:
                f.write(body)

    def write_all() -> None:
        with ThreadPoolExecutor(job["slots"]) as pool:
            list(pool.map(write, job["paths"]))

    def commit_job() -> None:
        fs.end_transaction()  # completes every deferred upload, one after the other
        fs.pipe_file(f"{root}/_SUCCESS", b"")

    phase("setup_job", fs.start_transaction)
    phase("write", write_all)
    phase("commit_task", lambda: None)  # s3fs has no task commit
    phase("commit_job", commit_job)
    versions = {d: importlib.metadata.version(d) for d in ("s3fs", "fsspec", "aiobotocore",
                                                           "botocore")}
    return {"phases": phases, "versions": versions}


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--child", action="store_true", help="run the job read from stdin")
    args = ap.parse_args(argv)
    if not args.child:
        ap.error("run through bench/side_by_side.py (this file is its s3fs child)")
    print(json.dumps(child(json.loads(sys.stdin.read()))), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
