"""Table V of the paper (Section XII, "Attributes of the different committer algorithms"),
computed by running the committers rather than typed in.

Every attribute is a *probe*: a small scenario, a quantifier and an observation, decided by a
bounded exhaustive search of the harness's schedules (the same depth-first search with state
pruning as :mod:`zerorename_model.explore`).  Two kinds of observation are needed that the
post-hoc property checkers cannot express, so the search here takes hooks:

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
what the search covered (``explored``: runs, states, whether the scope was exhausted).

``PAPER_TABLE_V`` is the published table, used only by :func:`compare`.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from zerorename_model.harness import (
    Actor,
    Call,
    Move,
    MoveKind,
    Note,
    NoteKind,
    Op,
    Prune,
    Run,
    RunResult,
    hidden,
)
from zerorename_model.protocols import get
from zerorename_model.scenario import Faults, Scenario

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

TWO_FILES = ("part-{task:05d}-0", "part-{task:05d}-1")  # atomicity needs something to split

#: a scenario option naming the wrapper a probe put around the committer, so that a trace's
#: header says what ran and :func:`replay` can run it again (committers ignore the option)
WRAP_OPTION = "zerorename.tablev.wrap"

Watch = Callable[[Run, Move | None], str | None]
Check = Callable[[RunResult], str | None]
Allow = Callable[[Run, Move], bool]


@dataclass
class Cell:
    """One computed cell: the value, the trace that decided it, and what the search covered."""

    value: bool
    witness_trace: list[dict[str, Any]] | None
    explored: dict[str, Any]
    detail: str = ""  # one line: what the deciding run showed, or what was searched for

    def to_json(self) -> dict[str, Any]:
        return {"value": self.value, "detail": self.detail, "explored": self.explored,
                "witness_trace": self.witness_trace}


@dataclass
class Probe:
    """A scenario, a quantifier and the hooks that observe it (see the module docstring)."""

    scenario: Callable[[str], Scenario]
    quantifier: str  # "forall" or "exists"
    looks_for: str  # what a found schedule means, for the cell's detail
    watch: Watch | None = None
    check: Check | None = None
    allow: Allow | None = None


@dataclass
class Search:
    found: str | None
    result: RunResult | None  # the run that found it, else the first complete run
    runs: int = 0
    pruned: int = 0
    states: int = 0
    complete: bool = False
    seconds: float = 0.0
    scenario: dict[str, Any] = field(default_factory=dict)


class AlwaysAsk:
    """Wraps a factory so every attempt asks to commit, and a loser is told to abort: the
    harness can only abort attempts that ask (Direct never does)."""

    def __init__(self, factory: Any) -> None:
        self.factory = factory
        self.supports_recovery = getattr(factory, "supports_recovery", False)

    def __call__(self, env: Any, job: Any, task: Any, options: dict[str, str]) -> Any:
        committer = self.factory(env, job, task, options)
        if task is not None:
            committer.needs_task_commit = lambda: True
        return committer


WRAPPERS: dict[str, Callable[[Any], Any]] = {"always-ask": AlwaysAsk}


def wrapped(scenario: Scenario, factory: Any) -> Any:
    """``factory`` inside the wrapper the scenario's options name, if any."""
    wrap = dict(scenario.options).get(WRAP_OPTION)
    return WRAPPERS[wrap](factory) if wrap else factory


def replay(trace: list[dict[str, Any]], factory: Any = None) -> RunResult:
    """Run a cell's trace again from its header and recorded choices (same wrapper): the one
    replay of :mod:`zerorename_model.trace`, which ``zerorename trace replay`` uses too."""
    from zerorename_model.trace import run_recorded

    result: RunResult = run_recorded(trace, factory, source="<Table V cell trace>")
    return result


# -- the search ----------------------------------------------------------------------------------

