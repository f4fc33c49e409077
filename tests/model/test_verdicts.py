"""The verdict matrix's bookkeeping: run-based budgets, one cell per protocol, what a cell
records, short witnesses, the production-bug rows.

The verdicts themselves come from exploring real model committers here; these tests check that
the matrix reports them reproducibly and with the evidence a reader needs."""

from __future__ import annotations

from typing import Any

import pytest

from tests.model.cell_json import as_json, lag_bound, shown, typed
from tests.model.conftest import ENOUGH
from zerorename_model.check.explore import run_once
from zerorename_model.check.properties import PROPERTIES
from zerorename_model.check.sampling import search
from zerorename_model.engine.scenario import Faults, Scenario
from zerorename_model.experiments.bugs import BUGS
from zerorename_model.experiments.matrix_text import format_matrix
from zerorename_model.experiments.scopes import FAMILIES, PROTOCOLS, SCOPES
from zerorename_model.experiments.verdicts import FULL, QUICK, Budget, Row, bug_jobs, decide_pair
from zerorename_model.systems.protocols import get

CELL_KEYS = {"committer", "store", "property", "protocol", "verdict", "trace", "explored",
             "variant_of", "bug"}


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
    first = as_json(decide_pair("direct", "s3", props, Budget(max_runs=150), None))
    again = as_json(decide_pair("direct", "s3", props, Budget(max_runs=150), None))
    assert _without_seconds(first) == _without_seconds(again)
    assert {(c["property"], c["protocol"]): c["verdict"] for c in first} == {
        (p, d): "violated" for p in props for d in PROTOCOLS}
    assert all(set(c) == CELL_KEYS and c["bug"] is None and c["variant_of"] is None
               for c in first)


def test_every_property_is_decided_under_both_protocols() -> None:
    """Each scope family exists once per protocol, and every property has a family."""
    for family in FAMILIES:
        assert {s.protocol for s in SCOPES if s.family == family.name} == set(PROTOCOLS)
    decided = {p for s in SCOPES for p in s.props}
    assert decided == set(PROPERTIES)
    for scope in SCOPES:
        assert scope.name == f"{scope.family}-{scope.protocol}"
        assert scope.make("magic", "s3").driver == scope.protocol


def test_a_cell_is_decided_from_its_own_protocol_only() -> None:
    """The staging committer loses completeness to the Hadoop protocol's partitioned attempt
    (Section VIII.C) and keeps it under Spark's: two cells, each from its protocol's scopes.
    The violated one keeps the scopes that held before it and a short witness (the one-task
    version of the race, shorter than the two-task one)."""
    hadoop, spark = as_json(decide_pair("directory", "s3", ("completeness",), Budget(max_runs=1500),
                                None))
    assert (hadoop["protocol"], spark["protocol"]) == ("hadoop", "spark")
    explored = hadoop["explored"]
    assert hadoop["verdict"] == "violated" and explored["scope"] == "partition-hadoop"
    names = [s["scope"] for s in explored["scopes"]]
    assert names == ["crash-hadoop", "duplicate-hadoop", "partition-hadoop"]
    assert all(s["complete"] for s in explored["scopes"][:-1])  # held, proved within the scope
    assert explored["witness_tasks"] == 1
    assert explored["steps"] <= 25
    assert spark["verdict"] == "holds"
    assert {s["scope"].rsplit("-", 1)[1] for s in spark["explored"]["scopes"]} == {"spark"}
    assert "partition-spark" in {s["scope"] for s in spark["explored"]["scopes"]}


def test_one_protocol_only() -> None:
    cells = as_json(decide_pair("direct", "s3", ("exclusivity",), Budget(max_runs=150), None,
                        protocols=("spark",)))
    assert [c["protocol"] for c in cells] == ["spark"]


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
    for cell in as_json(decide_pair("v2", "s3-2018", ("continuity",), Budget(max_runs=2000), None)):
        assert cell["verdict"] == "violated", cell["protocol"]
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


