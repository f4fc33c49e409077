"""The fault moves the harness offers: only those a driver could make."""

from __future__ import annotations

from tests.model.toy_committers import Ideal
from zerorename_model.engine.choices import FirstChooser
from zerorename_model.engine.harness import Call, Move, MoveKind, Run
from zerorename_model.engine.scenario import Faults, Scenario


def test_no_speculative_launch_for_a_job_that_has_failed() -> None:
    """Spark marks a failed job's task sets as zombies and launches nothing more for them, so
    once the driver gives up no SPECULATE move may be offered for that job (a launched attempt
    would write after the job's cleanup)."""
    run = Run(Scenario("ideal", tasks=2, faults=Faults(speculate=1, fail_job=1)), Ideal)
    run.apply(Move(MoveKind.STEP, "j0.t0.a0"))  # an attempt is running and considered alive
    assert any(m.kind is MoveKind.SPECULATE for m in run.options())
    run.apply(next(m for m in run.options() if m.kind is MoveKind.FAIL_JOB))
    assert run.jobs[0].failed
    offered = run.options()
    assert any(run.jobs[0].live.values()), "an attempt is still alive while the job aborts"
    assert not [m for m in offered if m.kind is MoveKind.SPECULATE]


def _step_until(run: Run, actor: str, call: Call) -> None:
    """Step ``actor`` alone until it is paused before ``call``."""
    while not (run.by_name[actor].pending is not None
               and run.by_name[actor].pending.call is call):  # type: ignore[union-attr]
        run.apply(Move(MoveKind.STEP, actor))


def test_a_task_whose_attempt_was_denied_commit_is_relaunched_when_the_holder_dies() -> None:
    """Spark: an attempt denied its commit fails (TaskCommitDenied, not counted as a task
    failure) and the task is pending again.  Here the holder of the commit crashes after the
    speculative attempt was denied: the task must run again, not leave the driver waiting for
    an attempt that no longer exists."""
    run = Run(Scenario("ideal", tasks=1, faults=Faults(speculate=1, crash=1)), Ideal)
    run.apply(next(m for m in run.options() if m.kind is MoveKind.SPECULATE))
    _step_until(run, "j0.t0.a0", Call.CAN_COMMIT)
    run.apply(Move(MoveKind.STEP, "j0.t0.a0"))  # a0 holds the commit
    _step_until(run, "j0.t0.a1", Call.CAN_COMMIT)
    while not run.by_name["j0.t0.a1"].done:  # denied: it aborts and ends
        run.apply(Move(MoveKind.STEP, "j0.t0.a1"))
    run.apply(Move(MoveKind.CRASH, "j0.t0.a0"))
    result = run.run(FirstChooser())
    assert result.jobs[0].outcome == "committed"
    assert "j0.t0.a2" in run.by_name
