"""A liveness-only search may end a run once the job has committed, and that loses nothing.

``properties.DECIDED_EARLY`` names, for a property, a predicate over a run in progress that is
true only when the property holds on every continuation.  :func:`explore` then ends such a run
at once (``early=True``, the default) instead of enumerating what the still-running attempts
and the store's settles do after the commit.  These tests compare the search with and without
it on complete scopes: the same verdict, never more states, and fewer where attempts outlive
the commit.  The HADOOP-17258 variant, whose liveness is violated, is still caught; a careless
predicate (one that ends a run once its faults are used up) loses that violation, and the same
comparison catches it.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

import pytest

from zerorename_model.check import properties
from zerorename_model.check.explore import Exploration, explore
from zerorename_model.engine.harness import Run
from zerorename_model.engine.scenario import Faults, Scenario
from zerorename_model.experiments.bugs import BUGS
from zerorename_model.systems.protocols import get

HADOOP_17258 = next(b for b in BUGS if b.report == "HADOOP-17258")

CASES: list[tuple[str, Scenario]] = [
    ("v2-partition", Scenario("v2", store="s3-2018", tasks=1, driver="hadoop", max_attempts=2,
                              faults=Faults(partition=1))),
    ("magic-duplicate", Scenario("magic", store="s3", tasks=2, driver="spark", max_attempts=2,
                                 faults=Faults(speculate=1))),
    ("manifest-restart", Scenario("manifest", store="s3-2018", tasks=1, driver="hadoop",
                                  max_attempts=2, faults=Faults(restart=1))),
    ("HADOOP-17258", replace(HADOOP_17258.scenario, committer=HADOOP_17258.variant)),
]


def _both(scenario: Scenario) -> tuple[Exploration, Exploration]:
    factory = get(scenario.committer)
    full = explore(scenario, factory, ["liveness"], max_runs=50_000, early=False,
                   stop_when_all_violated=False)
    early = explore(scenario, factory, ["liveness"], max_runs=50_000,
                    stop_when_all_violated=False)
    assert full.complete and early.complete, "the comparison needs complete scopes"
    return full, early


@pytest.mark.parametrize(("name", "scenario"), CASES, ids=[c[0] for c in CASES])
def test_ending_runs_at_a_final_commit_keeps_the_verdict(name: str, scenario: Scenario) -> None:
    full, early = _both(scenario)
    assert sorted(early.violations) == sorted(full.violations)
    assert early.states <= full.states
    assert full.decided_early == 0
    if name == "v2-partition":  # the partitioned attempt outlives the commit: runs end early
        assert early.decided_early > 0 and early.states < full.states
    if name == "HADOOP-17258":
        assert "liveness" in early.violations


@pytest.fixture
def careless_liveness() -> Iterator[None]:
    """Liveness judged decided once the faults are used up ("the rest runs fault-free, so the
    job commits"): exactly what HADOOP-17258 disproves."""
    saved = properties.DECIDED_EARLY["liveness"]
    properties.DECIDED_EARLY["liveness"] = lambda run: not any(run.budget.values())
    try:
        yield
    finally:
        properties.DECIDED_EARLY["liveness"] = saved


def test_a_careless_early_verdict_loses_a_violation_and_is_caught(
        careless_liveness: None) -> None:
    _name, scenario = CASES[-1]
    full, early = _both(scenario)
    assert "liveness" in full.violations
    assert sorted(early.violations) != sorted(full.violations)


def test_the_liveness_predicate_reads_only_what_the_fingerprint_covers() -> None:
    """Job outcomes and whether each actor is done are part of ``Recorder.fingerprint``, so a
    state the search prunes as seen is decided early exactly when its first visit was."""
    run = Run(CASES[0][1], get("v2"))
    assert not properties.liveness_decided(run)
    run.run()
    assert run.jobs[0].outcome == "committed"
    assert properties.liveness_decided(run)
