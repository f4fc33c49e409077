"""Section XIV's production bugs as rows of the matrix: each variant (the fixed committer with
the bug put back, ``variant_of`` naming the fixed one, ``bug`` the report) beside its fixed
committer's row, in the store, protocol and property where exploration shows the bug, with the
witness trace and the command that replays it.

Every verdict shown is read from the results; only the reports' section and summary come from
``zerorename_model.experiments.bugs`` (the catalogue the variants are registered from)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from zrpaper.cells import PROTOCOLS, Cell, JobProtocol, Verdict, mark_of
from zrpaper.results import Results

Key = tuple[str, str, str, JobProtocol | None, str | None]


def _key(cell: Cell) -> Key:
    return (cell.committer, cell.store, cell.prop, cell.protocol, cell.bug)


def fixed_beside(table: Mapping[Key, Cell], variant: Cell) -> Cell | None:
    """The fixed committer's cell beside a variant's: its row of the same bug's comparison
    (explored in the same scope family), or else its cell of the matrix proper."""
    assert variant.variant_of is not None
    fixed_on = _fixed_store(variant.bug)
    return (table.get((variant.variant_of, variant.store, variant.prop, variant.protocol,
                       variant.bug))
            or table.get((variant.variant_of, variant.store, variant.prop, variant.protocol,
                          None))
            or (table.get((variant.variant_of, fixed_on, variant.prop, variant.protocol,
                           variant.bug)) if fixed_on is not None else None))


def _fixed_store(report: str | None) -> str | None:
    """The store a store's bug (a check-then-act conditional PUT) shows its fixed row on."""
    from zerorename_model.experiments.bugs import by_report

    try:
        return by_report(report).fixed_on if report else None
    except KeyError:
        return None


def index_cells(cells: Sequence[Cell]) -> dict[Key, Cell]:
    return {_key(c): c for c in cells}


def _about(report: str) -> str:
    """The report's section and summary from the model's catalogue, or just its ID for a
    report the catalogue does not describe."""
    from zerorename_model.experiments.bugs import by_report

    try:
        bug = by_report(report)
    except KeyError:
        return f"`{report}`"
    return f"`{report}` ({bug.section}): {bug.summary}"


def _order(cells: Sequence[Cell], results: Results) -> list[Cell]:
    stores = list(results.stores)
    props = list(results.properties)
    protocols: list[JobProtocol | None] = [*PROTOCOLS, None]
    return sorted(cells, key=lambda c: (stores.index(c.store) if c.store in stores else 99,
                                        protocols.index(c.protocol),
                                        props.index(c.prop) if c.prop in props else 99))


def replay_command(trace: str) -> str:
    """The shell command that replays a witness (the results name traces relative to paper/)."""
    return f"zerorename trace replay paper/{trace}"


def render_production_bugs(results: Results) -> str:
    cells = results.cells
    variants = [c for c in cells if c.variant_of is not None]
    if not variants:
        return ("These results hold no production-bug variant rows (they were computed before "
                "the variants joined the matrix); `notebooks/04_production_bugs.ipynb` shows "
                "each bug on one steered schedule.")
    table = index_cells(cells)
    reports: dict[tuple[str, str, str], list[Cell]] = {}
    for cell in variants:
        assert cell.variant_of is not None
        reports.setdefault((cell.bug or "", cell.committer, cell.variant_of), []).append(cell)
    lines: list[str] = []
    unshown: list[str] = []
    for (bug, variant, fixed), mine in reports.items():
        violated = [c for c in mine if c.verdict is Verdict.VIOLATED]
        # the bug shows where the variant is violated and the fixed committer is not; a cell
        # both violate (a race they share) is named, not shown as the bug's evidence
        shared = [c for c in violated if _fixed_violates(table, c)]
        shown = _order([c for c in violated if c not in shared], results)
        if not shown:
            undecided = any(c.undecided for c in mine)
            unshown.append(f"`{variant}` ({bug or 'no report'}): "
                           + ("not decided completely" if undecided else
                              f"every violation is one `{fixed}` has too" if shared else
                              "no cell violated"))
            continue
        lines += [f"#### `{variant}` beside `{fixed}`", "", f"Report: {_about(bug)}", "",
                  "| committer | store | protocol | property | verdict | witness scope (steps) |",
                  "|---|---|---|---|---|---|"]
        for cell in shown:
            other = fixed_beside(table, cell)
            protocol = cell.protocol or "both"
            lines.append(f"| `{variant}` | {cell.store} | {protocol} | {cell.prop} | "
                         f"{mark_of(cell)} | {cell.scope} ({cell.steps}) |")
            lines.append(f"| `{fixed}` (fixed) | {other.store if other else cell.store} | "
                         f"{protocol} | {cell.prop} | "
                         f"{mark_of(other) if other else 'not computed'} | "
                         f"{_fixed_scope(other)} |")
        if shared:
            lines += ["", f"`{fixed}` violates these too, so they are not this bug's: "
                      + "; ".join(f"{c.prop} on {c.store}"
                                  + ("" if c.protocol is None else f" ({c.protocol})")
                                  for c in _order(shared, results)) + "."]
        lines += ["", "Replay the variant's witnesses:", "", "```bash",
                  *(replay_command(c.trace) for c in shown if c.trace), "```", ""]
    if unshown:
        lines += ["Variants no scope of the matrix shows (their bug needs a schedule the "
                  "scopes do not reach):", "", *(f"* {u}" for u in unshown)]
    return "\n".join(lines).rstrip()


def _fixed_violates(table: Mapping[Key, Cell], cell: Cell) -> bool:
    other = fixed_beside(table, cell)
    return other is not None and other.verdict is Verdict.VIOLATED


def _fixed_scope(cell: Cell | None) -> str:
    if cell is None or cell.verdict is Verdict.NA:
        return ""
    if cell.verdict is Verdict.VIOLATED:
        return f"{cell.scope} ({cell.steps})"
    return "every scope enumerated" if cell.complete else "cut off: " + ", ".join(cell.cut_off)

