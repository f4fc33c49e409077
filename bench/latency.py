"""Job commit under request latency: F = 10,000 files with r = 20 ms added to every request, at
T = 8, 32 and 64 threads, against the bound ⌈F/T⌉·r.

Why: on S3 a complete or a copy costs tens of milliseconds of *waiting*, so a job commit's
time is its requests on the critical path times r, divided by the threads that overlap them.
A committer that publishes F files on T threads cannot beat ⌈F/T⌉·r; how close it comes says
whether anything in the commit (a serial listing, a serial cleanup, a lock) stops the threads
from overlapping the waits.

How the latency is injected: the committers run over :class:`DelayedStore`, a store that
sleeps r before forwarding each request (a ``delete_many`` or ``list_multipart_uploads`` of n
keys waits once per 1000, as those requests do) to the in-memory store of ``bench/fakes.py``.
A delaying proxy at the store interface rather than an HTTP server because on this 2-core
machine moto answers at most ~150 requests/s (``results/store_throughput.json``): a
10,000-file commit on it takes a minute whatever T is, which would hide what is measured here.
The sleep waits without holding the GIL, as a thread waiting on a socket does.  (The same
delay on the real HTTP path is :class:`wire.WireCounter`'s ``delay_seconds``, a botocore
``before-send`` hook.)  The tasks run without delay; only ``commit_job`` (Spark's protocol,
with the messages) is timed.

    .venv/bin/python bench/latency.py                  # writes bench/results/latency.{json,md,png}
    .venv/bin/python bench/latency.py --quick --out-dir /tmp/x
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "reference"))
sys.path.insert(0, str(HERE))

import render  # noqa: E402
from commit_costs import (  # noqa: E402
    THREAD_OPTION,
    Layout,
    commit,
    environment,
    prepare_job,
    reference_commit,
)
from fakes import MemoryStore  # noqa: E402

from zerorename.store import ListPage, ObjectInfo, StoreCapabilities, UploadInfo  # noqa: E402

RESULTS = HERE / "results"
COMMITTERS = ("magic", "fenced", "directory", "partitioned", "manifest")
PAGE = 1000
REFERENCE_COMMIT = reference_commit()  # the committers this process measures


class DelayedStore:
    """A store whose every request first waits ``delay`` seconds, while :attr:`delaying`."""

    def __init__(self, inner: MemoryStore, delay: float) -> None:
        self.inner = inner
        self.delay = delay
        self.delaying = False
        self.name = f"{inner.name}+{delay * 1000:g}ms"
        self._waits = 0
        self._lock = threading.Lock()

    def _wait(self, requests: int = 1) -> None:
        if self.delaying and requests > 0 and self.delay > 0:
            with self._lock:
                self._waits += requests
            time.sleep(self.delay * requests)

    @property
    def waits(self) -> int:
        with self._lock:
            return self._waits

    def capabilities(self, url: str | None = None) -> StoreCapabilities:
        return self.inner.capabilities(url)

    def request_counts(self) -> dict[str, int]:
        return self.inner.request_counts()

    def put(self, url: str, data: bytes, *, if_none_match: bool = False,
            if_match: str | None = None) -> str:
        self._wait()
        return self.inner.put(url, data, if_none_match=if_none_match, if_match=if_match)

    def get(self, url: str) -> bytes:
        self._wait()
        return self.inner.get(url)

    def head(self, url: str) -> ObjectInfo | None:
        self._wait()
        return self.inner.head(url)

    def list_page(self, prefix: str, *, delimiter: str | None = None, token: str | None = None,
                  max_keys: int = 1000) -> ListPage:
        self._wait()
        return self.inner.list_page(prefix, delimiter=delimiter, token=token, max_keys=max_keys)

    def delete(self, url: str) -> None:
        self._wait()
        self.inner.delete(url)

    def delete_many(self, urls: Sequence[str]) -> None:
        self._wait(math.ceil(len(urls) / PAGE))
        self.inner.delete_many(urls)

    def copy(self, src: str, dst: str) -> str:
        self._wait()
        return self.inner.copy(src, dst)

    def rename(self, src: str, dst: str) -> None:
        self._wait()
        self.inner.rename(src, dst)

    def create_multipart(self, url: str) -> str:
        self._wait()
        return self.inner.create_multipart(url)

    def upload_part(self, url: str, upload_id: str, part_number: int, data: bytes) -> str:
        self._wait()
        return self.inner.upload_part(url, upload_id, part_number, data)

    def complete_multipart(self, url: str, upload_id: str, parts: Sequence[tuple[int, str]], *,
                           if_none_match: bool = False, if_match: str | None = None) -> str:
        self._wait()
        return self.inner.complete_multipart(url, upload_id, parts, if_none_match=if_none_match,
                                             if_match=if_match)

    def abort_multipart(self, url: str, upload_id: str) -> None:
        self._wait()
        self.inner.abort_multipart(url, upload_id)

    def list_multipart_uploads(self, prefix: str) -> list[UploadInfo]:
        uploads = self.inner.list_multipart_uploads(prefix)
        self._wait(max(1, math.ceil(len(uploads) / PAGE)))
        return uploads


def measure(committer: str, layout: Layout, threads: int, delay: float) -> dict[str, Any]:
    store = DelayedStore(MemoryStore(), delay)
    dest = "mem://bench/out"
    run = prepare_job(store, dest, committer, layout, {THREAD_OPTION[committer]: str(threads)})
    store.delaying = True
    try:
        success, seconds, counts = commit(run, "spark")
    finally:
        store.delaying = False
    if success.diagnostics.get("threads") != str(threads):
        raise RuntimeError(f"{committer} ran with {success.diagnostics.get('threads')} threads,"
                           f" asked for {threads}")
    requests = sum(counts.values())
    bound = math.ceil(layout.files / threads) * delay
    own_bound = math.ceil(requests / threads) * delay
    return {
        "committer": committer, "files": layout.files, "tasks": layout.tasks,
        "threads": threads, "delay_ms": delay * 1000,
        "commit_seconds": round(seconds, 3), "commit_requests": requests,
        "commit_requests_by_op": counts, "delayed_requests": store.waits,
        "bound_seconds": round(bound, 3),
        "ratio_to_bound": round(seconds / bound, 2),
        "own_requests_bound_seconds": round(own_bound, 3),
        "reference_commit": REFERENCE_COMMIT,
        "load_average": [round(x, 2) for x in os.getloadavg()],
    }


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="F=200, T=8,32 (the smoke test)")
    ap.add_argument("--files", type=int, default=10_000)
    ap.add_argument("--files-per-task", type=int, default=250)
    ap.add_argument("--threads", default="8,32,64")
    ap.add_argument("--delay-ms", type=float, default=20.0)
    ap.add_argument("--committers", default=",".join(COMMITTERS))
    ap.add_argument("--out-dir", type=Path, default=RESULTS)
    args = ap.parse_args(argv)
    files, per_task = (200, 50) if args.quick else (args.files, args.files_per_task)
    threads = [8, 32] if args.quick else [int(t) for t in args.threads.split(",")]
    committers = [c.strip() for c in args.committers.split(",") if c.strip()]
    if not set(committers) <= set(COMMITTERS):
        ap.error(f"--committers: choose from {', '.join(COMMITTERS)}")
    tasks = max(1, files // per_task)
    layout = Layout(tasks, files // tasks, size=16)
    delay = args.delay_ms / 1000
    start = time.monotonic()
    report: dict[str, Any] = {
        "benchmark": "latency", "mode": "quick" if args.quick else "full",
        "when": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "environment": environment(),
        "store": "bench/fakes.py MemoryStore behind DelayedStore (sleep r per request, "
                 "during commit_job only)",
        "delay_ms": args.delay_ms, "files": layout.files, "tasks": layout.tasks,
        "rows": [],
    }
    for name in committers:
        for t in threads:
            row = measure(name, layout, t, delay)
            report["rows"].append(row)
            print(f"  {name:12s} T={t:3d}: commit {row['commit_seconds']:7.2f} s "
                  f"(bound {row['bound_seconds']:6.2f} s, x{row['ratio_to_bound']}; "
                  f"{row['commit_requests']} requests)", flush=True)
    report["environment"]["load_average_at_end"] = [round(x, 2) for x in os.getloadavg()]
    report["total_seconds"] = round(time.monotonic() - start, 1)
    args.out_dir.mkdir(parents=True, exist_ok=True)
    (args.out_dir / "latency.json").write_text(json.dumps(report, indent=2) + "\n")
    text = render.latency_markdown(report)
    (args.out_dir / "latency.md").write_text(text)
    render.latency_plot(report, args.out_dir / "latency.png")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
