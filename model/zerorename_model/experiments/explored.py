"""What exploration covered for a verdict cell, typed: each scope's search (:class:`ScopeRecord`)
and the cell's record of them, which is one of three kinds (:data:`Explored`): the committer
could not run or the question cannot arise (:class:`NotApplicable`), no run broke the property
(:class:`Held`), or one did (:class:`Violation`).

These are the ``explored`` object of ``verdicts.json`` and ``zerorename check --json``.  The
matrix builds and combines them as values; JSON exists only where results are written or read
(``to_json`` / ``from_json``), and ``to_json`` writes the keys in the order the results files
have always had them, so a file read and written again is the same bytes.  An optional field
that is None (or an empty ``reach`` of a search) is absent from the JSON, as it always was.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

from zerorename_model.check.explore import Exploration
from zerorename_model.engine.json_values import (
    json_bool,
    json_int,
    json_list,
    json_number,
    json_object,
)

#: per state a property constrains (its name), how many runs reached it, in the order counted
Reach = tuple[tuple[str, int], ...]
#: a JSON object as these records write it (``json.dumps`` takes it as it is)
JsonObject = dict[str, object]


def json_str(value: object) -> str:
    """A JSON string; anything else is not what the reader expects."""
    if not isinstance(value, str):
        raise TypeError(f"expected a JSON string, got {type(value).__name__}")
    return value


def json_optional_str(value: object) -> str | None:
    """A JSON string or null."""
    return None if value is None else json_str(value)


def _opt_int(raw: Mapping[str, object], key: str) -> int | None:
    return json_int(raw[key]) if key in raw else None


def _opt_str(raw: Mapping[str, object], key: str) -> str | None:
    return json_str(raw[key]) if key in raw else None


def _reach_json(reach: Reach) -> JsonObject:
    return dict(reach)


def _reach_read(value: object) -> Reach:
    return tuple((state, json_int(runs)) for state, runs in json_object(value).items())


def _present(fields: Mapping[str, object]) -> JsonObject:
    """The fields that are set (None: absent from the JSON)."""
    return {key: value for key, value in fields.items() if value is not None}


@dataclass(frozen=True)
class Search:
    """One search of one scope (:class:`~zerorename_model.check.explore.Exploration`): how,
    how many runs, pruned and distinct states, whether it enumerated the scope, and per state
    the checked properties constrain how many runs reached it.  ``seconds`` None: left out (the
    paper's results keep no wall-clock times); ``decided_early`` 0 and an empty ``reach`` are
    left out of the JSON too."""

    method: str
    runs: int
    pruned: int
    states: int
    complete: bool
    seconds: float | None
    decided_early: int = 0
    reach: Reach = ()

    @classmethod
    def of(cls, report: Exploration) -> Search:
        return cls(method=report.method, runs=report.runs, pruned=report.pruned,
                   states=report.states, complete=report.complete,
                   seconds=round(report.seconds, 2), decided_early=report.decided_early,
                   reach=tuple((state.value, runs) for state, runs in report.reach.items()))

    def to_json(self) -> JsonObject:
        return {"method": self.method, "runs": self.runs, "pruned": self.pruned,
                "states": self.states, "complete": self.complete,
                **_present({"seconds": self.seconds}),
                **({"decided_early": self.decided_early} if self.decided_early else {}),
                **({"reach": _reach_json(self.reach)} if self.reach else {})}

    @classmethod
    def from_json(cls, raw: Mapping[str, object]) -> Search:
        return cls(method=json_str(raw["method"]), runs=json_int(raw["runs"]),
                   pruned=json_int(raw["pruned"]), states=json_int(raw["states"]),
                   complete=json_bool(raw["complete"]),
                   seconds=json_number(raw["seconds"]) if "seconds" in raw else None,
                   decided_early=_opt_int(raw, "decided_early") or 0,
                   reach=_reach_read(raw["reach"]) if "reach" in raw else ())


@dataclass(frozen=True)
class SeedsTried:
    """The saved witness traces a scope replayed first (:mod:`.seeds`), and the properties
    whose checker flagged one of those replays."""

    tried: int
    found: tuple[str, ...]

    def to_json(self) -> JsonObject:
        return {"tried": self.tried, "found": list(self.found)}

    @classmethod
    def from_json(cls, raw: Mapping[str, object]) -> SeedsTried:
        return cls(json_int(raw["tried"]), tuple(json_str(p) for p in json_list(raw["found"])))


@dataclass(frozen=True)
class ScopeRecord:
    """What was explored of one scope for one (committer, store): the scope's ``search``;
    ``max_lag`` the visibility-lag bound it ran under (None: unbounded); ``settled`` the search
    with every visibility event settled before each read, on a lagging store (the JSON's
    ``settled_before_reads``); ``phase`` names that search when it was the last one (it found
    every violation wanted); ``hypothesis_runs`` the runs sampled after a cut-off search."""

    scope: str
    search: Search
    max_lag: int | None = None
    seeds: SeedsTried | None = None
    settled: Search | None = None
    hypothesis_runs: int | None = None
    phase: str | None = None

    @property
    def complete(self) -> bool:
        return self.search.complete

    def without_seconds(self) -> ScopeRecord:
        """The record without the search's wall-clock seconds (a settled search keeps its own,
        as the results always have)."""
        return replace(self, search=replace(self.search, seconds=None))

    def to_json(self) -> JsonObject:
        return {"scope": self.scope, **_present({"max_lag": self.max_lag}),
                **({"seeds": self.seeds.to_json()} if self.seeds else {}),
                **({"settled_before_reads": self.settled.to_json()} if self.settled else {}),
                **self.search.to_json(),
                **_present({"hypothesis_runs": self.hypothesis_runs, "phase": self.phase})}

    @classmethod
    def from_json(cls, raw: Mapping[str, object]) -> ScopeRecord:
        return cls(scope=json_str(raw["scope"]), search=Search.from_json(raw),
                   max_lag=_opt_int(raw, "max_lag"),
                   seeds=SeedsTried.from_json(json_object(raw["seeds"]))
                   if "seeds" in raw else None,
                   settled=Search.from_json(json_object(raw["settled_before_reads"]))
                   if "settled_before_reads" in raw else None,
                   hypothesis_runs=_opt_int(raw, "hypothesis_runs"),
                   phase=_opt_str(raw, "phase"))


@dataclass(frozen=True)
class Unbounded:
    """How far the unbounded search of a cell went before the third pass bounded its lag."""

    runs: int
    complete: bool
    deep_runs: int | None = None

    def to_json(self) -> JsonObject:
        return {"runs": self.runs, "complete": self.complete,
                **_present({"deep_runs": self.deep_runs})}

    @classmethod
    def from_json(cls, raw: Mapping[str, object]) -> Unbounded:
        return cls(json_int(raw["runs"]), json_bool(raw["complete"]), _opt_int(raw, "deep_runs"))


@dataclass(frozen=True)
class LagTried:
    """A bounded third pass that was cut off too: its bound and runs (the cell stands)."""

    max_lag: int
    runs: int

    def to_json(self) -> JsonObject:
        return {"max_lag": self.max_lag, "runs": self.runs}

    @classmethod
    def from_json(cls, raw: Mapping[str, object]) -> LagTried:
        return cls(json_int(raw["max_lag"]), json_int(raw["runs"]))


def _passes_json(runs_of: str | None, deep_runs: int | None) -> JsonObject:
    return _present({"runs_of": runs_of, "deep_runs": deep_runs})


@dataclass(frozen=True)
class NotApplicable:
    """``n/a``: why (the committer's fault-free job fails on the store, or the store is
    consistent).  ``runs_of``: the protocol whose cell this repeats (a committer that takes no
    messages runs the same under both)."""

    reason: str
    runs_of: str | None = None
    deep_runs: int | None = None
    max_lag: int | None = None
    unbounded: Unbounded | None = None

    def to_json(self) -> JsonObject:
        return {"reason": self.reason, **_passes_json(self.runs_of, self.deep_runs),
                **_present({"max_lag": self.max_lag}),
                **({"unbounded": self.unbounded.to_json()} if self.unbounded else {})}

    @classmethod
    def from_json(cls, raw: Mapping[str, object]) -> NotApplicable:
        return cls(json_str(raw["reason"]), _opt_str(raw, "runs_of"), _opt_int(raw, "deep_runs"),
                   _opt_int(raw, "max_lag"), _unbounded(raw))


def _unbounded(raw: Mapping[str, object]) -> Unbounded | None:
    return Unbounded.from_json(json_object(raw["unbounded"])) if "unbounded" in raw else None


def _scopes(raw: Mapping[str, object]) -> tuple[ScopeRecord, ...]:
    return tuple(ScopeRecord.from_json(json_object(s)) for s in json_list(raw["scopes"]))


@dataclass(frozen=True)
class Held:
    """No run broke the property: every scope explored (``scopes``), whether all were
    enumerated (``complete``), the runs in all; ``reach`` per state the property constrains
    (None: scopes explored before runs were counted); ``deep_runs`` the second pass's budget
    when it explored the cell again; ``max_lag`` the lag bound a proof holds under, with
    ``unbounded`` how far the unbounded search went; ``lag_pass`` a bounded pass cut off too."""

    scopes: tuple[ScopeRecord, ...]
    complete: bool
    runs: int
    runs_of: str | None = None
    reach: Reach | None = None
    deep_runs: int | None = None
    max_lag: int | None = None
    unbounded: Unbounded | None = None
    lag_pass: LagTried | None = None

    def to_json(self) -> JsonObject:
        return {"scopes": [s.to_json() for s in self.scopes], "complete": self.complete,
                "runs": self.runs, **_present({"runs_of": self.runs_of}),
                **({"reach": _reach_json(self.reach)} if self.reach is not None else {}),
                **_present({"deep_runs": self.deep_runs, "max_lag": self.max_lag}),
                **({"unbounded": self.unbounded.to_json()} if self.unbounded else {}),
                **({"lag_pass": self.lag_pass.to_json()} if self.lag_pass else {})}

    @classmethod
    def from_json(cls, raw: Mapping[str, object]) -> Held:
        return cls(scopes=_scopes(raw), complete=json_bool(raw["complete"]),
                   runs=json_int(raw["runs"]), runs_of=_opt_str(raw, "runs_of"),
                   reach=_reach_read(raw["reach"]) if "reach" in raw else None,
                   deep_runs=_opt_int(raw, "deep_runs"), max_lag=_opt_int(raw, "max_lag"),
                   unbounded=_unbounded(raw),
                   lag_pass=LagTried.from_json(json_object(raw["lag_pass"]))
                   if "lag_pass" in raw else None)


@dataclass(frozen=True)
class Violation:
    """A run broke the property: the scope it was found in (``where``), by what (exploration,
    or a seed), the witness shown (its steps, its first violation, its tasks), and every scope
    explored up to it (``scopes``, ending with ``where``)."""

    where: ScopeRecord
    found_by: str
    steps: int
    witness: str
    witness_tasks: int
    scopes: tuple[ScopeRecord, ...]
    runs_of: str | None = None
    deep_runs: int | None = None
    unbounded: Unbounded | None = None

    def to_json(self) -> JsonObject:
        return {**self.where.to_json(), "found_by": self.found_by, "steps": self.steps,
                "witness": self.witness, "witness_tasks": self.witness_tasks,
                "scopes": [s.to_json() for s in self.scopes],
                **_passes_json(self.runs_of, self.deep_runs),
                **({"unbounded": self.unbounded.to_json()} if self.unbounded else {})}

    @classmethod
    def from_json(cls, raw: Mapping[str, object]) -> Violation:
        return cls(where=ScopeRecord.from_json(raw), found_by=json_str(raw["found_by"]),
                   steps=json_int(raw["steps"]), witness=json_str(raw["witness"]),
                   witness_tasks=json_int(raw["witness_tasks"]), scopes=_scopes(raw),
                   runs_of=_opt_str(raw, "runs_of"), deep_runs=_opt_int(raw, "deep_runs"),
                   unbounded=_unbounded(raw))


#: a cell's ``explored``: which of the three it is follows from its verdict
Explored = NotApplicable | Held | Violation


def scope_records(explored: Explored) -> tuple[ScopeRecord, ...]:
    """The scopes a cell's exploration covered (none for ``n/a``)."""
    return () if isinstance(explored, NotApplicable) else explored.scopes


def complete(explored: Explored) -> bool:
    """Whether every scope was enumerated (``n/a``: nothing to enumerate)."""
    if isinstance(explored, NotApplicable):
        return True
    return explored.complete if isinstance(explored, Held) else explored.where.complete


def without_seconds(explored: Explored) -> Explored:
    """``explored`` without the wall-clock seconds of its searches (the machine's, not the
    result's: the paper's results leave them out, so that regenerating changes a file only when
    a result changes).  A settled search keeps its own, as the results always have."""
    if isinstance(explored, NotApplicable):
        return explored
    scopes = tuple(s.without_seconds() for s in explored.scopes)
    if isinstance(explored, Held):
        return replace(explored, scopes=scopes)
    return replace(explored, where=explored.where.without_seconds(), scopes=scopes)
