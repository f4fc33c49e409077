"""Table V's probes: for each attribute, a small scenario, a quantifier and the observations
that decide it (see :mod:`zerorename_model.experiments.tablev`).  Observations read typed state
only: which attempt was told it may commit, what an actor is paused before, which moves are faults,
and files matched to their writers by their bytes (``scenario.file_data`` names the writer)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TypedDict, Unpack

from zerorename_model.engine.harness import (
    Actor,
    Call,
    JobState,
    Move,
    MoveKind,
    Note,
    NoteKind,
    Op,
    Run,
    RunResult,
    hidden,
)
from zerorename_model.engine.scenario import (
    Committer,
    CommitterEnv,
    CommitterFactory,
    Faults,
    JobSpec,
    Scenario,
    TaskSpec,
)
from zerorename_model.engine.stores.records import Obj
from zerorename_model.engine.stores.store import ModelStore

TWO_FILES = ("part-{task:05d}-0", "part-{task:05d}-1")  # atomicity needs something to split

#: a scenario option naming the wrapper a probe put around the committer, so that a trace's
#: header says what ran and :func:`zerorename_model.experiments.tablev.replay` can run it again
#: (committers ignore the option)
WRAP_OPTION = "zerorename.tablev.wrap"

Watch = Callable[[Run, Move | None], str | None]
Check = Callable[[RunResult], str | None]
Allow = Callable[[Run, Move], bool]


class AlwaysAsk:
    """Wraps a factory so every attempt asks to commit, and a loser is told to abort: the
    harness can only abort attempts that ask (Direct never does)."""

    def __init__(self, factory: CommitterFactory) -> None:
        self.factory = factory
        # getattr: a factory written outside the model (a test's plain class) may not say
        self.supports_recovery: bool = getattr(factory, "supports_recovery", False)

    def __call__(self, env: CommitterEnv, job: JobSpec, task: TaskSpec | None,
                 options: dict[str, str]) -> Committer:
        committer = self.factory(env, job, task, options)
        if task is not None:
            # an instance attribute over the method: the committer stays the object it is
            # (its class, so the harness's protocol checks, are unchanged)
            setattr(committer, "needs_task_commit", lambda: True)  # noqa: B010
        return committer


WRAPPERS: dict[str, Callable[[CommitterFactory], CommitterFactory]] = {"always-ask": AlwaysAsk}


def wrapped(scenario: Scenario, factory: CommitterFactory) -> CommitterFactory:
    """``factory`` inside the wrapper the scenario's options name, if any."""
    wrap = dict(scenario.options).get(WRAP_OPTION)
    return WRAPPERS[wrap](factory) if wrap else factory


@dataclass
class Probe:
    """A scenario, a quantifier and the hooks that observe it (see the module docstring)."""

    scenario: Callable[[str], Scenario]
    quantifier: str  # "forall" or "exists"
    looks_for: str  # what a found schedule means, for the cell's detail
    watch: Watch | None = None
    check: Check | None = None
    allow: Allow | None = None




# -- observations --------------------------------------------------------------------------------

def _visible(objects: Mapping[str, bytes | Obj], dest: str) -> dict[str, bytes]:
    """The destination as a reader lists it (``objects``: url -> bytes or stored object)."""
    prefix = dest + "/"
    return {k[len(prefix):]: v.data if isinstance(v, Obj) else v for k, v in objects.items()
            if k.startswith(prefix) and not hidden(k[len(prefix):])}


def _stored(run: Run) -> dict[str, Obj]:
    """The run's stored objects, truth only (url -> object): Table V runs on model stores."""
    store = run.store
    if not isinstance(store, ModelStore):
        raise TypeError(f"Table V's probes read a model store's objects, not {store.name}'s")
    return store.objects


def _writers(written: dict[str, dict[str, bytes]]) -> dict[bytes, str]:
    """bytes -> the attempt that wrote them (each file's bytes name its writer)."""
    return {data: name for name, files in written.items() for data in files.values()}


def _accepted(job: JobState) -> set[str]:
    return {task.name for task, _message in job.accepted.values()}


def _told(actor: Actor, call: Call, answer: object) -> bool:
    """Whether ``actor`` made ``call`` and was answered ``answer``."""
    return any(s.call is call and s.result == answer for s in actor.history)


def _reported(actor: Actor) -> bool:
    """Whether ``actor`` reported to its driver (with or without a task commit)."""
    return any(s.call is not None and s.call.reports for s in actor.history)


def _in_task_commit(actor: Actor) -> bool:
    return _told(actor, Call.CAN_COMMIT, True) and not _reported(actor)


