"""Where a job commit's time goes beyond the minimal strategy's: CPU per file in the committer's
process, and the critical path of its requests.

Why not wall times: on the side-by-side benchmark's 2 shared cores the moto server and the
committer compete for the same CPU, and other work on the machine moves every figure by tens of
percent.  Two things decide a job commit's time there and do not depend on the load:

* **CPU per file** (``time.process_time`` of the committer's process during ``commit_job``,
  divided by F).  Every CPU millisecond the client spends is one the server cannot spend
  answering; on S3 it caps how many completes T threads can keep in flight.  The minimal
  strategy (complete each upload on T threads, PUT ``_SUCCESS``) is measured the same way,
  against the same store, so the difference is what the committer adds per file.
* **The critical path**: every request's start and end during the commit, so we can read how
  long the commit waits before its first complete, how full the pool is while completing (mean
  completes in flight against T), and how long it runs after the last complete (``_SUCCESS``,
  cleanup).  With a fixed per-request latency r (``--delay-ms``, a sleep that does not hold
  the GIL, as :mod:`latency` does) the minimal strategy takes about ⌈F/T⌉·r; the rest of a
  committer's time is its serial phases and its pool's gaps.

The store is the strict in-memory store of :mod:`fakes` (zero latency, or r per request), so
the figures are the committer's own; the same job (F files of 16 B over tasks of
``--files-per-task``) is prepared for each committer and committed with Spark's protocol.
cProfile of a committer's commit: ``--profile magic`` (top functions by own time, to stdout).

    .venv/bin/python bench/commit_cpu.py                  # writes results/commit_cpu.{json,md}
    .venv/bin/python bench/commit_cpu.py --quick --out-dir /tmp/x
    .venv/bin/python bench/commit_cpu.py --profile fenced --files 10000
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import functools
import io
import json
import math
import os
import pstats
import sys
import time
import uuid
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "reference"))
sys.path.insert(0, str(HERE))

from commit_costs import (  # noqa: E402
    THREAD_OPTION,
    Layout,
    environment,
    prepare_job,
)
from fakes import MemoryStore  # noqa: E402
from latency import DelayedStore  # noqa: E402
from servers import MotoServer  # noqa: E402
from strategies import JobTarget, MinimalMultipart  # noqa: E402

import zerorename as zr  # noqa: E402
from zerorename.store import ListPage, ObjectInfo, StoreCapabilities, UploadInfo  # noqa: E402

RESULTS = HERE / "results"
COMMITTERS = ("magic", "fenced", "directory", "partitioned", "manifest")
#: the publishing request of each committer (what the minimal strategy sends F of)
PUBLISH_OP = {"manifest": "copy"}  # a store without rename, as S3
DEST = "mem://bench/out"


@dataclass(frozen=True)
class Request:
    op: str
    start: float
    end: float


class TracingStore:
    """Records every request's operation, start and end (``perf_counter``) while ``tracing``."""

    def __init__(self, inner: DelayedStore) -> None:
        self.inner = inner
        self.name = inner.name
        self.tracing = False
        self.requests: list[Request] = []  # list.append is atomic under the GIL

    def _traced(self, op: str, fn: Callable[[], Any]) -> Any:
        if not self.tracing:
            return fn()
        start = time.perf_counter()
        try:
            return fn()
        finally:
            self.requests.append(Request(op, start, time.perf_counter()))

    def capabilities(self, url: str | None = None) -> StoreCapabilities:
        return self.inner.capabilities(url)

    def request_counts(self) -> dict[str, int]:
        return self.inner.request_counts()

    def put(self, url: str, data: bytes, *, if_none_match: bool = False,
            if_match: str | None = None) -> str:
        return str(self._traced("put", lambda: self.inner.put(
            url, data, if_none_match=if_none_match, if_match=if_match)))

    def get(self, url: str) -> bytes:
        return bytes(self._traced("get", lambda: self.inner.get(url)))

    def head(self, url: str) -> ObjectInfo | None:
        info: ObjectInfo | None = self._traced("head", lambda: self.inner.head(url))
        return info

    def list_page(self, prefix: str, *, delimiter: str | None = None, token: str | None = None,
                  max_keys: int = 1000) -> ListPage:
        page: ListPage = self._traced("list_page", lambda: self.inner.list_page(
            prefix, delimiter=delimiter, token=token, max_keys=max_keys))
        return page

    def delete(self, url: str) -> None:
        self._traced("delete", lambda: self.inner.delete(url))

    def delete_many(self, urls: Sequence[str]) -> None:
        self._traced("delete_many", lambda: self.inner.delete_many(urls))

    def copy(self, src: str, dst: str) -> str:
        return str(self._traced("copy", lambda: self.inner.copy(src, dst)))

    def rename(self, src: str, dst: str) -> None:
        self._traced("rename", lambda: self.inner.rename(src, dst))

    def create_multipart(self, url: str) -> str:
        return str(self._traced("create_multipart", lambda: self.inner.create_multipart(url)))

    def upload_part(self, url: str, upload_id: str, part_number: int, data: bytes) -> str:
        return str(self._traced("upload_part", lambda: self.inner.upload_part(
            url, upload_id, part_number, data)))

    def complete_multipart(self, url: str, upload_id: str, parts: Sequence[tuple[int, str]], *,
                           if_none_match: bool = False, if_match: str | None = None) -> str:
        return str(self._traced("complete_multipart", lambda: self.inner.complete_multipart(
            url, upload_id, parts, if_none_match=if_none_match, if_match=if_match)))

    def abort_multipart(self, url: str, upload_id: str) -> None:
        self._traced("abort_multipart", lambda: self.inner.abort_multipart(url, upload_id))

    def list_multipart_uploads(self, prefix: str) -> list[UploadInfo]:
        uploads: list[UploadInfo] = self._traced(
            "list_multipart_uploads", lambda: self.inner.list_multipart_uploads(prefix))
        return uploads


