"""The verdict matrix as the paper's tables: at a glance (per committer, store and protocol, the
properties violated), in full (every property, both protocols' verdicts in one cell), where each
violation was found, and every cell not decided completely.

Cells decided per job-commit protocol carry ``protocol``; results made before that have none
and render as one verdict per cell, as they always did.  Production-bug variants
(cells with ``bug``) are left to :mod:`zrpaper.production`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence

from zerorename_model.experiments.cells import fewest_reach
from zrpaper.cells import (
    BOUNDED,
    PROTOCOL_NAMES,
    Cell,
    CellKey,
    JobProtocol,
    Verdict,
    by_protocol,
    fixed_committers,
    link,
    mark_of,
    protocols_in,
)
from zrpaper.results import Results


def render_matrix(results: Results) -> str:
    cells = results.cells
    fixed = [c for c in cells if c.in_matrix]
    protocols = protocols_in(fixed)
    per_protocol = protocols != [None]
    lines: list[str] = []
    if per_protocol:
        lines += [render_glance(results, fixed), ""]
        lines += ["Every property, each cell reading "
                  + " / ".join(PROTOCOL_NAMES[p] for p in protocols) + ":", ""]
    else:
        lines += ["These results were computed before cells were decided per job-commit "
                  "protocol: each verdict below combines the scopes of both protocols (a "
                  "violation under either decides it), and the properties are those of that "
                  f"run ({', '.join(results.properties)}). Section 6 compares the two "
                  "protocols on the VIII.C race.", ""]
    lines.append(_full_table(results, fixed, protocols))
    lines += ["", *(counts(fixed, p) for p in protocols)]
    lines += ["", "Where each violation was found (the scope of its witness, and the length of "
              "the shrunk schedule in steps):", "",
              "| committer | " + ("protocol | " if per_protocol else "")
              + "property | scope | stores (steps) |",
              "|---|---|---|---|" + ("---|" if per_protocol else "")]
    found: dict[tuple[str, JobProtocol | None, str, str | None], list[str]] = {}
    for cell in fixed:
        if cell.verdict is Verdict.VIOLATED:
            key = (cell.committer, cell.protocol, cell.prop, cell.scope)
            found.setdefault(key, []).append(f"{cell.store} ({cell.steps})")
    for (committer, protocol, prop, scope), stores in found.items():
        lines.append(f"| {committer} | " + (f"{protocol} | " if per_protocol else "")
                     + f"{prop} | {scope} | {', '.join(stores)} |")
    for extra in (render_bounded(fixed), render_undecided(fixed), render_reach(fixed)):
        if extra:
            lines += ["", extra]
    return "\n".join(lines)


def _full_table(results: Results, cells: Sequence[Cell],
                protocols: Sequence[JobProtocol | None]) -> str:
    props = results.properties
    table = by_protocol(cells)
    lines = ["| committer | store | " + " | ".join(props) + " |",
             "|---|---|" + "---|" * len(props)]
    for committer in fixed_committers(results):
        for store in results.stores:
            row = [_marks(table.get((committer, store, p), {}), protocols) for p in props]
            lines.append(f"| {committer} | {store} | " + " | ".join(row) + " |")
    return "\n".join(lines)


def _marks(cells: Mapping[JobProtocol | None, Cell],
           protocols: Sequence[JobProtocol | None]) -> str:
    if not cells:
        return ""
    return " / ".join(mark_of(cells[p]) if p in cells else "–" for p in protocols)


def counts(cells: Sequence[Cell], protocol: JobProtocol | None) -> str:
    """One protocol's totals; ``holds*`` is named only when some cell is undecided."""
    mine = [c for c in cells if c.protocol == protocol]
    counts = Counter("holds*" if c.undecided else str(c.verdict) for c in mine)
    undecided = (f", {counts['holds*']} hold as far as the budget reached (`holds*`)"
                 if counts["holds*"] else "")
    bounded = sum(c.max_lag is not None for c in mine)
    of_them = (f", {bounded} of them with the visibility lag bounded (`holds{BOUNDED}`)"
               if bounded else "")
    lead = "" if protocol is None else f"{PROTOCOL_NAMES[protocol]}: "
    vacuous = (f", {counts['vacuous']} vacuous (no violation, but no run reached a state the "
               "property speaks about)" if counts["vacuous"] else "")
    return (f"{lead}{len(mine)} cells: {counts['violated']} violated, {counts['holds']} hold "
            f"(proved within the scopes{of_them}){undecided}{vacuous}, {counts['n/a']} not "
            "applicable.")