def _in_job_commit(run: Run, actor: Actor) -> bool:
    job = run.jobs[actor.job_index]
    awaiting = actor.pending is not None and actor.pending.call is Call.AWAIT_TASKS
    return (actor.task is None and job.outcome == "running" and not awaiting
            and len(job.accepted) == run.scenario.tasks)


def _visible_share(run: Run, attempts: set[str]) -> tuple[int, int, list[str]]:
    """How many of the files written by ``attempts`` are visible, of how many, and which."""
    dest = run.scenario.dests[0]
    shown = set(_visible({k: o.data for k, o in _stored(run).items()}, dest).values())
    files = [(rel, data) for name in sorted(attempts)
             for rel, data in sorted(run.written.get(name, {}).items())]
    seen = [rel for rel, data in files if data in shown]
    return len(seen), len(files), seen


def _output_problem(result: RunResult) -> str | None:
    """Completeness and exclusivity of every committed job, at commit and at the end."""
    writers = _writers(result.written)
    for job in result.jobs:
        if job.outcome != "committed" or job.dest_at_commit is None:
            continue
        accepted = _accepted(job)
        expected = {data: (name, rel) for name in accepted
                    for rel, data in result.written.get(name, {}).items()}
        kept = result.preexisting.get(job.spec.dest, {})
        for when, view in (("at job commit", job.dest_at_commit),
                           ("at the end", _visible(result.final, job.spec.dest))):
            shown = set(view.values())
            for data, (name, rel) in sorted(expected.items(), key=lambda e: e[1]):
                if data not in shown:
                    return f"{rel} of committed attempt {name} missing {when}"
            for rel, data in sorted(view.items()):
                if data not in expected and kept.get(rel) != data:
                    who = writers.get(data, "an unknown writer")
                    return f"{rel} written by uncommitted attempt {who} visible {when}"
    return None


def _committed_problem(result: RunResult) -> str | None:
    job = result.jobs[0]
    if job.outcome != "committed":
        return f"the job did not commit (outcome {job.outcome}: {job.error or 'no error'})"
    return _output_problem(result)


def _rerun(result: RunResult) -> str | None:
    """A task accepted before a driver restart that the next job attempt ran again."""
    done: set[int] = set()
    restarted = False
    for event in result.events:
        if (isinstance(event, Op) and event.task is not None and event.said.call is not None
                and event.said.call.reports and event.said.result is True):
            done.add(event.task.task_id)
        elif isinstance(event, Note) and event.kind is NoteKind.RESTART:
            restarted = True
        elif (isinstance(event, Note) and restarted and event.kind is NoteKind.LAUNCH
              and event.task is not None and event.task.task_id in done):
            return f"task t{event.task.task_id} was committed before the restart and ran again"
    return None


# -- the probes ----------------------------------------------------------------------------------

class FaultBudgets(TypedDict, total=False):
    """The :class:`Faults` budgets a probe may give its scenario."""

    crash: int
    partition: int
    speculate: int
    throttle: int
    restart: int
    fail_job: int


def _scenario(tasks: int = 1, files: tuple[str, ...] = ("part-{task:05d}",),
              wrap: str | None = None, **faults: Unpack[FaultBudgets]) -> Callable[[str], Scenario]:
    """A probe's scenario for a committer: one s3 job under Spark's protocol, no settling of
    lagging writes, ``faults`` (the :class:`Faults` budgets, by name) to spend."""
    options = ((WRAP_OPTION, wrap),) if wrap else ()

    def make(committer: str) -> Scenario:
        return Scenario(committer, store="s3", tasks=tasks, files=files, max_attempts=2,
                        driver="spark", faults=Faults(settle=False, **faults), options=options)
    return make


def _recovery_check(result: RunResult) -> str | None:
    return _rerun(result) or _committed_problem(result)


def _aborted_attempt_visible(run: Run, _move: Move | None) -> str | None:
    for actor in run.actors:
        if actor.task is not None and actor.done and _told(actor, Call.CAN_COMMIT, False):
            seen, _total, rels = _visible_share(run, {actor.name})
            if seen:
                return f"{actor.name} was told to abort, and its {rels[0]} is still visible"
    return None


def _aborted_job_visible(run: Run, _move: Move | None) -> str | None:
    for job in run.jobs:
        if job.outcome == "abort-failed":
            return f"abort failed: {job.error}"
        if job.outcome == "aborted":
            attempts = {t.name for launched in job.attempts.values() for t in launched}
            seen, _total, rels = _visible_share(run, attempts)
            if seen:
                return f"after abort_job and cleanup_job, {rels[0]} of the job is visible"
    return None