class _Chooser:
    """Replays ``prefix``, then explores new states (pruning seen ones) until something is
    found; after that it just finishes the run with the plainest moves, for its trace."""

    def __init__(self, probe: Probe, run: Run, prefix: list[int], visited: set[str],
                 frontier: list[list[int]]) -> None:
        self.probe, self.run, self.prefix = probe, run, prefix
        self.visited, self.frontier = visited, frontier
        self.taken: list[int] = []
        self.found: str | None = None

    def choose(self, label: str, options: Sequence[str]) -> int:
        run = self.run
        moves = run.options()
        allowed = [i for i, m in enumerate(moves)
                   if self.probe.allow is None or m.kind is MoveKind.STEP
                   or self.probe.allow(run, m)]
        position = len(self.taken)
        if self.found is not None:
            index = allowed[0]
        elif position < len(self.prefix):
            index = self.prefix[position]
        else:
            state = run.fingerprint()
            if state in self.visited:
                raise Prune(state)
            self.visited.add(state)
            self.frontier.extend([*self.taken, alt] for alt in reversed(allowed[1:]))
            index = allowed[0]
        self.taken.append(index)
        if self.found is None and self.probe.watch is not None:
            self.found = self.probe.watch(run, moves[index])
            if self.found:
                run.note(f"probe: {self.found}", NoteKind.PROBE)
        return index


def search(probe: Probe, committer: str, factory: Any = None, *,
           max_runs: int = 4000) -> Search:
    """Enumerate the schedules of ``probe`` for ``committer``; stop at the first finding."""
    scenario = probe.scenario(committer)
    factory = wrapped(scenario, factory or get(committer))
    report = Search(found=None, result=None, scenario=scenario.to_json())
    visited: set[str] = set()
    frontier: list[list[int]] = [[]]
    started = time.monotonic()
    while frontier and report.runs < max_runs:
        run = Run(scenario, factory)
        chooser = _Chooser(probe, run, frontier.pop(), visited, frontier)
        report.runs += 1
        try:
            result = run.run(chooser)
        except Prune:
            report.pruned += 1
            continue
        if report.result is None:
            report.result = result
        found = chooser.found
        if found is None and probe.watch is not None:
            found = probe.watch(run, None)
        if found is None and probe.check is not None:
            found = probe.check(result)
        if found:
            report.found, report.result = found, result
            break
    report.complete = not frontier and report.found is None
    report.states = len(visited)
    report.seconds = round(time.monotonic() - started, 3)
    return report


# -- observations --------------------------------------------------------------------------------

def _visible(objects: dict[str, Any], dest: str) -> dict[str, bytes]:
    """The destination as a reader lists it (``objects``: url -> bytes or stored object)."""
    prefix = dest + "/"
    return {k[len(prefix):]: getattr(v, "data", v) for k, v in objects.items()
            if k.startswith(prefix) and not hidden(k[len(prefix):])}


def _writers(written: dict[str, dict[str, bytes]]) -> dict[bytes, str]:
    """bytes -> the attempt that wrote them (each file's bytes name its writer)."""
    return {data: name for name, files in written.items() for data in files.values()}


def _accepted(job: Any) -> set[str]:
    return {task.name for task, _message in job.accepted.values()}


def _told(actor: Actor, call: Call, answer: object) -> bool:
    """Whether ``actor`` made ``call`` and was answered ``answer``."""
    return any(s.call is call and s.result == answer for s in actor.history)


def _reported(actor: Actor) -> bool:
    """Whether ``actor`` reported to its driver (with or without a task commit)."""
    return any(s.call is not None and s.call.reports for s in actor.history)


def _in_task_commit(actor: Actor) -> bool:
    return _told(actor, Call.CAN_COMMIT, True) and not _reported(actor)


def _in_job_commit(run: Run, actor: Actor) -> bool:
    job = run.jobs[actor.job_index]
    awaiting = actor.pending is not None and actor.pending.call is Call.AWAIT_TASKS
    return (actor.task is None and job.outcome == "running" and not awaiting
            and len(job.accepted) == run.scenario.tasks)


def _visible_share(run: Run, attempts: set[str]) -> tuple[int, int, list[str]]:
    """How many of the files written by ``attempts`` are visible, of how many, and which."""
    dest = run.scenario.dests[0]
    shown = set(_visible({k: o.data for k, o in run.store.objects.items()}, dest).values())
    files = [(rel, data) for name in sorted(attempts)
             for rel, data in sorted(run.written.get(name, {}).items())]
    seen = [rel for rel, data in files if data in shown]
    return len(seen), len(files), seen