def render_glance(results: Results, cells: Sequence[Cell], base: str = "") -> str:
    """Per committer, store and protocol: the properties violated (each linked to its
    witness trace, the link prefixed by ``base``), or that every property that applies
    holds."""
    stores = list(results.stores)
    protocols = [p for p in protocols_in(cells) if p is not None]
    rows: dict[tuple[str, str, JobProtocol | None], list[Cell]] = {}
    for cell in cells:
        rows.setdefault((cell.committer, cell.store, cell.protocol), []).append(cell)
    lines = ["At a glance: for each committer, store and job-commit protocol, the properties "
             "violated (each linked to its witness trace) or `all hold` (every property that "
             "applies proved within the scopes):", "",
             "| committer | protocol | " + " | ".join(stores) + " |",
             "|---|---|" + "---|" * len(stores)]
    for committer in fixed_committers(results):
        for protocol in protocols:
            texts = [_glance(rows.get((committer, store, protocol), []), base)
                     for store in stores]
            lines.append(f"| {committer} | {protocol} | " + " | ".join(texts) + " |")
    return "\n".join(lines)


def _glance(cells: Sequence[Cell], base: str) -> str:
    applicable = [c for c in cells if c.verdict is not Verdict.NA]
    if not cells:
        return ""
    if not applicable:
        return "n/a"
    violated = [link(c.prop, c.trace and base + c.trace) for c in applicable
                if c.verdict is Verdict.VIOLATED]
    undecided = [f"{c.prop}\\*" for c in applicable if c.undecided]
    vacuous = [c.prop for c in applicable if c.verdict is Verdict.VACUOUS]
    bounded = [f"{c.prop}{BOUNDED}" for c in applicable if c.max_lag is not None]
    if not violated and not undecided and not vacuous:
        return "all hold" + (f" ({', '.join(bounded)})" if bounded else "")
    return ", ".join([*(["violated: " + ", ".join(violated)] if violated else []),
                      *(["not decided: " + ", ".join(undecided)] if undecided else []),
                      *(["vacuous: " + ", ".join(vacuous)] if vacuous else [])])


def render_bounded(cells: Sequence[Cell]) -> str:
    """Every cell proved only with the lagging store's visibility lag bounded (the matrix's
    third pass), with the bound and how far the unbounded search went (empty when none)."""
    bounded = [c for c in cells if c.max_lag is not None]
    if not bounded:
        return ""
    bounds = "/".join(str(b) for b in sorted({c.max_lag for c in bounded if c.max_lag}))
    lines = [f"{len(bounded)} cells hold with the store's visibility lag bounded "
             f"(`holds{BOUNDED}` above): every scope enumerated with at most {bounds} "
             "visibility events pending at once, the oldest taking effect when one more is "
             "queued. With no bound, no run violated them either, but their scopes were not "
             "enumerated to the end:", ""]
    grouped: dict[tuple[str, str, int | None], list[str]] = {}
    for c in bounded:
        where = f"{c.store}" + ("" if c.protocol is None else f" ({c.protocol})")
        grouped.setdefault((c.committer, where, c.unbounded_runs), []).append(c.prop)
    for (committer, where, runs), props in grouped.items():
        unbounded = f"; unbounded: {runs:,} runs, cut off" if runs else ""
        lines.append(f"* `{committer}` on {where}: {', '.join(props)}{unbounded}")
    return "\n".join(lines)


def render_undecided(cells: Sequence[Cell]) -> str:
    """Every cell that holds only as far as the run budget reached, with the scopes cut off:
    listed, never hidden (empty when there is none)."""
    undecided = [c for c in cells if c.undecided]
    if not undecided:
        return ""
    lines = [f"{len(undecided)} cells are not decided completely: no run violated them, but "
             "the run budget ran out before some scope was enumerated (`holds*` above):", ""]
    grouped: dict[CellKey, list[str]] = {}
    for c in undecided:
        where = f"{c.store}" + ("" if c.protocol is None else f" ({c.protocol})")
        grouped.setdefault((c.committer, where, ", ".join(c.cut_off)), []).append(c.prop)
    for (committer, where, scopes), props in grouped.items():
        lines.append(f"* `{committer}` on {where}: {', '.join(props)}; cut off: {scopes}")
    return "\n".join(lines)


def render_reach(cells: Sequence[Cell]) -> str:
    """How much each ``holds`` rests on: per property and per state it speaks about (a job
    committed, a job aborted…), the fewest runs that reached that state in any cell no run
    violated, and the cells whose runs never reached one (``vacuous``).  Empty for results
    made before runs were counted."""
    fewest = fewest_reach(cells)
    if not fewest:
        return ""
    lines = ["Reach: a `holds` is only as good as the runs that reached the states its property "
             "speaks about. Per property, the fewest runs of any cell it holds in (or is "
             "vacuous in) that reached each:", "",
             "| property | state | fewest runs |", "|---|---|---|"]
    lines += [f"| {prop} | {state} | {runs} |" for prop, states in fewest.items()
              for state, runs in states.items()]
    vacuous = [c for c in cells if c.verdict is Verdict.VACUOUS]
    if vacuous:
        lines += ["", "Vacuous (no violation, and no run reached a state the property speaks "
                  "about): " + ", ".join(
                      f"{c.committer} on {c.store}, {c.prop}"
                      + (f" ({c.protocol})" if c.protocol else "") for c in vacuous) + "."]
    return "\n".join(lines)
