"""How one verdict cell reads in the paper: its kind, its mark, the link to its trace.  The typed
view of a cell (:class:`Cell`, :class:`Verdict`, :class:`JobProtocol`) is the model's
(:mod:`zerorename_model.experiments.cells`), re-exported here for the paper's modules."""

from __future__ import annotations

from collections.abc import Sequence

from zerorename_model.experiments.cells import (
    JOB_PROTOCOLS,
    Cell,
    CellKey,
    JobProtocol,
    Verdict,
    by_protocol,
    protocols_in,
    typed_cells,
)
from zerorename_model.experiments.explored import ScopeRecord
from zrpaper.results import Results

__all__ = ["BOUNDED", "PROTOCOLS", "PROTOCOL_NAMES", "Cell", "CellKey", "JobProtocol",
           "ScopeRecord", "Verdict", "by_protocol", "fixed_committers", "index", "kind", "link",
           "mark_of", "protocols_in", "runs_text", "scope_runs", "search_outcome", "show_bool",
           "typed_cells"]


def kind(cell: Cell) -> str:
    """``violated``, ``holds`` (proved within the scopes), ``holds*`` (sampled), ``vacuous``
    or ``n/a``."""
    return cell.shown


#: the mark of a ``holds`` proved with the visibility lag bounded
BOUNDED = "\u2020"


def link(text: str, path: str | None) -> str:
    return f"[{text}]({path})" if path else text


def index(cells: Sequence[Cell]) -> dict[CellKey, Cell]:
    return {(c.committer, c.store, c.prop): c for c in cells}


def scope_runs(cells: Sequence[Cell]) -> dict[tuple[str, str, str], ScopeRecord]:
    """(committer, store, scope) -> that exploration's record (cells share explorations)."""
    return {(cell.committer, cell.store, record.scope): record
            for cell in cells for record in cell.scopes}


def show_bool(value: bool | None) -> str:
    return "" if value is None else str(value)


def runs_text(n: int) -> str:
    return f"{n} run" if n == 1 else f"{n} runs"


def search_outcome(found: object, complete: bool) -> str:
    """How a Table V search ended: it found its schedule, covered every one, or was cut off."""
    if found:
        return "found"
    return "every schedule" if complete else "run budget hit"




# -- the typed view of a cell (the model's: zerorename_model.experiments.cells) -----------------

#: every table and figure shows the protocols in this order
PROTOCOLS = JOB_PROTOCOLS
PROTOCOL_NAMES = {JobProtocol.HADOOP: "Hadoop's protocol", JobProtocol.SPARK: "Spark's protocol",
                  None: "both protocols' scopes together"}


def mark_of(cell: Cell) -> str:
    """The cell as a table shows it: a violation links to its trace; an undecided cell
    reads ``holds*`` (and is listed under the table), never plain ``holds``; one proved
    with the lag bounded reads ``holds†`` (listed under the table with its bound); one no run
    reached a state of its property in reads ``vacuous``."""
    if cell.verdict is Verdict.VIOLATED:
        return link("**violated**", cell.trace)
    if cell.undecided:
        return "holds\\*"
    return str(cell.verdict) + (BOUNDED if cell.max_lag is not None else "")


def fixed_committers(results: Results) -> list[str]:
    """The matrix's rows: the committers with cells of the matrix proper (not only of a
    production bug's comparison), in the results' order."""
    rows = {c.committer for c in results.cells if c.in_matrix}
    return [c for c in results.committers if c in rows]
