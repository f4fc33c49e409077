"""The side-by-side benchmark's interleaving (``bench/interleave.py``): rounds rotate the order,
rows are medians over their runs, and ratios pair each run with the minimal run of the same
round.  Synthetic runs only: no server, no timing of anything real."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))

import interleave as il  # noqa: E402
import side_by_side as sbs  # noqa: E402


def _run(strategy: str, threads: int | None, rnd: str, commit_s: float,
         load: float = 1.0, requests: int = 1001) -> dict[str, Any]:
    return {"server": "moto", "strategy": strategy, "files": 1000, "threads": threads,
            "round": rnd, "position": 0, "load_average": [load, load, load],
            "requests_per_file": 3.0, "job_commit_requests": requests,
            "write_seconds": 1.0, "task_commit_seconds": 0.0,
            "job_commit_seconds": commit_s, "whole_run_seconds": commit_s + 1.0,
            "phases": {"commit_job": {"seconds": commit_s}}}


def test_schedule_rotates_every_strategy_through_the_rounds() -> None:
    rounds = il.schedule(["minimal", "s3fs", "fenced"], [1, 8], repeats=3)
    assert [(r, t) for r, t, _ in rounds] == [(0, 1), (0, 8), (1, 1), (1, 8), (2, 1), (2, 8)]
    # s3fs only in the rounds of the smallest T
    assert all(("s3fs" in order) == (t == 1) for _, t, order in rounds)
    firsts = [order[0] for _, t, order in rounds if t == 1]
    assert firsts == ["minimal", "s3fs", "fenced"]
    assert il.rotated(["a", "b", "c"], 4) == ["b", "c", "a"]
    assert il.rotated([], 2) == []


def test_aggregate_takes_medians_and_keeps_every_run() -> None:
    runs = [_run("fenced", 8, "1000:8:0", 3.0, load=2.0), _run("fenced", 8, "1000:8:1", 9.0),
            _run("fenced", 8, "1000:8:2", 4.0, load=5.0, requests=1007)]
    (row,) = il.aggregate(runs)
    assert row["job_commit_seconds"] == 4.0 and row["whole_run_seconds"] == 5.0
    assert row["job_commit_requests"] == 1007  # the counts of the median run
    assert row["repeats"] == 3 and [r["round"] for r in row["runs"]] == \
        ["1000:8:0", "1000:8:1", "1000:8:2"]
    assert row["load_range"] == [1.0, 5.0]


def test_aggregate_reports_failures() -> None:
    failed = {"server": "moto", "strategy": "magic", "files": 1000, "threads": 8,
              "round": "1000:8:1", "error": "RuntimeError: boom"}
    rows = il.aggregate([_run("magic", 8, "1000:8:0", 3.0), failed])
    assert rows[0]["failed_runs"] == [{"round": "1000:8:1", "error": "RuntimeError: boom"}]
    (only,) = il.aggregate([failed])
    assert only["error"] == "RuntimeError: boom"


def test_ratios_pair_runs_of_the_same_round() -> None:
    # drift: round 1 runs everything 3x slower; per-round ratios are 1.1, 1.1, 2.0
    minimal = il.aggregate([_run("minimal", 8, f"1000:8:{i}", s)
                            for i, s in enumerate((2.0, 6.0, 2.0))])
    fenced = il.aggregate([_run("fenced", 8, f"1000:8:{i}", s)
                           for i, s in enumerate((2.2, 6.6, 4.0))])
    rows = [*minimal, *fenced]
    sbs.add_ratios(rows)
    ratio = rows[1]["ratio_to_minimal"]
    assert ratio["job_commit_seconds"] == 1.1  # not 4.0 / 2.0 = 2.0, the ratio of the medians
    assert ratio["job_commit_requests"] == 1.0
    assert rows[1]["ratio_paired"] is True


def test_ratios_without_common_rounds_divide_the_rows() -> None:
    rows = [*il.aggregate([_run("minimal", 8, "a", 2.0)]),
            *il.aggregate([_run("fenced", 8, "b", 3.0)])]
    sbs.add_ratios(rows)
    assert rows[1]["ratio_to_minimal"]["job_commit_seconds"] == 1.5
    assert "ratio_paired" not in rows[1]
