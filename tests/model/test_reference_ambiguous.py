"""The reference committers' ambiguous-outcome table (issue 34, ``--target reference``).

What is checked here, cheaply, is that the committed table
(``paper/results/reference_ambiguous.json``, written by ``python -m
zerorename_bridge.reference_ambiguous``) is what exploration gives, and that what is explored
is the production retry loop: the same committer with the loop's landed checks off
(``+no-landed-check``) fails where the production one holds.  The whole table is the
generator's job (minutes on 2 cores), never a unit test's.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from zerorename.cli import main
from zerorename_bridge.adapters import BlindRetryPolicy, ReferenceFactory
from zerorename_bridge.reference_ambiguous import (
    FAMILIES,
    ROWS,
    RowSpec,
    decide_row,
    is_reference_trace,
    replay_reference,
    verdict_of,
)
from zerorename_model.check.explore import explore
from zerorename_model.experiments.cells import Cell, Verdict
from zerorename_model.experiments.explored import Search
from zerorename_model.experiments.scopes import scope_named
from zerorename_model.experiments.trace import read_trace
from zerorename_model.experiments.verdicts import Budget

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "paper" / "results"
TABLE = RESULTS / "reference_ambiguous.json"


@pytest.fixture(autouse=True)
def _quiet() -> Iterator[None]:
    """The committers log every job; thousands of runs would flood the captured output."""
    logging.disable(logging.CRITICAL)
    yield
    logging.disable(logging.NOTSET)


def _table() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(TABLE.read_text(encoding="utf-8"))
    return data


def _cells(committer: str, store: str) -> list[Cell]:
    for row in _table()["rows"]:
        if row["committer"] == committer and row["store"] == store:
            return [Cell.from_json(c) for c in row["cells"]]
    raise AssertionError(f"{TABLE} has no row {committer} on {store}")


def _scope_record(cells: list[Cell], scope: str) -> Search:
    for cell in cells:
        for record in cell.scopes:
            if record.scope == scope:
                return record.search
    raise AssertionError(f"no cell records scope {scope}")


def test_the_table_decides_every_cell_of_every_row() -> None:
    """Every row of the generator is in the committed table, every reference committer has a
    row on s3, both protocols, both families, and no cell is left open by a budget."""
    data = _table()
    assert data["families"] == list(FAMILIES)
    shown = {(r["committer"], r["store"]) for r in data["rows"]}
    assert shown == {(r.committer, r.store) for r in ROWS}
    for row in data["rows"]:
        verdicts = {(c.prop, c.protocol): verdict_of(c) for c in map(Cell.from_json, row["cells"])}
        assert len(verdicts) == len(data["properties"]) * len(data["protocols"]), row
        assert "open" not in verdicts.values(), (row["committer"], row["store"], verdicts)


def test_fenced_holds_every_property_on_s3_and_its_variant_does_not() -> None:
    assert {verdict_of(c) for c in _cells("fenced", "s3")} == {"holds"}
    broken = {c.prop for c in _cells("fenced+no-landed-check", "s3")
              if c.verdict is Verdict.VIOLATED}
    assert "liveness" in broken


def test_a_cell_of_the_table_is_what_exploration_finds() -> None:
    """magic on s3, ambiguous under Spark's protocol: the scope is enumerated again here and
    gives the table's runs and states, and no violation (the cell says holds)."""
    cells = _cells("magic", "s3")
    recorded = _scope_record(cells, "ambiguous-spark")
    scope = scope_named("ambiguous-spark")
    report = explore(scope.make("magic", "s3"), ReferenceFactory("magic"), list(scope.props),
                     max_runs=20_000, stop_when_all_violated=False)
    assert report.complete and recorded.complete
    assert (report.runs, report.states) == (recorded.runs, recorded.states)
    assert not report.violations
    assert all(verdict_of(c) == "holds" for c in cells
               if c.protocol == "spark" and c.prop in scope.props)


def test_fenced_holds_in_the_ambiguous_scope_by_enumeration() -> None:
    scope = scope_named("ambiguous-spark")
    report = explore(scope.make("fenced", "s3"), ReferenceFactory("fenced"),
                     list(scope.props), max_runs=20_000, stop_when_all_violated=False)
    assert report.complete and not report.violations
    assert report.runs == _scope_record(_cells("fenced", "s3"), "ambiguous-spark").runs


@pytest.mark.parametrize("committer", ["magic", "fenced"])
def test_without_the_landed_checks_the_reference_fails_on_a_lost_answer(
        committer: str) -> None:
    """The lost answer reaches the production loop and its landed check is what saves the
    job: the same committer, loop blind (and, for fenced, its own recognition gone), fails
    liveness in the scope where the production one holds (the test above and the table)."""
    scope = scope_named("ambiguous-spark")
    variant = ReferenceFactory(f"{committer}+no-landed-check")
    report = explore(scope.make(committer, "s3"), variant, ["liveness"], max_runs=20_000)
    _violations, result, _choices = report.violations["liveness"]
    assert any(str(e.get("move", "")).startswith("lost_answer ") for e in result.trace)


def test_the_blind_policy_drops_only_the_landed_check() -> None:
    """A repeated request whose earlier attempt landed: the production policy returns the
    landed result, the blind one raises the repeat's error; attempts and predicate are the
    same."""
    from zerorename.errors import PreconditionFailedError, StoreError
    from zerorename.retry import RetryPolicy

    policy = RetryPolicy(max_attempts=3, base_delay=0, sleep=lambda _s: None)
    answers: list[BaseException] = []

    def once() -> str:
        error: BaseException = (StoreError("u", "lost", code="ReadTimeout", status=599)
                                if not answers else PreconditionFailedError("u", "exists"))
        answers.append(error)
        raise error

    assert policy.call(once, landed=lambda _e: "mine") == "mine"
    answers.clear()
    blind = BlindRetryPolicy(max_attempts=3, base_delay=0, sleep=lambda _s: None)
    with pytest.raises(PreconditionFailedError):
        blind.call(once, landed=lambda _e: "mine")
    assert len(answers) == 2


def test_a_witness_of_the_table_replays(capsys: pytest.CaptureFixture[str]) -> None:
    """Every committed witness is marked as the reference's and replays to its recorded final
    state, through the function and through ``zerorename trace replay``."""
    traces = sorted((RESULTS / "reference_traces").glob("*.jsonl"))
    assert traces
    for path in traces:
        assert is_reference_trace(read_trace(path)), path
        assert replay_reference(path).same, path
    assert main(["trace", "replay", str(traces[0])]) == 0
    assert "replay: same final state" in capsys.readouterr().out


def test_a_row_is_decided_with_its_witness_marked(tmp_path: Path) -> None:
    """The generator's own path, on the cheapest row with a violation: directory on s3 (a
    lost CreateMultipartUpload answer leaves an upload no abort names)."""
    cells, _seconds = decide_row(RowSpec("directory", "s3"), str(tmp_path),
                                 Budget(max_runs=20_000))
    violated = [c for c in cells if c.verdict is Verdict.VIOLATED]
    assert {c.prop for c in violated} == {
        c.prop for c in _cells("directory", "s3") if c.verdict is Verdict.VIOLATED}
    for cell in violated:
        assert cell.trace is not None
        assert is_reference_trace(read_trace(cell.trace))
        assert replay_reference(cell.trace).same
