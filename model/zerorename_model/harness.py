"""The simulation harness: actors, a scheduler, faults, and the record of a run.

Every actor (a job driver per job attempt, every task attempt) runs ordinary, blocking protocol
code on its own greenlet.  The store it is given is a :class:`SteppedStore`: before each
operation the actor pauses and the scheduler decides what happens next, so a run is a sequence
of *steps*, one store operation each, and every interleaving and crash point is reachable.
Because actors are plain code paused at the store boundary, the same harness drives model
protocols and reference committers (whose thread pools must run inline, ``threads=1``).

At each step the scheduler asks its :class:`~zerorename_model.choices.Chooser` one question:
which of the currently possible moves happens (step an actor; crash, partition or throttle one;
launch a speculative attempt; restart the driver; make a lagging write visible).  Option 0 is
always "step the first runnable actor", so shrinking leads to plain, fault-free schedules.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from greenlet import greenlet

from zerorename_model.choices import Chooser, FirstChooser
from zerorename_model.errors import ActorCrashed, ModelStoreError, RunAborted
from zerorename_model.scenario import (
    CommittedByAnother,
    CommitterFactory,
    JobSpec,
    Scenario,
    TaskSpec,
    file_data,
)
from zerorename_model.stores import ModelStore

STORE_OPS = (
    "put", "get", "head", "list_page", "delete", "delete_many", "copy", "rename",
    "create_multipart", "upload_part", "complete_multipart", "abort_multipart",
    "list_multipart_uploads",
)

READ_OPS = ("get", "head", "list_page", "copy", "rename")


class TaskKilled(BaseException):
    """Raised in a task attempt the driver cancels (another attempt won, or the job failed);
    like Spark's TaskKilledException, the attempt then runs abort_task."""


class Prune(Exception):
    """Raised by an exploring chooser to abandon a run whose state was already explored."""


@dataclass
class Actor:
    name: str
    body: Callable[[], Any]
    task: TaskSpec | None = None
    job_index: int = 0
    glet: greenlet | None = None
    waiting: Callable[[], bool] | None = None  # paused in wait(): runnable when this is true
    pending: str = ""  # description of the operation it is paused before
    done: bool = False
    crashed: bool = False
    partitioned: bool = False
    killed: bool = False  # cancelled by the driver: it aborts itself, then ends
    throttle_next: bool = False
    history: list[str] = field(default_factory=list)

    def runnable(self) -> bool:
        return not self.done and (self.waiting is None or self.waiting())


@dataclass
class JobState:
    """The driver's knowledge of one job (survives driver restarts, like the YARN history)."""

    spec: JobSpec
    attempts: dict[int, list[TaskSpec]] = field(default_factory=dict)  # task -> launched
    live: dict[str, bool] = field(default_factory=dict)  # attempt name -> considered alive
    holder: dict[int, str] = field(default_factory=dict)  # task -> attempt allowed to commit
    accepted: dict[int, tuple[TaskSpec, Any]] = field(default_factory=dict)
    failed: bool = False
    outcome: str = "running"  # running, committed, aborted, commit-failed, abort-failed, lost
    error: str = ""
    dest_at_commit: dict[str, bytes] | None = None
    uploads_after_cleanup: list[str] | None = None
    temp_after_cleanup: list[str] | None = None
    reader_saw: list[str] | None = None
    abort_started: bool = False  # what a reader listed after the commit


@dataclass
class RunResult:
    """What a finished run leaves for the property checkers (pure functions of this record)."""

    scenario: Scenario
    jobs: list[JobState]
    written: dict[str, dict[str, bytes]]  # attempt name -> relpath -> bytes (per job dest)
    attempt_dest: dict[str, str]  # attempt name -> its job's destination
    preexisting: dict[str, dict[str, bytes]]  # dest -> relpath -> bytes
    final: dict[str, bytes]  # every object in the destination store at the end, settled
    final_uploads: list[str]
    inconsistent_answers: int
    steps: int
    trace: list[dict[str, Any]]
    digest: str