def _uncommitted_visible(run: Run, _move: Move | None) -> str | None:
    for actor in run.actors:
        if actor.task is None or _told(actor, Call.CAN_COMMIT, True) or _reported(actor):
            continue
        seen, _total, rels = _visible_share(run, {actor.name})
        if seen:
            return f"{rels[0]} of {actor.name} is visible before its task commit"
    return None


def _committed_visible(run: Run, _move: Move | None) -> str | None:
    for driver in run.actors:
        awaiting = (driver.pending is not None and driver.pending.call is Call.AWAIT_TASKS) or (
            bool(driver.history) and driver.history[-1].call is Call.AWAIT_TASKS)  # woke, no
        # commit operation done yet
        if driver.task is not None or not awaiting:
            continue
        job = run.jobs[driver.job_index]
        seen, _total, rels = _visible_share(run, _accepted(job))
        if seen:
            return (f"{rels[0]} of a committed task is visible before the job commit "
                    "has started")
    return None


def _crash_in_task_commit(run: Run, move: Move) -> bool:
    return move.kind is MoveKind.CRASH and _in_task_commit(run.actor(move))


def _partial_task_commit(run: Run, move: Move | None) -> str | None:
    if move is None or not _crash_in_task_commit(run, move):
        return None
    seen, total, rels = _visible_share(run, {move.actor})
    if 0 < seen < total:
        return (f"{move.actor} crashed in commit_task with {seen} of its {total} files "
                f"visible ({', '.join(rels)})")
    return None


def _restart_in_job_commit(run: Run, move: Move) -> bool:
    return move.kind is MoveKind.RESTART and _in_job_commit(run, run.actor(move))


def _partial_job_commit(run: Run, move: Move | None) -> str | None:
    if move is None or not _restart_in_job_commit(run, move):
        return None
    seen, total, rels = _visible_share(run, _accepted(run.jobs[run.actor(move).job_index]))
    if 0 < seen < total:
        return (f"the driver crashed in commit_job with {seen} of {total} committed files "
                f"visible ({', '.join(rels)})")
    return None


def _changed_after_commit(run: Run, _move: Move | None) -> str | None:
    objects = {k: o.data for k, o in _stored(run).items()}
    for job in run.jobs:
        if job.outcome != "committed" or job.dest_at_commit is None:
            continue
        now = _visible(objects, job.spec.dest)
        for rel in sorted(set(now) | set(job.dest_at_commit)):
            if now.get(rel) != job.dest_at_commit.get(rel):
                who = _writers(run.written).get(now.get(rel, b""), "a delete")
                return f"{rel} changed by {who} after the job committed"
    return None


PROBES: dict[str, Probe] = {
    "speculative_tasks": Probe(
        _scenario(speculate=1), "forall",
        "with a speculative duplicate, the output is not complete and exclusive",
        check=_committed_problem),
    "recoverable_job": Probe(
        _scenario(restart=1), "forall",
        "after a driver restart, committed tasks rerun or the output is wrong",
        check=_recovery_check),
    "abortable_task": Probe(
        _scenario(speculate=1, wrap="always-ask"), "forall",
        "an attempt told to abort leaves output visible", watch=_aborted_attempt_visible),
    "abortable_job": Probe(
        _scenario(fail_job=1), "forall",
        "output of an aborted job is visible after abort_job and cleanup_job",
        watch=_aborted_job_visible),
    "uncommitted_task_output_observable": Probe(
        _scenario(), "exists", "output of an attempt is visible before its task commit",
        watch=_uncommitted_visible),
    "committed_task_output_observable": Probe(
        _scenario(), "exists",
        "output of a committed task is visible before the job commit starts",
        watch=_committed_visible),
    "atomic_task_commit": Probe(
        _scenario(files=TWO_FILES, crash=1), "forall",
        "a crash in commit_task leaves part of the attempt's output visible, or spoils the "
        "job's output", watch=_partial_task_commit, check=_output_problem,
        allow=_crash_in_task_commit),
    "atomic_job_commit": Probe(
        _scenario(files=TWO_FILES, restart=1), "forall",
        "a driver crash in commit_job leaves part of the output visible",
        watch=_partial_job_commit, allow=_restart_in_job_commit),
    "partitioned_executor_resilience": Probe(
        _scenario(partition=1), "forall",
        "a partitioned attempt changes the output after the job committed, or spoils it",
        watch=_changed_after_commit, check=_output_problem),
}
