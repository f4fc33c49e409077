"""Non-vacuity: each property declares the states it constrains, exploration counts the runs
that reached each, and a cell no run violated whose runs never reached one is ``vacuous``."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from zerorename_model.check.explore import explore
from zerorename_model.check.properties import CONSTRAINS, PROPERTIES
from zerorename_model.check.reach import State
from zerorename_model.experiments.matrix_text import format_matrix
from zerorename_model.experiments.scopes import scope_named
from zerorename_model.experiments.verdicts import Budget, Row, decide_pair, judge_reach
from zerorename_model.systems.protocols import get

BUDGET = Budget(max_runs=2_000)


def _decide(committer: str, store: str, props: list[str], family: str) -> dict[str, Any]:
    cells = decide_pair(committer, store, props, BUDGET, None, protocols=("spark",),
                        row=Row(families=(family,)))
    return {c["property"]: c for c in cells}


def test_every_property_declares_the_states_it_constrains() -> None:
    assert set(CONSTRAINS) == set(PROPERTIES)
    assert all(CONSTRAINS[p] for p in PROPERTIES)


def test_a_property_over_an_unreachable_state_is_reported_vacuous(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The fault-free ``spaces`` scope never aborts a job: completeness, declared (for this
    test) to speak of an aborted job, is vacuous there, never ``holds``; as declared, it
    holds, with the committed runs counted."""
    honest = _decide("v1", "hdfs", ["completeness"], "spaces")["completeness"]
    assert honest["verdict"] == "holds"
    assert honest["explored"]["reach"]["a job committed"] >= 1

    monkeypatch.setitem(CONSTRAINS, "completeness", (State.JOB_ABORTED,))
    cell = _decide("v1", "hdfs", ["completeness"], "spaces")["completeness"]
    assert cell["verdict"] == "vacuous"
    assert cell["explored"]["reach"] == {"a job aborted": 0}
    assert cell["explored"]["complete"]  # enumerated, and still shows nothing


def test_a_committer_that_never_lists_checks_consistency_vacuously() -> None:
    """Direct writes in place and never lists, so the lagging store never answers it
    inconsistently: no run reaches the state consistency speaks of.  The staging committers
    list their task output, and do reach it."""
    scope = scope_named("crash-spark")
    direct = explore(scope.make("direct", "s3-2018"), get("direct"), ["consistency"],
                     max_runs=2_000)
    assert direct.complete and direct.reach[State.COMMITTED_UNDER_LAG] == 0
    assert _decide("direct", "s3-2018", ["consistency"], "crash")["consistency"]["verdict"] \
        == "vacuous"
    scope = scope_named("crash-hadoop")
    listing = explore(scope.make("v1", "s3-2018"), get("v1"), ["consistency"], max_runs=300,
                      stop_when_all_violated=False)
    assert listing.reach[State.COMMITTED_UNDER_LAG] > 0


def test_the_explorer_counts_each_constrained_state_of_the_checked_properties() -> None:
    scope = scope_named("abort-spark")
    report = explore(scope.make("direct", "s3"), get("direct"), ["abortability"])
    assert set(report.reach) == {State.JOB_ABORTED}
    assert 0 < report.reach[State.JOB_ABORTED] <= report.runs
    assert report.summary()["reach"] == {"a job aborted": report.reach[State.JOB_ABORTED]}


def test_judging_leaves_violations_and_uncounted_scopes_alone() -> None:
    violated = {"property": "completeness", "verdict": "violated",
                "explored": {"scopes": [{"scope": "crash-spark", "reach": {}}]}}
    assert judge_reach(copy.deepcopy(violated)) == violated
    older = {"property": "completeness", "verdict": "holds",
             "explored": {"scopes": [{"scope": "crash-spark", "runs": 3}]}}
    assert judge_reach(copy.deepcopy(older)) == older  # results made before reach was counted
    counted = {"property": "completeness", "verdict": "holds", "explored": {"scopes": [
        {"scope": "crash-spark", "reach": {"a job committed": 0}},
        {"scope": "partition-spark", "reach": {"a job committed": 2},
         "settled_before_reads": {"reach": {"a job committed": 1}}}]}}
    judged = judge_reach(copy.deepcopy(counted))
    assert judged["verdict"] == "holds" and judged["explored"]["reach"] == {"a job committed": 3}
    counted["explored"]["scopes"][1]["reach"] = {"a job committed": 0}
    del counted["explored"]["scopes"][1]["settled_before_reads"]
    assert judge_reach(counted)["verdict"] == "vacuous"


def test_the_matrix_text_shows_vacuous_cells_and_the_reach() -> None:
    cells = [{"committer": "direct", "store": "s3-2018", "property": "consistency",
              "protocol": "spark", "verdict": "vacuous", "trace": None,
              "explored": {"complete": True, "reach": {State.COMMITTED_UNDER_LAG.value: 0}}},
             {"committer": "v1", "store": "s3-2018", "property": "consistency",
              "protocol": "spark", "verdict": "holds", "trace": None,
              "explored": {"complete": True, "reach": {State.COMMITTED_UNDER_LAG.value: 7}}}]
    text = format_matrix(cells)
    assert "vacuous = none found, but no run reached" in text
    assert f"consistency: {State.COMMITTED_UNDER_LAG.value} 0" in text
    rows = [line.split() for line in text.splitlines() if line.startswith(("direct", "v1 "))]
    assert rows == [["direct", "s3-2018", "vacuous"], ["v1", "s3-2018", "holds"]]
