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
import sys
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from zerorename_model.experiments import tablev, trace
from zerorename_model.experiments.cells import Cell, Verdict, typed_cells
from zerorename_model.experiments.explored import Held

PAPER_DIR = Path(__file__).resolve().parents[1] / "paper"
LINK = re.compile(r"\]\((results/traces/[^)]+\.jsonl)\)")

sys.path.insert(0, str(PAPER_DIR))  # paper/zrpaper, as paper/make_paper.py imports it

from zrpaper import figures, merge, readme, render, settings  # noqa: E402
from zrpaper.budgets import RunBudget  # noqa: E402
from zrpaper.matrix import render_matrix  # noqa: E402
from zrpaper.race import RaceRow, RaceVerdict, race_rows  # noqa: E402
from zrpaper.results import (  # noqa: E402
    VERDICTS,
    RecordReader,
    Results,
    RowKey,
    TableV,
    load_results,
    save_results,
)
from zrpaper.sections import render_explored, render_tablev  # noqa: E402

#: the tests below read and change the results as the file holds them (JSON), and hand the
#: paper's code what it takes: the typed record, read from that JSON
typed = Results.from_json


def _in_matrix(cell: dict[str, Any]) -> bool:
    """A cell of the matrix proper (not one side of a production bug's comparison)."""
    return cell.get("bug") is None and cell.get("variant_of") is None


@pytest.fixture(scope="module")
def results() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(VERDICTS.read_text(encoding="utf-8"))
    return loaded


@pytest.fixture(scope="module")
def paper() -> str:
    return (PAPER_DIR / "zerorename.md").read_text(encoding="utf-8")


def test_paper_is_exactly_what_the_results_render_to(results: dict[str, Any], paper: str) -> None:
    template = (PAPER_DIR / "zerorename.template.md").read_text(encoding="utf-8")
    assert paper == render.render(template, typed(results)), (
        "paper/zerorename.md is stale: run .venv/bin/python paper/make_paper.py --render-only")


def test_every_generated_section_is_in_the_paper(results: dict[str, Any], paper: str) -> None:
    for section_of in render.SECTIONS.values():
        section = section_of(typed(results))
        assert section.strip() and section in paper, section_of.__name__
    assert "{{" not in paper, "a placeholder was left unsubstituted"


def test_the_readmes_verdict_block_is_what_the_results_render_to(
        results: dict[str, Any]) -> None:
    text = readme.README.read_text(encoding="utf-8")
    assert text == readme.updated_readme(text, typed(results)), (
        "paper/README.md's verdict block is stale: run .venv/bin/python paper/make_paper.py "
        "--render-only")
    changed = copy.deepcopy(results)
    cell = next(c for c in changed["cells"] if c["verdict"] == "violated")
    cell["verdict"], cell["trace"] = "holds", None
    assert readme.updated_readme(text, typed(changed)) != text


def test_the_top_readmes_guarantees_are_what_the_results_render_to(
        results: dict[str, Any]) -> None:
    """The users' table in README.md: per production committer, what exploration found on
    the stores a user has; a flipped verdict of a production committer on ``s3`` changes it."""
    text = readme.TOP_README.read_text(encoding="utf-8")
    assert text == readme.updated_top_readme(text, typed(results)), (
        "README.md's guarantees are stale: run .venv/bin/python paper/make_paper.py "
        "--render-only")
    changed = copy.deepcopy(results)
    cell = next(c for c in changed["cells"] if c["verdict"] == "violated"
                and c["committer"] == "magic" and c["store"] == "s3" and not c["variant_of"])
    cell["verdict"], cell["trace"] = "holds", None
    assert readme.updated_top_readme(text, typed(changed)) != text
    assert "paper/results/traces" not in readme.summary_block(typed(results)), "no per-trace links"


