"""The fault moves the harness offers: only those a driver could make."""

from __future__ import annotations

from tests.model.toy_committers import Ideal
from zerorename_model.harness import Move, MoveKind, Run
from zerorename_model.scenario import Faults, Scenario


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
