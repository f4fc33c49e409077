"""The paper cannot drift from its results.

``paper/zerorename.md`` must be exactly what ``paper/make_paper.py`` renders from the committed
``paper/results/verdicts.json`` and the template, every verdict it shows must be backed by a
trace file that exists and replays to the recorded final state, and the results must cover the
whole matrix.  Nothing here explores: a stale paper is fixed by
``.venv/bin/python paper/make_paper.py --render-only`` (or a full regeneration)."""

from __future__ import annotations

import copy
import json
import re
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from zerorename_model import tablev, trace

PAPER_DIR = Path(__file__).resolve().parents[1] / "paper"
LINK = re.compile(r"\]\((results/traces/[^)]+\.jsonl)\)")

sys.path.insert(0, str(PAPER_DIR))  # paper/zrpaper, as paper/make_paper.py imports it

from zrpaper import figures, merge, readme, render, settings  # noqa: E402
from zrpaper.matrix import render_matrix  # noqa: E402
from zrpaper.production import render_production_bugs  # noqa: E402
from zrpaper.sections import render_explored, render_tablev  # noqa: E402


@pytest.fixture(scope="module")
def results() -> dict[str, Any]:
    loaded: dict[str, Any] = settings.load_results()
    return loaded


@pytest.fixture(scope="module")
def paper() -> str:
    return (PAPER_DIR / "zerorename.md").read_text(encoding="utf-8")


def test_paper_is_exactly_what_the_results_render_to(results: dict[str, Any], paper: str) -> None:
    template = (PAPER_DIR / "zerorename.template.md").read_text(encoding="utf-8")
    assert paper == render.render(template, results), (
        "paper/zerorename.md is stale: run .venv/bin/python paper/make_paper.py --render-only")


def test_every_generated_section_is_in_the_paper(results: dict[str, Any], paper: str) -> None:
    for section_of in render.SECTIONS.values():
        section = section_of(results)
        assert section.strip() and section in paper, section_of.__name__
    assert "{{" not in paper, "a placeholder was left unsubstituted"


def test_the_readmes_verdict_block_is_what_the_results_render_to(
        results: dict[str, Any]) -> None:
    text = readme.README.read_text(encoding="utf-8")
    assert text == readme.updated_readme(text, results), (
        "README.md's verdict block is stale: run .venv/bin/python paper/make_paper.py "
        "--render-only")
    changed = copy.deepcopy(results)
    cell = next(c for c in changed["cells"] if c["verdict"] == "violated")
    cell["verdict"], cell["trace"] = "holds", None
    assert readme.updated_readme(text, changed) != text


def test_a_changed_verdict_changes_the_rendered_tables(results: dict[str, Any]) -> None:
    """The comparison above can fail: one flipped cell or Table V value changes the paper."""
    changed = copy.deepcopy(results)
    cell = next(c for c in changed["cells"] if c["verdict"] == "violated" and _in_matrix(c))
    cell["verdict"], cell["trace"] = "holds", None
    assert render_matrix(changed) != render_matrix(results)
    flipped = copy.deepcopy(results)
    name = next(iter(flipped["tablev"]["cells"]))
    value = flipped["tablev"]["cells"][name]["speculative_tasks"]
    value["value"] = not value["value"]
    assert render_tablev(flipped) != render_tablev(results)


def test_results_cover_the_whole_matrix(results: dict[str, Any]) -> None:
    keys = [(c["committer"], c["store"], c["property"], c.get("protocol"), c.get("bug"))
            for c in results["cells"]]
    assert len(keys) == len(set(keys)), "a cell appears twice"
    matrix = [c for c in results["cells"] if _in_matrix(c)]
    protocols = {c.get("protocol") for c in matrix}
    rows = {c["committer"] for c in matrix}
    assert rows <= set(results["committers"])
    assert {k[:4] for k in keys if k[4] is None} == {
        (c, s, p, d) for c in rows for s in results["stores"] for p in results["properties"]
        for d in protocols}
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
    named |= {r["trace"] for r in results["tablev"].get("record_reader", {}).values()
              if r["trace"]}
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


# -- the figures --------------------------------------------------------------------------------

IMAGE = re.compile(r"!\[[^\]]*\]\(([^)]+\.png)\)")


