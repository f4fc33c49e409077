"""Side by side: zerorename's committers against what users would pick instead, on one server.

For each server (moto in a child process; Ceph RGW when it starts), each number of files F and
each thread count T, every strategy of :mod:`strategies` — the minimal deferred multipart,
rename-by-copy v1 and v2 on plain boto3, zerorename's ``magic``, ``fenced``, ``directory``,
``partitioned`` and ``manifest`` — and an s3fs transaction (:mod:`s3fs_job`) runs the same job
into a fresh bucket: F files of 4 KiB written by tasks of 250 files (``--files-per-task``),
4 tasks at a time (``--slots``), in four timed phases separated by barriers:

* **setup** — the job's setup;
* **write** — every task sets up and writes its files;
* **task commit** — every task commits and hands its message to the driver;
* **job commit** — the driver commits the job with the messages (Spark's protocol).

Every request goes through one boto3 client per server with :class:`wire.WireCounter` hooks
(s3fs: the same hooks on its aiobotocore client), so the counts are HTTP requests, retries
included, by operation; bytes copied are what the server copied (CopyObject).  T is the
strategy's thread option: the job commit's threads (``fs.s3a.committer.threads`` or
``mapreduce.manifest.committer.io.threads`` for zerorename; the completes or copies of the
baselines), and the copies of the baselines' task commits.  s3fs completes its uploads one
at a time whatever T is, so it runs once per F and server.  After each run the output is
checked (F files visible, ``_SUCCESS``, no upload left) and the bucket is emptied, uncounted —
on moto; a throw-away RGW keeps its buckets up to :data:`RGW_KEEP_BYTES` of data (emptying
them drifted the server, see there).

Drift of the shared machine's load is cancelled by design (:mod:`interleave`): each cell runs
``--repeats`` rounds, every strategy once per round, the orders from a balanced Latin square
with every second round the one before reversed (:func:`interleave.round_order`); a row
reports the medians of its runs, and its ratio to the minimal strategy is the median of the
ratios to the minimal run *of the same round*.  Before each run the benchmark waits until the
server's own processes are idle (:mod:`quiet`: ``--quiet-below`` of a core, at most
``--quiet-timeout`` s; each run records its wait), so no run meets a server still busy with the
previous run's objects.

Results: ``bench/results/side_by_side.json``, ``.md`` and ``.png`` (see
:mod:`render`, which also writes the README's table).  Times depend on the
machine (2 cores shared by client, server and anything else: the load average is recorded
per run); request counts and bytes do not.

    .venv/bin/python bench/side_by_side.py                    # F = 1,000 and 10,000, T = 1, 8, 32
    .venv/bin/python bench/side_by_side.py --run 1000:1,8,32 --run moto@10000:32  # chosen cells
    .venv/bin/python bench/side_by_side.py --quick --out-dir /tmp/x   # the smoke test's run
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import sys
import time
import traceback
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO / "reference"))
sys.path.insert(0, str(HERE))

import render  # noqa: E402
from buckets import RGW_KEEP_BYTES, Server, check_output  # noqa: E402
from commit_costs import Layout, environment, reference_commit  # noqa: E402
from interleave import aggregate, paired_ratios, schedule  # noqa: E402
from merging import merge_previous, replace_measured, same_committers  # noqa: E402
from quiet import CEPH_NAMES, QuietPolicy, server_pids, wait_until_quiet  # noqa: E402
from s3fs_job import find_s3fs_python, run_s3fs_job  # noqa: E402
from servers import MotoServer, radosgw_version, rgw_server  # noqa: E402
from strategies import BASELINES, ZERORENAME, JobTarget, Strategy, make_strategy  # noqa: E402
from wire import WireCounter  # noqa: E402

RESULTS = HERE / "results"
STRATEGIES = (*BASELINES, "s3fs", *ZERORENAME)
PHASES = ("setup_job", "write", "commit_task", "commit_job")
FILE_BYTES = 4096
def run_phases(strategy: Strategy, layout: Layout, slots: int,
               counter: WireCounter) -> dict[str, dict[str, Any]]:
    """The four phases, barrier-separated, each timed and counted."""
    body = b"z" * FILE_BYTES
    phases: dict[str, dict[str, Any]] = {}
    states: list[Any] = []
    messages: list[Any] = []

    def phase(name: str, fn: Callable[[], None]) -> None:
        before, start = counter.snapshot(), time.perf_counter()
        fn()
        took = time.perf_counter() - start
        phases[name] = {"seconds": took, **counter.snapshot().minus(before).as_dict()}

    def tasks(fn: Callable[[int], Any]) -> list[Any]:
        with ThreadPoolExecutor(slots) as pool:
            return list(pool.map(fn, range(layout.tasks)))

    phase("setup_job", strategy.setup_job)
    phase("write", lambda: states.extend(
        tasks(lambda t: strategy.write_task(t, layout.paths(t), body))))
    phase("commit_task", lambda: messages.extend(
        tasks(lambda t: strategy.commit_task(t, states[t]))))
    phase("commit_job", lambda: strategy.commit_job(messages))
    return phases


def summarize(row: dict[str, Any], phases: dict[str, dict[str, Any]], files: int) -> None:
    """The row's headline figures from its phases."""
    total = sum(p["total"] for p in phases.values())
    row.update({
        "phases": {k: {**v, "seconds": round(v["seconds"], 3)} for k, v in phases.items()},
        "requests_total": total,
        "requests_per_file": round(total / files, 3),
        "job_commit_requests": phases["commit_job"]["total"],
        "bytes_copied": sum(p["bytes_copied"] for p in phases.values()),
        "copies_of_unknown_size": sum(p["copies_of_unknown_size"] for p in phases.values()),
        "write_seconds": round(phases["write"]["seconds"], 3),
        "task_commit_seconds": round(phases["commit_task"]["seconds"], 3),
        "job_commit_seconds": round(phases["commit_job"]["seconds"], 3),
        "whole_run_seconds": round(sum(p["seconds"] for p in phases.values()), 3),
    })