class Env:
    """What a committer may use: the destination store, the consistent cluster filesystem
    (staging committers propagate pendingsets through it) and a per-actor local disk."""

    def __init__(self, run: Run) -> None:
        self._run = run
        self.store = SteppedStore(run, run.store)
        self.cluster = SteppedStore(run, run.cluster)
        self.profile = run.store.profile

    def local(self) -> ModelStore:
        """The calling actor's local disk: private, so its operations are not steps."""
        actor = self._run.current
        key = actor.task.name if actor and actor.task else "driver"
        return self._run.locals.setdefault(key, ModelStore("hdfs"))

    def step(self, what: str, action: Callable[[], Any]) -> Any:
        """One harness step that is not a store operation (a service call such as a lakeFS
        merge): the actor pauses, then ``action`` runs atomically.  Outside an actor it just
        runs."""
        if self._run.current is None:
            return action()
        return self._run.sync(what, action)

    @property
    def actor_name(self) -> str:
        return self._run.current.name if self._run.current else "harness"


class SteppedStore:
    """A store whose every operation is one harness step (pause, then perform and record)."""

    def __init__(self, run: Run, inner: ModelStore) -> None:
        self._run = run
        self._inner = inner
        self.name = inner.name

    def capabilities(self) -> Any:
        return self._inner.capabilities()

    def request_counts(self) -> dict[str, int]:
        return self._inner.request_counts()

    @property
    def unstepped(self) -> Any:
        """The store underneath, for services whose own calls are steps (see Env.step)."""
        return self._inner

    def __getattr__(self, op: str) -> Any:
        if op not in STORE_OPS:
            raise AttributeError(op)
        method = getattr(self._inner, op)

        def stepped(*args: Any, **kwargs: Any) -> Any:
            return self._run.store_op(self._inner, op, method, args, kwargs)

        return stepped


