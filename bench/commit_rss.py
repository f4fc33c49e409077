"""Peak resident memory (RSS) of one job commit, measured in a child process of its own.

Why RSS of a child rather than tracemalloc: the goal (< 200 MB for a job commit of 100,000
files over 10,000 tasks) is about what the driver's process needs from the machine, which
includes what tracemalloc does not see (interpreter overhead, freed-but-kept arenas, C
extensions' buffers); and a fresh process per measurement keeps one commit's garbage out of
the next's figure.

How: the child builds the job on the in-memory store of ``bench/fakes.py`` (setup, every
task's writes and commit, as ``commit_costs.prepare_job``), collects garbage, reads its RSS
(``VmRSS``), resets the kernel's high-water mark (writing ``5`` to ``/proc/self/clear_refs``
zeroes ``VmHWM``, Linux >= 4.0), runs ``commit_job`` under the chosen protocol and reads
``VmHWM``: the peak RSS *during the commit*.  The process then holds the store's objects and
the messages too (Spark's driver holds the messages anyway), so the figure reported against
the goal is also given as the increase over the RSS before the commit.  Where the mark cannot
be reset the row says so and the peak is the process's whole life.
"""

from __future__ import annotations

import argparse
import gc
import json
import re
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent

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


def measure(committer: str, protocol: str, tasks: int, files_per_task: int,
            timeout: float = 1800.0) -> dict[str, Any]:
    """Run the measurement in a fresh interpreter; its row."""
    proc = subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), "--child", committer, protocol,
         str(tasks), str(files_per_task)],
        capture_output=True, text=True, timeout=timeout, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"commit_rss child failed ({proc.returncode}): {proc.stderr[-2000:]}")
    row: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return row


def child(committer: str, protocol: str, tasks: int, files_per_task: int) -> dict[str, Any]:
    sys.path.insert(0, str(HERE.parent / "reference"))
    sys.path.insert(0, str(HERE))
    from commit_costs import RENAME_FAMILY, Layout, check_output, commit, prepare_job
    from fakes import MemoryStore

    layout = Layout(tasks, files_per_task, size=16, partitions=10)
    store = MemoryStore(rename=committer in RENAME_FAMILY)
    dest = "mem://bench/out"
    t0 = time.perf_counter()
    run = prepare_job(store, dest, committer, layout, {})
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
        "method": "VmHWM of a child process, reset before commit_job" if reset else
                  "VmHWM of a child process (could not reset: peak of its whole life)",
        "rss_before_mb": round(before / 1024, 1),
        "peak_rss_mb": round(peak / 1024, 1),
        "peak_increase_mb": round((peak - before) / 1024, 1),
        "rss_after_mb": round(after / 1024, 1),
        "commit_seconds": round(seconds, 2), "task_phase_seconds": round(task_seconds, 1),
        "commit_requests": sum(counts.values()),
        "output": check_output(store, dest, layout, success),
    }


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--child", nargs=4, metavar=("COMMITTER", "PROTOCOL", "TASKS", "FILES"),
                    required=True, help="measure in this process and print the row as JSON")
    args = ap.parse_args(argv)
    committer, protocol, tasks, files = args.child
    print(json.dumps(child(committer, protocol, int(tasks), int(files))), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