def _output_problem(result: RunResult) -> str | None:
    """Completeness and exclusivity of every committed job, at commit and at the end."""
    writers = _writers(result.written)
    for job in result.jobs:
        if job.outcome != "committed" or job.dest_at_commit is None:
            continue
        accepted = _accepted(job)
        expected = {data: (name, rel) for name in accepted
                    for rel, data in result.written.get(name, {}).items()}
        kept = result.preexisting.get(job.spec.dest, {})
        for when, view in (("at job commit", job.dest_at_commit),
                           ("at the end", _visible(result.final, job.spec.dest))):
            shown = set(view.values())
            for data, (name, rel) in sorted(expected.items(), key=lambda e: e[1]):
                if data not in shown:
                    return f"{rel} of committed attempt {name} missing {when}"
            for rel, data in sorted(view.items()):
                if data not in expected and kept.get(rel) != data:
                    who = writers.get(data, "an unknown writer")
                    return f"{rel} written by uncommitted attempt {who} visible {when}"
    return None


def _committed_problem(result: RunResult) -> str | None:
    job = result.jobs[0]
    if job.outcome != "committed":
        return f"the job did not commit (outcome {job.outcome}: {job.error or 'no error'})"
    return _output_problem(result)


def _rerun(result: RunResult) -> str | None:
    """A task accepted before a driver restart that the next job attempt ran again."""
    done: set[int] = set()
    restarted = False
    for event in result.events:
        if (isinstance(event, Op) and event.task is not None and event.said.call is not None
                and event.said.call.reports and event.said.result is True):
            done.add(event.task.task_id)
        elif isinstance(event, Note) and event.kind is NoteKind.RESTART:
            restarted = True
        elif (isinstance(event, Note) and restarted and event.kind is NoteKind.LAUNCH
              and event.task is not None and event.task.task_id in done):
            return f"task t{event.task.task_id} was committed before the restart and ran again"
    return None


# -- the probes ----------------------------------------------------------------------------------

def _scenario(tasks: int = 1, files: tuple[str, ...] = ("part-{task:05d}",),
              wrap: str | None = None, **faults: Any) -> Callable[[str], Scenario]:
    options = ((WRAP_OPTION, wrap),) if wrap else ()

    def make(committer: str) -> Scenario:
        return Scenario(committer, store="s3", tasks=tasks, files=files, max_attempts=2,
                        driver="spark", faults=Faults(settle=False, **faults), options=options)
    return make


def _recovery_check(result: RunResult) -> str | None:
    return _rerun(result) or _committed_problem(result)


def _aborted_attempt_visible(run: Run, _move: Move | None) -> str | None:
    for actor in run.actors:
        if actor.task is not None and actor.done and _told(actor, Call.CAN_COMMIT, False):
            seen, _total, rels = _visible_share(run, {actor.name})
            if seen:
                return f"{actor.name} was told to abort, and its {rels[0]} is still visible"
    return None


def _aborted_job_visible(run: Run, _move: Move | None) -> str | None:
    for job in run.jobs:
        if job.outcome == "abort-failed":
            return f"abort failed: {job.error}"
        if job.outcome == "aborted":
            attempts = {t.name for launched in job.attempts.values() for t in launched}
            seen, _total, rels = _visible_share(run, attempts)
            if seen:
                return f"after abort_job and cleanup_job, {rels[0]} of the job is visible"
    return None


def _uncommitted_visible(run: Run, _move: Move | None) -> str | None:
    for actor in run.actors:
        if actor.task is None or _told(actor, Call.CAN_COMMIT, True) or _reported(actor):
            continue
        seen, _total, rels = _visible_share(run, {actor.name})
        if seen:
            return f"{rels[0]} of {actor.name} is visible before its task commit"
    return None


def _committed_visible(run: Run, _move: Move | None) -> str | None:
    for driver in run.actors:
        awaiting = (driver.pending is not None and driver.pending.call is Call.AWAIT_TASKS) or (
            bool(driver.history) and driver.history[-1].call is Call.AWAIT_TASKS)  # woke, no
        # commit operation done yet
        if driver.task is not None or not awaiting:
            continue
        job = run.jobs[driver.job_index]
        seen, _total, rels = _visible_share(run, _accepted(job))
        if seen:
            return (f"{rels[0]} of a committed task is visible before the job commit "
                    "has started")
    return None


