"""The verdict matrix as text: one table with both protocols' verdicts in each cell, then the
production bugs, each variant under the fixed committer, with a legend that says what the
protocols and verdicts mean.  Pure functions of the cells (``zerorename_model.verdicts``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from zerorename_model.scopes import PROTOCOL_LEGEND, PROTOCOLS

#: how a verdict is written in a table cell (short, so two fit side by side)
SHORT = {"holds": "holds", "holds*": "holds*", "violated": "VIOL", "n/a": "n/a"}


def shown_verdict(cell: dict[str, Any]) -> str:
    """A cell's verdict as people read it: ``holds*`` where a scope was only sampled."""
    if cell["verdict"] == "holds" and not cell["explored"].get("complete", True):
        return "holds*"
    return str(cell["verdict"])


def _pair(cells: dict[str, dict[str, Any]], protocols: Sequence[str]) -> str:
    return "/".join(SHORT.get(shown_verdict(cells[d]), shown_verdict(cells[d]))
                    if d in cells else "" for d in protocols)


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
        "n/a = the committer cannot run on the store, or the question cannot arise",
    ]


def format_matrix(cells: Sequence[dict[str, Any]]) -> str:
    """One row per (committer, store), one column per property, each cell ``hadoop/spark``;
    then the production-bug rows (cells with ``bug`` set), if any."""
    main = [c for c in cells if not c.get("bug")]
    protocols = [d for d in PROTOCOLS if any(c.get("protocol", "spark") == d for c in cells)]
    props = list(dict.fromkeys(c["property"] for c in main))
    rows: dict[tuple[str, str], dict[str, dict[str, dict[str, Any]]]] = {}
    for c in main:
        rows.setdefault((c["committer"], c["store"]), {}).setdefault(
            c["property"], {})[c.get("protocol", "spark")] = c
    lines: list[str] = []
    if main:
        lines += _table(["committer", "store", *props],
                        [[committer, store, *(_pair(row.get(p, {}), protocols) for p in props)]
                         for (committer, store), row in rows.items()])
    bugs = format_bugs(cells, protocols)
    if bugs:
        lines += (["", *bugs] if lines else bugs)
    return "\n".join([*lines, "", *legend(protocols)])


def format_bugs(cells: Sequence[dict[str, Any]], protocols: Sequence[str]) -> list[str]:
    """The production bugs: for each, the variant's row and the fixed committer's, for every
    property either violates in the bug's scope family (every property, if neither does), with
    the trace of each violated cell."""
    grouped: dict[str, dict[tuple[str, str], dict[str, dict[str, Any]]]] = {}
    for c in cells:
        if c.get("bug"):
            grouped.setdefault(c["bug"], {}).setdefault(
                (c["committer"], c["property"]), {})[c.get("protocol", "spark")] = c
    if not grouped:
        return []
    rows: list[list[str]] = []
    for bug, by_row in grouped.items():
        broken = {prop for (_c, prop), pair in by_row.items()
                  if any(c["verdict"] == "violated" for c in pair.values())}
        for (committer, prop), pair in by_row.items():
            if broken and prop not in broken:
                continue  # the properties that tell the two apart (all, if none is violated)
            any_cell = next(iter(pair.values()))
            scope = ",".join(dict.fromkeys(
                str(s.get("scope", "")).rsplit("-", 1)[0]
                for c in pair.values() for s in c["explored"].get("scopes", [])))
            traces = [str(c["trace"]) for c in pair.values() if c.get("trace")]
            who = "variant" if any_cell.get("variant_of") else "fixed"
            rows.append([bug, scope, f"{committer} ({who})", any_cell["store"], prop,
                         _pair(pair, protocols), traces[0] if traces else ""])
    return ["production bugs (paper Section XIV): each variant beside the fixed committer, "
            "in the scope family that shows the bug",
            *_table(["bug", "scope", "committer", "store", "property", "/".join(protocols),
                     "trace"], rows)]
