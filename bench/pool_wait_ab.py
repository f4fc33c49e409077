"""A/B of ``BoundedExecutor.imap``'s waiting: N completes on moto through ``S3Store``, by a plain
``ThreadPoolExecutor.map``, by ``BoundedExecutor.imap`` as it was at git revision ``--before``
(``reference/zerorename/executor.py`` read from git, in this process) and as it is in the
working tree, in interleaved rounds; prints the process's CPU and the driver thread's CPU per
complete (CPU seconds, robust to other load on the machine), and the wall time (not: it moves
with whatever else runs).

    .venv/bin/python bench/pool_wait_ab.py --completes 4000 --threads 8 --rounds 4 \\
        --before 8f17cca

History: 0f216ec replaced ``concurrent.futures.wait`` in the thread backend's wait by a
counter (this script's earlier form, 2,000 completes at T = 32: driver 154-161 → 105-120
µs/complete, ``results/commit_trace/pool_wait_ab_moto_2000.txt``); the batched refill (a full
pool waits for ``capacity - threads`` done, not one) came after 8f17cca
(``results/commit_trace/README.md``).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
import types
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "reference"))
sys.path.insert(0, str(HERE))

from servers import MotoServer  # noqa: E402

import zerorename as zr  # noqa: E402
import zerorename.executor as ex  # noqa: E402

Item = tuple[str, str, str, str]


def executor_at(revision: str) -> types.ModuleType:
    """``zerorename/executor.py`` as it was at ``revision`` (git), as a module of its own."""
    source = subprocess.run(["git", "show", f"{revision}:reference/zerorename/executor.py"],
                            cwd=HERE.parent, check=True, capture_output=True, text=True).stdout
    module = types.ModuleType(f"zerorename_executor_{revision}")
    module.__file__ = f"{revision}:reference/zerorename/executor.py"
    sys.modules[module.__name__] = module  # dataclasses and typing look modules up by name
    exec(compile(source, module.__file__, "exec"), module.__dict__)
    return module


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--completes", type=int, default=4000)
    ap.add_argument("--threads", type=int, default=8)
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--before", default="8f17cca", help="git revision of the 'before' executor")
    ap.add_argument("--out", type=Path, help="also write the rows as JSON")
    args = ap.parse_args()
    n, threads = args.completes, args.threads
    before = executor_at(args.before)
    rows: list[dict[str, Any]] = []
    with MotoServer() as server:
        client = zr.make_s3_client(server.endpoint(), access_key="testing",
                                   secret_key="testing", max_pool_connections=128)
        store = zr.S3Store(client, name="moto")

        def prepare() -> list[Item]:
            bucket = f"zr-ab-{uuid.uuid4().hex[:8]}"
            client.create_bucket(Bucket=bucket)
            store.capabilities(f"s3://{bucket}/probe")

            def one(i: int) -> Item:
                key = f"out/f{i:05d}"
                upload = client.create_multipart_upload(Bucket=bucket, Key=key)["UploadId"]
                etag = client.upload_part(Bucket=bucket, Key=key, UploadId=upload,
                                          PartNumber=1, Body=b"z" * 4096)["ETag"]
                return bucket, key, upload, etag

            with ThreadPoolExecutor(4) as pool:
                return list(pool.map(one, range(n)))

        def complete(item: Item) -> None:
            bucket, key, upload, etag = item
            store.complete_multipart(f"s3://{bucket}/{key}", upload, [(1, etag.strip('"'))])

        def plain(items: list[Item]) -> None:
            with ThreadPoolExecutor(threads) as pool:
                list(pool.map(complete, items))

        def bounded(cls: Any) -> Callable[[list[Item]], None]:
            def run(items: list[Item]) -> None:
                with cls(threads, "ab") as pool:
                    for _ in pool.imap(complete, items):
                        pass
            return run

        variants = (("tpe.map", plain), (f"before {args.before}", bounded(before.BoundedExecutor)),
                    ("after", bounded(ex.BoundedExecutor)))
        print(f"{time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime())} N {n} T {threads} "
              f"load {os.getloadavg()[0]:.2f}", flush=True)
        for rnd in range(args.rounds):
            order = variants if rnd % 2 == 0 else variants[::-1]  # alternate who goes first
            for name, fn in order:
                items = prepare()
                c0, w0, d0 = time.process_time(), time.perf_counter(), time.thread_time()
                fn(items)
                c1, w1, d1 = time.process_time(), time.perf_counter(), time.thread_time()
                row = {"round": rnd, "variant": name, "completes": n, "threads": threads,
                       "cpu_us_per_complete": round(1e6 * (c1 - c0) / n, 1),
                       "driver_us_per_complete": round(1e6 * (d1 - d0) / n, 1),
                       "wall_s": round(w1 - w0, 3), "load": round(os.getloadavg()[0], 2)}
                rows.append(row)
                print(f"r{rnd} {name:16s} cpu {row['cpu_us_per_complete']:6.0f} us/complete, "
                      f"driver thread {row['driver_us_per_complete']:5.0f} us/complete, wall "
                      f"{row['wall_s']:.2f} s, load {row['load']}", flush=True)
    print("medians over rounds (us per complete: process CPU, driver thread CPU):")
    for name, _fn in variants:
        mine = [r for r in rows if r["variant"] == name]
        cpu = sorted(r["cpu_us_per_complete"] for r in mine)
        drv = sorted(r["driver_us_per_complete"] for r in mine)
        print(f"  {name:16s} {cpu[len(cpu) // 2]:6.0f}  {drv[len(drv) // 2]:5.0f}   "
              f"(cpu {cpu}, driver {drv})")
    if args.out:
        args.out.write_text(json.dumps(rows, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