# -- production bugs as rows ----------------------------------------------------------------------

def test_every_bug_names_a_scope_family_that_decides_its_property() -> None:
    names = {f.name: f for f in FAMILIES}
    for bug in BUGS:
        assert bug.scope in names, bug.report
        assert bug.shows in names[bug.scope].props, bug.report
        # a committer's bug is a variant of it; a store's bug, the committer on that store
        assert get(bug.variant) is not get(bug.fixed) or bug.store != bug.fixed_on, bug.report


def test_bug_rows_pair_each_variant_with_its_fixed_committer_in_one_family() -> None:
    jobs = bug_jobs(["magic", "directory", "fenced"], ["s3"], tuple(PROPERTIES), QUICK, None,
                    PROTOCOLS)
    rows = [(job[0], job[7]) for job in jobs]
    for bug in BUGS:
        assert (bug.variant, Row(bug.report, bug.fixed, (bug.scope,))) in rows
        assert (bug.fixed, Row(bug.report, None, (bug.scope,))) in rows
    assert bug_jobs(["v1"], ["s3"], tuple(PROPERTIES), QUICK, None, PROTOCOLS) == []


@pytest.mark.parametrize("bug", [b for b in BUGS if b.scope in ("crash", "spaces")],
                         ids=lambda b: b.report)
