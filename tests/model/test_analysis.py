"""Trace analysis, the happens-before slice and the figures drawn from them.

The rebuilt store state is checked against the harness itself (a replay's final state), the
slice against the paper's own explanation of the Section VIII.C race, and the figures by what
they drew — so each can fail when the code it checks is wrong.
"""

from __future__ import annotations

from pathlib import Path

import matplotlib
import pytest

matplotlib.use("Agg")

from zerorename_model.experiments import trace
from zerorename_model.present import analysis, hb, viz

ROOT = Path(__file__).resolve().parents[2]
TRACES = ROOT / "paper" / "results" / "traces"
RESULTS = ROOT / "paper" / "results" / "verdicts.json"
RACE = TRACES / "race.magic.s3.partition-hadoop.exclusivity.jsonl"
LAGGING = TRACES / "magic.s3-2018.completeness.hadoop.jsonl"

# lakeFS traces act through branch operations (create, merge, delete a branch) that are not
# object-store requests, so the object-by-object rebuild does not apply to them
REBUILDABLE = sorted(p for p in TRACES.glob("*.jsonl") if ".lakefs." not in p.name
                     and not p.name.startswith("lakefs."))


def _destination_objects(t: analysis.Trace, state: analysis.StoreState) -> set[str]:
    dest = str(t.scenario["dests"][0])
    scheme, rest = dest.split("://", 1)
    root = f"{scheme}://{rest.split('/', 1)[0]}/"
    return {url for url in state.objects if url.startswith(root)}


def test_rebuilt_final_state_matches_the_harness_for_every_shipped_trace() -> None:
    assert len(REBUILDABLE) > 100
    for path in REBUILDABLE:
        t = analysis.load(path)
        replayed = trace.replay(path)
        assert replayed.same, path
        assert _destination_objects(t, analysis.store_state(t)) == set(replayed.result.final), path


def test_state_at_a_step_and_the_diff_between_steps() -> None:
    t = analysis.load(RACE)
    puts = [s for s in t.steps if s.op == "put" and s.keys[0].endswith(".pendingset")]
    first = puts[0]
    late = next(s for s in puts if s.actor == "j0.t1.a0")
    before = analysis.store_state(t, first.index - 1)
    after = analysis.store_state(t, first.index)
    change = analysis.diff(before, after)
    assert change.added == [first.keys[0]] and not change.removed
    # the partitioned attempt's late PUT, and nothing else, changes the store at its step
    # rewrites the pendingset the accepted attempt j0.t1.a1 had written
    change = analysis.diff(analysis.store_state(t, late.index - 1),
                           analysis.store_state(t, late.index))
    assert change.rewritten == [late.keys[0]] and not change.added and not change.removed
    creates = [s for s in t.steps if s.op == "create_multipart"]
    assert creates[0].result in analysis.store_state(t, creates[0].index).uploads
    assert not analysis.diff(after, after)


def test_the_slice_of_the_viii_c_race_is_the_late_pendingset_and_what_it_led_to() -> None:
    t = analysis.load(RACE)
    _, steps = hb.slice_of(t)
    described = [(s.actor, s.op, s.keys[-1].rsplit("/", 1)[-1] if s.keys else "") for s in steps]
    late_put = next(s for s in steps if s.op == "put" and s.keys[0].endswith(".pendingset"))
    # the pendingset the driver read is the one the partitioned attempt wrote last
    assert late_put.actor == "j0.t1.a0"
    assert ("driver0", "get", "task_job0_m_000001.pendingset") in described
    assert ("driver0", "complete_multipart", "part-00001") in described
    assert any(s.op == "partition" and s.actor == "j0.t1.a0" for s in steps)
    # the winning attempt's steps did not shape the outcome, and the slice is small
    assert not any(s.actor == "j0.t1.a1" for s in steps)
    assert len(steps) <= len(t.steps) // 4


