"""The typed verdict records (:mod:`zerorename_model.experiments.explored`, ``Cell``): what the
matrix decides is written as JSON only through ``to_json`` and read back through ``from_json``,
and the two are inverse, key order included (``verdicts.json`` must not change when read and
written again; ``tests/test_paper.py`` checks that on the committed results)."""

from __future__ import annotations

import json

import pytest

from zerorename_model.experiments.cells import Cell, JobProtocol, Verdict
from zerorename_model.experiments.explored import (
    Held,
    LagTried,
    NotApplicable,
    ScopeRecord,
    Search,
    SeedsTried,
    Unbounded,
    Violation,
    without_seconds,
)

SETTLED = Search("exhaustive", 12, 3, 40, True, 0.5, decided_early=2,
                 reach=(("a job committed", 9),))
FULL_SCOPE = ScopeRecord("crash-hadoop", Search("exhaustive", 100, 7, 300, False, 1.25,
                                                reach=(("a job committed", 80),
                                                       ("a job aborted", 0))),
                         max_lag=4, seeds=SeedsTried(2, ("completeness",)), settled=SETTLED,
                         hypothesis_runs=20)
SETTLED_ONLY = ScopeRecord("partition-spark", SETTLED, settled=SETTLED,
                           phase="settled before reads")
BARE = ScopeRecord("spaces-spark", Search("seeds", 0, 0, 0, False, 0.0))

EVERY_KIND = [
    Cell("v1", "hdfs", "consistency", JobProtocol.SPARK, Verdict.NA, None,
         NotApplicable("hdfs is consistent", runs_of="hadoop")),
    Cell("magic", "s3-2018", "liveness", JobProtocol.HADOOP, Verdict.HOLDS, None,
         Held((FULL_SCOPE, BARE), False, 100, runs_of="spark",
              reach=(("a job committed", 80),), deep_runs=50_000, max_lag=4,
              unbounded=Unbounded(60_000, False, 50_000), lag_pass=LagTried(4, 400_000))),
    Cell("direct", "s3-2018", "consistency", JobProtocol.SPARK, Verdict.VACUOUS, None,
         Held((BARE,), True, 0, reach=())),
    Cell("magic+HADOOP-17258", "s3", "exclusivity", JobProtocol.HADOOP, Verdict.VIOLATED,
         "results/traces/x.jsonl",
         Violation(SETTLED_ONLY, "seed x.jsonl", 17, "exclusivity (job 0): seen", 1,
                   (BARE, SETTLED_ONLY), runs_of="spark", deep_runs=50_000,
                   unbounded=Unbounded(3, True)),
         variant_of="magic", bug="HADOOP-17258"),
]


@pytest.mark.parametrize("cell", EVERY_KIND, ids=lambda c: str(c.verdict))
def test_a_cell_read_back_from_its_json_is_the_same_cell(cell: Cell) -> None:
    text = json.dumps(cell.to_json())
    again = Cell.from_json(json.loads(text))
    assert again == cell
    assert json.dumps(again.to_json()) == text


def test_the_json_keeps_the_order_the_results_files_have() -> None:
    """The order ``verdicts.json`` has always had: a violation's scope record first, flattened,
    with the settled search under its own name and the phase after the search."""
    violated = EVERY_KIND[3].to_json()
    assert list(violated) == ["committer", "store", "property", "protocol", "verdict", "trace",
                              "explored", "variant_of", "bug"]
    assert list(violated["explored"]) == [  # type: ignore[call-overload]
        "scope", "settled_before_reads", "method", "runs", "pruned", "states", "complete",
        "seconds", "decided_early", "reach", "phase", "found_by", "steps", "witness",
        "witness_tasks", "scopes", "runs_of", "deep_runs", "unbounded"]
    assert list(FULL_SCOPE.to_json()) == [
        "scope", "max_lag", "seeds", "settled_before_reads", "method", "runs", "pruned",
        "states", "complete", "seconds", "reach", "hypothesis_runs"]
    assert list(EVERY_KIND[1].explored.to_json()) == [
        "scopes", "complete", "runs", "runs_of", "reach", "deep_runs", "max_lag", "unbounded",
        "lag_pass"]


def test_what_a_cell_says_is_read_from_its_record() -> None:
    na, held, vacuous, violated = EVERY_KIND
    assert na.complete and na.scopes == () and na.scope is None
    assert held.undecided and held.shown == "holds*"
    assert held.cut_off == ("crash-hadoop", "spaces-spark")
    assert held.max_lag == 4 and held.unbounded_runs == 60_000
    assert held.reach == (("a job committed", 80),)
    assert vacuous.max_lag is None and vacuous.shown == "vacuous"
    assert violated.scope == "partition-spark" and violated.steps == 17
    assert violated.reach == () and not violated.in_matrix


def test_without_seconds_drops_the_searches_seconds_but_not_the_settled_ones() -> None:
    violated = EVERY_KIND[3]
    dropped = without_seconds(violated.explored).to_json()
    assert "seconds" not in dropped
    assert all("seconds" not in s for s in dropped["scopes"])  # type: ignore[attr-defined]
    assert dropped["settled_before_reads"]["seconds"] == 0.5  # type: ignore[index]


def test_a_cell_of_the_wrong_shape_is_refused() -> None:
    raw = EVERY_KIND[3].to_json()
    with pytest.raises(KeyError):
        Cell.from_json({**raw, "verdict": "n/a"})  # a violation's record has no reason
    with pytest.raises(ValueError):
        Cell.from_json({**raw, "verdict": "maybe"})
