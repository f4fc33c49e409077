"""The paper's per-protocol rendering, checked on cells the model computes here.

``tests/test_paper.py`` checks the committed paper against the committed results; this file
checks what the renderer makes of results in the per-protocol schema (``protocol``, ``bug``,
``variant_of`` per cell) whatever the committed results are: each protocol's verdict in every
cell, every violation linked, undecided cells marked and listed, production-bug rows beside
their fixed committer with a replay command that replays, one figure panel per protocol."""

from __future__ import annotations

import copy
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

PAPER_DIR = Path(__file__).resolve().parents[1] / "paper"
sys.path.insert(0, str(PAPER_DIR))  # paper/zrpaper, as paper/make_paper.py imports it

from zrpaper import figures, readme  # noqa: E402
from zrpaper.budgets import LagBudget, RunBudget  # noqa: E402
from zrpaper.matrix import render_matrix  # noqa: E402
from zrpaper.production import render_production_bugs  # noqa: E402
from zrpaper.results import Results, TableV, Timing  # noqa: E402

from zerorename_model.experiments.cells import Cell, Verdict, typed_cells  # noqa: E402
from zerorename_model.experiments.explored import Held, Violation  # noqa: E402

# -- per-protocol rendering, on cells the model computes here --------------------------------
#
# A small results set made by running the model's matrix code (``verdicts.decide_job`` on the
# jobs ``matrix.matrix`` would run, production-bug rows included) on tiny scopes: one task,
# one partitioned attempt; two jobs on adjacent prefixes; a path with a space.  `magic` on `s3`
# and `hdfs`, each cell decided under each job-commit protocol, and the production bugs whose
# scope family is among these (the variant and `magic` beside it).  The renderer's output is
# checked against these cells, whatever they turn out to be.

TINY_STORES = ("s3", "hdfs")
TINY_PROPS = ("completeness", "exclusivity", "valid-outcome", "concurrency", "liveness")


def _tiny_scopes() -> tuple[Any, ...]:
    from zerorename_model.engine.scenario import Faults, Scenario
    from zerorename_model.experiments import scopes

    def single(driver: str, faults: Any, files: tuple[str, ...]) -> Any:
        return lambda committer, store: Scenario(committer, store=store, tasks=1, files=files,
                                                 max_attempts=2, driver=driver, faults=faults)

    def two_jobs(driver: str) -> Any:
        return lambda committer, store: Scenario(
            committer, store=store, tasks=1, files=scopes.SPACED_FILES, max_attempts=2,
            dests=scopes.ADJACENT, driver=driver, faults=Faults())

    output = ("completeness", "exclusivity", "valid-outcome", "liveness")
    return tuple(scope for d in scopes.PROTOCOLS for scope in (
        scopes.Scope(f"partition-{d}", "partition", d, output,
                     single(d, Faults(partition=1), scopes.FILES)),
        scopes.Scope(f"spaces-{d}", "spaces", d, output,
                     single(d, Faults(), scopes.SPACED_FILES)),
        scopes.Scope(f"two-jobs-{d}", "two-jobs", d, scopes.CONCURRENT_PROPS, two_jobs(d))))


def _tiny_results(paper_dir: Path, max_runs: int) -> dict[str, Any]:
    """Every tiny cell, decided in this process by the model's matrix code."""
    from zerorename_model.experiments import verdicts

    traces = str(paper_dir / "results" / "traces")
    budget = verdicts.Budget(max_runs=max_runs)
    cells: list[dict[str, Any]] = []
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(verdicts, "SCOPES", _tiny_scopes())
        jobs = [("magic", store, TINY_PROPS, budget, traces, verdicts.model_resolver,
                 verdicts.PROTOCOLS) for store in TINY_STORES]
        jobs += verdicts.bug_jobs(["magic"], TINY_STORES, TINY_PROPS, budget, traces,
                                  verdicts.PROTOCOLS)
        for job in jobs:
            cells += [c.to_json() for c in verdicts.decide_job(job)]  # as results hold them
    for cell in cells:
        if cell["trace"]:
            cell["trace"] = Path(cell["trace"]).relative_to(paper_dir).as_posix()
    return {"committers": list(dict.fromkeys(c["committer"] for c in cells)),
            "stores": list(TINY_STORES), "properties": list(TINY_PROPS), "cells": cells}


