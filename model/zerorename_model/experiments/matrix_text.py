"""The verdict matrix as text: one table with both protocols' verdicts in each cell, then the
production bugs, each variant under the fixed committer, with a legend that says what the
protocols and verdicts mean.  Pure functions of the cells (:class:`.cells.Cell`, as
``zerorename_model.experiments.verdicts`` decides them or ``verdicts.json`` holds them)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from zerorename_model.experiments.cells import Cell, Verdict, fewest_reach
from zerorename_model.experiments.scopes import PROTOCOL_LEGEND, PROTOCOLS

#: how a verdict is written in a table cell (short, so two fit side by side)
SHORT = {"holds": "holds", "holds*": "holds*", "violated": "VIOL", "n/a": "n/a",
         "vacuous": "vacuous"}


def shown_verdict(cell: Cell) -> str:
    """A cell's verdict as people read it: ``holds*`` where a scope was only sampled."""
    return cell.shown


def lag_bound(cell: Cell) -> int | None:
    """The visibility-lag bound a ``holds`` was proved under (``Budget.lag_pass``), or None:
    proved with the lagging store's whole freedom, or not a proof at all."""
    return cell.max_lag


#: what marks a ``holds`` proved with the visibility lag bounded (the legend says by how much)
BOUNDED = "\u2020"


def _short(cell: Cell) -> str:
    shown = shown_verdict(cell)
    return SHORT.get(shown, shown) + (BOUNDED if lag_bound(cell) is not None else "")


def _pair(cells: Mapping[str, Cell], protocols: Sequence[str]) -> str:
    return "/".join(_short(cells[d]) if d in cells else "" for d in protocols)


def bounded_note(cells: Sequence[Cell]) -> list[str]:
    """The legend's line for cells proved with the lag bounded: what the mark means and what
    the lag was bounded by (empty when there is none)."""
    bounds = sorted({b for c in cells if (b := lag_bound(c)) is not None})
    if not bounds:
        return []
    return [f"holds{BOUNDED} = proved with at most {'/'.join(map(str, bounds))} visibility "
            "events of the lagging store pending at once (bounded staleness); with no bound "
            "no run violated it either, but the search did not enumerate every scope (the "
            "JSON's explored.unbounded)"]


def _protocol(cell: Cell) -> str:
    """The protocol a cell was decided under (results older than per-protocol cells: Spark's,
    as the table has always shown them)."""
    return "spark" if cell.protocol is None else cell.protocol.value


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    lines = ["  ".join(f"{h:<{w}}" for h, w in zip(header, widths, strict=True)).rstrip()]
    lines.append("-" * len(lines[0]))
    lines += ["  ".join(f"{v:<{w}}" for v, w in zip(r, widths, strict=True)).rstrip()
              for r in rows]
    return lines


def legend(protocols: Sequence[str]) -> list[str]:
    """What a cell says: the protocols in its order, and the verdict words."""
    both = " / ".join(protocols)
    return [
        f"each cell: {both}" + (" (one verdict per job-commit protocol)"
                                if len(protocols) > 1 else ""),
        *[f"  {d}: {PROTOCOL_LEGEND[d]}" for d in protocols],
        "holds = no violation in any scope of that protocol, every scope enumerated "
        "(proved within bounds); holds* = none found, but a scope was only sampled; "
        "VIOL = a run broke it (a shrunk trace: zerorename trace replay PATH); "
        "n/a = the committer cannot run on the store, or the question cannot arise; "
        "vacuous = none found, but no run reached a state the property speaks about "
        "(explored.reach), so nothing was shown",
    ]


def reach_note(cells: Sequence[Cell]) -> list[str]:
    """Per property, and per state it constrains, the fewest runs that reached that state in
    any cell no run violated (``explored.reach``): how much each ``holds`` rests on.  Empty
    when no cell counted its runs' reach."""
    fewest = fewest_reach(cells)
    if not fewest:
        return []
    return ["reach: per property, the fewest runs of any cell it was not violated in that "
            "reached each state it speaks about",
            *[f"  {prop}: " + "; ".join(f"{state} {runs}" for state, runs in states.items())
              for prop, states in fewest.items()]]


def format_matrix(cells: Sequence[Cell]) -> str:
    """One row per (committer, store), one column per property, each cell ``hadoop/spark``;
    then the production-bug rows (cells with ``bug`` set), if any."""
    main = [c for c in cells if not c.bug]
    protocols = [d for d in PROTOCOLS if any(_protocol(c) == d for c in cells)]
    props = list(dict.fromkeys(c.prop for c in main))
    rows: dict[tuple[str, str], dict[str, dict[str, Cell]]] = {}
    for c in main:
        rows.setdefault((c.committer, c.store), {}).setdefault(c.prop, {})[_protocol(c)] = c
    lines: list[str] = []
    if main:
        lines += _table(["committer", "store", *props],
                        [[committer, store, *(_pair(row.get(p, {}), protocols) for p in props)]
                         for (committer, store), row in rows.items()])
    bugs = format_bugs(cells, protocols)
    if bugs:
        lines += (["", *bugs] if lines else bugs)
    return "\n".join([*lines, "", *legend(protocols), *bounded_note(cells), *reach_note(cells)])


def format_bugs(cells: Sequence[Cell], protocols: Sequence[str]) -> list[str]:
    """The production bugs: for each, the variant's row and the fixed committer's, for every
    property either violates in the bug's scope family (every property, if neither does), with
    the trace of each violated cell."""
    # (by store too: a store's bug is one committer on two stores)
    grouped: dict[str, dict[tuple[str, str, str], dict[str, Cell]]] = {}
    for c in cells:
        if c.bug:
            grouped.setdefault(c.bug, {}).setdefault((c.committer, c.store, c.prop), {}
                                                     )[_protocol(c)] = c
    if not grouped:
        return []
    rows: list[list[str]] = []
    for bug, by_row in grouped.items():
        broken = {prop for (_c, _s, prop), pair in by_row.items()
                  if any(c.verdict is Verdict.VIOLATED for c in pair.values())}
        for (committer, _store, prop), pair in by_row.items():
            if broken and prop not in broken:
                continue  # the properties that tell the two apart (all, if none is violated)
            any_cell = next(iter(pair.values()))
            scope = ",".join(dict.fromkeys(s.scope.rsplit("-", 1)[0]
                                           for c in pair.values() for s in c.scopes))
            traces = [c.trace for c in pair.values() if c.trace]
            who = "variant" if any_cell.variant_of else "fixed"
            rows.append([bug, scope, f"{committer} ({who})", any_cell.store, prop,
                         _pair(pair, protocols), traces[0] if traces else ""])
    return ["production bugs (paper Section XIV): each variant beside the fixed committer, "
            "in the scope family that shows the bug",
            *_table(["bug", "scope", "committer", "store", "property", "/".join(protocols),
                     "trace"], rows)]
