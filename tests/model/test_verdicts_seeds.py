"""Seeds (saved witness traces tried first) decide nothing by themselves: a seed counts only if
the property checker flags its replay against the current code in the scope's scenario.

These tests use the witness traces the paper's full run committed (``paper/results/traces``).
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.model.cell_json import as_json
from zerorename_model.experiments.bugs import BUGS
from zerorename_model.experiments.matrix import matrix
from zerorename_model.experiments.seeds import default_directory, for_scope, load
from zerorename_model.experiments.trace import replay
from zerorename_model.experiments.verdicts import QUICK, Row, decide_pair

PREFIX = next(b for b in BUGS if b.report == "prefix-cleanup")


def _saved() -> Path:
    directory = default_directory()
    assert directory is not None, "the source tree's paper/results/traces is missing"
    return directory


def _rewrite(trace: Path, out: Path, committer: str) -> None:
    """``trace`` with its header naming ``committer`` instead (the same moves)."""
    lines = trace.read_text(encoding="utf-8").splitlines()
    header = json.loads(lines[0])
    header["scenario"]["committer"] = committer
    out.mkdir(parents=True, exist_ok=True)
    (out / trace.name).write_text("\n".join([json.dumps(header), *lines[1:]]) + "\n",
                                  encoding="utf-8")


def test_a_seed_that_violates_decides_the_cell_and_its_witness_replays(tmp_path: Path) -> None:
    cells = as_json(decide_pair(PREFIX.variant, PREFIX.store, (PREFIX.shows,), QUICK, str(tmp_path),
                        row=Row(PREFIX.report, PREFIX.fixed, (PREFIX.scope,)),
                        seeds=str(_saved())))
    assert [c["verdict"] for c in cells] == ["violated", "violated"]
    for cell in cells:
        assert cell["explored"]["found_by"].startswith("seed "), cell["explored"]
        assert replay(cell["trace"]).same


def test_a_seed_that_no_longer_violates_counts_for_nothing(tmp_path: Path) -> None:
    """The variant's witnesses, relabelled as the fixed committer's: replayed against the
    fixed committer they no longer violate, so the cells hold (and were seeded)."""
    seeds = tmp_path / "seeds"
    for protocol in ("hadoop", "spark"):
        name = f"{PREFIX.variant}.{PREFIX.store}.{PREFIX.shows}.{protocol}.jsonl"
        _rewrite(_saved() / name, seeds, PREFIX.fixed)
    cells = as_json(decide_pair(PREFIX.fixed, PREFIX.store, (PREFIX.shows,), QUICK, None,
                        row=Row(PREFIX.report, None, (PREFIX.scope,)), seeds=str(seeds)))
    assert [c["verdict"] for c in cells] == ["holds", "holds"]
    for cell in cells:
        [scope] = cell["explored"]["scopes"]
        assert scope["seeds"] == {"tried": 1, "found": []}, scope  # its protocol's


def test_seeds_match_their_scope_whatever_the_task_count() -> None:
    """Witnesses were shrunk to one task; they still belong to the two-task scope."""
    from zerorename_model.experiments.scopes import scope_named

    seeds = load(str(_saved()))
    scenario = scope_named("crash-hadoop").make("v2", "s3-2018")
    matched = for_scope(seeds, scenario)
    assert matched and all(s.scenario.committer == "v2" for s in matched)
    assert any(s.scenario.tasks != scenario.tasks for s in matched)
    other = for_scope(seeds, scope_named("crash-spark").make("v2", "s3-2018"))
    assert other and not {s.path for s in other} & {s.path for s in matched}  # per protocol


def test_the_quick_matrix_finds_the_adjacent_prefix_bug() -> None:
    cells = as_json(matrix(["magic"], ["s3"], [PREFIX.shows], quick=True, variants=True,
                   seeds=str(_saved()), workers=1))
    variant = [c for c in cells if c["committer"] == PREFIX.variant]
    assert [c["verdict"] for c in variant] == ["violated", "violated"]
    fixed = [c for c in cells if c["committer"] == PREFIX.fixed and c["bug"] == PREFIX.report]
    assert [c["verdict"] for c in fixed] == ["holds", "holds"]