REFERENCE_COMMIT = reference_commit()


def family(name: str) -> str:
    return "zerorename" if name in ZERORENAME else "s3fs" if name == "s3fs" else "baseline"


def run_one(server: Server, name: str, layout: Layout, threads: int | None, slots: int,
            s3fs_python: str | None) -> dict[str, Any]:
    row: dict[str, Any] = {
        "strategy": name, "family": family(name), "server": server.endpoint.name,
        "files": layout.files, "tasks": layout.tasks, "file_bytes": FILE_BYTES,
        "threads": threads, "slots": slots,
        "when": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "reference_commit": REFERENCE_COMMIT,
    }
    if server.quiet is not None:  # the previous run's work done on the server (see quiet.py)
        row["quiet_wait"] = wait_until_quiet(server.pids(), server.quiet).as_dict()
    row["load_average"] = [round(x, 2) for x in os.getloadavg()]
    with server.bucket(layout.files * FILE_BYTES) as bucket:
        prefix = "out"
        if name == "s3fs":
            assert s3fs_python is not None
            result = run_s3fs_job(s3fs_python, server.endpoint.url, server.endpoint.access_key,
                                  server.endpoint.secret_key, bucket, prefix,
                                  [layout.paths(t) for t in range(layout.tasks)], FILE_BYTES,
                                  slots)
            phases = result["phases"]
            row["versions"] = result["versions"]
            row["note"] = "fsspec completes the uploads one at a time: no thread option"
        else:
            assert threads is not None
            target = JobTarget(server.client, bucket, prefix, threads)
            phases = run_phases(make_strategy(name, target, server.store), layout, slots,
                                server.counter)
        summarize(row, phases, layout.files)
        row["output"] = check_output(server.client, bucket, prefix, layout.files)
        checked = time.perf_counter()
    row["empty_seconds"] = round(time.perf_counter() - checked, 1)  # uncounted, between runs
    return row


def add_ratios(rows: list[dict[str, Any]],
               superseded: list[dict[str, Any]] | None = None) -> None:
    """Each row against the minimal strategy of its server, F and T (s3fs, which has no thread
    option, against minimal at the smallest T measured: both then complete one at a time
    when that is 1) — measured in the same run where there is one (``superseded``: minimal
    rows a later ``--merge`` run measured again), since the load of a shared machine moves
    between runs more than between strategies."""
    keys = ("requests_per_file", "job_commit_requests", "job_commit_seconds",
            "whole_run_seconds")
    minimal = {(r["server"], r["files"], r["threads"]): r for r in rows
               if r["strategy"] == "minimal" and "error" not in r}
    same_run = {(r["server"], r["files"], r["threads"], r.get("run")): r
                for r in [*(superseded or []), *rows]
                if r["strategy"] == "minimal" and "error" not in r}
    for row in rows:
        if "error" in row or row["strategy"] == "minimal":
            continue
        threads = row["threads"]
        if threads is None:
            measured = [t for s, f, t in minimal if (s, f) == (row["server"], row["files"])]
            if not measured:
                continue
            threads = row["ratio_base_threads"] = min(measured)
        base = same_run.get((row["server"], row["files"], threads, row.get("run"))) \
            or minimal.get((row["server"], row["files"], threads))
        if base is not None:
            if base.get("run") != row.get("run"):
                row["ratio_base_run"] = base.get("run")
            paired = paired_ratios(row, base)
            if paired is not None:  # same rounds: the median of the per-round ratios
                row["ratio_to_minimal"] = paired
                row["ratio_paired"] = True
                continue
            row["ratio_to_minimal"] = {k: round(row[k] / base[k], 2) if base[k] else None
                                       for k in keys}


