"""Everything ``results/verdicts.json`` holds, typed: the budgets the paper was explored with, the
scopes, the matrix's cells (:class:`~zerorename_model.experiments.cells.Cell`), the VIII.C rows
(:class:`~zrpaper.race.RaceRow`), Table V (:class:`TableV`, each cell's search the model's own
record of it, :class:`~zerorename_model.experiments.tablev_search.TableVSearch`, re-exported here)
and the merges (:class:`Merge`).

The file is read once (:meth:`Results.from_json`) and written once (:meth:`Results.to_json`);
every module between renders from these values.  ``to_json`` writes the keys in the order the
file has always had them, so a file read and written again is the same bytes
(``tests/test_paper.py``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from zerorename_model.engine.json_values import json_bool, json_int, json_list, json_object
from zerorename_model.experiments.cells import Cell, cells_json, typed_cells
from zerorename_model.experiments.explored import JsonObject, json_optional_str, json_str
from zerorename_model.experiments.tablev_search import TableVSearch as TableVSearch
from zrpaper.budgets import LagBudget, RunBudget, json_number
from zrpaper.race import RaceRow
from zrpaper.settings import RESULTS

#: A row of the results: (committer, store, protocol, bug, variant_of); bug and variant_of mark
#: the two sides of a production bug's comparison (None for the matrix proper)
RowKey = tuple[str, str, str | None, str | None, str | None]


def _strs(value: object) -> list[str]:
    return [json_str(v) for v in json_list(value)]


def _str_pairs(value: object) -> list[tuple[str, str]]:
    """``[["a", "b"], ...]`` as pairs (JSON has no tuples)."""
    pairs = []
    for pair in json_list(value):
        first, second = json_list(pair)
        pairs.append((json_str(first), json_str(second)))
    return pairs


@dataclass(frozen=True)
class Timing:
    """Seconds (rounded) each part of a run took, wall clock and CPU."""

    matrix_wall_s: int
    matrix_cpu_s: int
    race_wall_s: int
    race_cpu_s: int
    tablev_wall_s: int
    tablev_cpu_s: int

    @property
    def wall_s(self) -> int:
        return self.matrix_wall_s + self.race_wall_s + self.tablev_wall_s

    def to_json(self) -> JsonObject:
        return {"matrix_wall_s": self.matrix_wall_s, "matrix_cpu_s": self.matrix_cpu_s,
                "race_wall_s": self.race_wall_s, "race_cpu_s": self.race_cpu_s,
                "tablev_wall_s": self.tablev_wall_s, "tablev_cpu_s": self.tablev_cpu_s}

    @classmethod
    def from_json(cls, raw: object) -> Timing:
        obj = json_object(raw)
        return cls(*(json_int(obj[k]) for k in (
            "matrix_wall_s", "matrix_cpu_s", "race_wall_s", "race_cpu_s", "tablev_wall_s",
            "tablev_cpu_s")))


@dataclass(frozen=True)
class Load:
    """How loaded the (shared) machine was: it says how to read the times."""

    start: float
    end: float
    cpus: int | None

    def to_json(self) -> JsonObject:
        return {"start": self.start, "end": self.end, "cpus": self.cpus}

    @classmethod
    def from_json(cls, raw: object) -> Load:
        obj = json_object(raw)
        return cls(json_number(obj["start"]), json_number(obj["end"]),
                   None if obj["cpus"] is None else json_int(obj["cpus"]))


@dataclass(frozen=True)
class ScopeShape:
    """A scope as the paper describes it (its v1-on-s3 scenario): the properties it decides,
    the driver, the tasks, attempts, files, destinations and the faults injected."""

    name: str
    props: list[str]
    driver: str
    tasks: int
    attempts: int
    files: list[str]
    dests: list[str]
    faults: dict[str, int | bool]

    def to_json(self) -> JsonObject:
        return {"name": self.name, "props": list(self.props), "driver": self.driver,
                "tasks": self.tasks, "attempts": self.attempts, "files": list(self.files),
                "dests": list(self.dests), "faults": dict(self.faults)}

    @classmethod
    def from_json(cls, raw: object) -> ScopeShape:
        obj = json_object(raw)
        return cls(json_str(obj["name"]), _strs(obj["props"]), json_str(obj["driver"]),
                   json_int(obj["tasks"]), json_int(obj["attempts"]), _strs(obj["files"]),
                   _strs(obj["dests"]),
                   {k: v if isinstance(v, bool) else json_int(v)
                    for k, v in json_object(obj["faults"]).items()})


# -- Table V ----------------------------------------------------------------------------------

@dataclass(frozen=True)
class TableVCell:
    """One attribute of one committer: the value the probe gave, why, and its witness (the
    search's record without its seconds and scenario, as the results have always kept it)."""

    value: bool
    detail: str
    explored: TableVSearch
    trace: str | None

    def to_json(self) -> JsonObject:
        return {"value": self.value, "detail": self.detail, "explored": self.explored.to_json(),
                "trace": self.trace}

    @classmethod
    def from_json(cls, raw: object) -> TableVCell:
        obj = json_object(raw)
        return cls(json_bool(obj["value"]), json_str(obj["detail"]),
                   TableVSearch.from_json(obj["explored"]), json_optional_str(obj["trace"]))


@dataclass(frozen=True)
class TableVDifference:
    """A Table V cell where the model's value is not the paper's, and why."""

    committer: str
    attribute: str
    ours: bool
    paper: bool
    reason: str

    def to_json(self) -> JsonObject:
        return {"committer": self.committer, "attribute": self.attribute, "ours": self.ours,
                "paper": self.paper, "reason": self.reason}

    @classmethod
    def from_json(cls, raw: object) -> TableVDifference:
        obj = json_object(raw)
        return cls(json_str(obj["committer"]), json_str(obj["attribute"]),
                   json_bool(obj["ours"]), json_bool(obj["paper"]), json_str(obj["reason"]))


@dataclass(frozen=True)
class ReaderSearch:
    """The record-reader probe under one job-commit protocol."""

    found: str | None
    runs: int
    states: int
    complete: bool

    def to_json(self) -> JsonObject:
        return {"found": self.found, "runs": self.runs, "states": self.states,
                "complete": self.complete}

    @classmethod
    def from_json(cls, raw: object) -> ReaderSearch:
        obj = json_object(raw)
        return cls(json_optional_str(obj["found"]), json_int(obj["runs"]),
                   json_int(obj["states"]), json_bool(obj["complete"]))


@dataclass(frozen=True)
class RecordReader:
    """Job-commit atomicity for a reader of the committer's record (``reader`` names it)."""

    value: bool
    reader: str
    detail: str
    explored: dict[str, ReaderSearch]
    trace: str | None

    def to_json(self) -> JsonObject:
        return {"value": self.value, "reader": self.reader, "detail": self.detail,
                "explored": {d: s.to_json() for d, s in self.explored.items()},
                "trace": self.trace}

    @classmethod
    def from_json(cls, raw: object) -> RecordReader:
        obj = json_object(raw)
        return cls(json_bool(obj["value"]), json_str(obj["reader"]), json_str(obj["detail"]),
                   {d: ReaderSearch.from_json(s)
                    for d, s in json_object(obj["explored"]).items()},
                   json_optional_str(obj["trace"]))


@dataclass(frozen=True)
class TableV:
    """Table V: the paper's values (``paper``, by attribute and the paper's column name), the
    model's cells by committer and attribute, where they differ, and the record readers."""

    source: str
    attributes: list[tuple[str, str]]
    paper: dict[str, dict[str, bool]]
    paper_columns: dict[str, str]
    cells: dict[str, dict[str, TableVCell]]
    differences: list[TableVDifference]
    record_reader: dict[str, RecordReader] = field(default_factory=dict)

    def traces(self) -> set[str]:
        """Every trace Table V links (relative to ``paper/``)."""
        named = {c.trace for row in self.cells.values() for c in row.values() if c.trace}
        return named | {r.trace for r in self.record_reader.values() if r.trace}

    def to_json(self) -> JsonObject:
        return {"source": self.source, "attributes": [list(a) for a in self.attributes],
                "paper": {a: dict(row) for a, row in self.paper.items()},
                "paper_columns": dict(self.paper_columns),
                "cells": {c: {a: cell.to_json() for a, cell in row.items()}
                          for c, row in self.cells.items()},
                "differences": [d.to_json() for d in self.differences],
                "record_reader": {c: r.to_json() for c, r in self.record_reader.items()}}

    @classmethod
    def from_json(cls, raw: object) -> TableV:
        obj = json_object(raw)
        return cls(
            json_str(obj["source"]), _str_pairs(obj["attributes"]),
            {a: {c: json_bool(v) for c, v in json_object(row).items()}
             for a, row in json_object(obj["paper"]).items()},
            {c: json_str(v) for c, v in json_object(obj["paper_columns"]).items()},
            {c: {a: TableVCell.from_json(cell) for a, cell in json_object(row).items()}
             for c, row in json_object(obj["cells"]).items()},
            [TableVDifference.from_json(d) for d in json_list(obj["differences"])],
            {c: RecordReader.from_json(r)
             for c, r in json_object(obj.get("record_reader", {})).items()})


# -- merges and the whole file ----------------------------------------------------------------

@dataclass(frozen=True)
class Merge:
    """A merge: which committers were explored again, when, with what budgets, which of their
    parts (matrix rows, VIII.C pairs, Table V columns) and how long it took."""

    committers: list[str]
    at: str
    budget: RunBudget
    deep_budget: RunBudget
    race_max_runs: int
    tablev_max_runs: int
    workers: int
    matrix: list[str]
    race: list[tuple[str, str]]
    tablev: list[str]
    timing: Timing
    #: the second pass's budget before this merge raised it (None: not raised)
    deep_raised_from: int | None = None

    def to_json(self) -> JsonObject:
        record: JsonObject = {
            "committers": list(self.committers), "at": self.at,
            "budget": self.budget.to_json(), "deep_budget": self.deep_budget.to_json(),
            "race_max_runs": self.race_max_runs, "tablev_max_runs": self.tablev_max_runs,
            "workers": self.workers, "matrix": list(self.matrix),
            "race": [list(p) for p in self.race], "tablev": list(self.tablev),
            "timing": self.timing.to_json()}
        if self.deep_raised_from is not None:
            record["deep_raised_from"] = self.deep_raised_from
        return record

    @classmethod
    def from_json(cls, raw: object) -> Merge:
        obj = json_object(raw)
        pairs = _str_pairs(obj["race"])
        return cls(_strs(obj["committers"]), json_str(obj["at"]),
                   RunBudget.from_json(obj["budget"]), RunBudget.from_json(obj["deep_budget"]),
                   json_int(obj["race_max_runs"]), json_int(obj["tablev_max_runs"]),
                   json_int(obj["workers"]), _strs(obj["matrix"]), pairs,
                   _strs(obj["tablev"]), Timing.from_json(obj["timing"]),
                   None if "deep_raised_from" not in obj else json_int(obj["deep_raised_from"]))


def _row_key(raw: object) -> RowKey:
    committer, store, protocol, bug, variant_of = json_list(raw)
    return (json_str(committer), json_str(store), json_optional_str(protocol),
            json_optional_str(bug), json_optional_str(variant_of))


@dataclass(frozen=True)
class Results:
    """Everything the paper's tables, figures and the READMEs' verdict blocks are rendered
    from (``results/verdicts.json``)."""

    generated_by: str
    budget: RunBudget
    deep_budget: RunBudget
    #: the rows the second pass explored again
    deepened: list[RowKey]
    lag_budget: LagBudget
    race_max_runs: int
    tablev_max_runs: int
    workers: int
    timing: Timing
    load: Load | None
    committers: list[str]
    stores: list[str]
    properties: list[str]
    scopes: list[ScopeShape]
    cells: list[Cell]
    race: list[RaceRow]
    tablev: TableV
    merged: list[Merge] = field(default_factory=list)

    def to_json(self) -> JsonObject:
        record: JsonObject = {
            "generated_by": self.generated_by, "budget": self.budget.to_json(),
            "deep_budget": self.deep_budget.to_json(),
            "deepened": [list(row) for row in self.deepened],
            "lag_budget": self.lag_budget.to_json(), "race_max_runs": self.race_max_runs,
            "tablev_max_runs": self.tablev_max_runs, "workers": self.workers,
            "timing": self.timing.to_json()}
        if self.load is not None:
            record["load"] = self.load.to_json()
        record.update({
            "committers": list(self.committers), "stores": list(self.stores),
            "properties": list(self.properties),
            "scopes": [s.to_json() for s in self.scopes], "cells": cells_json(self.cells),
            "race": [r.to_json() for r in self.race], "tablev": self.tablev.to_json(),
            "merged": [m.to_json() for m in self.merged]})
        return record

    @classmethod
    def from_json(cls, raw: Mapping[str, object]) -> Results:
        return cls(
            json_str(raw["generated_by"]), RunBudget.from_json(raw["budget"]),
            RunBudget.from_json(raw["deep_budget"]),
            [_row_key(row) for row in json_list(raw["deepened"])],
            LagBudget.from_json(raw["lag_budget"]), json_int(raw["race_max_runs"]),
            json_int(raw["tablev_max_runs"]), json_int(raw["workers"]),
            Timing.from_json(raw["timing"]),
            Load.from_json(raw["load"]) if "load" in raw else None,
            _strs(raw["committers"]), _strs(raw["stores"]), _strs(raw["properties"]),
            [ScopeShape.from_json(s) for s in json_list(raw["scopes"])],
            typed_cells(raw),
            [RaceRow.from_json(json_object(r)) for r in json_list(raw["race"])],
            TableV.from_json(raw["tablev"]),
            [Merge.from_json(m) for m in json_list(raw.get("merged", []))])

    def traces(self) -> set[str]:
        """Every trace the results link (paths relative to ``paper/``)."""
        named = {c.trace for c in self.cells if c.trace}
        named |= {v.trace for row in self.race for _prop, v in row.verdicts if v.trace}
        return named | self.tablev.traces()


#: the results file the paper is rendered from
VERDICTS = RESULTS / "verdicts.json"


def load_results(path: Path = VERDICTS) -> Results:
    """The results file, read once into :class:`Results`."""
    return Results.from_json(json_object(json.loads(path.read_text(encoding="utf-8"))))


def save_results(results: Results, path: Path = VERDICTS) -> None:
    """The results written once, as the file has always been laid out (one space indents, the
    keys in :meth:`Results.to_json`'s order, non-ASCII as it is)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(results.to_json(), indent=1, ensure_ascii=False) + "\n",
                    encoding="utf-8")
