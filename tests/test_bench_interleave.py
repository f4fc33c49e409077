"""The side-by-side benchmark's interleaving (``bench/interleave.py``): rounds in balanced orders,
rows are medians over their runs, and ratios pair each run with the minimal run of the same
round.  Synthetic runs only: no server, no timing of anything real."""

from __future__ import annotations

import itertools
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))

import buckets  # noqa: E402
import interleave as il  # noqa: E402
import merging  # noqa: E402
import side_by_side as sbs  # noqa: E402


def _run(strategy: str, threads: int | None, rnd: str, commit_s: float,
         load: float = 1.0, requests: int = 1001) -> dict[str, Any]:
    return {"server": "moto", "strategy": strategy, "files": 1000, "threads": threads,
            "round": rnd, "position": 0, "load_average": [load, load, load],
            "requests_per_file": 3.0, "job_commit_requests": requests,
            "write_seconds": 1.0, "task_commit_seconds": 0.0,
            "job_commit_seconds": commit_s, "whole_run_seconds": commit_s + 1.0,
            "phases": {"commit_job": {"seconds": commit_s}}}


def test_schedule_runs_every_strategy_once_per_round_in_balanced_orders() -> None:
    rounds = il.schedule(["minimal", "s3fs", "fenced"], [1, 8], repeats=3)
    assert [(r, t) for r, t, _ in rounds] == [(0, 1), (0, 8), (1, 1), (1, 8), (2, 1), (2, 8)]
    # s3fs only in the rounds of the smallest T
    assert all(("s3fs" in order) == (t == 1) for _, t, order in rounds)
    orders = [order for _, t, order in rounds if t == 1]
    assert orders == [["minimal", "s3fs", "fenced"], ["fenced", "s3fs", "minimal"],
                      ["s3fs", "fenced", "minimal"]]


def _balanced(rounds: list[list[str]]) -> bool:
    """Every strategy in every position, and right after every other one, equally often; in
    each pair of rounds the positions of every strategy add up to the same sum."""
    names = sorted(rounds[0])
    n = len(names)
    positions = Counter((name, i) for order in rounds for i, name in enumerate(order))
    follows = Counter(pair for order in rounds for pair in itertools.pairwise(order))
    pair_sums = [{first.index(s) + second.index(s) for s in names}
                 for first, second in zip(rounds[::2], rounds[1::2], strict=True)]
    return (all(sorted(order) == names for order in rounds)
            and len(positions) == n * n and len(set(positions.values())) == 1
            and len(follows) == n * (n - 1) and len(set(follows.values())) == 1
            and all(sums == {n - 1} for sums in pair_sums))


@pytest.mark.parametrize("n", [2, 3, 6, 7])
def test_round_order_balances_positions_and_predecessors(n: int) -> None:
    names = [f"s{i}" for i in range(n)]
    assert _balanced([il.round_order(names, r) for r in range(2 * n)])
    assert il.round_order([], 3) == []


def test_a_rotation_is_not_balanced() -> None:
    """The check above can fail: rotating the order (the schedule before 2026-11-27 13:30)
    keeps every strategy's predecessor and is rejected."""
    names = [f"s{i}" for i in range(6)]
    assert not _balanced([names[r:] + names[:r] for r in range(12)])


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


def _merged(tmp_path: Path, old_rows: list[dict[str, Any]], new_rows: list[dict[str, Any]],
            same: bool) -> dict[str, Any]:
    """``--merge`` of ``new_rows`` (this invocation) into a results file holding ``old_rows``,
    the committers judged the same or not without asking git, ratios added as main() does."""
    path = tmp_path / "side_by_side.json"
    path.write_text(json.dumps({"mode": "full", "when": "old", "rows": old_rows,
                                "servers": {}, "job": {"cells": {}}}))
    report: dict[str, Any] = {"mode": "full", "when": "new", "rows": new_rows, "servers": {},
                              "job": {"cells": {}}}
    merging.merge_previous(report, path,
                       same=lambda old, new: (same, "test: same" if same else "test: differ"))
    sbs.add_ratios(report["rows"], report.get("superseded_minimal"))
    return report


def _invocation(run: str, commit: str, times: dict[str, list[float]]) -> list[dict[str, Any]]:
    rows = il.aggregate([_run(name, 32, f"1000:32:{i}", s)
                         for name, seconds in times.items() for i, s in enumerate(seconds)])
    for row in rows:
        row.update({"run": run, "reference_commit": commit})
    return rows


