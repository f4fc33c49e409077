"""Schedules sampled rather than enumerated, and violating schedules made short.

:func:`search` lets hypothesis choose the harness's answers (derandomized), for scopes too big
for :func:`~zerorename_model.check.explore.explore` to finish; :func:`shrink` greedily reduces a
violating choice sequence, from either, to a short and plain one for its trace.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from zerorename_model.check.explore import Backend, Exploration, new_run, run_once
from zerorename_model.check.properties import PROPERTIES, Violation
from zerorename_model.engine.choices import HypothesisChooser, RecordingChooser
from zerorename_model.engine.harness import RunResult
from zerorename_model.engine.scenario import CommitterFactory, Scenario


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
    report = Exploration(scenario, method="hypothesis")
    started = time.monotonic()
    for name in props:
        found = _search_one(scenario, factory, name, max_examples, report, backend)
        if found is not None:
            report.violations[name] = found
    report.seconds = time.monotonic() - started
    return report


def _search_one(scenario: Scenario, factory: CommitterFactory, name: str, max_examples: int,
                report: Exploration, backend: Backend = None,
                ) -> tuple[list[Violation], RunResult, list[int]] | None:
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import strategies as st


    last: list[tuple[list[Violation], RunResult, list[int]]] = []

    @settings(max_examples=max_examples, derandomize=True, database=None, deadline=None,
              suppress_health_check=list(HealthCheck),
              phases=[Phase.explicit, Phase.reuse, Phase.generate])
    @given(st.data())
    def probe(data: st.DataObject) -> None:
        chooser = RecordingChooser(HypothesisChooser(data))
        result = new_run(scenario, factory, backend).run(chooser)
        report.runs += 1
        violations = PROPERTIES[name](result)
        if violations:
            last.append((violations, result, chooser.taken))
            raise AssertionError(str(violations[0]))

    try:
        probe()
    except AssertionError:
        return last[-1]
    return None
