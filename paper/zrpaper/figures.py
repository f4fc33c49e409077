"""The figures: the matrix as heatmaps and the VIII.C witness as a timeline and a slice graph
(a pure function of the results and the traces)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from zerorename_model.experiments.explored import JsonObject
from zrpaper.cells import PROTOCOL_NAMES, JobProtocol, protocols_in
from zrpaper.results import Results
from zrpaper.settings import HERE

#: The VIII.C witness the paper draws: the magic committer under Hadoop's protocol, where a
#: partitioned attempt's late pending set replaces the accepted attempt's.
RACE_FIGURE_TRACE = "results/traces/race.magic.s3.partition-hadoop.exclusivity.jsonl"
#: Figures are PNG drawn by Agg at a fixed resolution with matplotlib's default style and no
#: "Software" text chunk, so the same results draw the same bytes (tests/test_paper.py
#: compares them); a matplotlib upgrade that draws differently is fixed by --render-only.
FIGURE_DPI = 100


def matrix_panels(results: Results) -> dict[JobProtocol | None, list[JsonObject]]:
    """The matrix's cells (production-bug variants left out) by job-commit protocol, in the
    order the panels are drawn; ``{None: cells}`` for results that predate protocols.  As
    JSON: what :func:`zerorename_model.present.viz.verdict_heatmap` draws is ``verdicts.json``'s
    cells (a notebook hands it those)."""
    fixed = [c for c in results.cells if c.in_matrix]
    return {p: [c.to_json() for c in fixed if c.protocol == p] for p in protocols_in(fixed)}


def render_matrix_figures(results: Results) -> str:
    """The paper's block that shows the matrix figures (the overall grid, then one grid per
    property, two to a row), naming the protocols the panels are drawn for."""
    panels = [PROTOCOL_NAMES[p] for p in matrix_panels(results) if p is not None]
    lines = ["The same matrix drawn (`paper/figures/`, drawn by `make_paper.py` from the "
             "results): per cell, how many of the properties that apply are violated, then one "
             "grid per property"
             + (f"; each figure has one panel per protocol ({', '.join(panels)})." if panels
                else "."), "",
             "![Violated properties per committer and store](figures/matrix.png)", "",
             "| | |", "|---|---|"]
    props = list(results.properties)
    for i in range(0, len(props), 2):
        pair = [f"![{p}](figures/matrix.{p}.png)" for p in props[i:i + 2]]
        lines.append("| " + " | ".join(pair + [""] * (2 - len(pair))) + " |")
    return "\n".join(lines)


def figure_names(results: Results) -> list[str]:
    """The files :func:`write_figures` draws, relative to the figures directory."""
    return (["matrix.png"] + [f"matrix.{prop}.png" for prop in results.properties]
            + ["race.timeline.png", "race.slice.png"])


def write_figures(results: Results, out: Path) -> list[Path]:
    """Draw the matrix (overall and per property, one panel per job-commit protocol) and the
    VIII.C witness (timeline and slice) into ``out``; remove any other PNG there, so no stale
    figure is left."""
    import matplotlib
    import matplotlib.pyplot as plt
    from matplotlib.figure import Figure

    from zerorename_model.present import analysis, hb, viz

    out.mkdir(parents=True, exist_ok=True)
    witness = analysis.load(HERE / RACE_FIGURE_TRACE)
    panels = matrix_panels(results)

    def _heatmap(prop: str | None, title: str) -> Callable[[], Figure]:
        def draw() -> Figure:
            if list(panels) == [None]:  # results that predate per-protocol cells: one grid
                figure: Figure = viz.verdict_heatmap(panels[None], prop=prop, title=title,
                                                     sampled=prop is not None)
                return figure
            stores = len(results.stores)
            rows = len({c["committer"] for cells in panels.values() for c in cells})
            figure, axes = plt.subplots(1, len(panels), squeeze=False, figsize=(
                len(panels) * (1.2 + 1.2 * stores), 0.9 + 0.45 * rows))
            for ax, (protocol, cells) in zip(axes[0], panels.items(), strict=True):
                viz.verdict_heatmap(cells, prop=prop, ax=ax, sampled=prop is not None,
                                    title=f"{title}: {PROTOCOL_NAMES[protocol]}")
            return figure
        return draw

    drawn: dict[str, Callable[[], Figure]] = {
        "matrix.png": _heatmap(None, "violated properties per cell (of those that apply)")}
    for prop in results.properties:
        drawn[f"matrix.{prop}.png"] = _heatmap(prop, prop)

    def _timeline() -> Figure:
        _graph, steps = hb.slice_of(witness)
        figure: Figure = viz.timeline(witness, highlight=[s.index for s in steps])
        return figure

    drawn["race.timeline.png"] = _timeline
    drawn["race.slice.png"] = lambda: viz.slice_graph(
        *hb.slice_of(witness), title="why: the slice of the violation (the timeline's "
                                     "large points)")
    assert list(drawn) == figure_names(results)
    written = []
    with plt.style.context("default"), matplotlib.rc_context({"savefig.dpi": FIGURE_DPI}):
        for name, draw in drawn.items():
            figure = draw()
            figure.savefig(out / name, format="png", dpi=FIGURE_DPI,
                           metadata={"Software": None})
            plt.close(figure)
            written.append(out / name)
    for stale in sorted(set(out.glob("*.png")) - set(written)):
        stale.unlink()
    return written


