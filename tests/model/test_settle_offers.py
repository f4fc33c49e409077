"""Settles are offered only where an operation can tell them apart, and that loses nothing.

A lagging store (``s3-2018``) may make a pending visibility event take effect at any moment.
The harness offers a settle only while an operation that reads or writes the event's key, or
lists a prefix of it, is about to run (``FaultMoves._settle_options``).  These tests compare
that offering with the store's whole freedom (``Faults(settle_anytime=True)``: every pending
event before every move) on small complete scopes: the same final states (digests, which
include what every read returned) and the same violated properties.  A careless offering that
ignores listings is caught by the same comparison.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from tests.model.test_explore import Case
from tests.model.test_explore import _everything as everything
from tests.model.toy_committers import ListsTemporary
from zerorename_model.check.explore import Reduction, Stats
from zerorename_model.engine.harness import faults as fault_moves
from zerorename_model.engine.scenario import Faults, Scenario
from zerorename_model.systems.protocols import get

CASES: list[tuple[str, Scenario, Any]] = [
    ("lists", Scenario("lists", store="s3-2018", tasks=2, driver="hadoop"), ListsTemporary),
    ("magic", Scenario("magic", store="s3-2018", tasks=1, driver="hadoop"), get("magic")),
    ("magic-crash", Scenario("magic", store="s3-2018", tasks=1, driver="hadoop",
                             faults=Faults(crash=1)), get("magic")),
    ("v1", Scenario("v1", store="s3-2018", tasks=1, driver="hadoop"), get("v1")),
    ("v2-crash", Scenario("v2", store="s3-2018", tasks=1, faults=Faults(crash=1)), get("v2")),
    ("manifest-crash", Scenario("manifest", store="s3-2018", tasks=1, driver="hadoop",
                                faults=Faults(crash=1)), get("manifest")),
    ("directory-reader", Scenario("directory", store="s3-2018", tasks=1, driver="hadoop",
                                  reader=True), get("directory")),
]


def _everything(scenario: Scenario, factory: Any) -> tuple[set[str], set[str], Stats]:
    """Every final digest and every violated property of a complete search (the sleep-set
    tests' helper, on a scenario of this file)."""
    return everything(Case("settle", scenario, factory), Reduction.FAULTS)


def _anytime(scenario: Scenario) -> Scenario:
    return replace(scenario, faults=replace(scenario.faults, settle_anytime=True))


@pytest.mark.parametrize("name,scenario,factory", CASES, ids=[c[0] for c in CASES])
def test_offering_settles_where_they_can_be_told_apart_loses_nothing(
        name: str, scenario: Scenario, factory: Any) -> None:
    digests, violated, offered = _everything(scenario, factory)
    every_digest, every_violated, anytime = _everything(_anytime(scenario), factory)
    assert digests == every_digest, name
    assert violated == every_violated, name
    assert offered.states <= anytime.states, name


def test_the_comparison_catches_an_offering_that_ignores_listings(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A job commit that lists the store must be able to see a lagging index either way: an
    offering that forgets listings loses end states, and the comparison says so."""
    _name, scenario, factory = CASES[0]
    every_digest, _violated, _stats = _everything(_anytime(scenario), factory)
    monkeypatch.setattr(fault_moves, "_touches",
                        lambda op, event: not op.is_prefix and event.url in op.urls())
    careless, _violated, _stats = _everything(scenario, factory)
    assert careless < every_digest


def test_settles_wait_for_an_operation_on_their_key() -> None:
    """The reduction is real: on a lagging store the default offering reaches fewer states
    than the store's whole freedom."""
    _name, scenario, factory = CASES[1]
    _digests, _violated, offered = _everything(scenario, factory)
    _digests, _violated, anytime = _everything(_anytime(scenario), factory)
    assert offered.states < anytime.states
