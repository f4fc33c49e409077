"""The search that decides a Table V cell, and its one typed record.

:func:`search` enumerates a probe's schedules with the exploration engine the verdict matrix uses
(:func:`zerorename_model.check.explore.runs`) and stops at the first finding; what it covered is
a :class:`TableVSearch`, the one record of it that ``zerorename table --json``,
``paper/make_tablev.py`` and the paper's results (``zrpaper.results``, which re-exports it) all
write and read.  They differ only in what they leave out: the paper's results keep neither the
wall-clock seconds (the machine's, not the result's) nor the scenario, ``tablev.json`` keeps the
scenario; a field left out is None here and absent from the JSON, so a file read and written
again is the same bytes.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace

from zerorename_model.check.explore import Reduction, Stats, runs
from zerorename_model.engine.harness import Move, NoteKind, Run, RunResult
from zerorename_model.engine.json_values import json_bool, json_int, json_number, json_object
from zerorename_model.engine.scenario import CommitterFactory, Scenario
from zerorename_model.experiments.explored import JsonObject, json_str
from zerorename_model.experiments.tablev_probes import Probe, Watch, wrapped
from zerorename_model.systems.protocols import get


@dataclass(frozen=True)
class TableVSearch:
    """What one probe's search covered: the probe's quantifier and what a finding means,
    whether one was found, how many runs, pruned runs and distinct states, whether the scope
    was enumerated (no finding and every schedule run), and, where kept, the seconds it took
    and the scenario searched."""

    quantifier: str
    looks_for: str
    found: bool
    runs: int
    pruned: int
    states: int
    complete: bool
    seconds: float | None = None
    scenario: Scenario | None = None

    def without_seconds(self) -> TableVSearch:
        """Without the wall-clock seconds, so that regenerating a file changes it only when a
        result changes."""
        return replace(self, seconds=None)

    def without_scenario(self) -> TableVSearch:
        """Without the scenario (the paper's results describe each probe once, not per cell)."""
        return replace(self, scenario=None)

    def to_json(self) -> JsonObject:
        record: JsonObject = {
            "quantifier": self.quantifier, "looks_for": self.looks_for, "found": self.found,
            "runs": self.runs, "pruned": self.pruned, "states": self.states,
            "complete": self.complete}
        if self.seconds is not None:
            record["seconds"] = self.seconds
        if self.scenario is not None:
            record["scenario"] = self.scenario.to_json()
        return record

    @classmethod
    def from_json(cls, raw: object) -> TableVSearch:
        obj = json_object(raw)
        return cls(json_str(obj["quantifier"]), json_str(obj["looks_for"]),
                   json_bool(obj["found"]), json_int(obj["runs"]), json_int(obj["pruned"]),
                   json_int(obj["states"]), json_bool(obj["complete"]),
                   json_number(obj["seconds"]) if "seconds" in obj else None,
                   Scenario.from_json(json_object(obj["scenario"])) if "scenario" in obj
                   else None)


@dataclass(frozen=True)
class Search:
    """A probe's search: its finding (None: no schedule showed one), the run that found it
    (else the first complete run, None if there was none) and what it covered."""

    found: str | None
    result: RunResult | None
    explored: TableVSearch


def _noting(watch: Watch | None) -> Watch | None:
    """``watch``, marking what it finds during a run in the run's trace."""
    if watch is None:
        return None

    def noted(run: Run, move: Move | None) -> str | None:
        found = watch(run, move)
        if found and move is not None:
            run.note(f"probe: {found}", NoteKind.PROBE)
        return found
    return noted


def search(probe: Probe, committer: str, factory: CommitterFactory | None = None, *,
           max_runs: int = 4000) -> Search:
    """Enumerate the schedules of ``probe`` for ``committer`` with the exploration engine
    (:func:`zerorename_model.check.explore.runs`); stop at the first finding."""
    scenario = probe.scenario(committer)
    factory = wrapped(scenario, factory or get(committer))
    found: str | None = None
    result: RunResult | None = None
    stats = Stats()
    started = time.monotonic()
    # faults never sleep here: the observations look at every state with the fault about to
    # be taken (a crash in the middle of a task commit), not only at end states
    for done in runs(lambda: Run(scenario, factory), stats, allow=probe.allow,
                     watch=_noting(probe.watch), max_runs=max_runs,
                     reduction=Reduction.SLEEP):
        if result is None:
            result = done.result
        finding = done.found
        if finding is None and probe.check is not None:
            finding = probe.check(done.result)
        if finding:
            found, result = finding, done.result
            break
    explored = TableVSearch(
        probe.quantifier, probe.looks_for, found is not None, stats.runs, stats.pruned,
        stats.states, stats.complete and found is None, round(time.monotonic() - started, 3),
        scenario)
    return Search(found, result, explored)
