"""What a finished run did to its attempts and drivers, as the liveness and valid-outcome
checkers need it: which attempts injected faults ended, which drivers were restarted or told
to give up, and which attempts finished their task commit.

The harness records these as typed incidents while it runs (``RunResult.incidents``:
:class:`~zerorename_model.engine.harness.events.Fault` for every crash, partition, throttle, restart
and ``fail_job`` it applies, with the move's kind, the actor it struck, that actor's role and
job; :class:`~zerorename_model.engine.harness.events.Reported` when an attempt reports its finished
task commit; :class:`~zerorename_model.engine.harness.events.Failure` when the protocol raises).
This module folds them into :class:`RunFacts`, so the checkers stay pure functions of typed values
and nothing is recovered by parsing a trace's text.  An attempt crashed while paused before its
report had committed (``Fault.before_report``), whether the run was driven by a chooser or move
by move (``Run.apply``, as the hypothesis state machine does).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from zerorename_model.engine.harness import JobState, MoveKind, RunResult
from zerorename_model.engine.harness.events import Failure, Fault, Reported, Role


@dataclass(frozen=True)
class RunFacts:
    """``failed``: attempts an injected fault ended (crash, partition, a throttled request);
    ``restarted``/``gave_up``/``throttled_drivers``: job indices; ``committed``: attempts whose
    ``commit_task`` returned; ``failures``: the harness's notes of attempts that failed."""

    failed: frozenset[str] = frozenset()
    restarted: frozenset[int] = frozenset()
    gave_up: frozenset[int] = frozenset()
    throttled_drivers: frozenset[int] = frozenset()
    committed: frozenset[str] = frozenset()
    failures: tuple[str, ...] = field(default=())

    def bounded(self, index: int, job: JobState, max_attempts: int) -> bool:
        """Whether job ``index``'s faults were bounded: no ``fail_job``, no throttled driver
        request, and every task lost fewer attempts to injected faults than ``max_attempts``.
        After a driver restart, every attempt an earlier job attempt launched and the driver
        did not accept counts as lost (the restart kills the running ones; which were running
        is not recorded, so this errs towards excusing the job)."""
        if index in self.gave_up or index in self.throttled_drivers:
            return False
        accepted = {task.name for task, _message in job.accepted.values()}
        for launched in job.attempts.values():
            lost = {t.name for t in launched if t.name in self.failed}
            if index in self.restarted:
                lost |= {t.name for t in launched
                         if t.job.attempt < job.spec.attempt and t.name not in accepted}
            if len(lost) >= max_attempts:
                return False
        return True


def run_facts(result: RunResult) -> RunFacts:
    """Fold the run's typed incidents into :class:`RunFacts` (see the module's docstring)."""
    failed: set[str] = set()
    restarted: set[int] = set()
    gave_up: set[int] = set()
    throttled: set[int] = set()
    committed: set[str] = set()
    failures: list[str] = []
    for incident in result.incidents:
        if isinstance(incident, Reported):
            committed.add(incident.actor)
        elif isinstance(incident, Failure):
            failures.append(incident.message)
        elif isinstance(incident, Fault):
            _fold_fault(incident, failed, restarted, gave_up, throttled, committed)
    return RunFacts(frozenset(failed), frozenset(restarted), frozenset(gave_up),
                    frozenset(throttled), frozenset(committed), tuple(failures))


def _fold_fault(fault: Fault, failed: set[str], restarted: set[int], gave_up: set[int],
                throttled: set[int], committed: set[str]) -> None:
    kind = fault.kind
    if kind is MoveKind.RESTART:
        restarted.add(fault.job)
    elif kind is MoveKind.FAIL_JOB:
        gave_up.add(fault.job)
    elif fault.role is Role.DRIVER:
        if kind is MoveKind.THROTTLE:
            throttled.add(fault.job)
    elif fault.role is Role.ATTEMPT:  # crash, partition, throttle: the attempt is lost to it
        failed.add(fault.actor)
        if fault.before_report:
            committed.add(fault.actor)
