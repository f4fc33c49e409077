"""Non-vacuity: each property declares the states it constrains, exploration counts the runs
that reached each, and a cell no run violated whose runs never reached one is ``vacuous``."""

from __future__ import annotations

from dataclasses import replace

import pytest

from zerorename_model.check.explore import explore
from zerorename_model.check.properties import CONSTRAINS, PROPERTIES
from zerorename_model.check.reach import State
from zerorename_model.experiments.cells import Cell, JobProtocol, Verdict
from zerorename_model.experiments.explored import Held, JsonObject, ScopeRecord, Search
from zerorename_model.experiments.matrix_text import format_matrix
from zerorename_model.experiments.scopes import scope_named
from zerorename_model.experiments.verdicts import Budget, Row, decide_pair, judge_reach
from zerorename_model.systems.protocols import get

BUDGET = Budget(max_runs=2_000)


def _decide(committer: str, store: str, props: list[str], family: str) -> dict[str, JsonObject]:
    """The cells as ``check --json`` writes them."""
    cells = decide_pair(committer, store, props, BUDGET, None, protocols=("spark",),
                        row=Row(families=(family,)))
    return {c.prop: c.to_json() for c in cells}


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
    assert honest["explored"]["reach"]["a job committed"] >= 1  # type: ignore[index]

    monkeypatch.setitem(CONSTRAINS, "completeness", (State.JOB_ABORTED,))
    cell = _decide("v1", "hdfs", ["completeness"], "spaces")["completeness"]
    assert cell["verdict"] == "vacuous"
    assert cell["explored"]["reach"] == {"a job aborted": 0}
    assert cell["explored"]["complete"]  # type: ignore[index]  # enumerated, still nothing


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


def _scope(name: str, reach: dict[str, int] | None, settled: dict[str, int] | None = None,
           ) -> ScopeRecord:
    def search(counted: dict[str, int]) -> Search:
        return Search("exhaustive", 3, 0, 3, True, None, reach=tuple(counted.items()))
    return ScopeRecord(name, search(reach or {}),
                       settled=None if settled is None else search(settled))


def _held(*scopes: ScopeRecord, verdict: Verdict = Verdict.HOLDS) -> Cell:
    return Cell("v1", "s3", "completeness", JobProtocol.SPARK, verdict, None,
                Held(scopes, True, 6))


def test_judging_leaves_violations_and_uncounted_scopes_alone() -> None:
    violated = _held(_scope("crash-spark", {"a job committed": 0}), verdict=Verdict.VIOLATED)
    assert judge_reach(violated) == violated
    older = _held(_scope("crash-spark", None))
    assert judge_reach(older) == older  # results made before reach was counted
    counted = _held(_scope("crash-spark", {"a job committed": 0}),
                    _scope("partition-spark", {"a job committed": 2}, {"a job committed": 1}))
    judged = judge_reach(counted)
    assert judged.verdict is Verdict.HOLDS and judged.reach == (("a job committed", 3),)
    assert judged.to_json()["explored"]["reach"] == {"a job committed": 3}  # type: ignore[index]
    unreached = replace(counted, explored=Held((counted.scopes[0], _scope(
        "partition-spark", {"a job committed": 0})), True, 6))
    assert judge_reach(unreached).verdict is Verdict.VACUOUS


def _shown(committer: str, verdict: Verdict, reached: int) -> Cell:
    return Cell(committer, "s3-2018", "consistency", JobProtocol.SPARK, verdict, None,
                Held((), True, 1, reach=((State.COMMITTED_UNDER_LAG.value, reached),)))


def test_the_matrix_text_shows_vacuous_cells_and_the_reach() -> None:
    cells = [_shown("direct", Verdict.VACUOUS, 0), _shown("v1", Verdict.HOLDS, 7)]
    text = format_matrix(cells)
    assert "vacuous = none found, but no run reached" in text
    assert f"consistency: {State.COMMITTED_UNDER_LAG.value} 0" in text
    rows = [line.split() for line in text.splitlines() if line.startswith(("direct", "v1 "))]
    assert rows == [["direct", "s3-2018", "vacuous"], ["v1", "s3-2018", "holds"]]