def test_merge_pools_the_rounds_of_the_same_committers(tmp_path: Path) -> None:
    # earlier: one round (fenced 1.5x minimal); again on the same committers: three rounds
    # (1.0x, 1.1x, 1.2x).  Pooled: four rounds, the ratio the median of all four per-round ratios
    old = _invocation("old", "aaa", {"minimal": [2.0], "fenced": [3.0]})
    new = _invocation("new", "bbb", {"minimal": [2.0, 4.0, 2.0], "fenced": [2.0, 4.4, 2.4]})
    report = _merged(tmp_path, old, new, same=True)
    rows = {r["strategy"]: r for r in report["rows"]}
    assert len(report["rows"]) == 2
    fenced, minimal = rows["fenced"], rows["minimal"]
    assert fenced["repeats"] == minimal["repeats"] == 4  # not 3: the old round is kept
    rounds = [r["round"] for r in fenced["runs"]]
    assert len(set(rounds)) == 4 and rounds == [r["round"] for r in minimal["runs"]]
    assert [r["round_as_measured"] for r in fenced["runs"] if "round_as_measured" in r] == \
        ["1000:32:0", "1000:32:1", "1000:32:2"]
    assert [r["run"] for r in fenced["runs"]] == ["old", "new", "new", "new"]
    # per-round ratios 1.5, 1.0, 1.1, 1.2: median 1.15 (the new rounds alone: 1.1)
    assert fenced["ratio_to_minimal"]["job_commit_seconds"] == 1.15
    assert fenced["ratio_paired"] is True
    assert fenced["job_commit_seconds"] == 2.7  # median of 3.0, 2.0, 4.4, 2.4
    assert fenced["merge"]["pooled"] is True and fenced["pooled_runs"] == ["old", "new"]
    assert fenced["merge"]["rounds_before"] == 1 and fenced["merge"]["rounds_added"] == 3


def test_merge_replaces_rows_of_other_committers_and_says_so(tmp_path: Path) -> None:
    old = _invocation("old", "aaa", {"minimal": [2.0], "fenced": [3.0], "magic": [2.2]})
    new = _invocation("new", "bbb", {"minimal": [2.0, 4.0, 2.0], "fenced": [2.0, 4.4, 2.4]})
    report = _merged(tmp_path, old, new, same=False)
    rows = {r["strategy"]: r for r in report["rows"]}
    fenced, magic = rows["fenced"], rows["magic"]
    assert fenced["repeats"] == 3 and fenced["ratio_to_minimal"]["job_commit_seconds"] == 1.1
    assert fenced["merge"] == {"pooled": False, "replaced_run": "old",
                               "old_reference_commit": "aaa", "old_repeats": 1,
                               "why": "test: differ"}
    # new rounds are renumbered after the old one; magic, kept, still pairs with its round
    assert {r["round"] for r in fenced["runs"]} == {"1000:32:1", "1000:32:2", "1000:32:3"}
    assert magic["run"] == "old" and magic["ratio_to_minimal"]["job_commit_seconds"] == 1.1
    assert [r["strategy"] for r in report["superseded_minimal"]] == ["minimal"]


def test_same_committers_asks_git_about_reference_only() -> None:
    assert merging.same_committers("abc", "abc")[0] is True
    assert merging.same_committers("abc+changes", "abc")[0] is False
    assert merging.same_committers(None, "abc")[0] is False
    # 0f216ec changed reference/zerorename/executor.py
    ok, why = merging.same_committers("0f216ec~1", "0f216ec")
    assert ok is False and "differs" in why


def test_replace_never_pools_even_the_same_committers(tmp_path: Path) -> None:
    # --merge --replace: the committers are the same (one commit), yet this invocation's row
    # replaces the earlier one, and the kept row still pairs with its own round's minimal
    old = _invocation("old", "aaa", {"minimal": [2.0], "fenced": [3.0], "magic": [2.2]})
    new = _invocation("new", "aaa", {"minimal": [2.0, 4.0, 2.0], "fenced": [2.0, 4.4, 2.4]})
    path = tmp_path / "side_by_side.json"
    path.write_text(json.dumps({"mode": "full", "when": "old", "rows": old,
                                "servers": {}, "job": {"cells": {}}}))
    report: dict[str, Any] = {"mode": "full", "when": "new", "rows": new, "servers": {},
                              "job": {"cells": {}}}
    merging.merge_previous(report, path, same=merging.replace_measured)
    sbs.add_ratios(report["rows"], report.get("superseded_minimal"))
    rows = {r["strategy"]: r for r in report["rows"]}
    assert rows["fenced"]["repeats"] == 3 and rows["fenced"]["merge"]["pooled"] is False
    assert "--replace" in rows["fenced"]["merge"]["why"]
    assert rows["fenced"]["ratio_to_minimal"]["job_commit_seconds"] == 1.1
    assert rows["magic"]["run"] == "old"
    assert rows["magic"]["ratio_to_minimal"]["job_commit_seconds"] == 1.1


class _Buckets:
    """The calls Server.bucket makes, recorded (no server)."""

    def __init__(self) -> None:
        self.deleted: list[str] = []

    def create_bucket(self, Bucket: str) -> None:
        pass

    def list_multipart_uploads(self, Bucket: str) -> dict[str, Any]:
        return {}

    def get_paginator(self, name: str) -> Any:
        class _Pages:
            def paginate(self, Bucket: str) -> list[dict[str, Any]]:
                return [{"Contents": [{"Key": "k"}]}]
        return _Pages()

    def delete_objects(self, Bucket: str, Delete: Any) -> None:
        pass

    def delete_bucket(self, Bucket: str) -> None:
        self.deleted.append(Bucket)


def test_a_server_keeps_buckets_only_within_its_budget() -> None:
    server = object.__new__(buckets.Server)
    server.client, server._probed, server.keep_bytes = _Buckets(), True, 100
    kept = []
    for size in (60, 30, 20, 10):  # the third would pass the budget: emptied; the fourth fits
        with server.bucket(size) as name:
            kept.append(name)
    assert server.client.deleted == [kept[2]]
    assert server.keep_bytes == 0
    server.keep_bytes = 0  # moto's: every bucket emptied
    with server.bucket(1) as name:
        pass
    assert server.client.deleted[-1] == name