def _crash_in_task_commit(run: Run, move: Move) -> bool:
    return move.kind is MoveKind.CRASH and _in_task_commit(run.actor(move))


def _partial_task_commit(run: Run, move: Move | None) -> str | None:
    if move is None or not _crash_in_task_commit(run, move):
        return None
    seen, total, rels = _visible_share(run, {move.actor})
    if 0 < seen < total:
        return (f"{move.actor} crashed in commit_task with {seen} of its {total} files "
                f"visible ({', '.join(rels)})")
    return None


def _restart_in_job_commit(run: Run, move: Move) -> bool:
    return move.kind is MoveKind.RESTART and _in_job_commit(run, run.actor(move))


def _partial_job_commit(run: Run, move: Move | None) -> str | None:
    if move is None or not _restart_in_job_commit(run, move):
        return None
    seen, total, rels = _visible_share(run, _accepted(run.jobs[run.actor(move).job_index]))
    if 0 < seen < total:
        return (f"the driver crashed in commit_job with {seen} of {total} committed files "
                f"visible ({', '.join(rels)})")
    return None


def _changed_after_commit(run: Run, _move: Move | None) -> str | None:
    objects = {k: o.data for k, o in run.store.objects.items()}
    for job in run.jobs:
        if job.outcome != "committed" or job.dest_at_commit is None:
            continue
        now = _visible(objects, job.spec.dest)
        for rel in sorted(set(now) | set(job.dest_at_commit)):
            if now.get(rel) != job.dest_at_commit.get(rel):
                who = _writers(run.written).get(now.get(rel, b""), "a delete")
                return f"{rel} changed by {who} after the job committed"
    return None


PROBES: dict[str, Probe] = {
    "speculative_tasks": Probe(
        _scenario(speculate=1), "forall",
        "with a speculative duplicate, the output is not complete and exclusive",
        check=_committed_problem),
    "recoverable_job": Probe(
        _scenario(restart=1), "forall",
        "after a driver restart, committed tasks rerun or the output is wrong",
        check=_recovery_check),
    "abortable_task": Probe(
        _scenario(speculate=1, wrap="always-ask"), "forall",
        "an attempt told to abort leaves output visible", watch=_aborted_attempt_visible),
    "abortable_job": Probe(
        _scenario(fail_job=1), "forall",
        "output of an aborted job is visible after abort_job and cleanup_job",
        watch=_aborted_job_visible),
    "uncommitted_task_output_observable": Probe(
        _scenario(), "exists", "output of an attempt is visible before its task commit",
        watch=_uncommitted_visible),
    "committed_task_output_observable": Probe(
        _scenario(), "exists",
        "output of a committed task is visible before the job commit starts",
        watch=_committed_visible),
    "atomic_task_commit": Probe(
        _scenario(files=TWO_FILES, crash=1), "forall",
        "a crash in commit_task leaves part of the attempt's output visible, or spoils the "
        "job's output", watch=_partial_task_commit, check=_output_problem,
        allow=_crash_in_task_commit),
    "atomic_job_commit": Probe(
        _scenario(files=TWO_FILES, restart=1), "forall",
        "a driver crash in commit_job leaves part of the output visible",
        watch=_partial_job_commit, allow=_restart_in_job_commit),
    "partitioned_executor_resilience": Probe(
        _scenario(partition=1), "forall",
        "a partitioned attempt changes the output after the job committed, or spoils it",
        watch=_changed_after_commit, check=_output_problem),
}


def probe(attribute: str, committer: str, factory: Any = None, *,
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
    explored = {"quantifier": spec.quantifier, "looks_for": spec.looks_for,
                "found": found.found is not None, "runs": found.runs, "pruned": found.pruned,
                "states": found.states, "complete": found.complete, "seconds": found.seconds,
                "scenario": found.scenario}
    trace = found.result.trace if found.result is not None else None
    return Cell(value, trace, explored, detail)


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

    from zerorename_model.protocols import load_all
    from zerorename_model.trace import write_trace

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
                   if cell.witness_trace and (cell.explored["found"] or not cell.value)]
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
    trace: list[dict[str, Any]] | None

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