def new_store(inner: Any, delay: float) -> tuple[TracingStore, DelayedStore]:
    """The committer's store: ``inner`` behind a delay (r per request) and the tracer."""
    delayed = DelayedStore(inner, delay)
    return TracingStore(delayed), delayed


@dataclass(frozen=True)
class Moto:
    """A moto server's client (one per process, as the side-by-side benchmark has)."""

    client: Any

    def fresh(self) -> tuple[zr.S3Store, str]:
        bucket = f"zr-cpu-{uuid.uuid4().hex[:10]}"
        self.client.create_bucket(Bucket=bucket)
        store = zr.S3Store(self.client, name="moto")
        store.capabilities(f"s3://{bucket}/probe")
        return store, bucket


# -- the minimal strategy on the store interface -----------------------------------------


def minimal_job(store: TracingStore, layout: Layout) -> list[tuple[str, str, str]]:
    """Tasks: create + part per file; the 'messages' are (url, upload id, part ETag)."""
    body = b"z" * layout.size
    items: list[tuple[str, str, str]] = []
    for t in range(layout.tasks):
        for path in layout.paths(t):
            url = f"{DEST}/{path}"
            upload = store.create_multipart(url)
            items.append((url, upload, store.upload_part(url, upload, 1, body)))
    return items


def minimal_commit(store: TracingStore, items: list[tuple[str, str, str]], threads: int) -> None:
    def complete(item: tuple[str, str, str]) -> None:
        url, upload, etag = item
        store.complete_multipart(url, upload, [(1, etag)])

    if threads <= 1:
        for item in items:
            complete(item)
    else:
        with ThreadPoolExecutor(threads) as pool:
            list(pool.map(complete, items))
    store.put(f"{DEST}/_SUCCESS", b"")


# -- measuring ----------------------------------------------------------------------------


def critical_path(requests: list[Request], start: float, end: float, publish: str,
                  threads: int) -> dict[str, Any]:
    """What the request timeline says about the commit's critical path (ms)."""
    pubs = [r for r in requests if r.op == publish]
    if not pubs:
        return {}
    first = min(r.start for r in pubs)
    last = max(r.end for r in pubs)
    busy = sum(r.end - r.start for r in pubs)
    before: dict[str, int] = {}
    after: dict[str, int] = {}
    for r in requests:
        if r.op == publish:
            continue
        if r.end <= first:
            before[r.op] = before.get(r.op, 0) + 1
        elif r.start >= last:
            after[r.op] = after.get(r.op, 0) + 1
    span = last - first
    return {
        "before_first_publish_ms": round((first - start) * 1000, 1),
        "publishing_ms": round(span * 1000, 1),
        "after_last_publish_ms": round((end - last) * 1000, 1),
        "mean_in_flight": round(busy / span, 2) if span > 0 else None,
        "pool_fill": round(busy / span / threads, 2) if span > 0 else None,
        "requests_before_first_publish": before,
        "requests_after_last_publish": after,
    }