def test_a_changed_verdict_changes_the_rendered_tables(results: dict[str, Any]) -> None:
    """The comparison above can fail: one flipped cell or Table V value changes the paper."""
    changed = copy.deepcopy(results)
    cell = next(c for c in changed["cells"] if c["verdict"] == "violated" and _in_matrix(c))
    cell["verdict"], cell["trace"] = "holds", None
    assert render_matrix(typed(changed)) != render_matrix(typed(results))
    flipped = copy.deepcopy(results)
    name = next(iter(flipped["tablev"]["cells"]))
    value = flipped["tablev"]["cells"][name]["speculative_tasks"]
    value["value"] = not value["value"]
    assert render_tablev(typed(flipped)) != render_tablev(typed(results))


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
        assert cell["verdict"] in ("violated", "holds", "vacuous", "n/a")
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
    drawn = figures.write_figures(typed(results), tmp_path)
    committed = sorted(p.name for p in (PAPER_DIR / "figures").glob("*.png"))
    assert sorted(p.name for p in drawn) == committed == sorted(
        figures.figure_names(typed(results)))
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
    figures.write_figures(typed(changed), tmp_path)
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
    for page, base in ((PAPER_DIR / "README.md", ""), (PAPER_DIR.parent / "README.md", "paper/")):
        shown_there = set(IMAGE.findall(page.read_text(encoding="utf-8")))
        assert f"{base}figures/matrix.png" in shown_there, page
        assert all((page.parent / link).is_file() for link in shown_there), shown_there
    in_paper_readme = set(IMAGE.findall((PAPER_DIR / "README.md").read_text(encoding="utf-8")))
    assert {"figures/race.timeline.png", "figures/race.slice.png"} <= in_paper_readme


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

    from zerorename_model.check.properties import PROPERTIES
    from zerorename_model.experiments.verdicts import MATRIX_STORES

    return {**results, "stores": list(MATRIX_STORES), "properties": list(PROPERTIES),
            "scopes": [scope.to_json() for scope in describe_scopes()]}


def test_the_results_were_made_with_the_models_current_scopes_and_properties(
        results: dict[str, Any], as_current: dict[str, Any]) -> None:
    """A changed model (a property, a scope, a store added) makes every cell of the committed
    results incomparable with a new one: regenerate the paper (``make_paper.py``)."""
    for key in ("stores", "properties", "scopes"):
        assert results[key] == as_current[key], (
            f"paper/results/verdicts.json was made with other {key} than the model now has: "
            "run .venv/bin/python paper/make_paper.py")


def _stubbed_merge(results: dict[str, Any], tmp_path: Path, committer: str,
                   deep_budget: dict[str, Any] | None = None) -> dict[str, Any]:
    """merge.merge on a copy of the results, with the explorations replaced by stubs that
    answer "holds" for ``committer`` (and write no trace), in a scratch paper directory whose
    traces are the committed results' trace names."""
    traces = tmp_path / "results" / "traces"
    traces.mkdir(parents=True)
    for name in (PAPER_DIR / "results" / "traces").glob("*.jsonl"):
        (traces / name.name).write_text("x", encoding="utf-8")

    def matrix(_budget: Any, _workers: int, _progress: Any, committers: list[str],
               _deep_budget: Any) -> tuple[list[Cell], list[RowKey]]:
        cells = [replace(c, verdict=Verdict.HOLDS, trace=None,
                         explored=Held(c.scopes, True, sum(s.search.runs for s in c.scopes)))
                 for c in typed_cells(results)
                 if c.committer in committers or c.variant_of in committers]
        return cells, []

    def race(_runs: int, _workers: int, pairs: list[tuple[str, str]],
             _progress: Any = None) -> list[RaceRow]:
        return [replace(r, verdicts=tuple((p, RaceVerdict(Verdict.HOLDS)) for p, _v in r.verdicts))
                for r in race_rows(results) if (r.committer, r.store) in pairs]

    def tablev(columns: Sequence[str]) -> TableV:
        table = TableV.from_json(results["tablev"])
        return replace(table, cells={c: {a: replace(cell, value=True, trace=None)
                                         for a, cell in table.cells[c].items()}
                                     for c in columns}, differences=[],
                       record_reader={c: RecordReader(True, "stub", "stub", {}, None)
                                      for c in columns})

    merged = merge.merge(
        typed(results), [committer], RunBudget.from_json(results["budget"]), 1,
        lambda _line: None,
        explorations=merge.Explorations(matrix=matrix, race=race, tablev=tablev),
        paper_dir=tmp_path,
        deep_budget=None if deep_budget is None else RunBudget.from_json(deep_budget))
    return merged.to_json()


def test_a_merge_replaces_exactly_the_named_committers_part(
        as_current: dict[str, Any], tmp_path: Path) -> None:
    results = as_current
    merged = _stubbed_merge(results, tmp_path, "magic")
    def magics(cell: dict[str, Any]) -> bool:  # magic's part: its rows and its variants'
        return "magic" in (cell["committer"], cell.get("variant_of"))

    mine = [c for c in merged["cells"] if magics(c)]
    assert mine and all(c["verdict"] == "holds" for c in mine)
    assert [c for c in merged["cells"] if not magics(c)] == \
        [c for c in results["cells"] if not magics(c)]
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
    kept = typed(merged).traces()
    assert {Path(k).name for k in kept} == left
    [record] = merged["merged"][len(results.get("merged", [])):]
    assert record["committers"] == ["magic"] and record["budget"] == results["budget"]
    assert record["matrix"] == ["magic"] and record["tablev"] == ["magic"]
    assert record["race"] == [["magic", "s3"]]
    assert "--merge --committers magic" in render_explored(typed(merged))
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
        merge.merge_plan(typed(results), ["magic"], RunBudget.from_json(other))
    budget = RunBudget.from_json(results["budget"])
    with pytest.raises(merge.MergeRefused, match="scopes"):
        merge.merge_plan(typed({**results, "scopes": results["scopes"][1:]}), ["magic"],
                         budget)
    with pytest.raises(merge.MergeRefused, match="nothing to explore"):
        merge.merge_plan(typed(results), ["no-such-committer"], budget)
    assert merge.merge_plan(typed(results), ["fenced+no-fence"], budget) == \
        ([], [("fenced+no-fence", "s3")], [])


