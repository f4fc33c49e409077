"""The exploration engine: the sleep-set reduction loses nothing the plain search finds.

Soundness first: on small scopes (correct and broken toy committers, model committers and their
bug variants, consistent and lagging stores, every kind of fault), the reduced search must reach
exactly the same final states (the digests of the runs' end states) and find exactly the same
violated properties as the unreduced one, while running fewer runs overall.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from tests.model.toy_committers import EagerTaskCommit, Ideal, ListsTemporary, PrefixCleanup
from zerorename_model.check.explore import (
    Footprint,
    Reduction,
    Stats,
    explore,
    independent,
    new_run,
    runs,
)
from zerorename_model.check.properties import PROPERTIES, applicable
from zerorename_model.engine.scenario import Faults, Scenario
from zerorename_model.systems.protocols import get

ADJACENT = ("s3://bucket/out/dataset1", "s3://bucket/out/dataset10")


@dataclass(frozen=True)
class Case:
    name: str
    scenario: Scenario
    factory: Any


def _case(name: str, committer: str, factory: Any = None, **kw: Any) -> Case:
    return Case(name, Scenario(committer, **kw), factory or get(committer))


CASES = [
    _case("ideal-crash", "ideal", Ideal, tasks=2, faults=Faults(crash=1)),
    _case("eager-partition", "eager", EagerTaskCommit, tasks=2, faults=Faults(partition=1)),
    _case("lists-s3-2018", "lists", ListsTemporary, store="s3-2018", tasks=2, driver="hadoop"),
    _case("prefix-two-jobs", "prefix", PrefixCleanup, tasks=1, dests=ADJACENT,
          faults=Faults(crash=1)),
    _case("magic-crash", "magic", tasks=2, driver="hadoop", faults=Faults(crash=1)),
    _case("magic-s3-2018", "magic", store="s3-2018", tasks=1, driver="hadoop"),
    _case("v1-s3-2018", "v1", store="s3-2018", tasks=1, driver="hadoop"),
    _case("magic-s3-2018-crash", "magic", store="s3-2018", tasks=1, driver="hadoop",
          faults=Faults(crash=1)),
    _case("magic+prefix-cleanup", "magic+prefix-cleanup", tasks=1, dests=ADJACENT),
    _case("v2-partition", "v2", store="hdfs", tasks=1, faults=Faults(partition=1)),
    _case("direct-fail-job", "direct", tasks=2, faults=Faults(fail_job=1)),
    _case("direct-speculate", "direct", tasks=1, faults=Faults(speculate=1)),
    _case("directory-restart", "directory", tasks=1, driver="hadoop", faults=Faults(restart=1)),
    _case("v1-throttle-crash", "v1", store="hdfs", tasks=1, faults=Faults(crash=1, throttle=1)),
    _case("fenced-partition", "fenced", tasks=2, faults=Faults(partition=1)),
]


def _everything(case: Case, reduction: Reduction) -> tuple[set[str], set[str], Stats]:
    """Every final digest and every violated property of a complete search."""
    props = [p for p in PROPERTIES if applicable(p, case.scenario.store)]
    stats = Stats()
    digests: set[str] = set()
    violated: set[str] = set()
    for done in runs(lambda: new_run(case.scenario, case.factory), stats,
                     reduction=reduction, max_runs=60_000):
        digests.add(done.result.digest)
        violated |= {p for p in props if PROPERTIES[p](done.result)}
    assert stats.complete, f"{case.name}: the scope is too big for this test"
    return digests, violated, stats


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_sleep_sets_find_the_same_end_states_and_violations(case: Case) -> None:
    plain_digests, plain_violated, plain = _everything(case, Reduction.NONE)
    for reduction in (Reduction.SLEEP, Reduction.FAULTS):
        reduced_digests, reduced_violated, reduced = _everything(case, reduction)
        assert reduced_violated == plain_violated, reduction
        assert reduced_digests == plain_digests, reduction
        assert reduced.runs <= plain.runs, reduction


def test_the_reduction_cuts_runs_on_a_scope_with_independent_steps() -> None:
    """Not vacuous: two magic task attempts upload to different keys, and the reduced search
    needs less than half the runs (the states stay the same: sleep sets cut moves)."""
    scenario = Scenario("magic", tasks=2, driver="hadoop", faults=Faults(crash=1))
    plain = explore(scenario, get("magic"), ["completeness"], reduction="none")
    reduced = explore(scenario, get("magic"), ["completeness"], reduction="sleep")
    assert plain.complete and reduced.complete
    assert reduced.states == plain.states
    assert reduced.runs * 2 < plain.runs, (reduced.runs, plain.runs)


def _fp(actor: str, keys: tuple[str, ...] = (), prefixes: tuple[str, ...] = (),
        space: str = "d") -> Footprint:
    return Footprint(actor, frozenset((space, k) for k in keys),
                     frozenset((space, p) for p in prefixes))


def test_independence() -> None:
    a = _fp("a", ("s3://b/x",))
    assert independent(a, _fp("b", ("s3://b/y",)))
    assert not independent(a, _fp("b", ("s3://b/x",))), "same key"
    assert not independent(a, _fp("a", ("s3://b/y",))), "same actor"
    assert not independent(a, None) and not independent(None, a), "shared state"
    assert not independent(a, _fp("b", prefixes=("s3://b/",))), "a listing covers the key"
    assert independent(a, _fp("b", prefixes=("s3://b/y",)))
    assert independent(_fp("a", prefixes=("s3://b/",)), _fp("b", prefixes=("s3://b/",)))
    assert independent(a, _fp("b", ("s3://b/x",), space="c")), "another store"


def test_the_comparison_catches_an_unsound_independence(monkeypatch: pytest.MonkeyPatch) -> None:
    """The soundness test above can fail: if steps touching the same key were taken as
    independent, the reduced search would miss end states the plain one reaches (here: which
    of two attempts writing the same file directly to the destination writes last)."""
    import zerorename_model.check.explore as engine

    def careless(a: Footprint | None, b: Footprint | None) -> bool:
        return a is not None and b is not None and a.actor != b.actor

    case = next(c for c in CASES if c.name == "direct-speculate")
    plain_digests, _violated, _stats = _everything(case, Reduction.NONE)
    monkeypatch.setattr(engine, "independent", careless)
    careless_digests, _violated, _stats = _everything(case, Reduction.SLEEP)
    assert careless_digests < plain_digests


@pytest.mark.parametrize("case", [c for c in CASES if c.name in (
    "magic-s3-2018-crash", "direct-speculate", "directory-restart", "v1-throttle-crash",
    "v1-s3-2018")], ids=lambda c: c.name)
def test_replaying_the_moves_taken_reaches_what_the_choices_reach(case: Case) -> None:
    """The engine replays a prefix with the moves its first run took, without computing the
    options again: every run it yields must be the run its choices make from scratch."""
    from zerorename_model.check.explore import run_once

    stats = Stats()
    checked = 0
    for done in runs(lambda: new_run(case.scenario, case.factory), stats,
                     reduction=Reduction.FAULTS, max_runs=300):
        again = run_once(case.scenario, case.factory, done.choices)
        assert again.digest == done.result.digest, done.choices
        assert [e for e in again.trace if e["t"] == "choice"] == [
            e for e in done.result.trace if e["t"] == "choice"], done.choices
        checked += 1
    assert checked >= 5
