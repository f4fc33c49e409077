"""run_facts: the fates of a run's attempts and drivers, read from typed incidents."""

from __future__ import annotations

from tests.model.toy_committers import Ideal
from zerorename_model.check.run_facts import run_facts
from zerorename_model.engine.choices import FirstChooser
from zerorename_model.engine.harness import Call, Move, MoveKind, Run
from zerorename_model.engine.harness.events import Fault, Role
from zerorename_model.engine.scenario import Faults, Scenario


def _step_until(run: Run, actor: str, call: Call) -> None:
    """Step ``actor`` (and only it) until it is paused before ``call``."""
    while True:
        pending = run.by_name[actor].pending
        if pending is not None and pending.call is call:
            return
        run.apply(Move(MoveKind.STEP, actor))


def test_a_crash_before_the_report_counts_as_committed_when_moves_are_applied() -> None:
    """The hypothesis state machine applies moves one by one (no choice line in the trace):
    an attempt crashed while paused before reporting its finished task commit had committed,
    and the facts must say so however the run was driven."""
    run = Run(Scenario("ideal", tasks=1, faults=Faults(crash=1)), Ideal)
    _step_until(run, "j0.t0.a0", Call.REPORT_SUCCESS)
    run.apply(Move(MoveKind.CRASH, "j0.t0.a0"))
    result = run.run(FirstChooser())
    facts = run_facts(result)
    assert "j0.t0.a0" in facts.committed
    assert "j0.t0.a0" in facts.failed
    assert Fault(MoveKind.CRASH, "j0.t0.a0", 0, Role.ATTEMPT, True) in result.incidents


def test_restart_give_up_and_throttled_driver_are_typed_per_job() -> None:
    scenario = Scenario("ideal", tasks=1, dests=("s3://bucket/a", "s3://bucket/b"),
                        faults=Faults(restart=1, fail_job=1, throttle=1))
    run = Run(scenario, Ideal)
    run.apply(Move(MoveKind.RESTART, "driver0"))
    for _ in range(30):  # until job 1's driver waits for its tasks
        driver = run.by_name["driver1"]
        if driver.pending is not None and driver.pending.call is Call.AWAIT_TASKS:
            break
        run.apply(run.options()[0])
    run.apply(Move(MoveKind.FAIL_JOB, "driver1"))
    facts = run_facts(run.run(FirstChooser()))
    assert facts.restarted == {0}
    assert facts.gave_up == {1}
    assert facts.failed == frozenset() and facts.throttled_drivers == frozenset()


def test_a_throttled_attempt_is_lost_to_the_fault_and_notes_are_not_read() -> None:
    """Rewording the run's notes changes nothing: the facts come from typed incidents."""
    run = Run(Scenario("ideal", tasks=1, faults=Faults(throttle=1)), Ideal)
    run.apply(Move(MoveKind.THROTTLE, "j0.t0.a0"))
    result = run.run(FirstChooser())
    result.events[:] = [e for e in result.events if type(e).__name__ != "Note"]
    facts = run_facts(result)
    assert facts.failed == {"j0.t0.a0"}
    assert facts.committed == {"j0.t0.a1"}, "its retry committed"
    assert [f.split(":")[0] for f in facts.failures] == ["j0.t0.a0 failed"]