class Run:
    """One execution of a scenario.  Drive it with :meth:`run`, or step by step with
    :meth:`options` and :meth:`apply` (the hypothesis state machine does the latter)."""

    def __init__(self, scenario: Scenario, factory: CommitterFactory,
                 max_steps: int = 400, backend: Any = None) -> None:
        """``backend`` replaces the model store of ``scenario.store`` with another object of
        the same shape (a real store seen through ``zerorename_bridge.backends``)."""
        self.scenario = scenario
        self.factory = factory
        self.options_map = dict(scenario.options)
        self.store: Any = backend if backend is not None else ModelStore(scenario.store)
        self.cluster = ModelStore("hdfs")
        self.locals: dict[str, ModelStore] = {}
        self.env = Env(self)
        self.actors: list[Actor] = []
        self.current: Actor | None = None
        self.trace: list[dict[str, Any]] = [{"t": "header", "scenario": scenario.to_json()}]
        self.steps = 0
        self.max_steps = max_steps
        self.budget = {
            "crash": scenario.faults.crash, "partition": scenario.faults.partition,
            "speculate": scenario.faults.speculate, "throttle": scenario.faults.throttle,
            "restart": scenario.faults.restart, "fail_job": scenario.faults.fail_job,
        }
        self.written: dict[str, dict[str, bytes]] = {}
        self.attempt_dest: dict[str, str] = {}
        self.preexisting: dict[str, dict[str, bytes]] = {}
        self.jobs: list[JobState] = []
        self.zombie_urls: set[str] = set()
        self.store.between_steps = self._sub_step
        self._setup()

    # -- setup ---------------------------------------------------------------------------------

    def _setup(self) -> None:
        for index, dest in enumerate(self.scenario.dests):
            job_id = "job0" if self.scenario.same_job_id else f"job{index}"
            spec = JobSpec(dest=dest, job_id=job_id, attempt=0, index=index)
            self.preexisting[dest] = {}
            for rel, content in self.scenario.preexisting:
                self.preexisting[dest][rel] = content.encode()
                self.store.put(f"{dest}/{rel}", content.encode())
            self.store.settle_all()
            self.store.reset_counts()
            self.jobs.append(JobState(spec))
            self._spawn_driver(index, spec)

    def _spawn(self, actor: Actor) -> None:
        self.actors.append(actor)
        actor.glet = greenlet(self._actor_main(actor))
        self.note(f"start {actor.name}")
        self._resume(actor, None)

    def _actor_main(self, actor: Actor) -> Callable[[], None]:
        def main(_command: Any = None) -> None:
            try:
                actor.body()
            except (ActorCrashed, RunAborted):
                pass
            except Exception as error:  # the protocol failed: the attempt or job fails
                self.note(f"{actor.name} failed: {type(error).__name__}: {error}")
                self._on_actor_error(actor, error)
            actor.done = True
            actor.pending = ""
        return main

    # -- scheduling ----------------------------------------------------------------------------

    def options(self) -> list[tuple[str, Any]]:
        """Every move possible now.  Option 0 is always the plainest (step an actor)."""
        self._wake_waiters()
        runnable = [a for a in self.actors if a.runnable()]
        opts: list[tuple[str, Any]] = [("step", a) for a in runnable]
        b = self.budget
        at_op = [a for a in runnable if a.waiting is None and not a.crashed]
        tasks_at_op = [a for a in at_op if a.task is not None]
        if b["throttle"]:
            opts += [("throttle", a) for a in at_op if a.pending.split(" ")[0] in STORE_OPS]
        if b["crash"]:
            opts += [("crash", a) for a in tasks_at_op if not a.partitioned]
        if b["partition"]:
            opts += [("partition", a) for a in tasks_at_op if not a.partitioned]
        if b["restart"]:
            opts += [("restart", a) for a in self.actors  # also while it awaits its tasks
                     if a.name.startswith("driver") and not a.done and not a.crashed]
        if b["speculate"]:
            for job in self.jobs:
                for task_id, launched in sorted(job.attempts.items()):
                    if (task_id not in job.accepted and len(launched) < self.scenario.max_attempts
                            and any(job.live.get(t.name) for t in launched)):
                        opts.append(("speculate", (job, task_id)))
        if b["fail_job"]:
            opts += [("fail_job", a) for a in self.actors  # while it awaits its tasks
                     if a.task is None and a.waiting is not None and not a.done]
        if self.scenario.faults.settle and not self.scenario.faults.settle_eagerly and any(
                a.pending.split(" ")[0] in READ_OPS for a in at_op):
            # Visibility only matters to a read, and settling commutes with every write, so
            # offering it only just before reads loses no behaviour and prunes many schedules.
            opts += [("settle", i) for i in range(len(self.store.pending))]
        return opts

    def describe(self, option: tuple[str, Any]) -> str:
        kind, arg = option
        if isinstance(arg, Actor):
            return f"{kind} {arg.name}: {arg.pending}"
        if kind == "speculate":
            return f"speculate j{arg[0].spec.index}.t{arg[1]}"
        if kind == "settle":
            return f"settle {self.store.pending[arg]}"
        return kind

    def finished(self) -> bool:
        self._wake_waiters()
        return not any(a.runnable() for a in self.actors) or self.steps >= self.max_steps

    def apply(self, option: tuple[str, Any]) -> None:
        kind, arg = option
        self.steps += 1
        if kind in self.budget:
            self.budget[kind] -= 1
        if kind == "step":
            if (self.scenario.faults.settle_eagerly and self.store.pending
                    and arg.pending.split(" ")[0] in READ_OPS):
                self.store.settle_all()
                self.note("visible: every pending event (settled eagerly before a read)")
            self._resume(arg, "go")
        elif kind == "throttle":
            self._resume(arg, "throttle")
        elif kind == "crash":
            self.note(f"crash {arg.name}")
            arg.crashed = True
            self._attempt_failed(arg)
            self._resume(arg, "crash")
        elif kind == "partition":
            self.note(f"partition {arg.name} (the driver thinks it failed; it keeps running)")
            arg.partitioned = True
            self._attempt_failed(arg)
        elif kind == "restart":
            self.note(f"crash driver {arg.name}; restart the job")
            arg.crashed = True
            self._resume(arg, "crash")
            job = self.jobs[arg.job_index]
            for other in self.actors:  # YARN kills the old attempt's containers
                if (other.task is not None and other.job_index == arg.job_index
                        and not other.done and not other.partitioned):
                    other.crashed = True
                    self._resume(other, "crash")
            job.spec = JobSpec(job.spec.dest, job.spec.job_id, job.spec.attempt + 1,
                               job.spec.index)
            for name in list(job.live):
                job.live[name] = False  # the new attempt's view: old attempts are lost
            job.holder.clear()
            self._spawn_driver(arg.job_index, job.spec)
        elif kind == "speculate":
            job, task_id = arg
            self._launch_attempt(job, task_id, speculative=True)
        elif kind == "fail_job":
            self.note(f"driver of job {arg.job_index} gives up: abort the job")
            self.jobs[arg.job_index].failed = True  # its wait ends: it wakes and aborts
        elif kind == "settle":
            event = self.store.settle(arg)
            self.note(f"visible: {event}")

    def run(self, chooser: Chooser | None = None) -> RunResult:
        chooser = chooser or FirstChooser()
        try:
            while not self.finished():
                opts = self.options()
                index = chooser.choose("move", _Descriptions(self, opts))
                self.trace.append({"t": "choice", "n": len(opts), "i": index,
                                   "move": self.describe(opts[index])})
                self.apply(opts[index])
        finally:
            self._kill_all()
        return self.result()

    def fingerprint(self) -> str:
        """The state: stores, every actor's history and pause point, driver knowledge, budgets.
        Two schedules reaching the same fingerprint have the same futures (used for pruning)."""
        h = hashlib.sha256()
        h.update(self.store.digest().encode())
        h.update(self.cluster.digest().encode())
        for a in self.actors:
            h.update(f"{a.name}|{a.pending}|{a.done}|{a.crashed}|{a.partitioned}|{a.killed}|"
                     f"{a.waiting is not None and a.waiting()}|{a.history}".encode())
        for job in self.jobs:
            h.update(f"{job.spec}|{sorted(job.live.items())}|{sorted(job.holder.items())}|"
                     f"{sorted((k, v[0].name) for k, v in job.accepted.items())}|{job.failed}|"
                     f"{job.outcome}|{job.dest_at_commit}".encode())
        h.update(repr(sorted(self.budget.items())).encode())
        return h.hexdigest()

    # -- the actors' side ----------------------------------------------------------------------

    def store_op(self, store: ModelStore, op: str, method: Callable[..., Any],
                 args: Sequence[Any], kwargs: dict[str, Any]) -> Any:
        actor = self.current
        if actor is None:  # outside any actor (set-up, checks): perform directly
            return method(*args, **kwargs)
        where = "" if store is self.store else "cluster:"
        command = self._pause(actor, f"{where}{op} {_brief(args)}")
        if command == "throttle":
            error = ModelStoreError(str(args[0]) if args else "", "SlowDown", 503, "throttled")
            self._record(actor, op, args, error)
            raise error
        try:
            result = method(*args, **kwargs)
        except ModelStoreError as error:
            self._record(actor, op, args, error)
            raise
        self._record(actor, op, args, result)
        if actor.partitioned and self.jobs[actor.job_index].abort_started and args:
            # A zombie writing after its job began to abort: nothing can fence it on an
            # object store, so what it leaves is reported apart from the committer's leftovers.
            self.zombie_urls.update(str(a) for a in args[:2] if isinstance(a, str))
        return result

    def sync(self, what: str, action: Callable[[], Any]) -> Any:
        """A step that is not a store operation (asking the driver, reporting to it)."""
        actor = self._require_actor()
        self._pause(actor, what)
        result = action()
        actor.history.append(f"{what}={result!r}")
        self.trace.append({"t": "op", "actor": actor.name, "op": what, "result": repr(result)})
        return result

    def wait(self, what: str, condition: Callable[[], bool]) -> None:
        actor = self._require_actor()
        actor.waiting = condition
        self._pause(actor, what)

    def note(self, message: str) -> None:
        self.trace.append({"t": "note", "msg": message})

    # -- internals -----------------------------------------------------------------------------

    def _require_actor(self) -> Actor:
        if self.current is None:
            raise RuntimeError("only an actor can pause")
        return self.current

    def _pause(self, actor: Actor, what: str) -> Any:
        if actor.crashed:
            raise ActorCrashed(actor.name)
        actor.pending = what
        parent = actor.glet.parent if actor.glet else None
        assert parent is not None
        command = parent.switch(("paused", actor.name))
        actor.waiting = None
        actor.pending = ""
        if command == "crash":
            raise ActorCrashed(actor.name)
        if command == "kill":
            raise TaskKilled(actor.name)
        if command == "abort":
            raise RunAborted(actor.name)
        return command

    def _sub_step(self, what: str) -> None:
        actor = self.current
        if actor is not None:
            self._pause(actor, what)

    def _resume(self, actor: Actor, command: Any) -> None:
        assert actor.glet is not None
        previous, self.current = self.current, actor
        actor.glet.parent = greenlet.getcurrent()
        try:
            actor.glet.switch(command)
        finally:
            self.current = previous

    def _record(self, actor: Actor, op: str, args: Sequence[Any], result: Any) -> None:
        shown = _summary(result)
        actor.history.append(f"{op}{_brief(args)}={shown}")
        self.trace.append({"t": "op", "actor": actor.name, "op": op, "args": args,
                           "result": shown})  # args made JSON-able in result()

    def _wake_waiters(self) -> None:
        """A waiting actor whose condition now holds resumes at once, up to its next pause.
        Not a choice: resuming performs no operation, so it cannot change what others see,
        and leaving it to the scheduler would only multiply equivalent schedules."""
        woke = True
        while woke:
            woke = False
            for actor in list(self.actors):
                if actor.waiting is not None and not actor.done and actor.waiting():
                    self.trace.append({"t": "op", "actor": actor.name, "op": actor.pending,
                                       "result": "ready"})
                    actor.history.append(f"{actor.pending}=ready")
                    self._resume(actor, "go")
                    woke = True

    def _kill_all(self) -> None:
        for actor in self.actors:
            if actor.glet is not None and not actor.glet.dead:
                actor.crashed = True
                self._resume(actor, "abort")

    # -- driver and task bodies ----------------------------------------------------------------

    def _spawn_driver(self, index: int, spec: JobSpec) -> None:
        name = f"driver{index}" + (f".{spec.attempt}" if spec.attempt else "")
        self._spawn(Actor(name, lambda: self._driver_body(index, spec), job_index=index))

    def _driver_body(self, index: int, spec: JobSpec) -> None:
        job = self.jobs[index]
        committer = self.factory(self.env, spec, None, self.options_map)
        recovered: list[int] = []
        if spec.attempt > 0 and getattr(self.factory, "supports_recovery", False):
            for task_id, (task, _msg) in sorted(job.accepted.items()):
                recover = committer.recover_task
                recover(task)
                recovered.append(task_id)
        elif spec.attempt > 0:
            job.accepted.clear()
        committer.setup_job()
        for task_id in range(self.scenario.tasks):
            if task_id not in recovered:
                self._launch_attempt(job, task_id)
        self.wait("await tasks", lambda: job.failed or len(job.accepted) == self.scenario.tasks)
        if job.failed:
            self._abort(job, committer)
            return
        messages = [msg for _t, (_task, msg) in sorted(job.accepted.items())]
        try:
            committer.commit_job(messages if self.scenario.driver == "spark" else None)
        except (ActorCrashed, RunAborted):
            raise
        except Exception as error:
            job.error = f"{type(error).__name__}: {error}"
            self.note(f"commit_job failed: {job.error}")
            job.outcome = "commit-failed"
            self._abort(job, committer)
            return
        job.dest_at_commit = self._visible(spec.dest)
        job.outcome = "committed"
        self.note(f"job {index} committed: {sorted(job.dest_at_commit)}")
        committer.cleanup_job()
        self._record_leftovers(job)
        if self.scenario.reader:
            self._spawn(Actor(f"reader{index}", lambda: self._reader_body(job), job_index=index))

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

    def _abort(self, job: JobState, committer: Any) -> None:
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
        job.uploads_after_cleanup = sorted(
            u for u in self.store.upload_urls()
            if u.startswith(dest + "/") and u not in self.zombie_urls)
        job.temp_after_cleanup = sorted(
            k for k in self.store.snapshot()
            if k.startswith(dest + "/") and hidden(k[len(dest) + 1:])
            and k not in self.zombie_urls
            and not k.endswith("/_SUCCESS"))

    def _launch_attempt(self, job: JobState, task_id: int, speculative: bool = False) -> None:
        launched = job.attempts.setdefault(task_id, [])
        task = TaskSpec(job.spec, task_id, len(launched))
        launched.append(task)
        job.live[task.name] = True
        self.attempt_dest[task.name] = job.spec.dest
        self.note(f"launch {task.name}{' (speculative)' if speculative else ''}")
        self._spawn(Actor(task.name, lambda: self._task_body(job, task), task=task,
                          job_index=job.spec.index))

    def _task_body(self, job: JobState, task: TaskSpec) -> None:
        committer = self.factory(self.env, task.job, task, self.options_map)
        try:
            self._task_work(job, task, committer)
        except TaskKilled:
            # Spark's writer aborts the task attempt when the task is killed
            self.note(f"{task.name} was killed: abort_task")
            committer.abort_task()

    def _task_work(self, job: JobState, task: TaskSpec, committer: Any) -> None:
        committer.setup_task()
        written = self.written.setdefault(task.name, {})
        for pattern in self.scenario.files:
            rel = pattern.format(task=task.task_id)
            data = file_data(task.job, task, rel)
            committer.write(rel, data)
            written[rel] = data
        if not committer.needs_task_commit():
            self.sync("report success (nothing to commit)", lambda: self._accept(job, task, None))
            return
        if not self.sync("can_commit?", lambda: self._can_commit(job, task)):
            committer.abort_task()
            return
        message = committer.commit_task()
        self.sync("report success", lambda: self._accept(job, task, message))

    def _can_commit(self, job: JobState, task: TaskSpec) -> bool:
        """Spark's OutputCommitCoordinator: the first live attempt to ask wins; a failed holder
        releases the task; nothing commits once the task has succeeded."""
        if not job.live.get(task.name) or task.task_id in job.accepted:
            return False
        holder = job.holder.get(task.task_id)
        if holder is None or not job.live.get(holder):
            job.holder[task.task_id] = task.name
            return True
        return holder == task.name

    def _accept(self, job: JobState, task: TaskSpec, message: Any) -> bool:
        if not job.live.get(task.name) or task.task_id in job.accepted or job.failed:
            return False
        committed = task
        if isinstance(message, CommittedByAnother):  # the winner's output is the task's
            committed = self._attempt_named(job, task.task_id, message.attempt_id)
            message = message.message
        job.accepted[task.task_id] = (committed, message)
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
        for actor in list(self.actors):
            if (which(actor) and not actor.done and not actor.crashed and not actor.killed
                    and not actor.partitioned and actor is not self.current):
                self.note(f"kill {actor.name}")
                actor.killed = True
                if actor.waiting is None:
                    self._resume(actor, "kill")

    def _attempt_failed(self, actor: Actor) -> None:
        task = actor.task
        if task is None:
            return
        job = self.jobs[actor.job_index]
        if job.spec.attempt != task.job.attempt or not job.live.get(task.name):
            return
        job.live[task.name] = False
        if job.holder.get(task.task_id) == task.name:
            del job.holder[task.task_id]
        if task.task_id in job.accepted or job.failed:
            return
        if any(job.live.get(t.name) for t in job.attempts[task.task_id]):
            return
        if len(job.attempts[task.task_id]) < self.scenario.max_attempts:
            self._launch_attempt(job, task.task_id)
        else:
            self.note(f"task {task.task_id} exhausted its attempts: the job fails")
            job.failed = True

    def _on_actor_error(self, actor: Actor, error: Exception) -> None:
        if actor.task is not None:
            self._attempt_failed(actor)
        else:
            job = self.jobs[actor.job_index]
            job.outcome = "driver-failed"
            job.error = f"{type(error).__name__}: {error}"

    # -- results -------------------------------------------------------------------------------

    def _visible(self, dest: str) -> dict[str, bytes]:
        """The destination as a reader sees it: the truth, minus hidden (_ or .) names."""
        prefix = dest + "/"
        return {k[len(prefix):]: v for k, v in self.store.snapshot().items()
                if k.startswith(prefix) and not hidden(k[len(prefix):])}

    def result(self) -> RunResult:
        for job in self.jobs:
            if job.outcome == "running":
                job.outcome = "lost"
        self.store.settle_all()
        digest = self.fingerprint()
        for event in self.trace:
            if "args" in event:
                event["args"] = [_jsonable(a) for a in event["args"]]
        self.trace.append({"t": "end", "outcomes": [j.outcome for j in self.jobs],
                           "digest": digest, "requests": self.store.request_counts()})
        return RunResult(
            scenario=self.scenario, jobs=self.jobs, written=self.written,
            attempt_dest=self.attempt_dest, preexisting=self.preexisting,
            final=self.store.snapshot(),
            final_uploads=sorted(self.store.upload_urls()),
            inconsistent_answers=self.store.inconsistent_answers, steps=self.steps,
            trace=self.trace, digest=digest,
        )