def test_a_bug_row_is_violated_by_exploration_and_its_fixed_row_holds(bug, tmp_path) -> None:
    """The variant's cell for the property its report names is violated, found by exploring
    its scope family (not by its steered schedule), with a trace that replays; the fixed
    committer's cell holds, every scope enumerated.  (The two-job bugs: the slow test below.)"""
    _bug_rows_hold_up(bug, tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize("bug", [b for b in BUGS if b.scope not in ("crash", "spaces")],
                         ids=lambda b: b.report)
def test_a_two_job_bug_row_is_violated_and_its_fixed_row_holds(
        bug, tmp_path, request: pytest.FixtureRequest) -> None:
    fixed = None
    if (bug.fixed, bug.fixed_on) == ("fenced", "s3"):
        # fenced's row on s3 is explored once for the session (tests/model/conftest.py)
        fixed = _fixed_from_row(bug, request.getfixturevalue("fenced_s3_row"))
    _bug_rows_hold_up(bug, tmp_path, fixed)


def _fixed_from_row(bug: Any, row: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The fixed committer's cells of ``bug``'s row, taken from its whole row: the property
    the report names, the scopes of the bug's family, labelled as the bug's fixed row."""
    cells = []
    for cell in row:
        if cell["property"] != bug.shows:
            continue
        scopes = [s for s in cell["explored"]["scopes"]
                  if s["scope"].startswith(bug.scope + "-")]
        assert scopes, f"{bug.fixed}'s row has no {bug.scope} scope for {bug.shows}"
        explored = {**cell["explored"], "scopes": scopes,
                    "complete": all(s["complete"] for s in scopes)}
        cells.append({**cell, "explored": explored, "bug": bug.report, "variant_of": None})
    return cells


def _bug_rows_hold_up(bug: Any, tmp_path: Any, fixed: list[dict[str, Any]] | None = None) -> None:
    from zerorename_model.experiments.trace import replay

    # the nested scopes need up to 39,433 runs since fenced lists its keys before the commit
    # point (check-first, its default): the budget of tests/model/conftest.py
    budget = ENOUGH
    props = (bug.shows,)
    variant = as_json(decide_pair(bug.variant, bug.store, props, budget, str(tmp_path),
                          row=Row(bug.report, bug.fixed, (bug.scope,))))
    if fixed is None:
        fixed = as_json(decide_pair(bug.fixed, bug.fixed_on, props, budget, str(tmp_path),
                            row=Row(bug.report, None, (bug.scope,))))
    violated = [c for c in variant if c["verdict"] == "violated"]
    assert violated, f"{bug.variant}: {bug.shows} not violated in {bug.scope}"
    for cell in violated:
        assert cell["variant_of"] == bug.fixed and cell["bug"] == bug.report
        assert cell["explored"]["scope"].startswith(bug.scope + "-")
        assert replay(cell["trace"]).same
    for cell in fixed:
        assert cell["verdict"] == "holds" and cell["explored"]["complete"], cell["explored"]
        assert cell["variant_of"] is None and cell["bug"] == bug.report
    text = format_matrix([typed(c) for c in variant + fixed])
    assert f"{bug.variant} (variant)" in text and f"{bug.fixed} (fixed)" in text


def _timeless(summary: Any) -> Any:
    """An exploration's summary without its timings (which differ between two runs)."""
    if isinstance(summary, list):
        return [_timeless(v) for v in summary]
    if isinstance(summary, dict):
        return {k: _timeless(v) for k, v in summary.items() if k != "seconds"}
    return summary


def test_the_second_pass_decides_what_the_first_left_sampled(
        tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """``Budget.deep_runs``: cells the first pass left ``holds*`` are explored again at the
    deeper budget (and say so), in the scope families left open only; decided cells are left
    as they were."""
    from zerorename_model.experiments import verdicts
    from zerorename_model.experiments.matrix import matrix

    props = ("completeness", "abortability")
    shallow = as_json(matrix(["fenced"], ["s3"], props, budget=Budget(max_runs=300), workers=1,
                     protocols=("spark",)))
    assert {shown(c) for c in shallow} == {"holds*"}
    # every scope explored at the deeper budget is noted (in a file: the pool's worker is a
    # forked process, which inherits the patch)
    log = tmp_path / "explored"
    explore_scope = verdicts._explore_scope

    def noting(scope: Any, scenario: Any, factory: Any, wanted: Any, budget: Budget,
               *rest: Any) -> Any:
        if budget.max_runs == 20_000:
            with log.open("a") as out:
                out.write(scope.name + "\n")
        return explore_scope(scope, scenario, factory, wanted, budget, *rest)

    monkeypatch.setattr(verdicts, "_explore_scope", noting)
    deep = as_json(matrix(["fenced"], ["s3"], props, budget=Budget(max_runs=300, deep_runs=20_000),
                  workers=1, protocols=("spark",)))
    assert sorted(log.read_text().split()) == sorted(
        {s["scope"] for c in shallow for s in c["explored"]["scopes"] if not s["complete"]})
    assert [(c["property"], shown(c), c["explored"]["deep_runs"]) for c in deep] == [
        (p, "holds", 20_000) for p in props]
    # only the scope families the first pass left open are explored again; the scopes it
    # finished stand as they were, and the runs add up
    for first, again in zip(shallow, deep, strict=True):
        before = {s["scope"]: s for s in first["explored"]["scopes"]}
        after = {s["scope"]: s for s in again["explored"]["scopes"]}
        assert after.keys() == before.keys()
        finished = {n for n, s in before.items() if s["complete"]}
        assert finished and finished != before.keys()
        assert {n: _timeless(after[n]) for n in finished} == {
            n: _timeless(before[n]) for n in finished}
        assert all(after[n]["runs"] > before[n]["runs"] for n in before.keys() - finished)
        assert again["explored"]["runs"] == sum(s["runs"] for s in after.values())
    direct = as_json(matrix(["direct"], ["s3"], props, budget=Budget(max_runs=30, deep_runs=20_000),
                    workers=1, protocols=("spark",)))
    assert all(c["verdict"] == "violated" and "deep_runs" not in c["explored"] for c in direct)


def test_the_lag_pass_proves_with_the_lag_bounded_what_the_unbounded_search_left_sampled(
        ) -> None:
    """``Budget.lag_pass``: a lagging store's ``holds*`` cell explored again with at most that
    many visibility events pending; a proof there reads ``holds`` with ``explored.max_lag``,
    keeps how far the unbounded search went, and the text matrix marks and explains it."""
    from zerorename_model.experiments.matrix import matrix
    from zerorename_model.experiments.matrix_text import BOUNDED

    args = (["stocator"], ["s3-2018"], ("completeness",))
    sampled = as_json(matrix(*args, budget=Budget(max_runs=20), workers=1, protocols=("spark",)))
    assert [shown(c) for c in sampled] == ["holds*"]
    proved = as_json(matrix(*args, budget=Budget(max_runs=20, lag_pass=1), workers=1,
                    protocols=("spark",)))
    [cell] = proved
    assert shown(cell) == "holds" and lag_bound(cell) == 1
    assert cell["explored"]["complete"]
    assert cell["explored"]["unbounded"] == {"runs": sampled[0]["explored"]["runs"],
                                             "complete": False}
    # only the scopes the unbounded search left open are explored again, with the bound; the
    # ones it finished stand (they cover every bounded run)
    before = {s["scope"]: s for s in sampled[0]["explored"]["scopes"]}
    after = {s["scope"]: s for s in cell["explored"]["scopes"]}
    assert after.keys() == before.keys()
    assert {n for n, s in after.items() if s.get("max_lag") == 1} == {
        n for n, s in before.items() if not s["complete"]}
    assert {n: _timeless(s) for n, s in after.items() if "max_lag" not in s} == {
        n: _timeless(s) for n, s in before.items() if s["complete"]}
    assert cell["explored"]["runs"] == sum(s["runs"] for s in after.values())
    text = format_matrix([typed(c) for c in proved])
    assert f"holds{BOUNDED}" in text and "at most 1 visibility events" in text
    assert BOUNDED not in format_matrix([typed(c) for c in sampled])
    cut = as_json(matrix(*args, budget=Budget(max_runs=20, lag_pass=1, lag_runs=30), workers=1,
                 protocols=("spark",)))
    assert [shown(c) for c in cut] == ["holds*"]  # cut off again: left as it was
    assert cut[0]["explored"]["lag_pass"]["max_lag"] == 1 and lag_bound(cut[0]) is None


def test_the_lag_pass_reports_a_violation_it_finds_with_a_trace_that_replays(
        tmp_path: Any) -> None:
    """A run of the bounded store is a run of the store: a violation found with the lag
    bounded decides the cell, and its trace records the bound so that it replays."""
    from zerorename_model.experiments.matrix import matrix
    from zerorename_model.experiments.trace import read_trace, replay

    args = (["directory"], ["s3-2018"], ("liveness",))
    sampled = as_json(matrix(*args, budget=Budget(max_runs=20), workers=1, protocols=("spark",)))
    assert [shown(c) for c in sampled] == ["holds*"]
    [cell] = as_json(matrix(*args, budget=Budget(max_runs=20, lag_pass=1), traces=str(tmp_path),
                    workers=1, protocols=("spark",)))
    assert cell["verdict"] == "violated" and lag_bound(cell) is None
    assert read_trace(cell["trace"])[0]["scenario"]["faults"]["max_lag"] == 1
    assert replay(cell["trace"]).same


def test_the_passes_give_the_same_cells_in_the_same_order_however_many_workers() -> None:
    """Each job's later passes are queued as soon as its first pass ends (``_passes``): with
    two workers the jobs' passes interleave, and the cells must still be exactly those of one
    worker running them in order (timings aside)."""
    from zerorename_model.experiments.matrix import matrix

    args = (["stocator", "directory", "v2"], ["s3-2018", "s3"], ("completeness", "liveness"))
    budget = Budget(max_runs=20, deep_runs=60, lag_pass=1, lag_runs=200)
    one = as_json(matrix(*args, budget=budget, workers=1))
    two = as_json(matrix(*args, budget=budget, workers=2))
    assert [_timeless(c["explored"]) for c in two] == [_timeless(c["explored"]) for c in one]
    assert [{k: v for k, v in c.items() if k != "explored"} for c in two] == [
        {k: v for k, v in c.items() if k != "explored"} for c in one]
    assert {c.get("explored", {}).get("deep_runs") for c in one} >= {60}
