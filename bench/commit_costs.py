"""What committing costs: requests per file, job commit time by threads, job commit memory.

Three measurements of the reference committers (issue 4), through their public API only:

1. **Requests per committed file** for a small job (4 tasks x 5 files), counted by the store
   (``request_counts()``) and split by operation and phase, for ``directory``, ``partitioned``,
   ``magic`` and ``manifest`` on LocalStore and on moto-as-S3 (the manifest committer "renames"
   there by copy + delete), and ``v1``/``v2`` on LocalStore, under Spark's protocol
   (``commit_job(messages)``) and Hadoop's (``commit_job()``).  Each is set against the
   **protocol minimum** derived in :func:`protocol_minimum` (and in ``bench/README.md``); a
   committer below its minimum would be skipping a step the protocol needs, so the benchmark
   exits 1 if any operation is.
2. **Job commit time for 1,000 files** on moto's ThreadedMotoServer (127.0.0.1, own process)
   at 1, 8 and 32 threads (``fs.s3a.committer.threads``; ``mapreduce.manifest.committer.io.threads``
   for manifest), for ``magic`` and ``directory`` by default (``--time-committers`` for more:
   each extra committer adds about a minute on 2 cores).
3. **Peak memory** (tracemalloc) of a job commit over 10,000 one-file tasks on an in-memory
   fake store (``bench/fakes.py``), under both protocols, for ``magic`` (the S3A job commit that
   ``directory``/``partitioned`` share) and ``manifest``; plus 500 x 1 and 500 x 5 files, so
   the growth per extra task and per extra file can be read off.
4. **Peak RSS** of a job commit of 100,000 files over 10,000 tasks, each measured in a driver
   process of its own (:mod:`commit_rss`: the store served by another process, the tasks run
   in a third; ``VmHWM`` reset just before ``commit_job``), under both protocols, for
   ``magic``, ``fenced`` and ``manifest``; the goal is under 200 MB.

Wall times depend on the 2-core machine (client and server share it; the load average is
recorded); request counts and minimums do not.

    .venv/bin/python bench/commit_costs.py            # writes bench/results/commit_costs.*
    .venv/bin/python bench/commit_costs.py --quick    # small sizes (the CI smoke test), ~15 s
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import time
import uuid
from collections import Counter
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from tempfile import TemporaryDirectory
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "reference"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from minimum import (  # noqa: E402
    DELETES,
    ON_LOCAL,
    ON_S3,
    PAGE,
    PROTOCOLS,
    RENAME_FAMILY,
    S3A,
    THREAD_OPTION,
    Layout,
    below_minimum,
    merge_renames,
    pages,
    protocol_minimum,
)
from runinfo import environment, reference_commit  # noqa: E402
from servers import MotoServer  # noqa: E402

import zerorename as zr  # noqa: E402

#: the shared names (:mod:`minimum`, :mod:`runinfo`) are re-exported: the other benchmarks and
#: the tests import them from here
__all__ = [
    "DELETES", "ON_LOCAL", "ON_S3", "PAGE", "PROTOCOLS", "RENAME_FAMILY", "S3A",
    "THREAD_OPTION", "JobRun", "Layout", "below_minimum", "check_output", "commit",
    "environment", "main", "merge_renames", "pages", "prepare_job", "protocol_minimum",
    "reference_commit",
]

RESULTS = REPO / "bench" / "results"


# -- measuring ----------------------------------------------------------------------------


def diff(after: dict[str, int], before: dict[str, int]) -> dict[str, int]:
    return {k: v - before.get(k, 0) for k, v in sorted(after.items()) if v - before.get(k, 0)}


@dataclass
class JobRun:
    """A job set up and through task commit, waiting for its job commit."""

    store: Any
    job: zr.JobContext
    committer: str
    layout: Layout
    messages: list[zr.TaskCommitMessage]
    counts: dict[str, dict[str, int]]
    task_seconds: float


def prepare_job(store: Any, dest: str, committer: str, layout: Layout,
                options: dict[str, str], task_threads: int = 1) -> JobRun:
    """setup_job, then every task: setup_task, write its files, commit_task."""
    job = zr.JobContext(dest=dest, options=options)
    c0 = store.request_counts()
    zr.create_committer(committer, store, job).setup_job()
    c1 = store.request_counts()
    body = b"z" * layout.size

    def task(t: int) -> zr.TaskCommitMessage:
        tc = zr.create_committer(committer, store, job, task=job.task(t))
        tc.setup_task()
        for path in layout.paths(t):
            tc.write(path, body)
        if not tc.needs_task_commit():
            raise RuntimeError(f"{committer}: task {t} wrote files but needs no commit")
        return tc.commit_task()

    start = time.perf_counter()
    if task_threads > 1:
        with ThreadPoolExecutor(task_threads) as pool:
            messages = list(pool.map(task, range(layout.tasks)))
    else:
        messages = [task(t) for t in range(layout.tasks)]
    seconds = time.perf_counter() - start
    c2 = store.request_counts()
    return JobRun(store, job, committer, layout, messages,
                  {"setup_job": diff(c1, c0), "tasks": diff(c2, c1)}, seconds)


def commit(run: JobRun, protocol: str) -> tuple[zr.SuccessData, float, dict[str, int]]:
    """The job commit under ``protocol``: wall seconds and the requests it sent."""
    jc = zr.create_committer(run.committer, run.store, run.job)
    before = run.store.request_counts()
    start = time.perf_counter()
    success = jc.commit_job(run.messages if protocol == "spark" else None)
    seconds = time.perf_counter() - start
    return success, seconds, diff(run.store.request_counts(), before)


def check_output(store: Any, dest: str, layout: Layout, success: zr.SuccessData) -> dict[str, int]:
    """What a reader sees after the commit (not counted: the counts were taken before)."""
    visible = hidden = 0
    for obj in zr.list_dir(store, dest):
        rel = obj.url[len(dest.rstrip("/")) + 1:]
        if any(p.startswith(("_", ".")) for p in rel.split("/")):
            hidden += rel != "_SUCCESS"
        else:
            visible += 1
    uploads = len(store.list_multipart_uploads(dest.rstrip("/") + "/"))
    said = success.metrics.get("files")  # v1/v2 leave metrics empty
    if visible != layout.files or said not in (None, layout.files):
        raise RuntimeError(f"{dest}: {visible} files visible, _SUCCESS says {said}, "
                           f"expected {layout.files}")
    return {"visible_files": visible, "leftover_hidden_objects": hidden,
            "leftover_uploads": uploads}


def stage_ms(success: zr.SuccessData) -> dict[str, int]:
    """Job commit stage durations (ms) from the _SUCCESS statistics."""
    means = success.iostatistics.get("meanstatistics", {})
    return {k.removesuffix(".mean"): int(v.get("sum", 0)) for k, v in sorted(means.items())
            if k.startswith("job_stage_")}


# -- stores -------------------------------------------------------------------------------

def s3_store(endpoint: str) -> tuple[zr.S3Store, str]:
    """A fresh bucket and an S3Store whose capability probe is already done (not counted)."""
    client = zr.make_s3_client(endpoint, access_key="testing", secret_key="testing")
    bucket = f"zr-costs-{uuid.uuid4().hex[:10]}"
    client.create_bucket(Bucket=bucket)
    store = zr.S3Store(client, name="moto")
    store.capabilities(f"s3://{bucket}/probe")
    return store, bucket


# -- 1. requests per file -----------------------------------------------------------------


def request_costs(layout: Layout, endpoint: Callable[[], str] | None, local_root: str,
                  s3_protocols: Sequence[str],
                  s3_committers: Sequence[str] = ON_S3) -> list[dict[str, Any]]:
    """Part 1: LocalStore runs first, then (when ``endpoint`` is given) moto runs."""
    rows: list[dict[str, Any]] = []
    plan = [(name, protocol, "local") for name in ON_LOCAL for protocol in PROTOCOLS]
    if endpoint is not None:
        plan += [(name, protocol, "s3") for name in s3_committers for protocol in s3_protocols]
    s3: tuple[zr.S3Store, str] | None = None
    for name, protocol, kind in plan:
        store: Any
        if kind == "local":
            store = zr.LocalStore(root=local_root)
            dest = f"file://{local_root}/{uuid.uuid4().hex[:8]}"
        else:
            if s3 is None:
                assert endpoint is not None
                s3 = s3_store(endpoint())
            store, dest = s3[0], f"s3://{s3[1]}/{uuid.uuid4().hex[:8]}"
        run = prepare_job(store, dest, name, layout, {THREAD_OPTION[name]: "1"})
        success, _, job_counts = commit(run, protocol)
        phases = run.counts | {"commit_job": job_counts}
        total: Counter[str] = Counter()
        for counts in phases.values():
            total.update(counts)
        minimum = protocol_minimum(name, kind, protocol, layout)
        short = below_minimum(dict(total), minimum)
        rows.append({
            "committer": name, "store": kind, "protocol": protocol,
            "tasks": layout.tasks, "files": layout.files, "file_bytes": layout.size,
            "requests": dict(sorted(total.items())), "requests_by_phase": phases,
            "total": sum(total.values()), "per_file": round(sum(total.values()) / layout.files, 2),
            "minimum": minimum, "minimum_total": sum(minimum.values()),
            "minimum_per_file": round(sum(minimum.values()) / layout.files, 2),
            "below_minimum": {op: list(v) for op, v in short.items()},
            "output": check_output(store, dest, layout, success),
        })
    return rows


# -- 2. job commit time by threads --------------------------------------------------------


def commit_times(endpoint: str, committers: Sequence[str], threads: Sequence[int],
                 layout: Layout, task_threads: int) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for name in committers:
        for n in threads:
            store, bucket = s3_store(endpoint)  # a fresh bucket: runs do not slow each other
            dest = f"s3://{bucket}/out"
            run = prepare_job(store, dest, name, layout, {THREAD_OPTION[name]: str(n)},
                              task_threads=task_threads)
            success, seconds, counts = commit(run, "spark")
            if success.diagnostics.get("threads") != str(n):
                raise RuntimeError(f"{name} ran with {success.diagnostics.get('threads')} "
                                   f"threads, asked for {n}")
            requests = sum(counts.values())
            rows.append({
                "committer": name, "threads": n, "option": THREAD_OPTION[name],
                "files": layout.files, "tasks": layout.tasks, "protocol": "spark",
                "commit_seconds": round(seconds, 3), "commit_requests": requests,
                "commit_requests_by_op": counts,
                "requests_per_second": round(requests / seconds, 1),
                "files_per_second": round(layout.files / seconds, 1),
                "task_phase_seconds": round(run.task_seconds, 2),
                "stages_ms": stage_ms(success),
                "output": check_output(store, dest, layout, success),
            })
            print(f"  {name:10s} {n:2d} threads: job commit {seconds:6.2f} s "
                  f"({requests} requests)", flush=True)
    for row in rows:
        base = next(r for r in rows if r["committer"] == row["committer"])
        row["speedup_vs_first"] = round(base["commit_seconds"] / row["commit_seconds"], 2)
    return rows


#: report keys of the three measurements
PART_KEYS = ("requests_per_file", "commit_time", "commit_memory", "commit_rss")


def merge_previous(report: dict[str, Any], path: Path) -> dict[str, Any]:
    """A run of some parts (``--parts 3``) keeps the other parts' results from ``path`` (a
    previous run of the same mode), noting when each part was measured, so re-measuring one
    part never erases the others."""
    try:
        previous = json.loads(path.read_text())
    except (OSError, ValueError):
        return report
    if previous.get("mode") != report["mode"]:
        return report
    measured = report["part_seconds"]
    when = dict(previous.get("part_when") or {})
    for key in PART_KEYS:
        if key in measured:
            when[key] = report["when"]
        elif previous.get(key):
            report[key] = previous[key]
            report["part_seconds"][key] = previous.get("part_seconds", {}).get(key) or 0
            when.setdefault(key, previous.get("when"))
    report["part_when"] = when
    return report


def main(argv: Sequence[str] | None = None) -> int:
    # parts 3 and 4 use this module's job helpers, so they are imported when run
    from costs_memory import RSS_COMMITTERS, commit_memory, commit_rss_rows
    from costs_report import markdown

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="small sizes, for the smoke test")
    ap.add_argument("--out-dir", type=Path, default=RESULTS)
    ap.add_argument("--no-moto", action="store_true", help="LocalStore and memory only")
    ap.add_argument("--time-committers", default=None,
                    help=f"comma list for the timing part, from {', '.join(ON_S3)} "
                         "(default magic,directory)")
    ap.add_argument("--parts", default="1,2,3,4", help="which measurements to run")
    args = ap.parse_args(argv)
    parts = {p.strip() for p in args.parts.split(",")}
    os.environ.setdefault("AWS_ACCESS_KEY_ID", "testing")
    os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "testing")
    s3_protocols: Sequence[str]
    s3_committers: Sequence[str]
    threads: Sequence[int]
    rss_committers: Sequence[str]
    if args.quick:
        small, s3_protocols, s3_committers = Layout(2, 2), ("spark",), ("magic", "manifest")
        timing, threads, task_threads = Layout(2, 4), (1, 4), 2
        mem_shapes = [(50, 1), (50, 3), (100, 1)]
        rss_shape, rss_committers = (200, 5), ("magic", "manifest")
    else:
        small, s3_protocols, s3_committers = Layout(4, 5), PROTOCOLS, ON_S3
        timing, threads, task_threads = Layout(50, 20, size=1024), (1, 8, 32), 8
        mem_shapes = [(500, 1), (500, 5), (10_000, 1)]
        rss_shape, rss_committers = (10_000, 10), RSS_COMMITTERS
    timed = (args.time_committers or ("magic" if args.quick else "magic,directory")).split(",")
    if not set(timed) <= set(ON_S3):
        ap.error(f"--time-committers: choose from {', '.join(ON_S3)} (v1/v2 need rename)")

    start = time.monotonic()
    report: dict[str, Any] = {
        "benchmark": "commit_costs", "mode": "quick" if args.quick else "full",
        "when": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "environment": environment(),
        "requests_per_file": [], "commit_time": [], "commit_memory": [], "commit_rss": [],
        "part_seconds": {},
    }

    def timed_part(key: str, label: str, fn: Callable[[], list[dict[str, Any]]]) -> None:
        print(label, flush=True)
        t = time.monotonic()
        report[key] = fn()
        report["part_seconds"][key] = round(time.monotonic() - t, 1)

    use_moto = not args.no_moto and bool(parts & {"1", "2"})
    with TemporaryDirectory(prefix="zr-costs-") as tmp, \
            (MotoServer() if use_moto else contextlib.nullcontext()) as server:
        endpoint = server.endpoint if server is not None else None
        if "3" in parts:  # first: needs no server, which starts meanwhile
            timed_part("commit_memory", f"3. job commit memory (tasks x files: {mem_shapes})",
                       lambda: commit_memory(("magic", "manifest"), mem_shapes))
        if "4" in parts:
            timed_part("commit_rss", f"4. job commit peak RSS ({rss_shape[0]} tasks x "
                       f"{rss_shape[1]} files)",
                       lambda: commit_rss_rows(rss_committers, *rss_shape))
        if "1" in parts:
            timed_part("requests_per_file",
                       f"1. requests per file ({small.tasks} tasks x {small.files_per_task}"
                       " files)", lambda: request_costs(small, endpoint, tmp, s3_protocols,
                                                        s3_committers))
        if "2" in parts and endpoint is not None:
            timed_part("commit_time", f"2. job commit time ({timing.files} files)",
                       lambda: commit_times(endpoint(), timed, threads, timing, task_threads))
    report["environment"]["load_average_at_end"] = [round(x, 2) for x in os.getloadavg()]
    report["total_seconds"] = round(time.monotonic() - start, 1)

    args.out_dir.mkdir(parents=True, exist_ok=True)
    report = merge_previous(report, args.out_dir / "commit_costs.json")
    (args.out_dir / "commit_costs.json").write_text(json.dumps(report, indent=2) + "\n")
    text = markdown(report)
    (args.out_dir / "commit_costs.md").write_text(text)
    print(text)
    bad = [r for r in report["requests_per_file"] if r["below_minimum"]]
    for r in bad:
        print(f"BELOW PROTOCOL MINIMUM: {r['committer']} on {r['store']} ({r['protocol']}): "
              f"{r['below_minimum']}", file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
