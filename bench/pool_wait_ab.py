"""A/B of the thread backend's wait: N completes on moto at T = 32 through ``S3Store``, by a
plain ``ThreadPoolExecutor.map``, by ``BoundedExecutor.imap`` over the old ``_ThreadPool``
(``concurrent.futures.wait``) and over the current one, in 3 interleaved rounds; prints the
process CPU and the driver thread's CPU per complete, and the wall time.

    .venv/bin/python bench/pool_wait_ab.py 2000
"""

from __future__ import annotations

import sys
import time
import uuid
from collections.abc import Callable, Collection
from concurrent.futures import ALL_COMPLETED, FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "reference"))
sys.path.insert(0, str(HERE))

from servers import MotoServer  # noqa: E402

import zerorename as zr  # noqa: E402
import zerorename.executor as ex  # noqa: E402

T = 32
NEW_POOL = ex._ThreadPool


class OldPool:
    """``_ThreadPool`` as it was before: ``concurrent.futures.wait`` over the futures."""

    def __init__(self, name: str, workers: int) -> None:
        self._pool = ThreadPoolExecutor(max_workers=workers,
                                        thread_name_prefix=f"zerorename-{name}")

    def submit(self, fn: Callable[[Any], Any], item: Any) -> Future[Any]:
        return self._pool.submit(fn, item)

    def wait(self, futures: Collection[Future[Any]], *, first: bool) -> None:
        wait(futures, return_when=FIRST_COMPLETED if first else ALL_COMPLETED)

    def shutdown(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)


def main(n: int) -> None:
    with MotoServer() as server:
        client = zr.make_s3_client(server.endpoint(), access_key="testing",
                                   secret_key="testing", max_pool_connections=128)
        store = zr.S3Store(client, name="moto")

        def prepare() -> list[tuple[str, str, str, str]]:
            bucket = f"zr-ab-{uuid.uuid4().hex[:8]}"
            client.create_bucket(Bucket=bucket)
            store.capabilities(f"s3://{bucket}/probe")

            def one(i: int) -> tuple[str, str, str, str]:
                key = f"out/f{i:05d}"
                upload = client.create_multipart_upload(Bucket=bucket, Key=key)["UploadId"]
                etag = client.upload_part(Bucket=bucket, Key=key, UploadId=upload,
                                          PartNumber=1, Body=b"z" * 4096)["ETag"]
                return bucket, key, upload, etag

            with ThreadPoolExecutor(4) as pool:
                return list(pool.map(one, range(n)))

        def complete(item: tuple[str, str, str, str]) -> None:
            bucket, key, upload, etag = item
            store.complete_multipart(f"s3://{bucket}/{key}", upload, [(1, etag.strip('"'))])

        def plain(items: list[tuple[str, str, str, str]]) -> None:
            with ThreadPoolExecutor(T) as pool:
                list(pool.map(complete, items))

        def bounded(cls: Any) -> Callable[[list[tuple[str, str, str, str]]], None]:
            def run(items: list[tuple[str, str, str, str]]) -> None:
                ex._ThreadPool = cls  # type: ignore[misc]
                try:
                    with ex.BoundedExecutor(T, "ab") as pool:
                        for _ in pool.imap(complete, items):
                            pass
                finally:
                    ex._ThreadPool = NEW_POOL  # type: ignore[misc]
            return run

        for rnd in range(3):
            for name, fn in (("tpe.map", plain), ("old wait", bounded(OldPool)),
                             ("new wait", bounded(NEW_POOL))):
                items = prepare()
                c0, w0, d0 = time.process_time(), time.perf_counter(), time.thread_time()
                fn(items)
                c1, w1, d1 = time.process_time(), time.perf_counter(), time.thread_time()
                print(f"r{rnd} {name:9s} cpu {1e6 * (c1 - c0) / n:5.0f} us/complete, driver "
                      f"thread {1e6 * (d1 - d0) / n:4.0f} us/complete, wall {w1 - w0:.2f} s",
                      flush=True)


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 2000)