def test_a_lagging_listing_is_a_missed_edge_in_the_slice() -> None:
    t = analysis.load(LAGGING)
    graph, steps = hb.slice_of(t)
    missed = [(a, b) for a, b, kind in graph.edges(data="kind") if kind == "missed"]
    assert missed, "the s3-2018 listing that missed the .pending PUT has no missed edge"
    listing = t.steps[missed[0][1]]
    assert listing.op == "list_page" and hb.listed_urls(listing) == []
    assert missed[0][1] in {s.index for s in steps}


def test_violated_keys_cover_every_message_form() -> None:
    t = analysis.load(LAGGING)
    for text, key in (
        ("completeness (job 0): part-00000: missing, expected b'x'", "s3://bucket/out/part-00000"),
        ("continuity (job 0): a b.csv changed after the job committed", "s3://bucket/out/a b.csv"),
        ("abortability (job 0): p-1 visible after abort", "s3://bucket/out/p-1"),
        ("consistency (job 0): under inconsistent listings: q: missing", "s3://bucket/out/q"),
        ("abortability (job 0): temporary s3://bucket/out/_t/x left after cleanup",
         "s3://bucket/out/_t/x"),
    ):
        t.violations = [text]
        assert hb.violated_keys(t) == [key], text


def test_every_violating_shipped_trace_has_a_nonempty_slice() -> None:
    """Every violation that names the output it is about; liveness's ("the job ended failed")
    names none: its story is the failure, not a key."""
    for path in REBUILDABLE:
        t = analysis.load(path)
        t.violations = [v for v in t.violations if not v.startswith("liveness ")]
        if t.violations:
            assert hb.slice_of(t)[1], path


def test_a_task_level_valid_outcome_finding_names_the_tasks_files() -> None:
    t = analysis.load(LAGGING)
    t.violations = ["valid-outcome (job 0): task 0: a mix of attempts j0.t0.a0, j0.t0.a1"]
    assert hb.violated_keys(t) == [f"s3://bucket/out/{p.format(task=0, job=0)}"
                                   for p in t.scenario["files"]]


def test_timeline_draws_one_point_per_step_and_marks_the_slice() -> None:
    t = analysis.load(RACE)
    _, steps = hb.slice_of(t)
    figure = viz.timeline(t, highlight=[s.index for s in steps])
    points = sum(len(c.get_offsets()) for c in figure.axes[0].collections)
    assert points == len(t.steps)
    labels = [tick.get_text() for tick in figure.axes[0].get_yticklabels()]
    assert labels == t.actors
    viz.slice_graph(*hb.slice_of(t))


def test_heatmap_and_table_v_draw_what_the_results_say() -> None:
    results = analysis.load_results(RESULTS)
    cells = [c for c in results["cells"] if c.get("bug") is None
             and c.get("protocol", "hadoop") == "hadoop"]  # one protocol's matrix proper
    figure = viz.verdict_heatmap(cells, prop="exclusivity")
    texts = [t.get_text() for t in figure.axes[0].texts]
    expected = [c["verdict"] for c in cells if c["property"] == "exclusivity"]
    assert sorted(texts) == sorted(expected)
    bounded = [{**c, "explored": {**c["explored"], "max_lag": 4}} if c["verdict"] == "holds"
               else c for c in cells if c["property"] == "exclusivity"]
    figure = viz.verdict_heatmap(bounded, prop="exclusivity")  # a proof with the lag bounded
    texts = [t.get_text() for t in figure.axes[0].texts]
    assert sorted(texts) == sorted(c["verdict"] + ("\u2020" if c["verdict"] == "holds" else "")
                                   for c in bounded)
    computed, paper = analysis.tablev_grids(results["tablev"])
    figure = viz.tablev_figure(computed, paper)
    outlined = [p for p in figure.axes[0].patches if p.get_edgecolor()[:3] == (1.0, 0.0, 0.0)]
    assert len(outlined) == len(results["tablev"]["differences"])


@pytest.mark.parametrize("bad", ["", '{"t": "op"}\n'])
def test_load_refuses_a_file_that_is_not_a_trace(tmp_path: Path, bad: str) -> None:
    path = tmp_path / "x.jsonl"
    path.write_text(bad, encoding="utf-8")
    with pytest.raises(ValueError, match="not a zerorename trace"):
        analysis.load(path)
