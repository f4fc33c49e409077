"""Table V probes: each can come out either way, every False cell carries a trace that
replays, and the comparison with the paper lists exactly the cells that differ."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from tests.model.toy_committers import Ideal
from zerorename_model.experiments import tablev
from zerorename_model.experiments.tablev import (
    LABELS,
    PAPER_TABLE_V,
    Cell,
    TableVSearch,
    compare,
    probe,
)

#: for each attribute, a committer on which the probe comes out True and one where it is False
#: (Ideal, a test fixture, completes its uploads one by one in the job commit)
BOTH_WAYS = {
    "speculative_tasks": ("emr", "direct"),
    "recoverable_job": ("lakefs", "direct"),
    "abortable_task": ("stocator", "direct"),
    "abortable_job": ("lakefs", "emr"),
    "uncommitted_task_output_observable": ("direct", "emr"),
    "committed_task_output_observable": ("emr", "lakefs"),
    "atomic_task_commit": ("lakefs", "emr"),
    "atomic_job_commit": ("lakefs", "ideal"),
    "partitioned_executor_resilience": ("lakefs", "stocator"),
}
FACTORIES = {"ideal": Ideal}


def _probe(attribute: str, committer: str) -> Cell:
    return probe(attribute, committer, FACTORIES.get(committer))


def test_every_attribute_has_a_probe_and_a_paper_row() -> None:
    assert set(BOTH_WAYS) == set(LABELS) == set(tablev.PROBES) == set(PAPER_TABLE_V)
    assert all(set(row) == {"Direct", "Stocator", "S3A", "EMR"} for row in PAPER_TABLE_V.values())


@pytest.mark.parametrize("attribute", list(BOTH_WAYS))
def test_probe_is_not_constant(attribute: str) -> None:
    yes, no = BOTH_WAYS[attribute]
    true_cell, false_cell = _probe(attribute, yes), _probe(attribute, no)
    assert true_cell.value is True, f"{attribute} on {yes}: {true_cell.detail}"
    assert false_cell.value is False, f"{attribute} on {no}: {false_cell.detail}"
    for cell in (true_cell, false_cell):
        assert cell.explored.runs >= 1 and cell.explored.states >= 1
        if not cell.explored.found:
            assert cell.explored.complete, "a value from an unfinished search"


@pytest.mark.parametrize("attribute", list(BOTH_WAYS))
def test_false_cell_has_a_witness_trace_that_replays(attribute: str) -> None:
    committer = BOTH_WAYS[attribute][1]
    cell = _probe(attribute, committer)
    assert cell.value is False and cell.witness_trace
    header, end = cell.witness_trace[0], cell.witness_trace[-1]
    assert header["t"] == "header" and end["t"] == "end"
    assert header["scenario"]["committer"] == committer
    replayed = tablev.replay(cell.witness_trace, FACTORIES.get(committer))
    assert replayed.digest == end["digest"], "the witness is a real, reproducible run"


def test_watch_findings_are_marked_in_the_trace() -> None:
    cell = _probe("partitioned_executor_resilience", "stocator")
    notes = [e["msg"] for e in cell.witness_trace or [] if e["t"] == "note"]
    assert f"probe: {cell.detail}" in notes


def test_recovery_needs_the_factory_to_support_it() -> None:
    cell = _probe("recoverable_job", "stocator")
    assert cell.value is False and "ran again" in cell.detail


@pytest.fixture(scope="module")
def peers() -> dict[str, dict[str, Cell]]:
    return tablev.compute(["direct", "stocator", "emr"])


def test_compare_lists_every_difference_and_nothing_else(peers) -> None:
    differences = compare(peers)
    listed = {(d.committer, d.attribute) for d in differences}
    column = tablev.PAPER_COLUMN
    for committer, cells in peers.items():
        for attribute, cell in cells.items():
            differs = PAPER_TABLE_V[attribute][column[committer]] != cell.value
            assert ((committer, attribute) in listed) is differs
    for d in differences:
        assert d.ours == peers[d.committer][d.attribute].value != d.paper
        assert d.reason and d.trace, "each difference names its reason and its trace"
        assert LABELS[d.attribute] in d.line()


def test_compare_reports_a_flipped_paper_cell(peers) -> None:
    paper = json.loads(json.dumps(PAPER_TABLE_V))
    ours = peers["emr"]["uncommitted_task_output_observable"].value
    paper["uncommitted_task_output_observable"]["EMR"] = not ours
    before = {(d.committer, d.attribute) for d in compare(peers)}
    after = {(d.committer, d.attribute) for d in compare(peers, paper)}
    assert after - before == {("emr", "uncommitted_task_output_observable")}


def test_committers_the_paper_lacks_are_not_compared() -> None:
    made_up = TableVSearch("forall", "made up", True, 1, 0, 1, False)
    table = {"lakefs": {"atomic_job_commit": Cell(False, [], made_up, "made up")}}
    assert compare(table) == []


def test_make_tablev_writes_table_json_and_notes(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    path = Path(__file__).resolve().parents[2] / "paper" / "make_tablev.py"
    monkeypatch.syspath_prepend(str(path.parent))  # as when run as a script: zrpaper beside it
    spec = importlib.util.spec_from_file_location("make_tablev", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.main(["--out", str(tmp_path), "--columns", "direct,emr,nonexistent"]) == 0
    data = json.loads((tmp_path / "tablev.json").read_text())
    assert set(data["cells"]) == {"direct", "emr"}
    for cells in data["cells"].values():
        for cell in cells.values():
            assert cell["value"] or cell["witness_trace"], "a False cell without its trace"
    notes = (tmp_path / "tablev_notes.md").read_text()
    for d in data["differences"]:
        assert f"## {d['committer']}: {LABELS[d['attribute']]}" in notes
    assert "| Abortable Job |" in (tmp_path / "tablev.md").read_text()
