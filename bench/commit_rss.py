"""Peak resident memory (RSS) of one job commit, measured in a driver process of its own.

Why RSS rather than tracemalloc: the goal (< 200 MB for a job commit of 100,000 files over
10,000 tasks) is about what the driver's process needs from the machine, which includes what
tracemalloc does not see (interpreter overhead, freed-but-kept arenas, C extensions' buffers).

Why three processes: in a real job the store is a remote server and the tasks run in executors;
the driver holds neither.  So (:func:`measure`):

1. the **store** — one :class:`fakes.MemoryStore` — is served by a process of its own
   (``bench/store_server.py``, a fresh interpreter on a Unix socket);
2. the **tasks' phase** (``setup_job``, then every task's ``setup_task``, writes and
   ``commit_task``, as ``commit_costs.prepare_job``) runs in another fresh interpreter against
   that store and, for Spark's protocol, writes the task commit messages to a file as each
   task hands it to Spark (``TaskCommitMessage.compressed``: the bytes of ``zerorename.spark``'s
   ``TaskOutcome.message``);
3. the **driver** is a third fresh interpreter: it imports zerorename, connects to the store,
   loads the messages (Spark's protocol only: it holds every task's bytes, as Spark's driver
   holds the outcomes, and ``TaskCommitMessage.from_compressed`` of each, as
   ``zerorename.spark``'s driver does),
   collects garbage, reads ``VmRSS`` (*before*), resets the kernel's high-water mark (writing
   ``5`` to ``/proc/self/clear_refs`` zeroes ``VmHWM``, Linux >= 4.0), builds the committer
   and runs ``commit_job`` with the committer's default threads, then reads ``VmHWM``
   (*peak*: the figure against the goal) and ``VmRSS`` (*after*).  Only then does it check
   the output (every file visible, no upload left) and count what the server holds.

Where the mark cannot be reset the row says so and the peak is the driver's whole life.

``--in-process`` keeps the earlier measurement (until 2026-11): one child process holds the
store, runs the tasks and commits, so its peak is mostly the store and the task phase's
leftovers; kept for comparison only.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import pickle
import re
import select
import subprocess
import sys
import time
import tracemalloc
from collections.abc import Sequence
from pathlib import Path
from tempfile import TemporaryDirectory
from typing import Any

HERE = Path(__file__).resolve().parent
DEST = "mem://bench/out"
#: threads the tasks' phase runs tasks on: overlaps the client's and the server's work
TASK_THREADS = 4

METHOD = ("VmHWM of a driver process of its own (fresh interpreter: zerorename, a socket "
          "client of the store server, the task messages under Spark's protocol; not the "
          "store, not the tasks), reset before commit_job")
METHOD_IN_PROCESS = ("VmHWM of a child process, reset before commit_job (in-process: the "
                     "process also holds the store and ran the tasks)")

_STATUS = Path("/proc/self/status")


def _status_kb(field: str) -> int:
    match = re.search(rf"^{field}:\s+(\d+) kB", _STATUS.read_text(), re.MULTILINE)
    if match is None:
        raise RuntimeError(f"{_STATUS} has no {field}")
    return int(match.group(1))


def _reset_peak() -> bool:
    try:
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        return False
    return True


def _paths() -> None:
    for p in (str(HERE), str(HERE.parent / "reference")):
        if p not in sys.path:
            sys.path.insert(0, p)


def _run_json(argv: list[str], env: dict[str, str], timeout: float, what: str) -> dict[str, Any]:
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, check=False,
                          env=env)
    if proc.returncode != 0:
        raise RuntimeError(f"commit_rss {what} failed ({proc.returncode}): {proc.stderr[-2000:]}")
    row: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return row


def measure(committer: str, protocol: str, tasks: int, files_per_task: int,
            timeout: float = 1800.0, *, in_process: bool = False,
            trace_top: int = 0) -> dict[str, Any]:
    """One row: the store server, the tasks' phase and the driver, each a process of its own
    (``in_process``: the earlier single child).  ``trace_top``: also trace the driver's
    allocations during ``commit_job`` (tracemalloc, which slows it and adds to its RSS) and
    report the ``trace_top`` largest lines at the traced peak."""
    script = str(Path(__file__).resolve())
    shape = [committer, protocol, str(tasks), str(files_per_task)]
    if in_process:
        return _run_json([sys.executable, script, "--child", *shape], dict(os.environ),
                         timeout, "child")
    _paths()
    from minimum import RENAME_FAMILY
    from store_server import AUTHKEY_ENV

    deadline = time.monotonic() + timeout
    env = dict(os.environ) | {AUTHKEY_ENV: os.urandom(16).hex()}
    with TemporaryDirectory(prefix="zr-rss-") as tmp:
        address, messages = str(Path(tmp) / "store.sock"), str(Path(tmp) / "messages.pickle")
        errors = Path(tmp) / "store.err"
        with errors.open("w") as err:  # a file, not a pipe: nobody reads it while it serves
            server = subprocess.Popen(
                [sys.executable, str(HERE / "store_server.py"), "--address", address,
                 *(["--rename"] if committer in RENAME_FAMILY else [])],
                stdout=subprocess.PIPE, stderr=err, text=True, env=env)
        try:
            assert server.stdout is not None
            ready, _, _ = select.select([server.stdout], [], [], 60)
            if not ready or server.stdout.readline().strip() != "ready":
                raise RuntimeError(f"store server did not start: {errors.read_text()[-2000:]}")
            common = ["--address", address, "--messages", messages]
            tasks_row = _run_json(
                [sys.executable, script, "--tasks-phase", *shape, *common], env,
                deadline - time.monotonic(), "tasks' phase")
            row = _run_json(
                [sys.executable, script, "--driver", *shape, *common, "--job-id",
                 tasks_row["job_id"], "--trace-top", str(trace_top)], env,
                deadline - time.monotonic(), "driver")
        finally:
            server.terminate()
            try:
                server.wait(10)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()
            if server.stdout is not None:
                server.stdout.close()
    row["task_phase_seconds"] = tasks_row["task_phase_seconds"]
    row["task_phase_pid"] = tasks_row["pid"]
    return row


# -- the processes ------------------------------------------------------------------------


def tasks_phase(committer: str, protocol: str, tasks: int, files_per_task: int, address: str,
                messages: str) -> dict[str, Any]:
    """setup_job and every task, against the served store; Spark's messages to a file."""
    _paths()
    from commit_costs import Layout, prepare_job
    from store_server import AUTHKEY_ENV, RemoteStore

    store = RemoteStore(address, bytes.fromhex(os.environ[AUTHKEY_ENV]))
    layout = Layout(tasks, files_per_task, size=16, partitions=10)
    t0 = time.perf_counter()
    run = prepare_job(store, DEST, committer, layout, {}, task_threads=TASK_THREADS)
    seconds = time.perf_counter() - t0
    if protocol == "spark":
        with open(messages, "wb") as f:
            pickle.dump([m.compressed() for m in run.messages], f)
    assert run.job.job_id is not None
    return {"job_id": run.job.job_id, "task_phase_seconds": round(seconds, 1),
            "pid": os.getpid()}


