"""The production ``fenced`` (the reference package, run through the bridge) in the model's
``+foreign`` scopes (``zerorename_model.experiments.foreign_object``): another writer's object
at the key the first task's first file goes to, there before the job starts.

Its job commit checks its keys before the commit point (docs/research/
fenced-complete-condition.md, "Recommendation"), so it keeps that object (``foreign-kept``)
and every other property of the scope; the earlier rule (an unconditional complete) replaced
it in the first run.  ``crash-hadoop+foreign`` is enumerated (321 runs, 3 s on 2 cores);
``abort-hadoop+foreign`` is not within a unit test's budget (over 3,000 runs), so it is
explored for its first 400 runs, where the old rule already broke ``foreign-kept``.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest

from zerorename_bridge.adapters import ReferenceFactory
from zerorename_model.engine.harness import Run
from zerorename_model.experiments.foreign_object import (
    Decided,
    ForeignScope,
    decide,
    foreign_scopes,
)


@pytest.fixture(autouse=True)
def _quiet() -> Iterator[None]:
    """The committers log every failed stage at WARNING: thousands of lines per scope."""
    logger = logging.getLogger("zerorename")
    level = logger.level
    logger.setLevel(logging.ERROR)
    yield
    logger.setLevel(level)


def explore_reference(scope: ForeignScope, max_runs: int) -> Decided:
    """The scope's own properties and the family's checks on every run of the production
    ``fenced``, through ``foreign_object.decide`` (the loop that decides the model's)."""
    def make() -> Run:
        return Run(scope.make("fenced", "s3"), ReferenceFactory("fenced"))

    return decide("fenced", scope, max_runs=max_runs, new=make)


def scope_named(name: str) -> ForeignScope:
    return next(s for s in foreign_scopes() if s.name == name)


def test_the_reference_fenced_keeps_every_property_with_another_writers_object() -> None:
    decided = explore_reference(scope_named("crash-hadoop+foreign"), max_runs=2_000)
    found = decided.violated
    assert decided.complete, decided.runs  # enumerated
    assert "foreign-kept" in found and "abortability" not in found
    assert found == dict.fromkeys(found), found


def test_the_reference_fenced_keeps_the_object_and_abortability() -> None:
    decided = explore_reference(scope_named("abort-hadoop+foreign"), max_runs=400)
    found = decided.violated
    assert decided.runs == 400
    assert set(found) == {"abortability", "foreign-kept", "incomplete-reported",
                          "invisibility"}
    assert found == dict.fromkeys(found), found
