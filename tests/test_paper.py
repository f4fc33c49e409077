"""The paper cannot drift from its results.

``paper/zerorename.md`` must be exactly what ``paper/make_paper.py`` renders from the committed
``paper/results/verdicts.json`` and the template, every verdict it shows must be backed by a
trace file that exists and replays to the recorded final state, and the results must cover the
whole matrix.  Nothing here explores: a stale paper is fixed by
``.venv/bin/python paper/make_paper.py --render-only`` (or a full regeneration)."""

from __future__ import annotations

import copy
import importlib.util
import json
import re
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from zerorename_model import tablev, trace

PAPER_DIR = Path(__file__).resolve().parents[1] / "paper"
LINK = re.compile(r"\]\((results/traces/[^)]+\.jsonl)\)")


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("make_paper", PAPER_DIR / "make_paper.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while it loads
    spec.loader.exec_module(module)
    return module


make_paper = _load()


@pytest.fixture(scope="module")
def results() -> dict[str, Any]:
    return make_paper.load_results()


@pytest.fixture(scope="module")
def paper() -> str:
    return (PAPER_DIR / "zerorename.md").read_text(encoding="utf-8")


def test_paper_is_exactly_what_the_results_render_to(results: dict[str, Any], paper: str) -> None:
    template = (PAPER_DIR / "zerorename.template.md").read_text(encoding="utf-8")
    assert paper == make_paper.render(template, results), (
        "paper/zerorename.md is stale: run .venv/bin/python paper/make_paper.py --render-only")


def test_every_generated_section_is_in_the_paper(results: dict[str, Any], paper: str) -> None:
    for render in (make_paper.render_matrix, make_paper.render_tablev,
                   make_paper.render_differences, make_paper.render_explored):
        section = render(results)
        assert section.strip() and section in paper, render.__name__
    assert "{{" not in paper, "a placeholder was left unsubstituted"


def test_a_changed_verdict_changes_the_rendered_tables(results: dict[str, Any]) -> None:
    """The comparison above can fail: one flipped cell or Table V value changes the paper."""
    changed = copy.deepcopy(results)
    cell = next(c for c in changed["cells"] if c["verdict"] == "violated")
    cell["verdict"], cell["trace"] = "holds", None
    assert make_paper.render_matrix(changed) != make_paper.render_matrix(results)
    flipped = copy.deepcopy(results)
    name = next(iter(flipped["tablev"]["cells"]))
    value = flipped["tablev"]["cells"][name]["speculative_tasks"]
    value["value"] = not value["value"]
    assert make_paper.render_tablev(flipped) != make_paper.render_tablev(results)


def test_results_cover_the_whole_matrix(results: dict[str, Any]) -> None:
    keys = [(c["committer"], c["store"], c["property"]) for c in results["cells"]]
    assert len(keys) == len(set(keys)), "a cell appears twice"
    assert set(keys) == {(c, s, p) for c in results["committers"] for s in results["stores"]
                         for p in results["properties"]}
    for cell in results["cells"]:
        assert cell["verdict"] in ("violated", "holds", "n/a")
        assert (cell["trace"] is not None) == (cell["verdict"] == "violated")
        if cell["verdict"] == "n/a":
            assert cell["explored"]["reason"]
        else:
            assert cell["explored"]["runs"] >= 1


def test_every_linked_trace_exists(paper: str) -> None:
    links = set(LINK.findall(paper))
    assert links, "the paper links no trace"
    missing = sorted(link for link in links if not (PAPER_DIR / link).is_file())
    assert not missing


def test_no_trace_file_is_left_over(results: dict[str, Any]) -> None:
    named = {c["trace"] for c in results["cells"] if c["trace"]}
    named |= {v["trace"] for probe in results["race"] for v in probe["verdicts"].values()
              if v["trace"]}
    named |= {c["trace"] for row in results["tablev"]["cells"].values() for c in row.values()
              if c["trace"]}
    on_disk = {p.relative_to(PAPER_DIR).as_posix()
               for p in (PAPER_DIR / "results" / "traces").glob("*.jsonl")}
    assert on_disk == named


def test_matrix_traces_show_their_violation_and_replay(results: dict[str, Any]) -> None:
    for cell in results["cells"]:
        if cell["verdict"] != "violated":
            continue
        path = PAPER_DIR / cell["trace"]
        events = trace.read_trace(path)
        scenario = events[0]["scenario"]
        assert (scenario["committer"], scenario["store"]) == (cell["committer"], cell["store"])
        assert any(v.startswith(cell["property"]) for v in events[-1]["violations"]), path
        replayed = trace.replay(path)
        assert replayed.same, f"{path.name}: replayed to a different final state"


def test_race_traces_replay(results: dict[str, Any]) -> None:
    traces = [v["trace"] for probe in results["race"] for v in probe["verdicts"].values()
              if v["trace"]]
    assert traces, "the VIII.C probe found no violation at all: nothing to discuss"
    for link in traces:
        assert trace.replay(PAPER_DIR / link).same, link


def test_tablev_false_cells_have_replayable_traces(results: dict[str, Any]) -> None:
    for committer, row in results["tablev"]["cells"].items():
        for attribute, cell in row.items():
            if cell["value"]:
                continue
            assert cell["trace"], f"{committer}/{attribute} is False without a witness"
            events = json.loads("[" + ",".join(
                (PAPER_DIR / cell["trace"]).read_text(encoding="utf-8").splitlines()) + "]")
            replayed = tablev.replay(events)
            assert replayed.digest == events[-1]["digest"], cell["trace"]