def driver(committer: str, protocol: str, tasks: int, files_per_task: int, address: str,
           messages: str, job_id: str, trace_top: int = 0) -> dict[str, Any]:
    """The measured process: see the module docstring, step 3."""
    _paths()
    from store_server import AUTHKEY_ENV, RemoteStore

    import zerorename as zr

    store = RemoteStore(address, bytes.fromhex(os.environ[AUTHKEY_ENV]))
    gc.collect()
    bare = _status_kb("VmRSS")  # interpreter, zerorename, the store's client
    loaded: list[zr.TaskCommitMessage] | None = None
    outcomes: list[bytes] = []  # held to the end, as Spark's driver holds the outcomes
    if protocol == "spark":
        with open(messages, "rb") as f:
            outcomes = pickle.load(f)
        loaded = [zr.TaskCommitMessage.from_compressed(blob) for blob in outcomes]
    job = zr.JobContext(dest=DEST, job_id=job_id, options={})
    # nothing of the store's lives here: the fake is not even imported
    holds_store = "fakes" in sys.modules
    server_before = store.server_status()
    counts0 = store.request_counts()
    gc.collect()
    before = _status_kb("VmRSS")
    reset = _reset_peak()
    sampler = _Sampler() if trace_top else None
    start = time.perf_counter()
    jc = zr.create_committer(committer, store, job)
    success = jc.commit_job(loaded)
    seconds = time.perf_counter() - start
    traced = sampler.stop(trace_top) if sampler is not None else {}
    peak = _status_kb("VmHWM")
    after = _status_kb("VmRSS")
    counts1 = store.request_counts()
    # -- measured; now what the commit left (not counted: the counts were taken) --------
    from commit_costs import Layout, check_output

    layout = Layout(tasks, files_per_task, size=16, partitions=10)
    row: dict[str, Any] = {
        "committer": committer, "protocol": protocol, "tasks": tasks,
        "files_per_task": files_per_task, "files": layout.files,
        "threads": success.diagnostics.get("threads"),
        "method": METHOD if reset else METHOD.replace(
            "reset before commit_job", "(could not reset: peak of its whole life)"),
        "rss_before_messages_mb": round(bare / 1024, 1),
        "rss_before_mb": round(before / 1024, 1),
        "peak_rss_mb": round(peak / 1024, 1),
        "peak_increase_mb": round((peak - before) / 1024, 1),
        "rss_after_mb": round(after / 1024, 1),
        "commit_seconds": round(seconds, 2),
        "commit_requests": sum(counts1.values()) - sum(counts0.values()),
        "driver_pid": os.getpid(), "driver_holds_store": holds_store,
        "messages_loaded": len(loaded) if loaded is not None else 0,
        "message_bytes_held": sum(len(b) for b in outcomes),
        "store_server": {"pid": server_before["pid"], "objects_before_commit":
                         server_before["objects"], "uploads_before_commit":
                         server_before["uploads"], "rss_mb_before_commit":
                         server_before["rss_mb"]},
        "output": check_output(store, DEST, layout, success),
    }
    if traced:
        row["tracemalloc"] = traced
    return row