def test_committed_figures_are_what_the_results_draw(results: dict[str, Any],
                                                     tmp_path: Path) -> None:
    """Drawn again from the committed results, every figure has the committed bytes (PNG from
    Agg at a fixed dpi, default style, no Software chunk: the same input draws the same file)."""
    drawn = figures.write_figures(results, tmp_path)
    committed = sorted(p.name for p in (PAPER_DIR / "figures").glob("*.png"))
    assert sorted(p.name for p in drawn) == committed == sorted(
        figures.figure_names(results))
    stale = [p.name for p in drawn if p.read_bytes() != (PAPER_DIR / "figures" / p.name)
             .read_bytes()]
    assert not stale, (f"paper/figures/ is stale ({stale}): run .venv/bin/python "
                       "paper/make_paper.py --render-only")


def test_a_changed_verdict_changes_the_figure(results: dict[str, Any], tmp_path: Path) -> None:
    """The comparison above can fail: one flipped cell draws other bytes."""
    changed = copy.deepcopy(results)
    cell = next(c for c in changed["cells"] if c["verdict"] == "violated"
                and c["property"] == "exclusivity" and _in_matrix(c))
    cell["verdict"] = "holds"
    figures.write_figures(changed, tmp_path)
    committed = PAPER_DIR / "figures"
    assert (tmp_path / "matrix.exclusivity.png").read_bytes() != \
        (committed / "matrix.exclusivity.png").read_bytes()
    assert (tmp_path / "matrix.png").read_bytes() != (committed / "matrix.png").read_bytes()
    assert (tmp_path / "matrix.completeness.png").read_bytes() == \
        (committed / "matrix.completeness.png").read_bytes()


def test_every_figure_is_shown_and_every_image_link_resolves(paper: str) -> None:
    shown = set(IMAGE.findall(paper))
    assert shown, "the paper shows no figure"
    assert all((PAPER_DIR / link).is_file() for link in shown), shown
    on_disk = {p.relative_to(PAPER_DIR).as_posix() for p in (PAPER_DIR / "figures").glob("*")}
    assert on_disk <= shown, f"figures the paper does not show: {sorted(on_disk - shown)}"
    readme = (PAPER_DIR.parent / "README.md").read_text(encoding="utf-8")
    in_readme = set(IMAGE.findall(readme))
    assert {"paper/figures/matrix.png", "paper/figures/race.timeline.png",
            "paper/figures/race.slice.png"} <= in_readme
    assert all((PAPER_DIR.parent / link).is_file() for link in in_readme), in_readme


# -- merging one committer's rows -------------------------------------------------------------


def test_every_race_pair_has_its_rows(results: dict[str, Any]) -> None:
    rows = {(r["committer"], r["store"], r["scope"]) for r in results["race"]}
    assert rows == {(c, s, scope) for c, s in settings.RACE_PAIRS
                    for scope in settings.RACE_SCOPES}


def test_merges_are_recorded_and_the_paper_says_so(results: dict[str, Any],
                                                   paper: str) -> None:
    for record in results.get("merged", []):
        assert record["committers"] and record["at"] and record["budget"]
        assert f"--merge --committers {','.join(record['committers'])}" in paper


@pytest.fixture(scope="module")
def as_current(results: dict[str, Any]) -> dict[str, Any]:
    """The committed results with the settings a merge compares (stores, properties, scopes)
    replaced by the current model's: what a merge does with results it accepts is checked here
    whether or not the committed results are fresh (the next test says whether they are)."""
    from zrpaper.compute import describe_scopes

    from zerorename_model.properties import PROPERTIES
    from zerorename_model.verdicts import MATRIX_STORES

    return {**results, "stores": list(MATRIX_STORES), "properties": list(PROPERTIES),
            "scopes": describe_scopes()}


def test_the_results_were_made_with_the_models_current_scopes_and_properties(
        results: dict[str, Any], as_current: dict[str, Any]) -> None:
    """A changed model (a property, a scope, a store added) makes every cell of the committed
    results incomparable with a new one: regenerate the paper (``make_paper.py``)."""
    for key in ("stores", "properties", "scopes"):
        assert results[key] == as_current[key], (
            f"paper/results/verdicts.json was made with other {key} than the model now has: "
            "run .venv/bin/python paper/make_paper.py")


