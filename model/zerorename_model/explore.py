"""Finding violations and proving their absence within bounds.

:func:`explore` is a stateless depth-first search over the harness's choice sequences: every run
replays a prefix of answers and then takes option 0, queueing the alternatives.  Before each new
choice it fingerprints the whole state (stores, every actor's history and pause point, what the
driver knows, fault budgets); a state seen before is pruned, because its futures were or will be
explored from the first visit.  When the search finishes without hitting its run budget, every
schedule, crash point and fault placement within the scenario's budgets has been covered: a
property that held on every run *holds within that scope*.

:func:`search` lets hypothesis pick the answers instead (random, then shrunk), for scopes too big
to enumerate; :func:`shrink` reduces a violating choice sequence to a short one.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from zerorename_model.choices import ScriptedChooser
from zerorename_model.harness import Prune, Run, RunResult
from zerorename_model.properties import PROPERTIES, Violation
from zerorename_model.scenario import CommitterFactory, Scenario


@dataclass
class Exploration:
    """What a search covered and found.  ``complete``: the whole space was enumerated."""

    scenario: Scenario
    runs: int = 0
    pruned: int = 0
    states: int = 0
    complete: bool = False
    seconds: float = 0.0
    method: str = "exhaustive"
    violations: dict[str, tuple[list[Violation], RunResult, list[int]]] = field(
        default_factory=dict)

    def summary(self) -> dict[str, Any]:
        return {"method": self.method, "runs": self.runs, "pruned": self.pruned,
                "states": self.states, "complete": self.complete,
                "seconds": round(self.seconds, 2)}


class _DFSChooser:
    def __init__(self, prefix: list[int], visited: set[str], frontier: list[list[int]]) -> None:
        self.prefix = prefix
        self.taken: list[int] = []
        self.visited = visited
        self.frontier = frontier
        self.run: Run | None = None

    def choose(self, label: str, options: Sequence[str]) -> int:
        position = len(self.taken)
        if position < len(self.prefix):
            self.taken.append(self.prefix[position])
            return self.prefix[position]
        assert self.run is not None
        state = self.run.fingerprint()
        if state in self.visited:
            raise Prune(state)
        self.visited.add(state)
        for alternative in range(len(options) - 1, 0, -1):
            self.frontier.append([*self.taken, alternative])
        self.taken.append(0)
        return 0


#: makes the store a run uses instead of the scenario's model store (None: the model store)
Backend = Callable[[], Any] | None


def new_run(scenario: Scenario, factory: CommitterFactory, backend: Backend = None) -> Run:
    return Run(scenario, factory, backend=backend() if backend else None)


def run_once(scenario: Scenario, factory: CommitterFactory, choices: Sequence[int],
             backend: Backend = None) -> RunResult:
    """Replay ``choices`` (then option 0 to the end)."""
    return new_run(scenario, factory, backend).run(ScriptedChooser(list(choices)))


def _violations(result: RunResult, props: Sequence[str]) -> dict[str, list[Violation]]:
    found = {}
    for name in props:
        violations = PROPERTIES[name](result)
        if violations:
            found[name] = violations
    return found


def explore(scenario: Scenario, factory: CommitterFactory, props: Sequence[str], *,
            max_runs: int = 20_000, seconds: float | None = None,
            stop_when_all_violated: bool = True, backend: Backend = None,
            progress: Callable[[Exploration], None] | None = None) -> Exploration:
    """Enumerate every schedule of ``scenario`` (with state pruning), checking ``props``."""
    report = Exploration(scenario)
    visited: set[str] = set()
    frontier: list[list[int]] = [[]]
    started = time.monotonic()
    while frontier:
        if report.runs >= max_runs or (seconds is not None
                                       and time.monotonic() - started > seconds):
            break
        prefix = frontier.pop()
        chooser = _DFSChooser(prefix, visited, frontier)
        run = new_run(scenario, factory, backend)
        chooser.run = run
        report.runs += 1
        try:
            result = run.run(chooser)
        except Prune:
            report.pruned += 1
            continue
        for name, violations in _violations(result, props).items():
            if name not in report.violations:
                report.violations[name] = (violations, result, chooser.taken)
        if progress and report.runs % 1000 == 0:
            report.states = len(visited)
            progress(report)
        if stop_when_all_violated and len(report.violations) == len(props):
            break
    report.complete = not frontier
    report.states = len(visited)
    report.seconds = time.monotonic() - started
    return report


def shrink(scenario: Scenario, factory: CommitterFactory, prop: str,
           choices: Sequence[int], *, budget: int = 400,
           backend: Backend = None) -> tuple[list[int], RunResult]:
    """Greedily simplify a violating choice sequence: cut its tail, zero its answers, drop
    answers; keep each change that still violates ``prop``.  Shorter, plainer schedules win."""
    check = PROPERTIES[prop]
    best = list(choices)
    best_result = run_once(scenario, factory, best, backend)
    if not check(best_result):
        return best, best_result
    tries = 0

    def attempt(candidate: list[int]) -> bool:
        nonlocal best, best_result, tries
        tries += 1
        try:
            result = run_once(scenario, factory, candidate, backend)
        except ValueError:  # an answer no longer fits the options: not a valid schedule
            return False
        if check(result) and result.steps <= best_result.steps:
            best, best_result = candidate, result
            return True
        return False

    improved = True
    while improved and tries < budget:
        improved = False
        while best and best[-1] == 0:
            best.pop()
        for i in range(len(best) - 1, -1, -1):
            if tries >= budget:
                break
            if i < len(best) and best[i] != 0 and attempt([*best[:i], 0, *best[i + 1:]]):
                improved = True
            if i < len(best) and attempt(best[:i] + best[i + 1:]):
                improved = True
    return best, best_result


def search(scenario: Scenario, factory: CommitterFactory, props: Sequence[str], *,
           max_examples: int = 200, backend: Backend = None) -> Exploration:
    """Let hypothesis choose (derandomized, so verdicts are reproducible).  Hypothesis' own
    shrinking is switched off: its cost has no bound we control, and :func:`shrink`, with its
    fixed budget, reduces what this finds."""
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import strategies as st

    from zerorename_model.choices import HypothesisChooser

    report = Exploration(scenario, method="hypothesis")
    started = time.monotonic()

    class _Recording(HypothesisChooser):
        def __init__(self, data: Any) -> None:
            super().__init__(data)
            self.taken: list[int] = []

        def choose(self, label: str, options: Sequence[str]) -> int:
            index = super().choose(label, options)
            self.taken.append(index)
            return index

    for name in props:
        report.violations.update(_search_one(scenario, factory, name, max_examples, report,
                                             _Recording, given, settings, st, HealthCheck,
                                             Phase, backend))
    report.seconds = time.monotonic() - started
    return report


def _search_one(scenario: Scenario, factory: CommitterFactory, name: str, max_examples: int,
                report: Exploration, recording: Any, given: Any, settings: Any, st: Any,
                health: Any, phase: Any, backend: Backend = None,
                ) -> dict[str, tuple[list[Violation], RunResult, list[int]]]:
    last: list[tuple[list[Violation], RunResult, list[int]]] = []

    @settings(max_examples=max_examples, derandomize=True, database=None, deadline=None,
              suppress_health_check=list(health),
              phases=[phase.explicit, phase.reuse, phase.generate])
    @given(st.data())
    def probe(data: Any) -> None:
        chooser = recording(data)
        result = new_run(scenario, factory, backend).run(chooser)
        report.runs += 1
        violations = PROPERTIES[name](result)
        if violations:
            last.append((violations, result, chooser.taken))
            raise AssertionError(str(violations[0]))

    try:
        probe()
    except AssertionError:
        return {name: last[-1]}
    return {}
