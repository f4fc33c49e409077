"""A finished attempt or driver is fingerprinted by what the checkers read of it, not by its
history, and that loses no verdict.

``Recorder.fingerprint`` with ``forget_finished`` (what :func:`explore` sets) drops the
history of an actor that is done: it takes no further step and no other actor reads it.  What
the property checkers read of it instead (what it wrote, its incidents, the accepted task
commit messages, whether the store answered inconsistently, ...) is fingerprinted by
``Recorder._outcome_record``.  Pruning is sound only if two runs with equal fingerprints get
equal verdicts; these tests check exactly that on every end state of complete scopes, show
that a fingerprint without the outcome record breaks it, and compare the searches both ways.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

import pytest

from zerorename_model.check.explore import Exploration, Reduction, Stats, explore, new_run, runs
from zerorename_model.check.properties import PROPERTIES, check_all
from zerorename_model.engine.harness.recorder import Recorder
from zerorename_model.engine.scenario import Faults, Scenario
from zerorename_model.experiments.bugs import BUGS
from zerorename_model.systems.protocols import get

HADOOP_17258 = next(b for b in BUGS if b.report == "HADOOP-17258")


def _one_task(committer: str, store: str, driver: str, faults: Faults) -> Scenario:
    return Scenario(committer, store=store, tasks=1, driver=driver, max_attempts=2,
                    faults=faults)


CASES: dict[str, Scenario] = {
    "v2-crash": _one_task("v2", "s3-2018", "hadoop", Faults(crash=1)),
    "magic-partition": _one_task("magic", "s3-2018", "hadoop", Faults(partition=1)),
    "manifest-abort-crash": _one_task("manifest", "s3-2018", "hadoop",
                                      Faults(crash=1, fail_job=1)),
    "directory-restart": _one_task("directory", "s3-2018", "spark", Faults(restart=1)),
    "HADOOP-17258": replace(HADOOP_17258.scenario, committer=HADOOP_17258.variant),
}


def _verdicts_by_fingerprint(scenario: Scenario) -> dict[bytes, set[frozenset[str]]]:
    """Every end state of the scope (the search with full histories), keyed by the
    fingerprint that forgets finished actors: the sets of violated properties seen there."""
    seen: dict[bytes, set[frozenset[str]]] = {}
    stats = Stats()
    for done in runs(lambda: new_run(scenario, get(scenario.committer)), stats,
                     reduction=Reduction.FAULTS, max_runs=20_000):
        assert done.run is not None
        done.run.forget_finished = done.run.counts_inconsistency = True
        violated = frozenset(name for name, found in check_all(done.result).items() if found)
        seen.setdefault(done.run.fingerprint(), set()).add(violated)
    assert stats.complete, "the check needs every end state"
    return seen


@pytest.mark.parametrize("name", list(CASES))
def test_equal_fingerprints_mean_equal_verdicts(name: str) -> None:
    seen = _verdicts_by_fingerprint(CASES[name])
    assert all(len(verdicts) == 1 for verdicts in seen.values())


@pytest.fixture
def careless_fingerprint() -> Iterator[None]:
    """Finished actors forgotten, and nothing fingerprinted in their place."""
    saved = Recorder._outcome_record
    Recorder._outcome_record = lambda self: ()  # type: ignore[method-assign]
    try:
        yield
    finally:
        Recorder._outcome_record = saved  # type: ignore[method-assign]


@pytest.mark.parametrize("name", ["v2-crash", "manifest-abort-crash"])
def test_without_the_outcome_record_states_the_checkers_tell_apart_merge(
        name: str, careless_fingerprint: None) -> None:
    seen = _verdicts_by_fingerprint(CASES[name])
    assert any(len(verdicts) > 1 for verdicts in seen.values())


def _both(scenario: Scenario, props: list[str]) -> tuple[Exploration, Exploration]:
    factory = get(scenario.committer)
    kept = explore(scenario, factory, props, max_runs=50_000, stop_when_all_violated=False,
                   forget_finished=False)
    forgot = explore(scenario, factory, props, max_runs=50_000, stop_when_all_violated=False)
    assert kept.complete and forgot.complete
    return kept, forgot


@pytest.mark.parametrize("name", list(CASES))
def test_forgetting_keeps_every_verdict(name: str) -> None:
    """Every property at once.  The state counts are not compared here: when consistency is
    checked, whether the store has answered inconsistently is fingerprinted too, which the
    search with full histories did not do (its histories did not always pin it down), so
    that search may merge states this one keeps apart."""
    kept, forgot = _both(CASES[name], list(PROPERTIES))
    assert sorted(forgot.violations) == sorted(kept.violations)


@pytest.mark.parametrize("name", ["v2-crash", "manifest-abort-crash", "HADOOP-17258"])
def test_a_liveness_search_visits_fewer_states(name: str) -> None:
    """What the second pass runs for the cells left open: liveness alone."""
    kept, forgot = _both(CASES[name], ["liveness"])
    assert sorted(forgot.violations) == sorted(kept.violations)
    assert forgot.states < kept.states


def test_only_the_explorer_forgets() -> None:
    """Table V's observers and the race probe read histories at every state: a run made
    outside :func:`explore` keeps them in its fingerprint."""
    run = new_run(CASES["v2-crash"], get("v2"))
    assert not run.forget_finished and not run.counts_inconsistency
