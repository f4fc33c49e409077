"""Interleaved, repeated runs of the side-by-side strategies, summarised by medians.

Why.  On the shared 2-core machine the load moves by a factor of several within minutes, and a
long-lived moto server may slow as it ages; measuring every strategy's rows one after the other
(minimal first, the committers last) turned that drift into differences between strategies.
Issue 15's targets are *ratios to the minimal strategy at the same thread count*, so the design
here cancels drift instead of hoping for a quiet machine:

* **rounds** — for each cell (F, T) and repeat r, one *round* runs every strategy once, the
  order rotated by r (round 0: minimal first; round 1: minimal last; ...), so no strategy is
  always measured early or late;
* **paired ratios** — a strategy's figure is divided by the minimal strategy's *of the same
  round* (seconds apart, under about the same load), and the row's ratio is the median of those
  per-round ratios;
* **medians** — a row's times are the medians over its repeats; its request counts and phases
  are those of its median run (by job-commit time).  Every run's own figures and load average
  are kept in the row's ``runs`` list.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from typing import Any

__all__ = ["RATIO_KEYS", "RUN_KEYS", "TIME_KEYS", "aggregate", "paired_ratios", "rotated",
           "schedule"]

#: the figures set against the minimal strategy's
RATIO_KEYS = ("requests_per_file", "job_commit_requests", "job_commit_seconds",
              "whole_run_seconds")
#: times: the row's value is the median over its runs
TIME_KEYS = ("write_seconds", "task_commit_seconds", "job_commit_seconds", "whole_run_seconds")
#: what each run keeps of its own in the row's ``runs``
RUN_KEYS = ("round", "position", "when", "load_average", "quiet_wait", "requests_per_file",
            "job_commit_requests", *TIME_KEYS)


def rotated(items: Sequence[str], by: int) -> list[str]:
    """``items`` rotated left by ``by`` (mod its length)."""
    if not items:
        return []
    k = by % len(items)
    return [*items[k:], *items[:k]]


def schedule(strategies: Sequence[str], thread_counts: Sequence[int], repeats: int
             ) -> list[tuple[int, int, list[str]]]:
    """The rounds of one F: ``(repeat, T, strategies in this round's order)``.  ``s3fs`` (no
    thread option) runs in the rounds of the smallest T only, against minimal at that T."""
    smallest = min(thread_counts)
    out = []
    for repeat in range(repeats):
        for threads in thread_counts:
            names = [s for s in strategies if s != "s3fs" or threads == smallest]
            out.append((repeat, threads, rotated(names, repeat)))
    return out


def _key(row: dict[str, Any]) -> tuple[str, str, int, int | None]:
    return row["server"], row["strategy"], row["files"], row["threads"]


def aggregate(runs: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per (server, strategy, F, T) from its runs: the median run's row (counts,
    phases, output check), its times replaced by the medians, ``runs`` and ``repeats`` added.
    A key whose every run failed gives its first failure; failed runs of a key that has a
    successful one are listed under ``failed_runs``."""
    groups: dict[tuple[str, str, int, int | None], list[dict[str, Any]]] = {}
    for run in runs:
        groups.setdefault(_key(run), []).append(run)
    rows = []
    for group in groups.values():
        good = [r for r in group if "error" not in r]
        bad = [r for r in group if "error" in r]
        if not good:
            rows.append(dict(bad[0]))
            continue
        by_time = sorted(good, key=lambda r: r["job_commit_seconds"])
        row = dict(by_time[(len(by_time) - 1) // 2])
        for k in TIME_KEYS:
            row[k] = round(statistics.median(r[k] for r in good), 3)
        row["repeats"] = len(good)
        row["runs"] = [{k: r[k] for k in RUN_KEYS if k in r} for r in good]
        loads = [r["load_average"][0] for r in good]
        row["load_range"] = [min(loads), max(loads)]
        if bad:
            row["failed_runs"] = [{"round": r.get("round"), "error": r["error"]} for r in bad]
        rows.append(row)
    return rows


def paired_ratios(row: dict[str, Any], base: dict[str, Any]) -> dict[str, float | None] | None:
    """``row`` against ``base`` (the minimal strategy's row), key by key: the median over
    the rounds both ran of ``row``'s figure / ``base``'s; ``None`` where they share no round
    (the caller then divides the rows' own figures)."""
    mine = {r["round"]: r for r in row.get("runs", ()) if "round" in r}
    theirs = {r["round"]: r for r in base.get("runs", ()) if "round" in r}
    common = [k for k in mine if k in theirs]
    if not common:
        return None
    out: dict[str, float | None] = {}
    for k in RATIO_KEYS:
        values = [mine[c][k] / theirs[c][k] for c in common if theirs[c][k]]
        out[k] = round(statistics.median(values), 2) if values else None
    return out