def _with_sampled_cells(results: dict[str, Any], committers: Sequence[str]) -> dict[str, Any]:
    """The results with one ``holds`` cell of each of ``committers`` cut off (holds*) and
    every other ``holds`` cell proved."""
    changed = copy.deepcopy(results)
    for cell in changed["cells"]:
        if cell["verdict"] == "holds":
            cell["explored"] = {**cell["explored"], "complete": True}
    for committer in committers:
        cell = next(c for c in changed["cells"] if c["committer"] == committer
                    and c["verdict"] == "holds" and not c.get("bug"))
        cell["explored"] = {**cell["explored"], "complete": False}
    return changed


def test_a_merge_may_raise_the_second_pass_only_over_every_undecided_cell(
        as_current: dict[str, Any], tmp_path: Path) -> None:
    """A deeper second pass may be merged in only when every cell it leaves alone is decided:
    otherwise a full run at that budget could decide those differently."""
    results = _with_sampled_cells(as_current, ["v2", "magic"])
    deeper = {**results["deep_budget"], "max_runs": results["deep_budget"]["max_runs"] * 4}
    budget, deep = RunBudget.from_json(results["budget"]), RunBudget.from_json(deeper)
    with pytest.raises(merge.MergeRefused, match="magic on"):
        merge.merge_plan(typed(results), ["v2"], budget, deep)
    shallower = {**results["deep_budget"], "max_runs": results["deep_budget"]["max_runs"] - 1}
    with pytest.raises(merge.MergeRefused, match="only raise"):
        merge.merge_plan(typed(results), ["v2", "magic"], budget,
                         RunBudget.from_json(shallower))
    with pytest.raises(merge.MergeRefused, match="only raise"):
        merge.merge_plan(typed(results), ["v2", "magic"], budget,
                         RunBudget.from_json({**deeper, "seconds": 60}))
    assert merge.merge_plan(typed(results), ["v2", "magic"], budget, deep)[0] == \
        ["v2", "magic"]
    merged = _stubbed_merge(_with_sampled_cells(as_current, ["magic"]), tmp_path, "magic",
                            deep_budget=deeper)
    assert merged["deep_budget"] == deeper
    assert typed(merged).to_json() == merged, "a merge record does not read back as written"
    assert merged["merged"][-1]["deep_raised_from"] == results["deep_budget"]["max_runs"]
    text = render_explored(typed(merged))
    assert f"raised from {results['deep_budget']['max_runs']:,} to {deeper['max_runs']:,}" \
        in text


def test_the_results_read_as_typed_records_and_written_again_are_the_same_bytes(
        tmp_path: Path) -> None:
    """The committed results read into :class:`Results` (every cell, VIII.C row, Table V cell,
    budget, scope and merge typed) and written back: the file is byte for byte what it was
    (JSON only on disk); one value changed in the record writes other bytes."""
    committed = VERDICTS
    raw = json.loads(committed.read_text(encoding="utf-8"))
    results = load_results(committed)
    assert len(results.cells) == len(raw["cells"]) and results.cells
    assert len(results.race) == len(raw["race"]) and results.race
    assert results.tablev.cells and results.scopes
    assert results.cells == typed_cells(raw) and results.race == race_rows(raw)
    save_results(results, tmp_path / "again.json")
    assert (tmp_path / "again.json").read_bytes() == committed.read_bytes()
    save_results(replace(results, race_max_runs=results.race_max_runs + 1),
                 tmp_path / "changed.json")
    assert (tmp_path / "changed.json").read_bytes() != committed.read_bytes()


@pytest.mark.parametrize(("part", "wrong"), [
    ("budget", {"max_runs": "1000", "seconds": None, "hypothesis_examples": 0}),
    ("timing", {"matrix_wall_s": 1}),
    ("tablev", []),
])
def test_results_of_another_shape_are_refused_on_reading(results: dict[str, Any], part: str,
                                                        wrong: object) -> None:
    """A results file whose parts are not what the paper wrote is refused where it is read,
    not rendered from."""
    with pytest.raises((TypeError, KeyError)):
        typed({**results, part: wrong})
