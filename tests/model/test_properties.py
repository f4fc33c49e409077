"""Each property checker catches a committer known to break it, and passes a correct one."""

from __future__ import annotations

import pytest

from tests.model.toy_committers import (
    DropsLastTask,
    EagerTaskCommit,
    Ideal,
    ListsTemporary,
    NoAbort,
    PrefixCleanup,
)
from zerorename_model.explore import explore
from zerorename_model.scenario import Faults, Scenario

TWO_DESTS = ("s3://bucket/out/dataset1", "s3://bucket/out/dataset10")

CASES = [
    ("completeness", DropsLastTask, Scenario("drops", tasks=2)),
    ("exclusivity", EagerTaskCommit, Scenario("eager", tasks=1, faults=Faults(partition=1))),
    ("consistency", ListsTemporary, Scenario("lists", store="s3-2018", tasks=2)),
    ("concurrency", PrefixCleanup, Scenario("prefix", tasks=1, dests=TWO_DESTS)),
    ("abortability", NoAbort, Scenario("noabort", tasks=1, faults=Faults(fail_job=1))),
    ("continuity", EagerTaskCommit, Scenario("eager", tasks=1, faults=Faults(partition=1))),
]


@pytest.mark.parametrize(("prop", "broken", "scenario"), CASES, ids=[c[0] for c in CASES])
def test_checker_catches_a_committer_broken_that_way(prop, broken, scenario) -> None:
    report = explore(scenario, broken, [prop])
    assert prop in report.violations, f"{prop} checker missed {broken.__name__}"


@pytest.mark.parametrize(("prop", "broken", "scenario"), CASES, ids=[c[0] for c in CASES])
def test_checker_passes_the_correct_committer_on_the_same_scope(prop, broken, scenario) -> None:
    report = explore(scenario.with_(store="s3"), Ideal, [prop])
    assert report.complete and prop not in report.violations
