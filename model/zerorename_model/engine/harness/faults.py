"""Fault moves: which are possible in a state, and what each does.  Each use of a fault spends
one unit of its budget in the scenario's :class:`~zerorename_model.engine.scenario.Faults`."""

from __future__ import annotations

from zerorename_model.engine.harness.control import Scheduling
from zerorename_model.engine.harness.driver import DriverRules
from zerorename_model.engine.harness.events import (
    STORE_OPS,
    Call,
    Channel,
    Fault,
    Move,
    MoveKind,
    NoteKind,
    PendingOp,
    Role,
)
from zerorename_model.engine.harness.recorder import Recorder
from zerorename_model.engine.harness.state import Actor, RunState
from zerorename_model.engine.scenario import JobSpec
from zerorename_model.engine.stores.records import Visibility

_STORE_OPS = frozenset(STORE_OPS)
#: the fault moves the run's incidents record (the others strike no actor's fate)
_RECORDED = frozenset({MoveKind.CRASH, MoveKind.PARTITION, MoveKind.THROTTLE,
                       MoveKind.RESTART, MoveKind.FAIL_JOB})


#: where a denied operation kind is kept: in the budgets, which every digest and fingerprint
#: of a run's state holds already (a kind denied is a fault spent for good)
_DENIED = "denied:"


def deny(budget: dict[str, int], op: str) -> None:
    """From now on every destination request ``op`` answers 403 AccessDenied."""
    budget[_DENIED + op] = 1


def denied(budget: dict[str, int], op: str) -> bool:
    return bool(budget.get(_DENIED + op))


def _touches(op: PendingOp, event: Visibility) -> bool:
    """Whether store operation ``op`` can tell whether ``event`` has taken effect: a listing
    of a prefix of its key sees the LIST index (list-add, list-del); a GET or HEAD of the key
    sees the stale-read cache (read); an operation writing or deleting the key decides by
    both whether its own change lags (and a copy reads its source)."""
    url = event.url
    if op.op == "list_multipart_uploads":  # uploads are never lagging
        return False
    if op.op == "list_page":
        return event.kind != "read" and url.startswith(str(op.args[0]))
    if op.op == "rename":  # a rename may move a whole directory
        return any(url.startswith(prefix) for prefix in op.urls())
    if op.op in ("get", "head"):
        return event.kind == "read" and url in op.urls()
    return url in op.urls()


