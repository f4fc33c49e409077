"""Each property checker catches a committer known to break it, and passes a correct one."""

from __future__ import annotations

from typing import Any

import pytest

from tests.model.toy_committers import (
    DropsLastTask,
    EagerTaskCommit,
    FailsRetries,
    Ideal,
    ListsTemporary,
    MixesAttempts,
    NoAbort,
    PrefixCleanup,
    PublishesAtWrite,
    Spins,
)
from zerorename_model.check.explore import explore
from zerorename_model.check.properties import PROPERTIES, liveness, valid_outcome
from zerorename_model.engine.choices import SteeredChooser
from zerorename_model.engine.harness import Run
from zerorename_model.engine.scenario import Faults, Scenario
from zerorename_model.systems.protocols import get

TWO_DESTS = ("s3://bucket/out/dataset1", "s3://bucket/out/dataset10")
TWO_FILES = ("a-{task}", "b-{task}")

CASES = [
    ("completeness", DropsLastTask, Scenario("drops", tasks=2)),
    ("exclusivity", EagerTaskCommit, Scenario("eager", tasks=1, faults=Faults(partition=1))),
    ("valid-outcome", MixesAttempts,
     Scenario("mix", tasks=1, files=TWO_FILES, faults=Faults(partition=1))),
    ("valid-outcome", PublishesAtWrite, Scenario("pub", tasks=1, faults=Faults(speculate=1))),
    ("consistency", ListsTemporary, Scenario("lists", store="s3-2018", tasks=2)),
    ("concurrency", PrefixCleanup, Scenario("prefix", tasks=1, dests=TWO_DESTS)),
    ("abortability", NoAbort, Scenario("noabort", tasks=1, faults=Faults(fail_job=1))),
    ("continuity", EagerTaskCommit, Scenario("eager", tasks=1, faults=Faults(partition=1))),
    ("liveness", FailsRetries, Scenario("retries", tasks=2, faults=Faults(crash=1))),
]
IDS = [f"{prop}-{broken.__name__}" for prop, broken, _s in CASES]


@pytest.mark.parametrize(("prop", "broken", "scenario"), CASES, ids=IDS)
def test_checker_catches_a_committer_broken_that_way(prop: str, broken: Any,
                                                     scenario: Scenario) -> None:
    report = explore(scenario, broken, [prop])
    assert prop in report.violations, f"{prop} checker missed {broken.__name__}"


@pytest.mark.parametrize(("prop", "broken", "scenario"), CASES, ids=IDS)
def test_checker_passes_the_correct_committer_on_the_same_scope(prop: str, broken: Any,
                                                                scenario: Scenario) -> None:
    report = explore(scenario.with_(store="s3"), Ideal, [prop])
    assert report.complete and prop not in report.violations


def test_every_property_has_a_case() -> None:
    assert {prop for prop, _b, _s in CASES} == set(PROPERTIES)


# -- strict exclusivity and valid outcome ---------------------------------------------------------

def _first(scenario: Scenario, factory: Any, prop: str) -> str:
    report = explore(scenario, factory, [prop])
    assert prop in report.violations
    return str(report.violations[prop][0][0])


def test_valid_outcome_names_a_mix_and_an_attempt_that_never_committed() -> None:
    mix = Scenario("mix", tasks=1, files=TWO_FILES, faults=Faults(partition=1))
    assert "a mix of attempts j0.t0.a0, j0.t0.a1" in _first(mix, MixesAttempts, "valid-outcome")
    pub = Scenario("pub", tasks=1, faults=Faults(speculate=1))
    assert "an attempt that never committed" in _first(pub, PublishesAtWrite, "valid-outcome")


def test_a_late_task_commit_of_one_whole_attempt_breaks_strict_exclusivity_only() -> None:
    """The Section VIII.C shape: a partitioned attempt commits its task after its retry was
    accepted and replaces the output with its own, complete output.  Strict exclusivity (only
    accepted attempts) is broken; valid outcome (one committed attempt, whole) is not."""
    scenario = Scenario("eager", tasks=1, faults=Faults(partition=1))
    report = explore(scenario, EagerTaskCommit, ["exclusivity", "valid-outcome"],
                     stop_when_all_violated=False)
    assert report.complete
    assert "exclusivity" in report.violations and "valid-outcome" not in report.violations


# -- liveness: only failures the faults do not explain --------------------------------------------

def test_liveness_catches_hadoop_17258_and_holds_for_the_fixed_magic() -> None:
    scenario = Scenario("magic", tasks=1, driver="hadoop", faults=Faults(crash=1))
    broken = explore(scenario, get("magic+HADOOP-17258"), ["liveness"], max_runs=5_000)
    assert "liveness" in broken.violations
    assert "pendingset already exists" in str(broken.violations["liveness"][0][0])
    fixed = explore(scenario, get("magic"), ["liveness"], max_runs=5_000)
    assert fixed.complete and not fixed.violations


def _aborted(scenario: Scenario, once: tuple[str, ...]) -> Any:
    steer = SteeredChooser(once)
    result = Run(scenario, Ideal).run(steer)
    assert not steer.unmet and result.jobs[0].outcome == "aborted"
    return result


def test_a_job_failed_on_purpose_or_out_of_attempts_is_not_a_liveness_violation() -> None:
    """fail_job, and crashes that use up every attempt of a task, end the job legitimately;
    the same runs with one crash fewer than the attempts allowed commit."""
    given_up = _aborted(Scenario("ideal", tasks=1, faults=Faults(fail_job=1)), (r"^fail_job",))
    assert liveness(given_up) == []
    exhausted = _aborted(Scenario("ideal", tasks=1, max_attempts=2, faults=Faults(crash=2)),
                         (r"^crash j0\.t0\.a0", r"^crash j0\.t0\.a1"))
    assert liveness(exhausted) == []
    report = explore(Scenario("ideal", tasks=1, max_attempts=2, faults=Faults(crash=1)),
                     FailsRetries, ["liveness"])
    assert "liveness" in report.violations  # one crash fewer: the retry must commit


def test_a_run_cut_at_the_step_limit_is_undecided_not_a_violation() -> None:
    run = Run(Scenario("spins", tasks=1), Spins)
    result = run.run()
    assert result.jobs[0].outcome == "lost" and result.steps >= run.max_steps
    assert liveness(result) == [] and valid_outcome(result) == []


def test_a_driver_left_waiting_by_the_harness_is_undecided_not_a_violation() -> None:
    """A speculative attempt denied its commit ends without reporting; if the task's other
    attempt then crashes, the harness's driver does not relaunch the task and waits for ever
    (the run ends with the job ``lost``).  That is the driver's gap, not the committer's: the
    correct committer keeps liveness in the whole scope."""
    scenario = Scenario("ideal", tasks=1, max_attempts=3, faults=Faults(speculate=1, crash=1))
    report = explore(scenario, Ideal, ["liveness", "completeness"])
    assert report.complete and not report.violations


def test_a_conflict_mode_that_refuses_a_destination_with_data_is_not_a_liveness_violation(
        ) -> None:
    """The directory committer told to fail on existing data does fail: as configured."""
    scenario = Scenario("directory", tasks=1, preexisting=(("old/x", "old"),),
                        options=(("fs.s3a.committer.staging.conflict-mode", "fail"),))
    result = Run(scenario, get("directory")).run()
    assert result.jobs[0].outcome != "committed"
    assert liveness(result) == []
    assert liveness(Run(scenario.with_(preexisting=()), get("directory")).run()) == []
