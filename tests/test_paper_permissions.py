"""The permission fault family's results cannot drift: ``paper/results/permissions.json`` is
what exploring the family gives (``zerorename_model.experiments.permissions.decide``), its
witnesses replay, and the table in ``paper/README.md`` and in the paper is its rendering.  A
stale file is fixed by ``.venv/bin/python paper/make_paper.py --permissions`` (seconds)."""

from __future__ import annotations

import copy
import sys
from pathlib import Path
from typing import Any

import pytest

from zerorename_model.experiments import trace
from zerorename_model.experiments.permissions import PROPS, TAKE_BACK, decide, rows

PAPER_DIR = Path(__file__).resolve().parents[1] / "paper"
sys.path.insert(0, str(PAPER_DIR))  # paper/zrpaper, as paper/make_paper.py imports it

from zrpaper import permissions  # noqa: E402


@pytest.fixture(scope="module")
def data() -> dict[str, Any]:
    loaded: dict[str, Any] = permissions.load()
    return loaded


def test_the_readme_block_is_what_the_results_render_to(data: dict[str, Any]) -> None:
    text = permissions.README.read_text(encoding="utf-8")
    assert text == permissions.updated_readme(text, data), (
        "paper/README.md's permission block is stale: run .venv/bin/python paper/make_paper.py "
        "--permissions")
    assert permissions.render_table(data) in (PAPER_DIR / "zerorename.md").read_text(
        encoding="utf-8"), "the paper's permission table is stale"
    changed = copy.deepcopy(data)
    cell = next(r["cells"]["invisibility"] for r in changed["rows"]
                if r["cells"]["invisibility"]["verdict"] == "violated")
    cell["verdict"], cell["trace"] = "holds", None
    assert permissions.updated_readme(text, changed) != text, "a flipped verdict shows"


def test_the_rows_are_every_committer_and_protocol(data: dict[str, Any]) -> None:
    assert [(r["committer"], r["fixes"], r["protocol"]) for r in data["rows"]] == [
        (c, fixes, p) for c, fixes in rows() for p in ("hadoop", "spark")]
    assert data["properties"] == list(PROPS)


def test_the_verdicts_are_a_fresh_exploration(data: dict[str, Any]) -> None:
    """Every row explored again (the family is small): the same verdicts and run counts, and
    the unfixed rows' invisibility violated where their ``+take-back`` rows hold."""
    for row in data["rows"]:
        verdict = decide(row["committer"], row["protocol"], data["store"],
                         max_runs=data["max_runs"])
        assert (row["runs"], row["complete"]) == (verdict.runs, verdict.complete), row
        for prop in PROPS:
            label = permissions.label("holds" if verdict.holds(prop) else "violated",
                                      verdict.complete)
            assert row["cells"][prop]["verdict"] == label, (row["committer"], prop)
    by = {(r["committer"], r["protocol"]): r["cells"]["invisibility"]["verdict"]
          for r in data["rows"]}
    for committer, fixed in TAKE_BACK.items():
        for protocol in ("hadoop", "spark"):
            assert (by[committer, protocol], by[fixed, protocol]) == ("violated", "holds")


def test_every_violation_has_a_trace_that_replays(data: dict[str, Any]) -> None:
    named = set()
    for row in data["rows"]:
        for prop, cell in row["cells"].items():
            assert (cell["verdict"] == "violated") == (cell["trace"] is not None), row
            if cell["trace"] is None:
                continue
            named.add(cell["trace"])
            path = PAPER_DIR / cell["trace"]
            events = trace.read_trace(path)
            scenario = events[0]["scenario"]
            assert isinstance(scenario, dict)
            assert (scenario["committer"], scenario["driver"]) == (row["committer"],
                                                                    row["protocol"])
            violations = events[-1]["violations"]
            assert isinstance(violations, list)
            assert any(str(v).startswith(prop) for v in violations), path
            assert trace.replay(path).same, f"{path.name}: replayed to another final state"
    on_disk = {p.relative_to(PAPER_DIR).as_posix()
               for p in permissions.PERMISSION_TRACES.glob("*.jsonl")}
    assert on_disk == named, "a trace file no verdict names, or a named one missing"