def _stubbed_merge(results: dict[str, Any], tmp_path: Path, committer: str) -> dict[str, Any]:
    """merge.merge on a copy of the results, with the explorations replaced by stubs that
    answer "holds" for ``committer`` (and write no trace), in a scratch paper directory whose
    traces are the committed results' trace names."""
    traces = tmp_path / "results" / "traces"
    traces.mkdir(parents=True)
    for name in (PAPER_DIR / "results" / "traces").glob("*.jsonl"):
        (traces / name.name).write_text("x", encoding="utf-8")

    def matrix(_budget: Any, _workers: int, _progress: Any,
               committers: list[str]) -> tuple[list[dict[str, Any]], list[list[str | None]]]:
        cells = [dict(c, verdict="holds", trace=None) for c in results["cells"]
                 if c["committer"] in committers]
        return cells, []

    def race(_runs: int, _workers: int, pairs: list[tuple[str, str]],
             _progress: Any = None) -> list[dict[str, Any]]:
        return [dict(r, verdicts={p: {"verdict": "holds", "trace": None, "witness": None}
                                  for p in r["verdicts"]})
                for r in results["race"] if (r["committer"], r["store"]) in pairs]

    def tablev(columns: Sequence[str]) -> dict[str, Any]:
        return {"cells": {c: {a: dict(cell, value=True, trace=None)
                              for a, cell in results["tablev"]["cells"][c].items()}
                          for c in columns}, "differences": [],
                "record_reader": {c: {"value": True, "trace": None} for c in columns}}

    merged: dict[str, Any] = merge.merge(
        copy.deepcopy(results), [committer], results["budget"], 1, lambda _line: None,
        explorations=merge.Explorations(matrix=matrix, race=race, tablev=tablev),
        paper_dir=tmp_path)
    return merged


def test_a_merge_replaces_exactly_the_named_committers_part(
        as_current: dict[str, Any], tmp_path: Path) -> None:
    results = as_current
    merged = _stubbed_merge(results, tmp_path, "magic")
    mine = [c for c in merged["cells"] if c["committer"] == "magic"]
    assert mine and all(c["verdict"] == "holds" for c in mine)
    assert [c for c in merged["cells"] if c["committer"] != "magic"] == \
        [c for c in results["cells"] if c["committer"] != "magic"]
    assert [(c["committer"], c["store"], c["property"]) for c in merged["cells"]] == \
        [(c["committer"], c["store"], c["property"]) for c in results["cells"]]
    assert [r for r in merged["race"] if r["committer"] != "magic"] == \
        [r for r in results["race"] if r["committer"] != "magic"]
    assert [(r["committer"], r["scope"]) for r in merged["race"]] == \
        [(r["committer"], r["scope"]) for r in results["race"]]
    assert list(merged["tablev"]["cells"]) == list(results["tablev"]["cells"])
    for name, row in results["tablev"]["cells"].items():
        if name != "magic":
            assert merged["tablev"]["cells"][name] == row
    assert all(c["value"] for c in merged["tablev"]["cells"]["magic"].values())
    # magic's traces are gone (its stub cells name none); every other trace is still there
    left = {p.name for p in (tmp_path / "results" / "traces").iterdir()}
    assert not any(n.startswith(("magic.", "race.magic.", "tablev.magic.")) for n in left)
    kept = merge.traces_of(merged["cells"], merged["race"], merged["tablev"])
    assert {Path(k).name for k in kept} == left
    [record] = merged["merged"][len(results.get("merged", [])):]
    assert record["committers"] == ["magic"] and record["budget"] == results["budget"]
    assert record["matrix"] == ["magic"] and record["tablev"] == ["magic"]
    assert record["race"] == [["magic", "s3"]]
    assert "--merge --committers magic" in render_explored(merged)
    again = _stubbed_merge(merged, tmp_path / "again", "magic")
    # the first magic merge made nothing that is left: its record goes, the others stay
    assert len(again["merged"]) == len(merged["merged"])
    assert again["merged"][:-1] == merged["merged"][:-1]
    assert again["cells"] == merged["cells"] and again["race"] == merged["race"]
    for key in ("budget", "scopes", "stores", "properties", "timing", "committers"):
        assert merged[key] == results[key]