class _Sampler:
    """tracemalloc during the commit: a thread looks at the traced total every 0.2 s and
    snapshots it whenever it has grown 5 % past the largest seen, so the report shows the
    allocations alive near the peak (not those left at the end)."""

    def __init__(self) -> None:
        import threading

        tracemalloc.start(1)
        self._best = 0
        self._snap: tracemalloc.Snapshot | None = None
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _look(self) -> None:
        current = tracemalloc.get_traced_memory()[0]
        if current > self._best * 1.05:
            self._best, self._snap = current, tracemalloc.take_snapshot()

    def _run(self) -> None:
        while not self._done.wait(0.2):
            self._look()

    def stop(self, top: int) -> dict[str, Any]:
        self._done.set()
        self._thread.join()
        self._look()
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        assert self._snap is not None
        stats = self._snap.statistics("lineno")
        return {"traced_peak_mb": round(peak / 2**20, 1),
                "snapshot_mb": round(self._best / 2**20, 1),
                "top": [{"where": f"{s.traceback[0].filename}:{s.traceback[0].lineno}",
                         "kib": round(s.size / 1024, 1), "count": s.count}
                        for s in stats[:top]]}


def child(committer: str, protocol: str, tasks: int, files_per_task: int) -> dict[str, Any]:
    """``--in-process``: the earlier measurement, store and tasks in the measured process."""
    _paths()
    from commit_costs import RENAME_FAMILY, Layout, check_output, commit, prepare_job
    from fakes import MemoryStore

    layout = Layout(tasks, files_per_task, size=16, partitions=10)
    store = MemoryStore(rename=committer in RENAME_FAMILY)
    t0 = time.perf_counter()
    run = prepare_job(store, DEST, committer, layout, {})
    task_seconds = time.perf_counter() - t0
    gc.collect()
    before = _status_kb("VmRSS")
    reset = _reset_peak()
    success, seconds, counts = commit(run, protocol)
    peak = _status_kb("VmHWM")
    after = _status_kb("VmRSS")
    return {
        "committer": committer, "protocol": protocol, "tasks": tasks,
        "files_per_task": files_per_task, "files": layout.files,
        "threads": success.diagnostics.get("threads"),
        "method": METHOD_IN_PROCESS if reset else
        "VmHWM of a child process (could not reset: peak of its whole life; in-process)",
        "rss_before_mb": round(before / 1024, 1),
        "peak_rss_mb": round(peak / 1024, 1),
        "peak_increase_mb": round((peak - before) / 1024, 1),
        "rss_after_mb": round(after / 1024, 1),
        "commit_seconds": round(seconds, 2), "task_phase_seconds": round(task_seconds, 1),
        "commit_requests": sum(counts.values()),
        "output": check_output(store, DEST, layout, success),
    }


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    shape = ("COMMITTER", "PROTOCOL", "TASKS", "FILES")
    mode = ap.add_mutually_exclusive_group(required=True)
    mode.add_argument("--measure", nargs=4, metavar=shape,
                      help="measure (three processes, or one with --in-process); print the row")
    mode.add_argument("--child", nargs=4, metavar=shape,
                      help="(internal) the --in-process measurement, in this process")
    mode.add_argument("--tasks-phase", nargs=4, metavar=shape, help="(internal)")
    mode.add_argument("--driver", nargs=4, metavar=shape, help="(internal)")
    ap.add_argument("--in-process", action="store_true",
                    help="with --measure: the earlier single-process measurement")
    ap.add_argument("--trace-top", type=int, default=0, metavar="N",
                    help="with --measure: trace the driver's allocations (tracemalloc) during "
                         "commit_job and report the N largest lines (slows the commit)")
    ap.add_argument("--address", help=argparse.SUPPRESS)
    ap.add_argument("--messages", help=argparse.SUPPRESS)
    ap.add_argument("--job-id", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)

    def parsed(values: list[str]) -> tuple[str, str, int, int]:
        return values[0], values[1], int(values[2]), int(values[3])

    if args.measure:
        row = measure(*parsed(args.measure), in_process=args.in_process,
                      trace_top=args.trace_top)
    elif args.child:
        row = child(*parsed(args.child))
    elif args.tasks_phase:
        row = tasks_phase(*parsed(args.tasks_phase), args.address, args.messages)
    else:
        row = driver(*parsed(args.driver), args.address, args.messages, args.job_id,
                     args.trace_top)
    print(json.dumps(row), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
