"""A verdict cell, typed: what exploration decided for one (committer, store, property) under
one job-commit protocol, as ``verdicts.json`` and ``zerorename check --json`` write it.

The matrix (:mod:`.verdicts`, :mod:`.matrix`) builds its cells as JSON objects, the form they
are saved and merged in; every reader (the paper, the bridge's reports) reads them back through
:meth:`Cell.read` and works on these types, never on the dictionaries.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any


class Verdict(StrEnum):
    """What exploration decided for a cell (``zerorename check --json``'s ``verdict``).
    ``vacuous``: no run broke the property, but no run reached a state it speaks about either
    (``explored.reach``; :mod:`zerorename_model.check.reach`), so nothing was shown."""

    HOLDS = "holds"
    VIOLATED = "violated"
    NA = "n/a"
    VACUOUS = "vacuous"


class JobProtocol(StrEnum):
    """How the job commit learns which tasks committed: Hadoop's lists the store
    (``commit_job(None)``), Spark's is passed the accepted attempts' messages."""

    HADOOP = "hadoop"
    SPARK = "spark"


#: every table and figure shows the protocols in this order
JOB_PROTOCOLS = (JobProtocol.HADOOP, JobProtocol.SPARK)


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
    #: per state the property constrains, how many runs of the cell's scopes reached it
    #: (empty for a violated cell, or results made before runs were counted)
    reach: tuple[tuple[str, int], ...] = ()

    @classmethod
    def read(cls, raw: Mapping[str, Any]) -> Cell:
        explored: Mapping[str, Any] = raw["explored"]
        protocol = raw.get("protocol")
        verdict = Verdict(raw["verdict"])
        holding = verdict in (Verdict.HOLDS, Verdict.VACUOUS)
        return cls(committer=str(raw["committer"]), store=str(raw["store"]),
                   prop=str(raw["property"]),
                   protocol=None if protocol is None else JobProtocol(protocol),
                   verdict=verdict,
                   complete=bool(explored.get("complete", True)), trace=raw.get("trace"),
                   variant_of=raw.get("variant_of"), bug=raw.get("bug"),
                   scope=explored.get("scope"), steps=explored.get("steps"),
                   cut_off=tuple(s["scope"] for s in explored.get("scopes", [explored])
                                 if "scope" in s and not s.get("complete", True)),
                   max_lag=explored.get("max_lag") if verdict is Verdict.HOLDS else None,
                   unbounded_runs=explored.get("unbounded", {}).get("runs"),
                   reach=tuple((str(state), int(runs))
                               for state, runs in explored.get("reach", {}).items())
                   if holding else ())

    @property
    def in_matrix(self) -> bool:
        """A cell of the matrix proper, not of a production bug's comparison."""
        return self.bug is None and self.variant_of is None

    @property
    def undecided(self) -> bool:
        """No violation found, but some scope was cut off by the run budget: not a proof."""
        return self.verdict is Verdict.HOLDS and not self.complete


def typed_cells(results: Mapping[str, Any]) -> list[Cell]:
    return [Cell.read(raw) for raw in results["cells"]]


def protocols_in(cells: Sequence[Cell]) -> list[JobProtocol | None]:
    """The protocols the cells were decided under, in :data:`JOB_PROTOCOLS` order; ``[None]``
    for results that predate per-protocol cells."""
    present = {c.protocol for c in cells}
    return [p for p in JOB_PROTOCOLS if p in present] + ([None] if None in present else [])


CellKey = tuple[str, str, str]


def by_protocol(cells: Sequence[Cell]) -> dict[CellKey, dict[JobProtocol | None, Cell]]:
    """(committer, store, property) -> the cell under each protocol."""
    table: dict[CellKey, dict[JobProtocol | None, Cell]] = {}
    for cell in cells:
        table.setdefault((cell.committer, cell.store, cell.prop), {})[cell.protocol] = cell
    return table


def fewest_reach(cells: Iterable[Cell]) -> dict[str, dict[str, int]]:
    """Per property, and per state it constrains, the fewest runs that reached that state in any
    of ``cells`` no run violated: how much each ``holds`` rests on (empty for cells decided
    before runs were counted)."""
    fewest: dict[str, dict[str, int]] = {}
    for cell in cells:
        for state, runs in cell.reach:
            mine = fewest.setdefault(cell.prop, {})
            mine[state] = min(mine.get(state, runs), runs)
    return fewest