class _Descriptions(Sequence[str]):
    """Option descriptions, computed only when a chooser looks (most never do)."""

    def __init__(self, run: Run, options: list[tuple[str, Any]]) -> None:
        self._run = run
        self._options = options

    def __len__(self) -> int:
        return len(self._options)

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return [self._run.describe(o) for o in self._options[index]]
        return self._run.describe(self._options[index])


def hidden(relpath: str) -> bool:
    """Hadoop's rule: a path with any component starting with ``_`` or ``.`` is not output."""
    return any(part.startswith(("_", ".")) for part in relpath.split("/") if part)


def _jsonable(value: Any) -> Any:
    if isinstance(value, bytes | bytearray):
        return f"<{len(value)} bytes>"
    if isinstance(value, str | int | float | bool) or value is None:
        return value
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    return repr(value)


def _brief(args: Sequence[Any]) -> str:
    return " ".join(str(_jsonable(a)) for a in args)


def _summary(result: Any) -> str:
    if isinstance(result, ModelStoreError):
        return f"error {result.code}"
    if isinstance(result, bytes):
        return f"{len(result)} bytes"
    objects = getattr(result, "objects", None)
    if objects is not None:
        keys = [o.url for o in objects] + list(getattr(result, "prefixes", []))
        return "[" + ", ".join(keys) + "]"
    if isinstance(result, list):
        return "[" + ", ".join(getattr(u, "url", str(u)) for u in result) + "]"
    if result is None:
        return "ok"
    return str(getattr(result, "etag", result))
