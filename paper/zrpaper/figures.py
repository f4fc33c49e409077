"""The figures: the matrix as heatmaps and the VIII.C witness as a timeline and a slice graph
(a pure function of the results and the traces)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from zrpaper.settings import HERE

#: The VIII.C witness the paper draws: the magic committer under Hadoop's protocol, where a
#: partitioned attempt's late pending set replaces the accepted attempt's.
RACE_FIGURE_TRACE = "results/traces/race.magic.s3.partition-hadoop.exclusivity.jsonl"
#: Figures are PNG drawn by Agg at a fixed resolution with matplotlib's default style and no
#: "Software" text chunk, so the same results draw the same bytes (tests/test_paper.py
#: compares them); a matplotlib upgrade that draws differently is fixed by --render-only.
FIGURE_DPI = 100


def figure_names(results: dict[str, Any]) -> list[str]:
    """The files :func:`write_figures` draws, relative to the figures directory."""
    return (["matrix.png"] + [f"matrix.{prop}.png" for prop in results["properties"]]
            + ["race.timeline.png", "race.slice.png"])


def write_figures(results: dict[str, Any], out: Path) -> list[Path]:
    """Draw the matrix (overall and per property) and the VIII.C witness (timeline and slice)
    into ``out``; remove any other PNG there, so no stale figure is left."""
    import matplotlib
    import matplotlib.pyplot as plt
    from matplotlib.figure import Figure

    from zerorename_model import analysis, hb, viz

    out.mkdir(parents=True, exist_ok=True)
    witness = analysis.load(HERE / RACE_FIGURE_TRACE)
    cells = results["cells"]
    drawn: dict[str, Callable[[], Figure]] = {
        "matrix.png": lambda: viz.verdict_heatmap(
            cells, title="violated properties per cell (of those that apply)")}

    def _heatmap(prop: str) -> Callable[[], Figure]:
        return lambda: viz.verdict_heatmap(cells, prop=prop, sampled=True)

    for prop in results["properties"]:
        drawn[f"matrix.{prop}.png"] = _heatmap(prop)

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


