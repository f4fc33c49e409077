"""A verdict cell, typed: what exploration decided for one (committer, store, property) under
one job-commit protocol, as ``verdicts.json`` and ``zerorename check --json`` write it.

The matrix (:mod:`.verdicts`, :mod:`.matrix`) builds these, the bridge and the paper read them;
JSON exists only where results are written or read (:meth:`Cell.to_json`, :meth:`Cell.from_json`,
with :mod:`.explored` for what each cell explored).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum

from zerorename_model.engine.json_values import json_list, json_object
from zerorename_model.experiments.explored import (
    Explored,
    Held,
    JsonObject,
    NotApplicable,
    Reach,
    ScopeRecord,
    Violation,
    complete,
    json_optional_str,
    json_str,
    scope_records,
)


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
    """One cell of ``verdicts.json``: what exploration decided for one (committer, store,
    property) under one protocol, and what it explored (:data:`~.explored.Explored`).
    ``protocol`` is None for a cell of results made before cells were decided per protocol
    (its verdict combines the scopes of both).  A production bug's comparison has two rows
    marked with its report (``bug``): the variant's (``variant_of`` names the fixed committer)
    and the fixed committer's, both explored in the bug's scope family only; the matrix's own
    rows have neither."""

    committer: str
    store: str
    prop: str
    protocol: JobProtocol | None
    verdict: Verdict
    trace: str | None
    explored: Explored
    variant_of: str | None = None
    bug: str | None = None

    def to_json(self) -> JsonObject:
        return {"committer": self.committer, "store": self.store, "property": self.prop,
                "protocol": None if self.protocol is None else self.protocol.value,
                "verdict": self.verdict.value, "trace": self.trace,
                "explored": self.explored.to_json(), "variant_of": self.variant_of,
                "bug": self.bug}

    @classmethod
    def from_json(cls, raw: Mapping[str, object]) -> Cell:
        explored = json_object(raw["explored"])
        verdict = Verdict(json_str(raw["verdict"]))
        protocol = raw.get("protocol")
        return cls(committer=json_str(raw["committer"]), store=json_str(raw["store"]),
                   prop=json_str(raw["property"]),
                   protocol=None if protocol is None else JobProtocol(json_str(protocol)),
                   verdict=verdict, trace=json_optional_str(raw.get("trace")),
                   explored=NotApplicable.from_json(explored) if verdict is Verdict.NA
                   else Violation.from_json(explored) if verdict is Verdict.VIOLATED
                   else Held.from_json(explored),
                   variant_of=json_optional_str(raw.get("variant_of")),
                   bug=json_optional_str(raw.get("bug")))

    #: (the name the paper's modules have always read a cell by)
    read = from_json

    @property
    def complete(self) -> bool:
        """Every scope enumerated (``n/a``: nothing to enumerate)."""
        return complete(self.explored)

    @property
    def scope(self) -> str | None:
        """The scope a violation was found in."""
        return self.explored.where.scope if isinstance(self.explored, Violation) else None

    @property
    def steps(self) -> int | None:
        """The steps of a violation's witness."""
        return self.explored.steps if isinstance(self.explored, Violation) else None

    @property
    def scopes(self) -> tuple[ScopeRecord, ...]:
        return scope_records(self.explored)

    @property
    def cut_off(self) -> tuple[str, ...]:
        """The scopes the run budget cut off."""
        return tuple(s.scope for s in self.scopes if not s.complete)

    @property
    def max_lag(self) -> int | None:
        """The visibility-lag bound a ``holds`` was proved under (``Budget.lag_pass``); None:
        proved with the store's whole freedom, or not a proof."""
        if self.verdict is Verdict.HOLDS and isinstance(self.explored, Held):
            return self.explored.max_lag
        return None

    @property
    def unbounded_runs(self) -> int | None:
        """How many runs the unbounded search took before it was cut off (with ``max_lag``)."""
        unbounded = self.explored.unbounded
        return None if unbounded is None else unbounded.runs

    @property
    def reach(self) -> Reach:
        """Per state the property constrains, how many runs of the cell's scopes reached it
        (empty for a violated cell, or results made before runs were counted)."""
        if self.holding and isinstance(self.explored, Held):
            return self.explored.reach or ()
        return ()

    @property
    def holding(self) -> bool:
        """No run violated it (``holds`` or ``vacuous``)."""
        return self.verdict in (Verdict.HOLDS, Verdict.VACUOUS)

    @property
    def shown(self) -> str:
        """The verdict as people read it: ``holds*`` where a scope was only sampled."""
        return "holds*" if self.undecided else self.verdict.value

    @property
    def in_matrix(self) -> bool:
        """A cell of the matrix proper, not of a production bug's comparison."""
        return self.bug is None and self.variant_of is None

    @property
    def undecided(self) -> bool:
        """No violation found, but some scope was cut off by the run budget: not a proof."""
        return self.verdict is Verdict.HOLDS and not self.complete


def typed_cells(results: Mapping[str, object]) -> list[Cell]:
    """The cells of a results object (``verdicts.json``)."""
    return [Cell.from_json(json_object(raw)) for raw in json_list(results["cells"])]


def cells_json(cells: Iterable[Cell]) -> list[JsonObject]:
    return [cell.to_json() for cell in cells]


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