def measure(committer: str, layout: Layout, threads: int, delay: float,
            profile: bool = False, moto: Moto | None = None) -> dict[str, Any]:
    """One job commit (Spark's protocol): CPU, wall, requests and the critical path."""
    dest = DEST
    inner: Any = MemoryStore()  # or an S3Store on moto: DelayedStore forwards to either
    if moto is not None:
        inner, bucket = moto.fresh()
        dest = f"s3://{bucket}/out"
    store, delayed = new_store(inner, delay)
    publish = PUBLISH_OP.get(committer, "complete_multipart")
    if committer == "minimal" and moto is not None:  # plain boto3, as side_by_side runs it
        target = JobTarget(moto.client, bucket, "out", threads)
        minimal = MinimalMultipart(target)
        body = b"z" * layout.size
        with ThreadPoolExecutor(4) as tasks:
            messages = list(tasks.map(lambda t: minimal.write_task(t, layout.paths(t), body),
                                      range(layout.tasks)))

        def run() -> None:
            minimal.commit_job(messages)
    elif committer == "minimal":
        items = minimal_job(store, layout)

        def run() -> None:
            minimal_commit(store, items, threads)
    else:
        job = prepare_job(store, dest, committer, layout,
                          {THREAD_OPTION[committer]: str(threads)},
                          task_threads=4 if moto is not None else 1)

        def run() -> None:
            jc = zr.create_committer(committer, store, job.job)
            success = jc.commit_job(job.messages)
            if success.diagnostics.get("threads") != str(threads):
                raise RuntimeError(f"{committer} ran with {success.diagnostics.get('threads')}")

    profiler = cProfile.Profile() if profile else None
    store.tracing = True
    delayed.delaying = True
    before = store.request_counts()
    cpu0, wall0 = time.process_time(), time.perf_counter()
    if profiler is not None:
        profiler.enable()
    try:
        run()
    finally:
        if profiler is not None:
            profiler.disable()
        wall1, cpu1 = time.perf_counter(), time.process_time()
        store.tracing = False
        delayed.delaying = False
    after = store.request_counts()
    counts = {op: after.get(op, 0) - before.get(op, 0) for op in after
              if after.get(op, 0) - before.get(op, 0)}
    row: dict[str, Any] = {
        "committer": committer, "files": layout.files, "tasks": layout.tasks,
        "threads": threads, "delay_ms": delay * 1000,
        "commit_seconds": round(wall1 - wall0, 4),
        "cpu_seconds": round(cpu1 - cpu0, 4),
        "cpu_us_per_file": round((cpu1 - cpu0) / layout.files * 1e6, 1),
        "commit_requests": sum(counts.values()), "commit_requests_by_op": dict(sorted(
            counts.items())),
        "critical_path": critical_path(store.requests, wall0, wall1, publish, threads),
    }
    if delay > 0:
        row["bound_seconds"] = round(math.ceil(layout.files / threads) * delay, 3)
    if profiler is not None:
        out = io.StringIO()
        pstats.Stats(profiler, stream=out).sort_stats("tottime").print_stats(35)
        row["profile"] = out.getvalue()
    return row