class FaultMoves:
    """The faults of a run, over its shared ``state``: which are possible (:meth:`options`)
    and what each does (:meth:`apply`).  A fault is a move of the environment, so what it
    does goes through the drivers' rules (``driver``: an attempt failed, another launched,
    the job restarted) and the scheduler (``scheduling``: an actor crashed or told of a
    failed request), and is noted with ``recorder``."""

    def __init__(self, state: RunState, recorder: Recorder, driver: DriverRules,
                 scheduling: Scheduling) -> None:
        self.state = state
        self.recorder = recorder
        self.driver = driver
        self.scheduling = scheduling

    def options(self, runnable: list[Actor]) -> list[Move]:
        """The fault moves possible now, after the steps of ``runnable`` (in a fixed order:
        saved traces name options by index)."""
        state = self.state
        b = state.budget
        faults = state.scenario.faults
        moves: list[Move] = []
        if not (faults.settle and state.store.pending) and not any(
                n for k, n in b.items() if not k.startswith(_DENIED)):
            return moves  # no fault left to use, nothing to settle
        at_op = [a for a in runnable if a.waiting is None and not a.crashed]
        tasks_at_op = [a for a in at_op if a.task is not None]
        at_store = [a for a in at_op
                    if a.pending is not None and a.pending.destination_op in _STORE_OPS]
        if b["throttle"]:
            moves += [Move(MoveKind.THROTTLE, a.name) for a in at_store]
        # (a request's answer, not a step inside one: never at a SUBSTEP)
        requests = [a for a in at_store if a.pending is not None
                    and a.pending.channel is Channel.STORE]
        if b.get("lost_answer"):
            moves += [Move(MoveKind.LOST_ANSWER, a.name) for a in requests]
        if b.get("conflict"):
            moves += [Move(MoveKind.CONFLICT, a.name) for a in requests if a.conditional]
        if b.get("deny"):
            moves += [Move(MoveKind.DENY, a.name) for a in requests
                      if a.pending is not None and not denied(state.budget, a.pending.op)]
        # A crash or partition strikes a process: a task attempt with its pool workers, named
        # by the attempt, possible while it or any of its workers is at an operation.
        processes = list(dict.fromkeys(a.process for a in tasks_at_op))
        if b["crash"]:
            moves += [Move(MoveKind.CRASH, p.name) for p in processes if not p.partitioned]
        if b["partition"]:
            moves += [Move(MoveKind.PARTITION, p.name) for p in processes if not p.partitioned]
        if b["restart"]:
            moves += [Move(MoveKind.RESTART, a.name) for a in state.actors  # also while waiting
                      if a.role is Role.DRIVER and a.owner is None and not a.done
                      and not a.crashed]
        if b["speculate"]:
            # Spark marks a failed job's task sets as zombies and launches nothing more for
            # them: an attempt launched then would write after the job's cleanup.
            for job in state.jobs:
                if job.failed:
                    continue
                for task_id, launched in sorted(job.attempts.items()):
                    if (task_id not in job.accepted
                            and len(launched) < state.scenario.max_attempts
                            and any(job.live.get(t.name) for t in launched)):
                        moves.append(Move(MoveKind.SPECULATE, job=job.spec.index,
                                          task=task_id))
        if b["fail_job"]:
            moves += [Move(MoveKind.FAIL_JOB, a.name) for a in state.actors  # awaiting tasks
                      if a.task is None and a.waiting is not None and not a.done
                      and a.pending is not None and a.pending.call is Call.AWAIT_TASKS]
        if faults.settle and not faults.settle_eagerly and state.store.pending:
            moves += self._settle_options(at_op)
        return moves

    def _settle_options(self, at_op: list[Actor]) -> list[Move]:
        """The pending visibility events an operation about to run can tell apart.

        A lagging write's visibility of key ``k`` is read only by an operation on ``k`` (a GET,
        HEAD or copy from it sees the stale object; a PUT, copy to it or delete of it decides
        by it whether the new version lags too) or by a listing whose prefix covers ``k``.  So a
        settle taken at any other moment reaches the same states as the same settle taken
        later, just before the first operation on ``k`` (the moves in between touch other keys
        and commute with it): offering each event only while such an operation is pending
        loses no behaviour, and a state no longer multiplies by every subset of settled events
        that nothing has looked at yet (``tests/model/test_settle_offers.py``)."""
        pending = self.state.store.pending
        if self.state.scenario.faults.settle_anytime:
            return [Move(MoveKind.SETTLE, settle=i) for i in range(len(pending))]
        ops = [a.pending for a in at_op
               if a.pending is not None and a.pending.destination_op is not None]
        return [Move(MoveKind.SETTLE, settle=i) for i, event in enumerate(pending)
                if any(_touches(op, event) for op in ops)]

    def apply(self, move: Move) -> None:
        """Apply a fault move (every kind but STEP), spending its budget."""
        state, driver, note = self.state, self.driver, self.recorder.note
        kind = move.kind
        if kind.value in state.budget:
            state.budget[kind.value] -= 1
        if kind in _RECORDED:
            self._record_fault(move)
        if kind is MoveKind.DENY:
            actor = state.by_name[move.actor]
            assert actor.pending is not None
            deny(state.budget, actor.pending.op)
            note(f"deny {actor.pending.op}: every such request answers 403 AccessDenied")
        if kind in (MoveKind.THROTTLE, MoveKind.LOST_ANSWER, MoveKind.CONFLICT, MoveKind.DENY):
            # the operation fails (throttle, conflict) or loses its answer: the actor is told
            # so at once, and its code decides what next (a retry loop repeats it)
            self.scheduling.resume(state.by_name[move.actor], kind.value)
        elif kind is MoveKind.CRASH:
            actor = state.by_name[move.actor]
            note(f"crash {actor.name}", NoteKind.CRASH, actor.task)
            actor.crashed = True
            driver.attempt_failed(actor)
            self.scheduling.crash_process(actor)
        elif kind is MoveKind.PARTITION:
            actor = state.by_name[move.actor]
            note(f"partition {actor.name} (the driver thinks it failed; it keeps running)")
            for member in [actor, *state.workers_of(actor)]:
                member.partitioned = True
            driver.attempt_failed(actor)
        elif kind is MoveKind.RESTART:
            self._restart(state.by_name[move.actor])
        elif kind is MoveKind.SPECULATE:
            driver.launch_attempt(state.jobs[move.job], move.task, speculative=True)
        elif kind is MoveKind.FAIL_JOB:
            actor = state.by_name[move.actor]
            note(f"driver of job {actor.job_index} gives up: abort the job")
            state.jobs[actor.job_index].failed = True  # its wait ends: it wakes and aborts
        elif kind is MoveKind.SETTLE:
            event = state.store.settle(move.settle)
            note(f"visible: {event}")
        else:
            raise ValueError(f"not a fault move: {move}")

    def _record_fault(self, move: Move) -> None:
        """Record the fault typed, for the checkers (:mod:`zerorename_model.check.run_facts`)."""
        struck = self.state.by_name[move.actor]
        actor = struck.process  # a worker's fault is its owner's process's
        assert actor.role is not None
        pending = actor.pending
        before_report = (move.kind is MoveKind.CRASH and pending is not None
                         and pending.call is not None and pending.call.reports)
        self.state.incidents.append(Fault(move.kind, actor.name, actor.job_index, actor.role,
                                    before_report))

    def _restart(self, driver: Actor) -> None:
        """YARN restarts the job: the driver crashes, the old attempt's containers are killed,
        and the next job attempt starts with the history the old one left."""
        state, crash_process = self.state, self.scheduling.crash_process
        self.recorder.note(f"crash driver {driver.name}; restart the job", NoteKind.RESTART)
        crash_process(driver)
        job = state.jobs[driver.job_index]
        for other in list(state.actors):  # YARN kills the old attempt's containers
            if (other.task is not None and other.owner is None
                    and other.job_index == driver.job_index
                    and not other.done and not other.partitioned):
                crash_process(other)
        job.spec = JobSpec(job.spec.dest, job.spec.job_id, job.spec.attempt + 1,
                           job.spec.index)
        for name in list(job.live):
            job.live[name] = False  # the new attempt's view: old attempts are lost
        job.holder.clear()
        self.driver.spawn_driver(driver.job_index, job.spec)