#: (F, thread counts, repeats of this cell or None for ``--repeats``)
Cells = list[tuple[int, list[int], int | None]]


def parse_cells(runs: Sequence[str], files: Sequence[int], threads: Sequence[int],
                server: str | None = None) -> Cells:
    """``--run [SERVER@]F:T1,T2[xN]`` cells for ``server`` (``xN``: N rounds for this cell
    instead of ``--repeats``; a cell naming no server is for every
    server), or the product of ``--files`` and ``--threads`` when no ``--run`` is given."""
    if not runs:
        return [(f, list(threads), None) for f in files]
    cells: Cells = []
    for spec in runs:
        where, at, cell = spec.rpartition("@")
        if at and server is not None and where != server:
            continue
        f, _, ts = cell.partition(":")
        ts, x, n = ts.partition("x")
        try:
            cells.append((int(f), [int(t) for t in ts.split(",")] if ts else list(threads),
                          int(n) if x else None))
        except ValueError as exc:
            raise SystemExit(f"--run {spec!r}: expected [SERVER@]F:T1,T2[xN] "
                             "(e.g. 10000:8,32 or moto@10000:32x1)") from exc
    return cells


def measure(server: Server, cells: Cells, strategies: Sequence[str],
            files_per_task: int, slots: int, s3fs_python: str | None,
            rows: list[dict[str, Any]], repeats: int = 1, log: Path | None = None,
            warmup: int = 0) -> None:
    """Every cell's rounds (:func:`interleave.schedule`: each repeat runs every strategy once
    per T, in :func:`interleave.round_order`), each run appended to ``rows`` with its round —
    and, as it ends, to ``log`` (JSON lines), so a run cut short keeps what it measured.

    Before each cell, ``warmup`` unrecorded runs of the minimal strategy at its first T: the
    first run on a fresh server, or the first of a larger F, is not like the others (moto,
    2026-11-25: ``minimal``'s job commit at F = 1,000, T = 1 took 3.12 s as the invocation's
    first run and 3.71 s in the next round, the committers 3.67-3.95 s in both; RGW, the same
    day, F = 10,000, T = 8: 20.9-21.6 s as the first run of a fresh server, 22.1-22.6 s
    later), and no strategy should be measured in that state."""
    names = [s for s in strategies if s != "s3fs" or s3fs_python is not None]
    for files, thread_counts, cell_repeats in cells:
        tasks = max(1, files // files_per_task)
        layout = Layout(tasks, files // tasks, size=FILE_BYTES)
        for _ in range(warmup):
            run_one(server, "minimal", layout, thread_counts[0], slots, None)
        if warmup:
            print(f"  {server.endpoint.name}: F={files}: {warmup} warm-up run(s), not recorded",
                  flush=True)
        for repeat, round_threads, order in schedule(names, thread_counts,
                                                     cell_repeats or repeats):
            for position, name in enumerate(order):
                threads = None if name == "s3fs" else round_threads
                label = f"{server.endpoint.name:5s} F={layout.files:6d} T={threads or '-':>2} " \
                        f"r{repeat} {name:12s}"
                tag = {"round": f"{layout.files}:{round_threads}:{repeat}",
                       "position": position}
                try:
                    row = run_one(server, name, layout, threads, slots, s3fs_python)
                except Exception as exc:  # recorded; the run goes on and exits 1
                    rows.append({"strategy": name, "family": family(name),
                                 "server": server.endpoint.name, "files": layout.files,
                                 "threads": threads, **tag,
                                 "error": f"{type(exc).__name__}: {exc}"})
                    print(f"  {label} FAILED: {exc}\n{traceback.format_exc()}", flush=True)
                    continue
                rows.append({**row, **tag})
                if log is not None:
                    with log.open("a") as f:
                        f.write(json.dumps(rows[-1]) + "\n")
                print(f"  {label} {row['requests_per_file']:5.2f} req/file, job commit "
                      f"{row['job_commit_requests']:6d} req {row['job_commit_seconds']:7.2f} s,"
                      f" whole {row['whole_run_seconds']:7.2f} s, load "
                      f"{row['load_average'][0]:.1f}", flush=True)


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true",
                    help="24 files in 4 tasks, T=4, moto only (the smoke test)")
    ap.add_argument("--files", default="1000,10000", help="comma list of F")
    ap.add_argument("--threads", default="1,8,32", help="comma list of T")
    ap.add_argument("--run", action="append", default=[], metavar="[SERVER@]F:T1,T2[xN]",
                    help="measure only these cells (repeatable; SERVER@ for one server only, "
                         "xN for N rounds of this cell); default: files x threads")
    ap.add_argument("--repeats", type=int, default=3,
                    help="rounds per cell: every strategy once per round, in balanced orders "
                         "(interleave.round_order); rows report medians and paired ratios "
                         "(--quick: 1)")
    ap.add_argument("--files-per-task", type=int, default=250)
    ap.add_argument("--slots", type=int, default=4, help="tasks running at once")
    ap.add_argument("--strategies", default=",".join(STRATEGIES))
    ap.add_argument("--servers", default="moto,rgw", help="comma list from moto, rgw")
    ap.add_argument("--s3fs-python", default=None,
                    help="interpreter with s3fs>=2023.1 (default: this one, or a virtualenv "
                         "the benchmark creates under ~/.cache/zerorename-bench)")
    ap.add_argument("--no-s3fs-venv", action="store_true",
                    help="do not create that virtualenv: without s3fs, skip it")
    ap.add_argument("--quiet-below", type=float, default=QuietPolicy.busy_below,
                    metavar="CORES",
                    help="before each run wait until the server's processes use less than "
                         "this much of a core (2 windows of 1 s running); 0: do not wait "
                         "(--quick: 0)")
    ap.add_argument("--quiet-timeout", type=float, default=QuietPolicy.timeout,
                    metavar="SECONDS", help="longest wait for a quiet server")
    ap.add_argument("--warmup", type=int, default=1, metavar="N",
                    help="unrecorded runs of the minimal strategy before each cell's rounds "
                         "(--quick: 0)")
    ap.add_argument("--out-dir", type=Path, default=RESULTS)
    ap.add_argument("--merge", action="store_true",
                    help="keep the rows of the previous results in --out-dir that this run "
                         "does not measure again")
    ap.add_argument("--replace", action="store_true",
                    help="with --merge: a row measured again replaces the earlier one instead "
                         "of pooling its rounds with it (so every row measured now comes from "
                         "this invocation alone), and the runs log starts afresh")
    ap.add_argument("--from-runs", type=Path, default=None, metavar="JSONL",
                    help="measure nothing: build the results from a runs log "
                         "(side_by_side.runs.jsonl of a sweep cut short)")
    ap.add_argument("--no-readme", action="store_true",
                    help="do not rewrite the READMEs' tables (always off with --quick or "
                         "--out-dir elsewhere)")
    args = ap.parse_args(argv)
    files = [int(x) for x in args.files.split(",")]
    threads = [int(x) for x in args.threads.split(",")]
    if args.quick:
        servers, files_per_task, slots = ["moto"], 6, 2
        cells_of: dict[str, Cells] = {"moto": [(24, [4], None)]}
    else:
        servers = [s.strip() for s in args.servers.split(",") if s.strip()]
        files_per_task, slots = args.files_per_task, args.slots
        cells_of = {s: parse_cells(args.run, files, threads, s) for s in servers}
    for name in servers:
        if name not in ("moto", "rgw"):
            ap.error(f"--servers: unknown {name!r} (moto, rgw)")
    strategies = [s.strip() for s in args.strategies.split(",") if s.strip()]
    unknown = set(strategies) - set(STRATEGIES)
    if unknown:
        ap.error(f"--strategies: unknown {sorted(unknown)}; choose from {', '.join(STRATEGIES)}")
    warmup = 0 if args.quick else max(0, args.warmup)
    quiet = None if args.quick or args.quiet_below <= 0 else QuietPolicy(
        busy_below=args.quiet_below, timeout=args.quiet_timeout)
    os.environ.setdefault("AWS_ACCESS_KEY_ID", "testing")
    os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "testing")

    start = time.monotonic()
    report: dict[str, Any] = {
        "benchmark": "side_by_side", "mode": "quick" if args.quick else "full",
        "when": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "environment": environment(),
        "job": {"file_bytes": FILE_BYTES, "files_per_task": files_per_task, "slots": slots,
                "protocol": "spark", "warmup_runs": warmup,
                "quiet_wait": None if quiet is None else {
                    "busy_below_cores": quiet.busy_below, "window_seconds": quiet.window,
                    "windows": quiet.windows, "timeout_seconds": quiet.timeout},
                "cells": {s: [{"files": f, "threads": t, "repeats": n or args.repeats}
                              for f, t, n in c]
                          for s, c in cells_of.items()}},
        "strategies": strategies, "servers": {}, "rows": [],
    }
    report["environment"]["radosgw"] = radosgw_version()
    s3fs_python: str | None = None
    if "s3fs" in strategies:
        s3fs_python, note = find_s3fs_python(args.s3fs_python, not args.no_s3fs_venv)
        report["s3fs"] = {"python": s3fs_python, "note": note}
        if s3fs_python is None:
            print(f"s3fs skipped: {note}", file=sys.stderr, flush=True)
    repeats = 1 if args.quick else max(1, args.repeats)
    report["job"]["repeats"] = repeats
    runs: list[dict[str, Any]] = []
    args.out_dir.mkdir(parents=True, exist_ok=True)
    log = args.out_dir / "side_by_side.runs.jsonl"  # every run as it ends (kept by --merge)
    if args.from_runs is not None:  # a sweep cut short: its runs, measured nothing again
        runs += [json.loads(line) for line in args.from_runs.read_text().splitlines() if line]
        for run in runs:
            report["servers"].setdefault(run["server"], {"note": f"runs from {args.from_runs}"})
        servers = []
    elif not args.merge or args.replace:
        log.write_text("")
    for name in servers:
        cells = cells_of[name]
        if not cells:
            continue
        max_threads = max(max(t) for _, t, _ in cells)
        t0 = time.monotonic()
        if name == "moto":
            with MotoServer() as moto:
                endpoint = moto.s3_endpoint()
                report["servers"]["moto"] = {"note": endpoint.note}
                print(f"moto at {endpoint.url}", flush=True)
                server = Server(endpoint, max_threads, slots, lambda: [moto.pid], quiet)
                measure(server, cells, strategies, files_per_task, slots, s3fs_python, runs,
                        repeats, log, warmup)
        elif name == "rgw":
            with rgw_server() as rgw:
                if isinstance(rgw, str):
                    report["servers"]["rgw"] = {"skipped": rgw}
                    print(f"rgw skipped: {rgw}", flush=True)
                    continue
                report["servers"]["rgw"] = {"note": rgw.note}
                print(f"rgw at {rgw.url} ({rgw.note})", flush=True)
                server = Server(rgw, max_threads, slots, functools.partial(
                    server_pids, CEPH_NAMES, command_line_has=rgw.state_dir), quiet,
                    keep_bytes=0 if rgw.note == "external" else RGW_KEEP_BYTES)
                measure(server, cells, strategies, files_per_task, slots, s3fs_python, runs,
                        repeats, log, warmup)
        report["servers"][name]["seconds"] = round(time.monotonic() - t0, 1)
    rows: list[dict[str, Any]] = aggregate(runs)
    report["rows"] = rows
    # which invocation measured it (kept through --merge); --from-runs: when its sweep began
    first = min((r["when"] for r in runs if "when" in r), default=None)
    for row in rows:
        row.setdefault("run", first if args.from_runs is not None and first else report["when"])
    args.out_dir.mkdir(parents=True, exist_ok=True)
    if args.merge:
        merge_previous(report, args.out_dir / "side_by_side.json",
                       replace_measured if args.replace else same_committers)
    for row in rows:
        row.pop("ratio_to_minimal", None)
        row.pop("ratio_base_threads", None)
        row.pop("ratio_base_run", None)
        row.pop("ratio_paired", None)
    add_ratios(rows, report.get("superseded_minimal"))
    report["environment"]["load_average_at_end"] = [round(x, 2) for x in os.getloadavg()]
    report["total_seconds"] = round(time.monotonic() - start, 1)

    (args.out_dir / "side_by_side.json").write_text(json.dumps(report, indent=2) + "\n")
    text = render.markdown(report)
    (args.out_dir / "side_by_side.md").write_text(text)
    render.plot(report, args.out_dir / "side_by_side.png")
    print(text)
    if not (args.quick or args.no_readme) and args.out_dir.resolve() == RESULTS.resolve():
        render.update_readme()
    failed = [r for r in rows if "error" in r or r.get("failed_runs")]
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