def _typed(results: dict[str, Any]) -> Results:
    """The tiny results as the renderers take them: the committers, stores, properties and
    cells computed here; every other part of the record (budgets, VIII.C, Table V) empty, as
    none of the sections checked here reads it."""
    return Results(
        generated_by="tests/test_paper_rendering.py", budget=RunBudget(0),
        deep_budget=RunBudget(0), deepened=[], lag_budget=LagBudget(0, 0), race_max_runs=0,
        tablev_max_runs=0, workers=0, timing=Timing(0, 0, 0, 0, 0, 0), load=None,
        committers=results["committers"], stores=results["stores"],
        properties=results["properties"], scopes=[], cells=typed_cells(results), race=[],
        tablev=TableV("", [], {}, {}, {}, []))


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    paper_dir = tmp_path_factory.mktemp("paper")
    return paper_dir, _tiny_results(paper_dir, max_runs=20_000)


def _in_matrix(cell: dict[str, Any]) -> bool:
    return cell.get("bug") is None and cell.get("variant_of") is None


def _key(cell: dict[str, Any]) -> tuple[Any, ...]:
    return (cell["committer"], cell["store"], cell["property"], cell["protocol"], cell["bug"])


def _fixed_of(results: dict[str, Any], variant: dict[str, Any]) -> dict[str, Any]:
    """The fixed committer's cell of the same bug's comparison."""
    fixed: dict[str, Any] = next(c for c in results["cells"] if _key(c) == (
        variant["variant_of"], variant["store"], variant["property"], variant["protocol"],
        variant["bug"]))
    return fixed


def _expected_mark(cell: dict[str, Any]) -> str:
    """The mark a cell must get: a violation links its trace; a holding cell whose scopes were
    not all enumerated must not read as a plain ``holds``."""
    if cell["verdict"] == "violated":
        return f"[**violated**]({cell['trace']})"
    if cell["verdict"] == "holds" and not cell["explored"].get("complete", True):
        return "holds\\*"
    return str(cell["verdict"])


