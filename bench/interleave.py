"""Interleaved, repeated runs of the side-by-side strategies, summarised by medians.

Why.  On the shared 2-core machine the load moves by a factor of several within minutes, and a
long-lived moto server may slow as it ages; measuring every strategy's rows one after the other
(minimal first, the committers last) turned that drift into differences between strategies.
Issue 15's targets are *ratios to the minimal strategy at the same thread count*, so the design
here cancels drift instead of hoping for a quiet machine:

* **rounds** — for each cell (F, T) and repeat r, one *round* runs every strategy once, in
  the order :func:`round_order` gives: rounds come in pairs, the second the first reversed,
  and each pair starts from the next row of a balanced Latin square.  A strategy's positions
  in a pair add up to the same sum for every strategy, so a drift that grows steadily through
  a round cancels in two rounds; and a strategy does not always follow the same one (a plain
  rotation kept ``directory`` right after ``fenced`` in every round, so whatever ``fenced``
  left the server doing fell on ``directory`` alone);
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

__all__ = ["RATIO_KEYS", "RUN_KEYS", "TIME_KEYS", "aggregate", "latin_row", "paired_ratios",
           "round_order", "schedule"]

#: the figures set against the minimal strategy's
RATIO_KEYS = ("requests_per_file", "job_commit_requests", "job_commit_seconds",
              "whole_run_seconds")
#: times: the row's value is the median over its runs
TIME_KEYS = ("write_seconds", "task_commit_seconds", "job_commit_seconds", "whole_run_seconds")
#: what each run keeps of its own in the row's ``runs``
RUN_KEYS = ("round", "position", "when", "load_average", "quiet_wait", "requests_per_file",
            "job_commit_requests", *TIME_KEYS)


def latin_row(n: int, row: int) -> list[int]:
    """Row ``row`` of the Williams balanced Latin square of order ``n``: ``0, 1, n-1, 2, n-2,
    ...`` shifted by ``row`` (mod n).  For even ``n`` its n rows put every item once in every
    position and right after every other item once; for odd ``n`` the rows with their
    reverses do (which :func:`round_order` supplies)."""
    if n <= 0:
        return []
    first = [0]
    low, high = 1, n - 1
    while len(first) < n:
        if len(first) % 2:
            first.append(low)
            low += 1
        else:
            first.append(high)
            high -= 1
    return [(x + row) % n for x in first]


def round_order(items: Sequence[str], repeat: int) -> list[str]:
    """The order of ``items`` in round ``repeat``: :func:`latin_row` ``repeat // 2``, reversed
    in odd rounds."""
    order = [items[i] for i in latin_row(len(items), repeat // 2)]
    return order[::-1] if repeat % 2 else order


def schedule(strategies: Sequence[str], thread_counts: Sequence[int], repeats: int
             ) -> list[tuple[int, int, list[str]]]:
    """The rounds of one F: ``(repeat, T, strategies in this round's order)``.  ``s3fs`` (no
    thread option) runs in the rounds of the smallest T only, against minimal at that T."""
    smallest = min(thread_counts)
    out = []
    for repeat in range(repeats):
        for threads in thread_counts:
            names = [s for s in strategies if s != "s3fs" or threads == smallest]
            out.append((repeat, threads, round_order(names, repeat)))
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
