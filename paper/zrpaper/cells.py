"""How one verdict cell reads in the paper: its kind, its mark, the link to its trace; and the
typed view of a cell (:class:`Cell`) that the per-protocol tables and figures read."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any


def kind(cell: dict[str, Any]) -> str:
    """``violated``, ``holds`` (proved within the scopes), ``holds*`` (sampled) or ``n/a``."""
    if cell["verdict"] == "holds" and not cell["explored"].get("complete", True):
        return "holds*"
    return str(cell["verdict"])


#: the mark of a ``holds`` proved with the visibility lag bounded
BOUNDED = "\u2020"


def link(text: str, path: str | None) -> str:
    return f"[{text}]({path})" if path else text


def mark(cell: dict[str, Any]) -> str:
    mark = kind(cell)
    if mark == "violated":
        return link("**violated**", cell["trace"])
    return mark.replace("*", "\\*")


def index(results: dict[str, Any]) -> dict[tuple[str, str, str], dict[str, Any]]:
    return {(c["committer"], c["store"], c["property"]): c for c in results["cells"]}


def scope_runs(results: dict[str, Any]) -> dict[tuple[str, str, str], dict[str, Any]]:
    """(committer, store, scope) -> that exploration's summary (cells share explorations)."""
    found: dict[tuple[str, str, str], dict[str, Any]] = {}
    for cell in results["cells"]:
        explored = cell["explored"]
        for summary in explored.get("scopes", [explored] if "scope" in explored else []):
            found[(cell["committer"], cell["store"], summary["scope"])] = summary
    return found


def show_bool(value: bool | None) -> str:
    return "" if value is None else str(value)


def runs_text(n: int) -> str:
    return f"{n} run" if n == 1 else f"{n} runs"


def search_outcome(explored: dict[str, Any]) -> str:
    """How a Table V search ended: it found its schedule, covered every one, or was cut off."""
    if explored["found"]:
        return "found"
    return "every schedule" if explored["complete"] else "run budget hit"




# -- the typed view of a cell the per-protocol tables read ------------------------------------


class Verdict(StrEnum):
    """What exploration decided for a cell (``zerorename check --json``'s ``verdict``)."""

    HOLDS = "holds"
    VIOLATED = "violated"
    NA = "n/a"


class JobProtocol(StrEnum):
    """How the job commit learns which tasks committed: Hadoop's lists the store
    (``commit_job(None)``), Spark's is passed the accepted attempts' messages."""

    HADOOP = "hadoop"
    SPARK = "spark"


#: every table and figure shows the protocols in this order
PROTOCOLS = (JobProtocol.HADOOP, JobProtocol.SPARK)
PROTOCOL_NAMES = {JobProtocol.HADOOP: "Hadoop's protocol", JobProtocol.SPARK: "Spark's protocol",
                  None: "both protocols' scopes together"}


@dataclass(frozen=True)
class Cell:
    """One cell of ``verdicts.json``, typed.  ``protocol`` is None for a cell of results made
    before cells were decided per protocol (its verdict combines the scopes of both).  A
    production bug's comparison has two rows marked with its report (``bug``): the variant's
    (``variant_of`` names the fixed committer) and the fixed committer's, both explored in the
    bug's scope family only; the matrix's own rows have neither."""

    committer: str
    store: str
    prop: str
    protocol: JobProtocol | None
    verdict: Verdict
    complete: bool
    trace: str | None
    variant_of: str | None
    bug: str | None
    scope: str | None
    steps: int | None
    cut_off: tuple[str, ...]
    #: proved with at most this many visibility events pending at once (the matrix's third
    #: pass, ``Budget.lag_pass``); None: with the store's whole freedom, or not a proof
    max_lag: int | None = None
    #: how many runs the unbounded search took before it was cut off (with ``max_lag``)
    unbounded_runs: int | None = None

    @classmethod
    def read(cls, raw: Mapping[str, Any]) -> Cell:
        explored: Mapping[str, Any] = raw["explored"]
        protocol = raw.get("protocol")
        return cls(committer=str(raw["committer"]), store=str(raw["store"]),
                   prop=str(raw["property"]),
                   protocol=None if protocol is None else JobProtocol(protocol),
                   verdict=Verdict(raw["verdict"]),
                   complete=bool(explored.get("complete", True)), trace=raw.get("trace"),
                   variant_of=raw.get("variant_of"), bug=raw.get("bug"),
                   scope=explored.get("scope"), steps=explored.get("steps"),
                   cut_off=tuple(s["scope"] for s in explored.get("scopes", [explored])
                                 if "scope" in s and not s.get("complete", True)),
                   max_lag=explored.get("max_lag") if raw["verdict"] == "holds" else None,
                   unbounded_runs=explored.get("unbounded", {}).get("runs"))

    @property
    def in_matrix(self) -> bool:
        """A cell of the matrix proper, not of a production bug's comparison."""
        return self.bug is None and self.variant_of is None

    @property
    def undecided(self) -> bool:
        """No violation found, but some scope was cut off by the run budget: not a proof."""
        return self.verdict is Verdict.HOLDS and not self.complete

    @property
    def mark(self) -> str:
        """The cell as a table shows it: a violation links to its trace; an undecided cell
        reads ``holds*`` (and is listed under the table), never plain ``holds``; one proved
        with the lag bounded reads ``holds†`` (listed under the table with its bound)."""
        if self.verdict is Verdict.VIOLATED:
            return link("**violated**", self.trace)
        if self.undecided:
            return "holds\\*"
        return str(self.verdict) + (BOUNDED if self.max_lag is not None else "")


def typed_cells(results: Mapping[str, Any]) -> list[Cell]:
    return [Cell.read(raw) for raw in results["cells"]]


def protocols_in(cells: Sequence[Cell]) -> list[JobProtocol | None]:
    """The protocols the cells were decided under, in :data:`PROTOCOLS` order; ``[None]`` for
    results that predate per-protocol cells."""
    present = {c.protocol for c in cells}
    return [p for p in PROTOCOLS if p in present] + ([None] if None in present else [])


CellKey = tuple[str, str, str]


def by_protocol(cells: Sequence[Cell]) -> dict[CellKey, dict[JobProtocol | None, Cell]]:
    """(committer, store, property) -> the cell under each protocol."""
    table: dict[CellKey, dict[JobProtocol | None, Cell]] = {}
    for cell in cells:
        table.setdefault((cell.committer, cell.store, cell.prop), {})[cell.protocol] = cell
    return table


def fixed_committers(results: Mapping[str, Any]) -> list[str]:
    """The matrix's rows: the committers with cells of the matrix proper (not only of a
    production bug's comparison), in the results' order."""
    rows = {c.committer for c in typed_cells(results) if c.in_matrix}
    return [c for c in results["committers"] if c in rows]
