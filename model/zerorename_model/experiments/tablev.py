"""Table V of the paper (Section XII, "Attributes of the different committer algorithms"),
computed by running the committers rather than typed in.

Every attribute is a *probe* (:mod:`zerorename_model.experiments.tablev_probes`): a small scenario,
a quantifier and an observation, decided by a bounded exhaustive search of the harness's
schedules (:func:`zerorename_model.experiments.tablev_search.search`) with
:func:`zerorename_model.check.explore.runs`, the exploration engine the verdict matrix uses (state
pruning and sleep sets).  Two kinds of observation are needed that the post-hoc
property checkers cannot express, so the engine takes hooks:

* ``watch(run, move)``: looked at in *every intermediate state* (and with the move about to be
  taken), e.g. "a file of an attempt that has not been granted its commit is visible", or "the
  driver is crashed in the middle of commit_job while only some files are visible";
* ``check(result)``: looked at on every finished run (output complete and exclusive...);
* ``allow(run, move)``: which fault moves the probe is about (a crash *during commit_task*), so
  that a found schedule is evidence about that attribute and nothing else.

Files are matched to the attempt that wrote them by their bytes (``scenario.file_data`` names
the writer), never by name: Stocator renames every file, and the probes must not trust
anything a committer says.

A probe is ``forall`` (the attribute holds unless some schedule breaks it: speculation,
recovery, abort, atomicity, partition resilience) or ``exists`` (the attribute is true if some
schedule shows it: observable output).  A cell carries the trace of the run that decided it
(the counterexample, or the example) and otherwise the trace of the first, fault-free run, plus
what the search covered (``explored``, a
:class:`~zerorename_model.experiments.tablev_search.TableVSearch`: runs, states, whether the scope
was exhausted).

``PAPER_TABLE_V`` is the published table, used only by :func:`compare`.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypedDict

from zerorename_model.engine.harness import RunResult
from zerorename_model.engine.scenario import CommitterFactory
from zerorename_model.experiments.explored import JsonObject
from zerorename_model.experiments.tablev_probes import (
    PROBES,
    TWO_FILES,
    WRAP_OPTION,
    Allow,
    AlwaysAsk,
    Check,
    Probe,
    Watch,
    wrapped,
)
from zerorename_model.experiments.tablev_search import Search, TableVSearch, search
from zerorename_model.experiments.trace import run_recorded, write_trace
from zerorename_model.systems.protocols import get, load_all

__all__ = ["ATTRIBUTES", "COLUMNS", "LABELS", "PAPER_COLUMN", "PAPER_SOURCE", "PAPER_TABLE_V",
           "PROBES", "TWO_FILES", "WRAP_OPTION", "Allow", "AlwaysAsk", "Cell", "CellJSON", "Check",
           "Difference", "Probe", "Search", "TableVSearch", "Watch", "available", "compare",
           "compute", "format_table", "main", "probe", "replay", "search", "wrapped"]

#: (key, the paper's row label)
ATTRIBUTES: tuple[tuple[str, str], ...] = (
    ("speculative_tasks", "Speculative Tasks"),
    ("recoverable_job", "Recoverable Job"),
    ("abortable_task", "Abortable Task"),
    ("abortable_job", "Abortable Job"),
    ("uncommitted_task_output_observable", "Uncommitted task output observable"),
    ("committed_task_output_observable", "Committed task output observable"),
    ("atomic_task_commit", "Atomic Task Commit"),
    ("atomic_job_commit", "Atomic Job Commit"),
    ("partitioned_executor_resilience", "Partitioned Executor resilience"),
)
LABELS = dict(ATTRIBUTES)

#: our columns; the paper's are Direct, Stocator, S3A (magic and staging) and EMR
COLUMNS = ("direct", "stocator", "magic", "directory", "emr", "v1", "v2", "manifest", "lakefs",
           "fenced")
PAPER_COLUMN = {"direct": "Direct", "stocator": "Stocator", "magic": "S3A", "directory": "S3A",
                "partitioned": "S3A", "emr": "EMR"}

PAPER_SOURCE = ("S. Loughran, R. Blue, S. Radia, T. Demoor, \"A Zero-Rename Committer: "
                "Object-storage as a Destination for Apache Hadoop and Spark\", Section XII, "
                "Table V (seed 001)")
#: The published Table V, transcribed from the paper (PAPER_SOURCE).  The paper's claims, used
#: only to list where our results differ; never a result.
PAPER_TABLE_V: dict[str, dict[str, bool]] = {
    "speculative_tasks": {"Direct": False, "Stocator": True, "S3A": True, "EMR": True},
    "recoverable_job": {"Direct": False, "Stocator": False, "S3A": False, "EMR": True},
    "abortable_task": {"Direct": False, "Stocator": True, "S3A": True, "EMR": True},
    "abortable_job": {"Direct": True, "Stocator": True, "S3A": True, "EMR": True},
    "uncommitted_task_output_observable": {"Direct": True, "Stocator": True, "S3A": False,
                                           "EMR": False},
    "committed_task_output_observable": {"Direct": True, "Stocator": True, "S3A": False,
                                         "EMR": True},
    "atomic_task_commit": {"Direct": True, "Stocator": True, "S3A": True, "EMR": False},
    "atomic_job_commit": {"Direct": True, "Stocator": True, "S3A": False, "EMR": True},
    "partitioned_executor_resilience": {"Direct": False, "Stocator": False, "S3A": True,
                                        "EMR": False},
}


class CellJSON(TypedDict):
    """A cell in the JSON results (``witness_trace``: the trace lines, as a run's ``trace``
    holds them: parsed-JSON dicts, the harness's type)."""

    value: bool
    detail: str
    explored: JsonObject
    witness_trace: list[dict[str, object]] | None


@dataclass
class Cell:
    """One computed cell: the value, the trace that decided it, and what the search covered."""

    value: bool
    witness_trace: list[dict[str, object]] | None
    explored: TableVSearch
    detail: str = ""  # one line: what the deciding run showed, or what was searched for

    def to_json(self) -> CellJSON:
        return {"value": self.value, "detail": self.detail, "explored": self.explored.to_json(),
                "witness_trace": self.witness_trace}


def replay(trace: list[dict[str, object]], factory: CommitterFactory | None = None) -> RunResult:
    """Run a cell's trace again from its header and recorded choices (same wrapper): the one
    replay of :mod:`zerorename_model.experiments.trace`, which ``zerorename trace replay`` uses
    too."""
    result: RunResult = run_recorded(trace, factory, source="<Table V cell trace>")
    return result


# -- the table ----------------------------------------------------------------------------------

def probe(attribute: str, committer: str, factory: CommitterFactory | None = None, *,
          max_runs: int = 4000) -> Cell:
    """Compute one cell of Table V by searching ``attribute``'s scenario for ``committer``."""
    spec = PROBES[attribute]
    factory = factory or get(committer)
    found = search(spec, committer, factory, max_runs=max_runs)
    # exists: true when a schedule showed it; forall: true when no schedule broke it
    value = (found.found is not None) == (spec.quantifier == "exists")
    detail = found.found or f"no schedule found where {spec.looks_for}"
    if attribute == "recoverable_job" and not getattr(factory, "supports_recovery", False):
        value = False
        if found.found is None:
            detail = "the committer does not support recovering a restarted job"
    trace = found.result.trace if found.result is not None else None
    return Cell(value, trace, found.explored, detail)


def available(columns: Sequence[str] = COLUMNS) -> list[str]:
    """The committers of ``columns`` that are registered (others are being written)."""
    names = []
    for name in columns:
        try:
            get(name)
        except KeyError:
            continue
        names.append(name)
    return names


def compute(columns: Sequence[str] = COLUMNS, attributes: Sequence[str] | None = None,
            *, max_runs: int = 4000) -> dict[str, dict[str, Cell]]:
    """The table: committer -> attribute -> cell, for every registered committer."""
    keys = list(attributes or LABELS)
    return {name: {attr: probe(attr, name, max_runs=max_runs) for attr in keys}
            for name in available(columns)}


def format_table(table: dict[str, dict[str, Cell]]) -> str:
    """One row per attribute, one column per committer; where the paper has the committer's
    column and says otherwise, the cell reads ``False (paper True)``."""
    names = list(table)
    texts: dict[str, dict[str, str]] = {name: {} for name in names}
    for name in names:
        column = PAPER_COLUMN.get(name)
        for attribute, cell in table[name].items():
            paper = PAPER_TABLE_V.get(attribute, {}).get(column) if column else None
            texts[name][attribute] = str(cell.value) + (
                f" (paper {paper})" if paper is not None and paper != cell.value else "")
    first = max(len(label) for _key, label in ATTRIBUTES)
    widths = {name: max([len(name), *(len(t) for t in texts[name].values())])
              for name in names}
    lines = [f"{'attribute':<{first}}  " + "  ".join(f"{n:<{widths[n]}}" for n in names)]
    lines.append("-" * len(lines[0]))
    for key, label in ATTRIBUTES:
        if any(key in texts[n] for n in names):
            lines.append(f"{label:<{first}}  " + "  ".join(
                f"{texts[n].get(key, ''):<{widths[n]}}" for n in names))
    return "\n".join(lines)


def main(json_path: str | None = None, traces: str | None = None,
         committers: Sequence[str] | None = None,
         progress: Callable[[str], None] | None = None) -> int:
    """``zerorename table``: compute Table V for ``committers`` (default: every registered
    column), print it and every cell that differs from the paper; with ``json_path``, write
    every cell (value, finding, what was searched, deciding trace); with ``traces``, write the
    trace of every cell a run decided, or that is False, as ``tablev.<committer>.<attribute>
    .jsonl`` (each replays with ``zerorename trace replay``).  Differences from the paper are
    findings, not failures: the exit status is 0."""
    from pathlib import Path


    known = load_all()
    unknown = [c for c in committers or () if c not in known]
    if unknown:
        raise ValueError(f"unknown committer {unknown[0]!r}; known: {sorted(known)}")
    names = list(committers) if committers else available()
    table: dict[str, dict[str, Cell]] = {}
    for name in names:
        started = time.monotonic()
        table[name] = {attribute: probe(attribute, name) for attribute in LABELS}
        if progress is not None:
            progress(f"{name}: {len(LABELS)} attributes probed in "
                     f"{time.monotonic() - started:.1f} s")
    print(format_table(table))
    differences = compare(table)
    print(f"\n{len(differences)} cell(s) differ from the paper ({PAPER_SOURCE}):"
          if differences else "\nevery cell the paper has agrees with it")
    for difference in differences:
        print(f"  {difference.line()}")
    if json_path:
        data = {"paper": {"source": PAPER_SOURCE, "table": PAPER_TABLE_V,
                          "columns": PAPER_COLUMN},
                "cells": {name: {attribute: cell.to_json() for attribute, cell in row.items()}
                          for name, row in table.items()},
                "differences": [{"committer": d.committer, "attribute": d.attribute,
                                 "ours": d.ours, "paper": d.paper, "reason": d.reason}
                                for d in differences]}
        out = Path(json_path)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(data, indent=1, default=str) + "\n", encoding="utf-8")
        if progress is not None:
            progress(f"wrote {out}")
    if traces:
        written = [write_trace(Path(traces) / f"tablev.{name}.{attribute}.jsonl",
                               cell.witness_trace)
                   for name, row in table.items() for attribute, cell in row.items()
                   if cell.witness_trace and (cell.explored.found or not cell.value)]
        if progress is not None:
            progress(f"wrote {len(written)} witness traces under {traces}")
    return 0


@dataclass(frozen=True)
class Difference:
    committer: str
    attribute: str
    ours: bool
    paper: bool
    reason: str  # what the deciding run showed
    trace: list[dict[str, object]] | None

    def line(self) -> str:
        return (f"{self.committer} / {LABELS[self.attribute]}: ours {self.ours}, "
                f"paper {self.paper}: {self.reason}")


def compare(ours: dict[str, dict[str, Cell]],
            paper: dict[str, dict[str, bool]] | None = None) -> list[Difference]:
    """Every cell where our result differs from the paper's (committers the paper has)."""
    paper = PAPER_TABLE_V if paper is None else paper
    found = []
    for committer, cells in ours.items():
        column = PAPER_COLUMN.get(committer)
        if column is None:
            continue
        for attribute, cell in cells.items():
            published = paper.get(attribute, {}).get(column)
            if published is not None and published != cell.value:
                found.append(Difference(committer, attribute, cell.value, published,
                                        cell.detail, cell.witness_trace))
    return found
