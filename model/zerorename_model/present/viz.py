"""Figures of traces and verdicts, for notebooks, the paper and scripts alike.

Each function draws on a matplotlib ``Axes`` it is given (or a new figure) and returns the
figure, so a notebook shows it, a script saves it, and a test checks what was drawn.  Nothing
here computes a verdict: the matrix and Table V figures draw what exploration wrote to
``paper/results/verdicts.json``, and trace figures draw what
:mod:`zerorename_model.present.analysis` and :mod:`zerorename_model.present.hb` read from a trace
file.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import matplotlib.pyplot as plt
import networkx as nx
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Rectangle

from zerorename_model.engine.json_values import json_int, json_number, json_object
from zerorename_model.experiments.cells import Cell
from zerorename_model.experiments.matrix_text import BOUNDED, lag_bound
from zerorename_model.present.analysis import (
    DELETE_OPS,
    READ_OPS,
    WRITE_OPS,
    Step,
    StepKind,
    Trace,
)
from zerorename_model.present.hb import OUTCOME, edge_kinds

#: Colour of a step by what it does.
COLOURS = {"write": "tab:green", "read": "tab:gray", "delete": "tab:orange",
           "upload": "tab:olive", "driver": "tab:blue", "fault": "tab:red",
           "visibility": "tab:purple"}

#: Colour of a verdict cell.
VERDICT_COLOURS = {"violated": "#d62728", "holds": "#2ca02c", "holds*": "#98df8a",
                   "n/a": "#dddddd", "vacuous": "#ffdd71"}


def step_class(step: Step) -> str:
    """The colour class of a step (a key of :data:`COLOURS`)."""
    if step.kind is StepKind.FAULT:
        return "fault"
    if step.kind is StepKind.VISIBILITY:
        return "visibility"
    if step.kind is StepKind.DRIVER:
        return "driver"
    if step.op in DELETE_OPS or step.op == "abort_multipart":
        return "delete"
    if step.op in WRITE_OPS:
        return "write"
    if step.op in READ_OPS:
        return "read"
    return "upload"


def _axes(ax: Axes | None, size: tuple[float, float]) -> tuple[Figure, Axes]:
    if ax is not None:
        figure = ax.get_figure()
        assert isinstance(figure, Figure)
        return figure, ax
    figure, new_ax = plt.subplots(figsize=size)
    return figure, new_ax


def timeline(trace: Trace, *, highlight: Iterable[int] = (), ax: Axes | None = None,
             title: str | None = None) -> Figure:
    """One lane per actor, steps left to right, coloured by kind; steps in ``highlight``
    (for example a violation's slice) drawn large and ringed, the rest faded."""
    lanes = {actor: row for row, actor in enumerate(trace.actors)}
    marked = set(highlight)
    figure, ax = _axes(ax, (max(8.0, len(trace.steps) * 0.22), 1.0 + 0.55 * len(lanes)))
    for step in trace.steps:
        colour = COLOURS[step_class(step)]
        faded = bool(marked) and step.index not in marked
        marker = "X" if step.kind is StepKind.FAULT else "o"
        ax.scatter(step.index, lanes[step.actor], s=110 if step.index in marked else 40,
                   c=colour, marker=marker, alpha=0.25 if faded else 1.0,
                   edgecolors="black" if step.index in marked else "none", zorder=3)
        if step.kind is StepKind.FAULT:
            ax.axvline(step.index, color=COLOURS["fault"], alpha=0.15, lw=6, zorder=1)
    for row in lanes.values():
        ax.axhline(row, color="#eeeeee", zorder=0)
    ax.set_yticks(list(lanes.values()), list(lanes))
    ax.set_ylim(-0.7, len(lanes) - 0.3)
    ax.invert_yaxis()
    ax.set_xlabel("step")
    ax.legend(handles=[Line2D([], [], marker="o", ls="", color=c, label=k)
                       for k, c in COLOURS.items()],
              loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize="small", frameon=False)
    scenario = trace.scenario
    ax.set_title(title or f"{scenario.get('committer')} on {scenario.get('store')}: "
                          f"{'; '.join(trace.violations) or ', '.join(trace.outcomes)}",
                 fontsize="medium", loc="left")
    figure.tight_layout()
    return figure


def slice_graph(graph: nx.DiGraph[int], steps: Sequence[Step], *, ax: Axes | None = None,
                title: str = "why: the slice of the violation") -> Figure:
    """The slice as a graph: its steps laid out left to right in trace order, one row per
    actor, edges labelled by kind (reads-from, missed, message, program, outcome)."""
    keep = [s.index for s in steps]
    sub = graph.subgraph([*keep, OUTCOME]).copy()
    actors = list(dict.fromkeys(s.actor for s in steps))
    position: dict[int, tuple[float, float]] = {
        s.index: (float(order), -float(actors.index(s.actor))) for order, s in enumerate(steps)}
    position[OUTCOME] = (float(len(steps)), -len(actors) / 2.0 + 0.5)
    figure, ax = _axes(ax, (max(7.0, 2.2 * len(steps)), 1.6 + 1.2 * len(actors)))
    colours = [COLOURS[step_class(graph.nodes[n]["step"])] if n != OUTCOME else "black"
               for n in sub.nodes]
    nx.draw_networkx_nodes(sub, position, ax=ax, node_color=colours, node_size=380)
    styles = {"missed": "dashed", "program": "dotted"}
    for kind in ("reads-from", "missed", "message", "program", "outcome"):
        edges = [(a, b) for a, b, k in edge_kinds(sub) if k == kind]
        nx.draw_networkx_edges(sub, position, edgelist=edges, ax=ax,
                               style=styles.get(kind, "solid"),
                               edge_color="tab:red" if kind == "missed" else "#555555",
                               arrows=True, node_size=380, connectionstyle="arc3,rad=0.15")
    labels = {n: ("final state" if n == OUTCOME else graph.nodes[n]["step"].short_label())
              for n in sub.nodes}
    for node, (x, y) in position.items():
        ax.annotate(labels[node], (x, y), xytext=(0, -16), textcoords="offset points",
                    ha="center", va="top", fontsize="x-small")
    ax.set_title(title, fontsize="medium", loc="left")
    ax.set_axis_off()
    ax.margins(0.12, 0.3)
    figure.tight_layout()
    return figure


def verdict_heatmap(cells: Sequence[Mapping[str, object]], *, prop: str | None = None,
                    ax: Axes | None = None, title: str | None = None,
                    sampled: bool = False) -> Figure:
    """The verdict matrix as a committer × store grid, one figure per property (``prop``) or,
    without it, the number of violated properties per cell.  Cells come from
    ``verdicts.json``'s ``cells`` (each: committer, store, property, verdict).  With
    ``sampled``, a cell that holds but whose search was cut off by the run budget
    (``explored.complete`` false) reads ``holds*``, as the paper's tables show it."""
    committers = list(dict.fromkeys(str(c["committer"]) for c in cells))
    stores = list(dict.fromkeys(str(c["store"]) for c in cells))
    figure, ax = _axes(ax, (1.2 + 1.2 * len(stores), 0.9 + 0.45 * len(committers)))
    for row, committer in enumerate(committers):
        for col, store in enumerate(stores):
            mine = [c for c in cells if c["committer"] == committer and c["store"] == store
                    and (prop is None or c["property"] == prop)]
            text, colour = _cell_face(mine, prop, sampled)
            ax.add_patch(Rectangle((col, row), 1, 1, facecolor=colour, edgecolor="white"))
            ax.text(col + 0.5, row + 0.5, text, ha="center", va="center", fontsize="small")
    ax.set_xlim(0, len(stores))
    ax.set_ylim(len(committers), 0)
    ax.set_xticks([i + 0.5 for i in range(len(stores))], stores)
    ax.set_yticks([i + 0.5 for i in range(len(committers))], committers)
    ax.tick_params(length=0)
    ax.set_title(title or (prop or "violated properties per cell"), fontsize="medium", loc="left")
    figure.tight_layout()
    return figure


#: a matplotlib colour: a name, or the RGBA a colour map answers
Colour = str | tuple[float, float, float, float]


def _cell_face(cells: Sequence[Mapping[str, object]], prop: str | None,
               sampled: bool = False) -> tuple[str, Colour]:
    if not cells:
        return "", "white"
    if prop is not None:
        verdict = str(cells[0]["verdict"])
        if sampled and verdict == "holds" and not json_object(
                cells[0].get("explored", {})).get("complete", True):
            verdict = "holds*"
        # proved with the lag bounded
        bounded = BOUNDED if lag_bound(Cell.from_json(cells[0])) is not None else ""
        return verdict + bounded, VERDICT_COLOURS.get(verdict, "white")
    applicable = [c for c in cells if c["verdict"] != "n/a"]
    if not applicable:
        return "n/a", VERDICT_COLOURS["n/a"]
    violated = sum(c["verdict"] == "violated" for c in applicable)
    share = violated / len(applicable)
    colour = plt.get_cmap("Reds")(0.15 + 0.7 * share) if violated else VERDICT_COLOURS["holds"]
    return f"{violated}/{len(applicable)}", colour


def tablev_figure(computed: Mapping[str, Mapping[str, bool]],
                  paper: Mapping[str, Mapping[str, bool]] | None = None, *,
                  ax: Axes | None = None) -> Figure:
    """Table V as a grid (attribute × committer): True/False as computed by the probes, and
    cells that differ from the paper's table outlined in red."""
    attributes = list(computed)
    columns = list(dict.fromkeys(col for row in computed.values() for col in row))
    figure, ax = _axes(ax, (1.5 + 1.3 * len(columns), 0.8 + 0.45 * len(attributes)))
    for row, attribute in enumerate(attributes):
        for col, column in enumerate(columns):
            value = computed[attribute].get(column)
            expected = (paper or {}).get(attribute, {}).get(column)
            differs = expected is not None and value is not None and expected != value
            ax.add_patch(Rectangle(
                (col, row), 1, 1, facecolor="#c7e9c0" if value else "#fcbba1",
                edgecolor="red" if differs else "white", lw=2.5 if differs else 1))
            ax.text(col + 0.5, row + 0.5, "" if value is None else str(value), ha="center",
                    va="center", fontsize="small")
    ax.set_xlim(0, len(columns))
    ax.set_ylim(len(attributes), 0)
    ax.set_xticks([i + 0.5 for i in range(len(columns))], columns)
    ax.set_yticks([i + 0.5 for i in range(len(attributes))],
                  [a.replace("_", " ") for a in attributes])
    ax.tick_params(length=0)
    ax.set_title("Table V, computed (red outline: differs from the paper)", fontsize="medium",
                 loc="left")
    figure.tight_layout()
    return figure


def requests_per_file_figure(rows: Sequence[Mapping[str, object]], *,
                             ax: Axes | None = None) -> Figure:
    """Requests per committed file by committer and store, from a benchmark's
    ``requests_per_file`` rows (``bench/results/commit_costs.json``)."""
    labels = [f"{r['committer']}\n{r['store']}/{r['protocol']}" for r in rows]
    figure, ax = _axes(ax, (max(6.0, 0.8 * len(rows)), 3.2))
    ax.bar(range(len(rows)), [json_number(r["per_file"]) for r in rows], color="tab:blue")
    ax.set_xticks(range(len(rows)), labels, fontsize="x-small")
    ax.set_ylabel("requests per file")
    ax.set_title("requests per committed file", fontsize="medium", loc="left")
    figure.tight_layout()
    return figure


def commit_time_figure(rows: Sequence[Mapping[str, object]], *,
                       ax: Axes | None = None) -> Figure:
    """Job-commit seconds against commit threads, one line per committer, from a benchmark's
    ``commit_time`` rows."""
    figure, ax = _axes(ax, (6.0, 3.4))
    for committer in dict.fromkeys(str(r["committer"]) for r in rows):
        mine = sorted((json_int(r["threads"]), json_number(r["commit_seconds"])) for r in rows
                      if r["committer"] == committer)
        ax.plot([t for t, _ in mine], [s for _, s in mine], marker="o", label=committer)
    ax.set_xscale("log", base=2)
    ax.set_xlabel("commit threads")
    ax.set_ylabel("job commit (s)")
    ax.legend(fontsize="small", frameon=False)
    ax.set_title("job-commit time against threads", fontsize="medium", loc="left")
    figure.tight_layout()
    return figure
