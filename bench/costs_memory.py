"""Parts 3 and 4 of ``commit_costs``: how much memory a job commit needs.

Part 3 traces a job commit's allocations (tracemalloc) on the in-memory store of
:mod:`fakes`; part 4 reads the peak RSS of a 100,000-file job commit in a child process of its
own (:mod:`commit_rss`).  Apart from :mod:`commit_costs` (which runs them and keeps the shared
job helpers) so that each module stays one concern.
"""

from __future__ import annotations

import subprocess
import tracemalloc
from collections.abc import Sequence
from typing import Any

import commit_rss
from commit_costs import PROTOCOLS, RENAME_FAMILY, Layout, check_output, commit, prepare_job
from fakes import MemoryStore

__all__ = ["RSS_COMMITTERS", "commit_memory", "commit_rss_rows"]


# -- 3. memory of a job commit ------------------------------------------------------------


def commit_memory(committers: Sequence[str],
                  shapes: Sequence[tuple[int, int]]) -> list[dict[str, Any]]:
    """Peak traced memory of ``commit_job`` for each (tasks, files per task) in ``shapes``,
    under both protocols, with the committer's default threads.

    Each shape's tasks run once; the store is snapshot before the first commit and restored
    for the second, so both protocols commit the same state.  tracemalloc starts just before
    ``commit_job``, so the messages the driver already holds are not in the peak (their JSON
    size is reported apart: Spark's driver holds them anyway).  Two marginal figures say
    what grows: bytes per extra task (one-file tasks, smallest vs largest task count) and
    bytes per extra file (same task count, 1 vs more files per task).
    """
    rows: list[dict[str, Any]] = []
    for name in committers:
        for tasks, files_per_task in shapes:
            rows += _memory_rows(name, Layout(tasks, files_per_task, size=16, partitions=10))
    for row in rows:
        def same(r: dict[str, Any], row: dict[str, Any] = row) -> bool:
            return (r["committer"], r["protocol"]) == (row["committer"], row["protocol"])

        ones = [r for r in rows if same(r) and r["files_per_task"] == 1]
        if row["files_per_task"] == 1 and row["tasks"] > min(r["tasks"] for r in ones):
            ref = min(ones, key=lambda r: r["tasks"])
            row["marginal_bytes_per_task"] = round(
                (row["peak_bytes"] - ref["peak_bytes"]) / (row["tasks"] - ref["tasks"]))
        ref1 = [r for r in ones if r["tasks"] == row["tasks"]]
        if row["files_per_task"] > 1 and ref1:
            row["marginal_bytes_per_file"] = round(
                (row["peak_bytes"] - ref1[0]["peak_bytes"]) / (row["files"] - ref1[0]["files"]))
    return rows


def _memory_rows(name: str, layout: Layout) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    dest = "mem://bench/out"
    store = MemoryStore(rename=name in RENAME_FAMILY)
    run = prepare_job(store, dest, name, layout, {})
    snapshot = store.snapshot()
    message_bytes = sum(len(m.dumps()) for m in run.messages)
    for protocol in PROTOCOLS:
        store.restore(snapshot)
        tracemalloc.start()
        try:
            success, seconds, counts = commit(run, protocol)
            current, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        rows.append({
            "committer": name, "protocol": protocol, "tasks": layout.tasks,
            "files_per_task": layout.files_per_task, "files": layout.files,
            "threads": success.diagnostics.get("threads"),
            "peak_bytes": peak, "bytes_per_task": round(peak / layout.tasks),
            "retained_bytes": current,
            "messages_bytes_json": message_bytes if protocol == "spark" else 0,
            "commit_seconds_traced": round(seconds, 2),
            "commit_requests": sum(counts.values()),
            "output": check_output(store, dest, layout, success),
        })
        print(f"  {name:10s} {protocol:6s} {layout.tasks:6d} x {layout.files_per_task}: peak "
              f"{peak / 1e6:7.2f} MB ({peak / layout.tasks:,.0f} B/task)", flush=True)
    return rows


# -- 4. peak RSS of a job commit ----------------------------------------------------------

#: ``directory``/``partitioned`` share the S3A job commit; their task phase stages 100,000
#: files on the local disk (minutes on a shared machine), so they are left out by default
RSS_COMMITTERS = ("magic", "fenced", "manifest")


def commit_rss_rows(committers: Sequence[str], tasks: int,
                    files_per_task: int) -> list[dict[str, Any]]:
    """Part 4: one child process per committer and protocol (:mod:`commit_rss`)."""
    rows: list[dict[str, Any]] = []
    for name in committers:
        for protocol in PROTOCOLS:
            try:
                row = commit_rss.measure(name, protocol, tasks, files_per_task)
            except (RuntimeError, OSError, ValueError, subprocess.SubprocessError) as exc:
                rows.append({"committer": name, "protocol": protocol, "tasks": tasks,
                             "files_per_task": files_per_task, "error": str(exc)[-500:]})
                print(f"  {name:10s} {protocol:6s} FAILED: {exc}", flush=True)
                continue
            rows.append(row)
            print(f"  {name:10s} {protocol:6s} {tasks:6d} x {files_per_task}: peak RSS "
                  f"{row['peak_rss_mb']:7.1f} MB (+{row['peak_increase_mb']:.1f} MB over "
                  f"{row['rss_before_mb']:.1f} MB before the commit)", flush=True)
    return rows