def best_of(repeats: int, fn: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    """The run with the least CPU of ``repeats`` (noise from other processes only adds)."""
    rows = [fn() for _ in range(max(1, repeats))]
    best = min(rows, key=lambda r: float(r["cpu_seconds"]))
    best["repeats"] = repeats
    best["cpu_us_per_file_all"] = [r["cpu_us_per_file"] for r in rows]
    return best


def markdown(report: dict[str, Any]) -> str:
    lines = [
        f"# Job commit: CPU per file and critical path ({report['when']})", "",
        f"Reference commit {report['environment'].get('reference_commit', '?')}; load "
        f"average {report['environment'].get('load_average_at_start')}.  Spark's protocol, "
        f"Store: {report.get('store')}.  "
        f"F = {report['files']} files over {report['tasks']} tasks.  CPU: process time of the "
        "committer's process during commit_job (best of the repeats).  Critical path from the "
        "request timeline: time before the first publishing request (complete; copy for "
        "manifest), time after the last one, and completes in flight while publishing "
        "(pool fill = that / T).", "",
    ]
    for delay in sorted({r["delay_ms"] for r in report["rows"]}):
        lines += [f"## r = {delay:g} ms per request", "",
                  "| committer | T | CPU µs / file | × minimal CPU | commit s | × minimal s "
                  "| before first publish ms | after last publish ms | pool fill | requests |",
                  "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
        rows = [r for r in report["rows"] if r["delay_ms"] == delay]
        for r in rows:
            base = next((b for b in rows if b["committer"] == "minimal"
                         and b["threads"] == r["threads"]), None)
            cp = r.get("critical_path", {})
            cpu_x = (f"{r['cpu_us_per_file'] / base['cpu_us_per_file']:.2f}"
                     if base else "—")
            wall_x = (f"{r['commit_seconds'] / base['commit_seconds']:.2f}"
                      if base and base["commit_seconds"] else "—")
            lines.append(
                f"| {r['committer']} | {r['threads']} | {r['cpu_us_per_file']:.0f} | {cpu_x} | "
                f"{r['commit_seconds']:.3f} | {wall_x} | "
                f"{cp.get('before_first_publish_ms', '—')} | "
                f"{cp.get('after_last_publish_ms', '—')} | {cp.get('pool_fill', '—')} | "
                f"{r['commit_requests']} |")
        lines.append("")
    return "\n".join(lines)


def compare(before: dict[str, Any], after: dict[str, Any]) -> str:
    """Before/after table of two reports (same store and F): CPU per file and the critical
    path of each committer and T, with the minimal strategy of each run beside them."""
    def key(r: dict[str, Any]) -> tuple[float, int, str]:
        return (r["delay_ms"], r["threads"], r["committer"])

    old = {key(r): r for r in before["rows"]}
    lines = [f"# Job commit before / after ({before.get('store')}, F = {after['files']:,})", "",
             f"Before: {before['when']}, committers of "
             f"{before['environment'].get('reference_commit')}, load average "
             f"{before['environment'].get('load_average_at_start')}.  After: {after['when']}, "
             f"committers of {after['environment'].get('reference_commit')}, load average "
             f"{after['environment'].get('load_average_at_start')}.  Each cell is before → "
             "after.  Wall times move with the load of the shared machine; CPU per file and "
             "the requests outside the publishing window do not.", "",
             "| r ms | T | committer | CPU µs / file | before first publish ms | after last "
             "publish ms | requests before first publish | requests after last publish |",
             "|---:|---:|---|---:|---:|---:|---|---|"]
    for r in sorted(after["rows"], key=key):
        b = old.get(key(r))
        if b is None:
            continue
        cb, ca = b.get("critical_path", {}), r.get("critical_path", {})

        def ops(path: dict[str, Any], which: str) -> str:
            found = path.get(which) or {}
            return ", ".join(f"{op} {n}" for op, n in sorted(found.items())) or "—"

        lines.append(
            f"| {r['delay_ms']:g} | {r['threads']} | {r['committer']} | "
            f"{b['cpu_us_per_file']:.0f} → {r['cpu_us_per_file']:.0f} | "
            f"{cb.get('before_first_publish_ms', '—')} → {ca.get('before_first_publish_ms', '—')}"
            f" | {cb.get('after_last_publish_ms', '—')} → {ca.get('after_last_publish_ms', '—')}"
            f" | {ops(cb, 'requests_before_first_publish')} → "
            f"{ops(ca, 'requests_before_first_publish')} | "
            f"{ops(cb, 'requests_after_last_publish')} → "
            f"{ops(ca, 'requests_after_last_publish')} |")
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="F = 400, one repeat")
    ap.add_argument("--files", type=int, default=10_000)
    ap.add_argument("--files-per-task", type=int, default=250)
    ap.add_argument("--threads", default="1,8")
    ap.add_argument("--delays-ms", default="0,20")
    ap.add_argument("--delay-threads", default="8,32",
                    help="thread counts measured with a delay (T = 1 at r = 20 ms and F = "
                         "10,000 waits 200 s a committer)")
    ap.add_argument("--repeats", type=int, default=3, help="zero-latency runs per cell")
    ap.add_argument("--committers", default=",".join(("minimal", *COMMITTERS)))
    ap.add_argument("--profile", metavar="COMMITTER",
                    help="print cProfile of one commit (T = first of --threads, r = 0)")
    ap.add_argument("--compare", nargs=2, type=Path, metavar=("BEFORE", "AFTER"),
                    help="write the before/after table of two reports (to stdout) and exit")
    ap.add_argument("--moto", action="store_true",
                    help="S3Store on a moto server (child process) instead of the memory store;"
                         " the minimal strategy on plain boto3 as side_by_side runs it")
    ap.add_argument("--out-dir", type=Path, default=RESULTS)
    ap.add_argument("--label", default="", help="stored in the report (e.g. before/after)")
    args = ap.parse_args(argv)
    if args.compare:
        print(compare(*(json.loads(p.read_text()) for p in args.compare)), end="")
        return 0
    files, per_task = (400, 50) if args.quick else (args.files, args.files_per_task)
    layout = Layout(max(1, files // per_task), per_task, size=16)
    threads = [int(t) for t in args.threads.split(",")]
    with contextlib.ExitStack() as stack:
        moto: Moto | None = None
        if args.moto:
            server = stack.enter_context(MotoServer())
            moto = Moto(zr.make_s3_client(server.endpoint(), access_key="testing",
                                          secret_key="testing", max_pool_connections=64))
        return run_all(args, layout, threads, moto)


def run_all(args: argparse.Namespace, layout: Layout, threads: list[int],
            moto: Moto | None) -> int:
    if args.profile:
        row = measure(args.profile, layout, threads[0], 0.0, profile=True, moto=moto)
        print(row.pop("profile"))
        print(json.dumps(row, indent=1))
        return 0
    delays = [float(d) / 1000 for d in args.delays_ms.split(",")]
    committers = [c.strip() for c in args.committers.split(",") if c.strip()]
    repeats = 1 if args.quick else args.repeats
    report: dict[str, Any] = {
        "benchmark": "commit_cpu", "mode": "quick" if args.quick else "full",
        "label": args.label, "when": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "environment": environment(),
        "store": "moto server (S3Store; minimal on plain boto3)" if moto is not None else
                 "bench/fakes.py MemoryStore",
        "files": layout.files, "tasks": layout.tasks, "rows": [],
    }
    delay_threads = [int(t) for t in args.delay_threads.split(",")]
    for delay in delays:
        for t in (delay_threads if delay > 0 else threads):
            for name in committers:
                if delay > 0:  # a sleeping store: one run (its CPU is the same)
                    row = measure(name, layout, t, delay, moto=moto)
                else:
                    row = best_of(repeats, functools.partial(measure, name, layout, t, delay,
                                                             moto=moto))
                report["rows"].append(row)
                cp = row["critical_path"]
                print(f"  r={delay * 1000:g}ms T={t:2d} {name:12s} cpu "
                      f"{row['cpu_us_per_file']:6.0f} µs/file  wall "
                      f"{row['commit_seconds']:7.3f} s  before "
                      f"{cp.get('before_first_publish_ms')} ms  after "
                      f"{cp.get('after_last_publish_ms')} ms  fill {cp.get('pool_fill')}",
                      flush=True)
    report["environment"]["load_average_at_end"] = [round(x, 2) for x in os.getloadavg()]
    args.out_dir.mkdir(parents=True, exist_ok=True)
    stem = "commit_cpu" + ("_moto" if moto is not None else "") + (
        f"_{args.label}" if args.label else "")
    (args.out_dir / f"{stem}.json").write_text(json.dumps(report, indent=2) + "\n")
    text = markdown(report)
    (args.out_dir / f"{stem}.md").write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