def _table_rows(text: str, first: str) -> dict[tuple[str, str], list[str]]:
    """The rows of the markdown table whose header starts with ``| first |``, by their first
    two columns."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f"| {first} |"))
    rows: dict[tuple[str, str], list[str]] = {}
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        columns = [c.strip() for c in line.strip("|").split(" | ")]
        rows[(columns[0], columns[1])] = columns[2:]
    return rows


def test_the_matrix_shows_each_protocols_verdict_in_every_cell(
        tiny: tuple[Path, dict[str, Any]]) -> None:
    _paper_dir, results = tiny
    rendered = render_matrix(_typed(results))
    full = _table_rows(rendered, "committer | store")
    cells = {_key(c)[:4]: c for c in results["cells"] if _in_matrix(c)}
    assert any(not _in_matrix(c) for c in results["cells"]), "no production-bug row computed"
    assert set(full) == {("magic", s) for s in TINY_STORES}, "bug rows stay out of the matrix"
    for (committer, store), marks in full.items():
        assert marks == [" / ".join(_expected_mark(cells[(committer, store, p, d)])
                                    for d in ("hadoop", "spark")) for p in TINY_PROPS]
    for driver, name in (("hadoop", "Hadoop's protocol"), ("spark", "Spark's protocol")):
        mine = [c for c in results["cells"] if c["protocol"] == driver and _in_matrix(c)]
        violated = sum(c["verdict"] == "violated" for c in mine)
        assert f"{name}: {len(mine)} cells: {violated} violated," in rendered


def test_at_a_glance_names_every_violation_and_says_when_all_hold(
        tiny: tuple[Path, dict[str, Any]]) -> None:
    _paper_dir, results = tiny
    glance = _table_rows(render_matrix(_typed(results)), "committer | protocol")
    texts: dict[tuple[str, str], list[str]] = {}
    for (committer, driver), row in glance.items():
        for store, text in zip(TINY_STORES, row, strict=True):
            mine = [c for c in results["cells"] if _in_matrix(c) and (
                c["committer"], c["store"], c["protocol"]) == (committer, store, driver)]
            violated = [c for c in mine if c["verdict"] == "violated"]
            for cell in violated:
                assert f"[{cell['property']}]({cell['trace']})" in text
            if all(c["verdict"] == "n/a" for c in mine):
                assert text == "n/a"
            else:
                assert (text == "all hold") == (not violated)
            texts.setdefault((committer, store), []).append(text)
    # the table exists to show a committer that is safe under one protocol and not the other
    assert any(len(set(both)) == 2 for both in texts.values()), texts


def test_each_production_bug_row_stands_beside_its_fixed_row_with_a_replayable_trace(
        tiny: tuple[Path, dict[str, Any]]) -> None:
    paper_dir, results = tiny
    section = render_production_bugs(_typed(results))
    lines = section.splitlines()
    violated = [c for c in results["cells"] if c["variant_of"] and c["verdict"] == "violated"]
    # the bug's evidence: what the variant violates and its fixed committer does not
    shown = [c for c in violated if _fixed_of(results, c)["verdict"] != "violated"]
    assert shown, "no variant violated anything its fixed committer keeps: nothing to show"
    for cell in violated:
        if cell not in shown:
            assert f"| `{cell['committer']}` | {cell['store']} | {cell['protocol']} | " \
                f"{cell['property']} |" not in section
            assert f"{cell['property']} on {cell['store']} ({cell['protocol']})" in section
    for cell in shown:
        row = (f"| `{cell['committer']}` | {cell['store']} | {cell['protocol']} | "
               f"{cell['property']} | {_expected_mark(cell)} |")
        at = next(i for i, line in enumerate(lines) if line.startswith(row))
        fixed = _fixed_of(results, cell)
        assert lines[at + 1].startswith(
            f"| `{fixed['committer']}` (fixed) | {cell['store']} | {cell['protocol']} | "
            f"{cell['property']} | {_expected_mark(fixed)} |")
        command = f"zerorename trace replay paper/{cell['trace']}"
        assert command in section
    cli = Path(sys.executable).with_name("zerorename")
    replayed = subprocess.run([str(cli), "trace", "replay", str(paper_dir / shown[0]["trace"])],
                              capture_output=True, text=True, check=False, timeout=300)
    assert replayed.returncode == 0, replayed.stdout + replayed.stderr


def test_undecided_cells_are_marked_and_listed_and_holds_star_only_when_some_are(
        tiny: tuple[Path, dict[str, Any]], tmp_path: Path) -> None:
    _paper_dir, decided = tiny
    cut_off = _tiny_results(tmp_path, max_runs=20)
    undecided = [c for c in cut_off["cells"] if c["verdict"] == "holds"
                 and not c["explored"]["complete"] and _in_matrix(c)]
    assert undecided, "20 runs per scope enumerated every tiny scope: nothing to check"
    rendered = render_matrix(_typed(cut_off))
    full = _table_rows(rendered, "committer | store")
    for cell in undecided:
        at = TINY_PROPS.index(cell["property"])
        marks = full[(cell["committer"], cell["store"])][at].split(" / ")
        assert marks[("hadoop", "spark").index(cell["protocol"])] == "holds\\*"
    listing = rendered[rendered.index("not decided completely"):]
    for cell in undecided:
        assert f"* `{cell['committer']}` on {cell['store']} ({cell['protocol']}): " in listing
        assert cell["property"] in listing
    complete = all(c["explored"].get("complete", True) or c["verdict"] != "holds"
                   for c in decided["cells"])
    assert complete, "20,000 runs did not enumerate a tiny scope"
    assert "holds*" not in render_matrix(_typed(decided))
    assert "holds\\*" not in render_matrix(_typed(decided))


def test_cells_proved_with_the_lag_bounded_are_marked_counted_and_listed(
        tiny: tuple[Path, dict[str, Any]]) -> None:
    """A ``holds`` the third pass proved with at most N visibility events pending reads
    ``holds†`` in the table, is counted as such and listed with the unbounded search's runs;
    with no such cell, no mark appears."""
    _paper_dir, decided = tiny
    assert "\u2020" not in render_matrix(_typed(decided))
    results = copy.deepcopy(decided)
    cell = next(c for c in results["cells"] if c["verdict"] == "holds" and _in_matrix(c))
    cell["explored"].update(max_lag=4, unbounded={"runs": 100_000, "complete": False})
    rendered = render_matrix(_typed(results))
    full = _table_rows(rendered, "committer | store")
    marks = full[(cell["committer"], cell["store"])][TINY_PROPS.index(cell["property"])]
    assert marks.split(" / ")[("hadoop", "spark").index(cell["protocol"])] == "holds\u2020"
    assert "1 of them with the visibility lag bounded" in rendered
    listing = rendered[rendered.index("1 cells hold with the store's visibility lag bounded"):]
    assert "at most 4 visibility events pending at once" in listing
    assert (f"* `{cell['committer']}` on {cell['store']} ({cell['protocol']}): "
            f"{cell['property']}; unbounded: 100,000 runs, cut off") in listing


def test_the_reach_is_shown_and_vacuous_cells_are_marked_counted_and_listed(
        tiny: tuple[Path, dict[str, Any]]) -> None:
    """Every holding cell the model decided carries its reach, and the paper lists the fewest
    runs per property and state; a cell no run reached a state of reads ``vacuous`` in the
    table, is counted and listed; results without reach (made before it was counted) render
    no reach section."""
    _paper_dir, decided = tiny
    holding = [c for c in decided["cells"] if c["verdict"] == "holds" and _in_matrix(c)]
    assert holding and all(all(runs > 0 for runs in c["explored"]["reach"].values())
                           for c in holding)
    rendered = render_matrix(_typed(decided))
    reach = rendered[rendered.index("Reach: "):]
    for cell in holding:
        for state in cell["explored"]["reach"]:
            assert f"| {cell['property']} | {state} |" in reach
    assert "Vacuous (" not in rendered

    results = copy.deepcopy(decided)
    cell = next(c for c in results["cells"] if c["verdict"] == "holds" and _in_matrix(c))
    cell["verdict"] = "vacuous"
    cell["explored"]["reach"] = dict.fromkeys(cell["explored"]["reach"], 0)
    rendered = render_matrix(_typed(results))
    full = _table_rows(rendered, "committer | store")
    marks = full[(cell["committer"], cell["store"])][TINY_PROPS.index(cell["property"])]
    assert marks.split(" / ")[("hadoop", "spark").index(cell["protocol"])] == "vacuous"
    assert "1 vacuous (no violation, but no run reached" in rendered
    assert (f"{cell['committer']} on {cell['store']}, {cell['property']} ({cell['protocol']})"
            in rendered[rendered.index("Vacuous ("):])
    state = next(iter(cell["explored"]["reach"]))
    assert f"| {cell['property']} | {state} | 0 |" in rendered

    for raw in results["cells"]:
        raw["explored"].pop("reach", None)
    assert "Reach: " not in render_matrix(_typed(results))

def test_the_figures_draw_one_panel_per_protocol(tiny: tuple[Path, dict[str, Any]],
                                                 tmp_path: Path) -> None:
    _paper_dir, results = tiny
    panels = figures.matrix_panels(_typed(results))
    assert list(panels) == ["hadoop", "spark"]
    for driver, cells in panels.items():
        assert {c["protocol"] for c in cells} == {driver}
        assert all(_in_matrix(c) for c in cells)
    first = figures.write_figures(_typed(results), tmp_path / "first")
    assert [p.name for p in first] == figures.figure_names(_typed(results))
    changed = copy.deepcopy(results)
    spark = next(c for c in changed["cells"] if c["protocol"] == "spark"
                 and c["property"] == "exclusivity" and c["verdict"] != "n/a" and _in_matrix(c))
    was = Cell.from_json(spark)  # its verdict flipped, with a record of the other kind
    spark.update((replace(was, verdict=Verdict.HOLDS, trace=None,
                          explored=Held(was.scopes, True, 1))
                  if was.verdict is Verdict.VIOLATED else
                  replace(was, verdict=Verdict.VIOLATED, trace=None,
                          explored=Violation(was.scopes[-1], "exploration", 1, "seen", 1,
                                             was.scopes))).to_json())
    figures.write_figures(_typed(changed), tmp_path / "second")
    for name in ("matrix.png", "matrix.exclusivity.png"):
        assert (tmp_path / "first" / name).read_bytes() != \
            (tmp_path / "second" / name).read_bytes(), name
    assert (tmp_path / "first" / "matrix.completeness.png").read_bytes() == \
        (tmp_path / "second" / "matrix.completeness.png").read_bytes()


def test_the_readme_block_links_from_paper_and_replays_from_the_repository_root(
        tiny: tuple[Path, dict[str, Any]]) -> None:
    _paper_dir, results = tiny
    block = readme.render_readme_verdicts(replace(
        _typed(results), timing=Timing(1, 0, 0, 0, 0, 0), workers=1))
    for cell in results["cells"]:
        if cell["verdict"] == "violated" and _in_matrix(cell):
            # the block lives in paper/README.md: its links are relative to paper/
            assert f"[{cell['property']}]({readme.BASE}{cell['trace']})" in block
    shown = [c for c in results["cells"] if c["variant_of"] and c["verdict"] == "violated"
             and _fixed_of(results, c)["verdict"] != "violated"]
    assert shown
    for cell in shown:
        assert f"`zerorename trace replay paper/{cell['trace']}`" in block
