"""The drivers' rules: what a job driver, a task attempt and a reader do, Spark's
OutputCommitCoordinator (which attempt may commit a task), and Spark's and YARN's reactions to
failures (retry a failed attempt, kill the other attempts of a finished task, fail the job when
a task has used its attempts)."""

from __future__ import annotations

from collections.abc import Callable

from zerorename_model.engine.errors import ActorCrashed, JobAlreadyCommitted, RunAborted
from zerorename_model.engine.harness.control import Scheduling
from zerorename_model.engine.harness.env import Env
from zerorename_model.engine.harness.events import Call, Failure, NoteKind, Role
from zerorename_model.engine.harness.recorder import Recorder
from zerorename_model.engine.harness.state import Actor, JobState, RunState, TaskKilled, hidden
from zerorename_model.engine.scenario import (
    CommittedByAnother,
    Committer,
    JobSpec,
    RecoveringCommitter,
    TaskCommitListener,
    TaskSpec,
    file_data,
)


class DriverRules:
    """The drivers' side of a run, over its shared ``state``: the bodies of the actors (built
    with the committers ``env`` serves), the coordinator's answers and the reactions to
    failure.  It starts and resumes actors through ``scheduling`` and notes what it changes
    with ``recorder``."""

    def __init__(self, state: RunState, recorder: Recorder, scheduling: Scheduling,
                 env: Env) -> None:
        self.state = state
        self.recorder = recorder
        self.scheduling = scheduling
        self.env = env

    # -- bodies ----------------------------------------------------------------------------------

    def spawn_driver(self, index: int, spec: JobSpec) -> None:
        name = f"driver{index}" + (f".{spec.attempt}" if spec.attempt else "")
        self.scheduling.spawn(Actor(name, lambda: self._driver_body(index, spec),
                                    job_index=index))

    def _driver_body(self, index: int, spec: JobSpec) -> None:
        state = self.state
        job = state.jobs[index]
        committer = state.factory(self.env, spec, None, state.options_map)
        job.driver_committer = committer
        recovered: list[int] = []
        supports_recovery: object = getattr(state.factory, "supports_recovery", False)
        recovering = spec.attempt > 0 and bool(supports_recovery)
        if recovering:
            if not isinstance(committer, RecoveringCommitter):
                raise TypeError(f"{type(committer).__name__} has no recover_task although its "
                                "factory says supports_recovery")
            for task_id, (task, msg) in sorted(job.accepted.items()):
                committer.recover_task(task)
                recovered.append(task_id)
                self._on_task_commit(job, msg)  # accepted by this attempt's driver too
        earlier = dict(job.accepted)
        if spec.attempt > 0 and not recovering:
            job.accepted.clear()  # the new attempt's view: the old attempts are lost
        try:
            committer.setup_job()
        except JobAlreadyCommitted:
            # an earlier attempt's commit, finished by this set-up: the tasks it accepted are
            # the job's output, as if that attempt's commit_job had returned
            job.accepted.update(earlier)
            self.recorder.note(f"job {index} was already committed: rolled forward, "
                               "tasks not run again")
            self._committed(index, job, committer)
            return
        tasks = state.scenario.tasks
        for task_id in range(tasks):
            if task_id not in recovered:
                self.launch_attempt(job, task_id)
        self.scheduling.wait(Call.AWAIT_TASKS,
                             lambda: job.failed or len(job.accepted) == tasks)
        if job.failed:
            self._abort(job, committer)
            return
        messages = [msg for _t, (_task, msg) in sorted(job.accepted.items())]
        try:
            committer.commit_job(messages if self._gives_messages() else None)
        except (ActorCrashed, RunAborted):
            raise
        except Exception as error:
            job.error = f"{type(error).__name__}: {error}"
            message = f"commit_job failed: {job.error}"
            self.recorder.note(message)
            driver = state.current.name if state.current is not None else f"driver{index}"
            state.incidents.append(Failure(driver, index, message))
            job.outcome = "commit-failed"
            self._abort(job, committer)
            return
        self._committed(index, job, committer)

    def _gives_messages(self) -> bool:
        """Spark's protocol: the driver hands the job committer the task commit messages (a
        Hadoop job committer, ``takes_messages`` False, gets none under Spark's either)."""
        return (self.state.scenario.driver == "spark"
                and bool(getattr(self.state.factory, "takes_messages", True)))

    def _on_task_commit(self, job: JobState, message: object) -> None:
        """Spark's ``FileCommitProtocol.onTaskCommit``: the driver tells its job committer of
        a task commit message it accepted, if the committer listens.  Local to the driver: no
        step, no store request (checked: the hook records no event)."""
        committer = job.driver_committer
        if not (self._gives_messages() and isinstance(committer, TaskCommitListener)):
            return
        events = len(self.state.events)
        committer.on_task_commit(message)
        if len(self.state.events) != events:
            raise RuntimeError(f"{type(committer).__name__}.on_task_commit took a step: "
                               "the driver's hook must stay local")

    def _committed(self, index: int, job: JobState, committer: Committer) -> None:
        """Record what the job published, then clean up (and let a reader list it)."""
        job.dest_at_commit = self._visible(job.spec.dest)
        job.outcome = "committed"
        self.recorder.note(f"job {index} committed: {sorted(job.dest_at_commit)}")
        committer.cleanup_job()
        self._record_leftovers(job)
        if self.state.scenario.reader:
            self.scheduling.spawn(Actor(f"reader{index}", lambda: self._reader_body(job),
                                        job_index=index, role=Role.READER))

    def _reader_body(self, job: JobState) -> None:
        """A downstream reader: lists the destination as a query engine would."""
        seen: list[str] = []
        token: str | None = None
        while True:
            page = self.env.store.list_page(job.spec.dest + "/", token=token)
            seen += [o.url[len(job.spec.dest) + 1:] for o in page.objects]
            if page.token is None:
                break
            token = page.token
        job.reader_saw = sorted(s for s in seen if not hidden(s))

    def _abort(self, job: JobState, committer: Committer) -> None:
        # A failing job's running attempts are cancelled first; partitioned ones cannot be.
        job.abort_started = True
        self._kill(lambda a: a.task is not None and a.job_index == job.spec.index)
        try:
            committer.abort_job()
            committer.cleanup_job()
        except (ActorCrashed, RunAborted):
            raise
        except Exception as error:
            job.outcome = "abort-failed"
            job.error = f"{type(error).__name__}: {error}"
            return
        if job.outcome == "running" or job.outcome == "commit-failed":
            job.outcome = "aborted"
        self._record_leftovers(job)

    def _record_leftovers(self, job: JobState) -> None:
        dest = job.spec.dest
        store, zombie_urls = self.state.store, self.state.zombie_urls
        job.uploads_after_cleanup = sorted(
            u for u in store.upload_urls()
            if u.startswith(dest + "/") and u not in zombie_urls)
        job.temp_after_cleanup = sorted(
            k for k in store.snapshot()
            if k.startswith(dest + "/") and hidden(k[len(dest) + 1:])
            and k not in zombie_urls
            and not k.endswith("/_SUCCESS"))

    def launch_attempt(self, job: JobState, task_id: int, speculative: bool = False) -> None:
        launched = job.attempts.setdefault(task_id, [])
        task = TaskSpec(job.spec, task_id, len(launched))
        launched.append(task)
        job.live[task.name] = True
        self.state.attempt_dest[task.name] = job.spec.dest
        self.recorder.note(f"launch {task.name}{' (speculative)' if speculative else ''}",
                           NoteKind.LAUNCH, task)
        self.scheduling.spawn(Actor(task.name, lambda: self._task_body(job, task), task=task,
                                    job_index=job.spec.index))

    def _task_body(self, job: JobState, task: TaskSpec) -> None:
        committer = self.state.factory(self.env, task.job, task, self.state.options_map)
        try:
            self._task_work(job, task, committer)
        except TaskKilled:
            # Spark's writer aborts the task attempt when the task is killed
            self.recorder.note(f"{task.name} was killed: abort_task")
            committer.abort_task()

    def _task_work(self, job: JobState, task: TaskSpec, committer: Committer) -> None:
        committer.setup_task()
        sync = self.scheduling.sync
        written = self.state.written.setdefault(task.name, {})
        for pattern in self.state.scenario.files:
            rel = pattern.format(task=task.task_id, job=task.job.index)  # {job}: which job
            data = file_data(task.job, task, rel)
            committer.write(rel, data)
            written[rel] = data
        if not committer.needs_task_commit():
            sync(Call.REPORT_NOTHING.value, lambda: self._accept(job, task, None))
            return
        if not sync(Call.CAN_COMMIT.value, lambda: self._can_commit(job, task)):
            committer.abort_task()
            self._commit_denied(job, task)
            return
        message = committer.commit_task()
        sync(Call.REPORT_SUCCESS.value, lambda: self._accept(job, task, message))

    # -- Spark's coordinator and the reactions to failure ----------------------------------------

    def _can_commit(self, job: JobState, task: TaskSpec) -> bool:
        """Spark's OutputCommitCoordinator: the first live attempt to ask wins; a failed holder
        releases the task; nothing commits once the task has succeeded."""
        if not job.live.get(task.name) or task.task_id in job.accepted:
            return False
        holder = job.holder.get(task.task_id)
        if holder is None or not job.live.get(holder):
            job.holder[task.task_id] = task.name
            return True
        return bool(holder == task.name)

    def _accept(self, job: JobState, task: TaskSpec, message: object) -> bool:
        if not job.live.get(task.name) or task.task_id in job.accepted or job.failed:
            return False
        committed = task
        if isinstance(message, CommittedByAnother):  # the winner's output is the task's
            committed = self._attempt_named(job, task.task_id, message.attempt_id)
            message = message.message
        job.accepted[task.task_id] = (committed, message)
        self._on_task_commit(job, message)
        job.live[task.name] = False  # finished
        # Spark kills the other attempts of a task once one succeeds (not a partitioned one:
        # the driver cannot reach it).
        self._kill(lambda a: a.task is not None and a.task.job == task.job
                   and a.task.task_id == task.task_id and a.task != task)
        return True

    @staticmethod
    def _attempt_named(job: JobState, task_id: int, attempt_id: str) -> TaskSpec:
        """The launched attempt (of any job attempt) whose Hadoop attempt ID is ``attempt_id``."""
        for launched in job.attempts.get(task_id, []):
            if launched.attempt_id == attempt_id:
                return launched
        raise ValueError(f"task {task_id} has no attempt {attempt_id}")

    def _kill(self, which: Callable[[Actor], bool]) -> None:
        current = self.state.current
        for actor in list(self.state.actors):
            if (which(actor) and actor.owner is None  # a kill reaches a worker's owner
                    and not actor.done and not actor.crashed and not actor.killed
                    and not actor.partitioned and actor is not current):
                self.recorder.note(f"kill {actor.name}")
                actor.killed = True
                if actor.waiting is None:
                    self.scheduling.resume(actor, "kill")

    def attempt_failed(self, actor: Actor) -> None:
        task = actor.task
        if task is None:
            return
        job = self.state.jobs[actor.job_index]
        if job.spec.attempt != task.job.attempt or not job.live.get(task.name):
            return
        self.state.effects += 1  # the driver's view changes (shared state: see Recorder.note)
        job.live[task.name] = False
        if job.holder.get(task.task_id) == task.name:
            del job.holder[task.task_id]
        self._pending_again(job, task.task_id)

    def _commit_denied(self, job: JobState, task: TaskSpec) -> None:
        """Spark: an attempt denied its commit ends with TaskCommitDenied, which does not count
        as a task failure, and its task is pending again unless another attempt runs (the
        holder of the commit may have died meanwhile: then nothing else would run it, and the
        driver would wait for the task for ever)."""
        if job.spec.attempt != task.job.attempt or not job.live.get(task.name):
            return
        self.state.effects += 1  # the driver's view changes (shared state: see Recorder.note)
        job.denied.add(task.name)
        self._pending_again(job, task.task_id)

    def _pending_again(self, job: JobState, task_id: int) -> None:
        """An attempt of ``task_id`` ended without committing it: relaunch the task unless it
        is done or still running, or fail the job once its attempts (those not merely denied
        their commit) are used up."""
        if task_id in job.accepted or job.failed:
            return
        if any(job.live.get(t.name) and t.name not in job.denied
               for t in job.attempts[task_id]):
            return
        counted = [t for t in job.attempts[task_id] if t.name not in job.denied]
        if len(counted) < self.state.scenario.max_attempts:
            self.launch_attempt(job, task_id)
        else:
            self.recorder.note(f"task {task_id} exhausted its attempts: the job fails")
            job.failed = True

    def on_actor_error(self, actor: Actor, error: Exception) -> None:
        if actor.task is not None:
            self.attempt_failed(actor)
        else:
            job = self.state.jobs[actor.job_index]
            job.outcome = "driver-failed"
            job.error = f"{type(error).__name__}: {error}"

    def _visible(self, dest: str) -> dict[str, bytes]:
        """The destination as a reader sees it: the truth, minus hidden (_ or .) names."""
        prefix = dest + "/"
        return {k[len(prefix):]: v for k, v in self.state.store.snapshot().items()
                if k.startswith(prefix) and not hidden(k[len(prefix):])}
