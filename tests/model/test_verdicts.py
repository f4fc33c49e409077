"""The verdict matrix's bookkeeping: run-based budgets, what a cell records, short witnesses.

The verdicts themselves come from exploring real model committers here; these tests check that
the matrix reports them reproducibly and with the evidence a reader needs."""

from __future__ import annotations

from typing import Any

from zerorename_model.explore import run_once, search
from zerorename_model.properties import PROPERTIES
from zerorename_model.protocols import get
from zerorename_model.scenario import Faults, Scenario
from zerorename_model.verdicts import FULL, QUICK, Budget, decide_pair


def _without_seconds(cells: list[dict[str, Any]]) -> list[dict[str, Any]]:
    def clean(explored: dict[str, Any]) -> dict[str, Any]:
        out = {k: v for k, v in explored.items() if k != "seconds"}
        if "scopes" in out:
            out["scopes"] = [clean(s) for s in out["scopes"]]
        return out
    return [{**c, "explored": clean(c["explored"])} for c in cells]


def test_budgets_count_runs_not_seconds() -> None:
    """A wall-clock budget would make ``holds*`` depend on the machine's load."""
    assert QUICK.seconds is None and FULL.seconds is None
    assert QUICK.max_runs < FULL.max_runs


def test_the_same_budget_gives_the_same_cells() -> None:
    props = ("completeness", "exclusivity", "abortability")
    first = decide_pair("direct", "s3", props, Budget(max_runs=150), None)
    again = decide_pair("direct", "s3", props, Budget(max_runs=150), None)
    assert _without_seconds(first) == _without_seconds(again)
    assert {c["property"]: c["verdict"] for c in first} == {
        "completeness": "violated", "exclusivity": "violated", "abortability": "violated"}


def test_a_violated_cell_keeps_the_scopes_that_held_and_a_short_witness() -> None:
    """The staging committer keeps completeness under crashes and duplicates but not under the
    Hadoop protocol's partitioned attempt (Section VIII.C); the cell shows all of that, and its
    witness is the one-task version of the race, shorter than the two-task one."""
    [cell] = decide_pair("directory", "s3", ("completeness",), Budget(max_runs=1500), None)
    explored = cell["explored"]
    assert cell["verdict"] == "violated" and explored["scope"] == "partition-hadoop"
    names = [s["scope"] for s in explored["scopes"]]
    assert names[-1] == "partition-hadoop" and "crash-spark" in names[:-1]
    held = {s["scope"]: s for s in explored["scopes"][:-1]}
    assert held["crash-spark"]["complete"]  # held, and proved within the scope
    assert explored["witness_tasks"] == 1
    assert explored["steps"] <= 25


def test_search_reports_unshrunk_choices_that_still_violate() -> None:
    scenario = Scenario("direct", store="s3", tasks=2, files=("part-{task:05d}",),
                        max_attempts=2, driver="hadoop", faults=Faults(speculate=1))
    report = search(scenario, get("direct"), ["exclusivity"], max_examples=50)
    assert "exclusivity" in report.violations
    _violations, _result, choices = report.violations["exclusivity"]
    assert PROPERTIES["exclusivity"](run_once(scenario, get("direct"), choices))


def test_a_lagging_store_is_first_explored_with_reads_after_every_settle() -> None:
    """v2's continuity failure (a partitioned attempt writing after the job committed) is a
    consistent-store behaviour; on s3-2018 it hides among lagging-listing schedules, which the
    first phase skips, so it is found there and replays."""
    [cell] = decide_pair("v2", "s3-2018", ("continuity",), Budget(max_runs=2000), None)
    assert cell["verdict"] == "violated"
    assert cell["explored"]["phase"] == "settled before reads"


def test_settling_eagerly_gives_consistent_answers_only() -> None:
    scenario = Scenario("magic", store="s3-2018", tasks=1, files=("part-{task:05d}",),
                        faults=Faults(crash=1, settle_eagerly=True))
    for choices in ([], [1], [0, 1], [0, 0, 1], [0, 0, 0, 1]):
        try:
            result = run_once(scenario, get("magic"), choices)
        except ValueError:  # fewer options at that point
            continue
        assert not result.inconsistent_answers
        assert not any("settle " in str(e.get("move", "")) for e in result.trace)
    lagging = Scenario("magic", store="s3-2018", tasks=1, files=("part-{task:05d}",),
                       faults=Faults(crash=1))
    assert run_once(lagging, get("magic"), []).inconsistent_answers  # it can fail this way