def test_a_merge_is_refused_when_its_cells_would_not_be_comparable(
        as_current: dict[str, Any]) -> None:
    results = as_current
    other = {**results["budget"], "max_runs": results["budget"]["max_runs"] + 1}
    with pytest.raises(merge.MergeRefused, match="budget"):
        merge.merge_plan(results, ["magic"], other)
    with pytest.raises(merge.MergeRefused, match="scopes"):
        merge.merge_plan({**results, "scopes": results["scopes"][1:]}, ["magic"],
                              results["budget"])
    with pytest.raises(merge.MergeRefused, match="nothing to explore"):
        merge.merge_plan(results, ["no-such-committer"], results["budget"])
    assert merge.merge_plan(results, ["fenced+no-fence"], results["budget"]) == \
        ([], [("fenced+no-fence", "s3")], [])


# -- per-protocol rendering, on cells the model computes here --------------------------------
#
# A small results set made by running the model's matrix code (``verdicts.decide_job`` on the
# jobs ``verdicts.matrix`` would run, production-bug rows included) on tiny scopes: one task,
# one partitioned attempt; two jobs on adjacent prefixes; a path with a space.  `magic` on `s3`
# and `hdfs`, each cell decided under each job-commit protocol, and the production bugs whose
# scope family is among these (the variant and `magic` beside it).  The renderer's output is
# checked against these cells, whatever they turn out to be.

TINY_STORES = ("s3", "hdfs")
TINY_PROPS = ("completeness", "exclusivity", "valid-outcome", "concurrency", "liveness")


def _tiny_scopes() -> tuple[Any, ...]:
    from zerorename_model import scopes
    from zerorename_model.scenario import Faults, Scenario

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
    from zerorename_model import verdicts

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
            cells += verdicts.decide_job(job)
    for cell in cells:
        if cell["trace"]:
            cell["trace"] = Path(cell["trace"]).relative_to(paper_dir).as_posix()
    return {"committers": list(dict.fromkeys(c["committer"] for c in cells)),
            "stores": list(TINY_STORES), "properties": list(TINY_PROPS), "cells": cells}


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
    rendered = render_matrix(results)
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
    glance = _table_rows(render_matrix(results), "committer | protocol")
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
    section = render_production_bugs(results)
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
    rendered = render_matrix(cut_off)
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
    assert "holds*" not in render_matrix(decided)
    assert "holds\\*" not in render_matrix(decided)


def test_the_figures_draw_one_panel_per_protocol(tiny: tuple[Path, dict[str, Any]],
                                                 tmp_path: Path) -> None:
    _paper_dir, results = tiny
    panels = figures.matrix_panels(results)
    assert list(panels) == ["hadoop", "spark"]
    for driver, cells in panels.items():
        assert {c["protocol"] for c in cells} == {driver}
        assert all(_in_matrix(c) for c in cells)
    first = figures.write_figures(results, tmp_path / "first")
    assert [p.name for p in first] == figures.figure_names(results)
    changed = copy.deepcopy(results)
    spark = next(c for c in changed["cells"] if c["protocol"] == "spark"
                 and c["property"] == "exclusivity" and c["verdict"] != "n/a" and _in_matrix(c))
    spark["verdict"] = "violated" if spark["verdict"] == "holds" else "holds"
    figures.write_figures(changed, tmp_path / "second")
    for name in ("matrix.png", "matrix.exclusivity.png"):
        assert (tmp_path / "first" / name).read_bytes() != \
            (tmp_path / "second" / name).read_bytes(), name
    assert (tmp_path / "first" / "matrix.completeness.png").read_bytes() == \
        (tmp_path / "second" / "matrix.completeness.png").read_bytes()


def test_the_readme_block_links_from_the_repository_root(
        tiny: tuple[Path, dict[str, Any]]) -> None:
    _paper_dir, results = tiny
    block = readme.render_readme_verdicts({**results, "timing": {
        "matrix_wall_s": 1, "race_wall_s": 0, "tablev_wall_s": 0}, "workers": 1})
    for cell in results["cells"]:
        if cell["verdict"] == "violated" and _in_matrix(cell):
            assert f"[{cell['property']}](paper/{cell['trace']})" in block
    shown = [c for c in results["cells"] if c["variant_of"] and c["verdict"] == "violated"
             and _fixed_of(results, c)["verdict"] != "violated"]
    assert shown
    for cell in shown:
        assert f"`zerorename trace replay paper/{cell['trace']}`" in block
