"""The scheduler: one run of a scenario, step by step.

Every actor (a job driver per job attempt, every task attempt) runs ordinary, blocking protocol
code on its own greenlet.  The store it is given is a :class:`~.env.SteppedStore`: before each
operation the actor pauses and the scheduler decides what happens next, so a run is a sequence
of *steps*, one store operation each, and every interleaving and crash point is reachable.
Because actors are plain code paused at the store boundary, the same harness drives model
protocols and reference committers; a reference committer's thread pools run as child actors
of the actor using them (:mod:`.workers`), so the order of its parallel requests is a choice.

At each step the scheduler asks its :class:`~zerorename_model.engine.choices.Chooser` one question:
which of the currently possible :class:`~.events.Move` values happens (step an actor; crash,
partition or throttle one; launch a speculative attempt; restart the driver; make a lagging
write visible).  Option 0 is always "step the first runnable actor", so shrinking leads to
plain, fault-free schedules.  The fault moves are :mod:`.faults`, the drivers' rules
:mod:`.driver`, the record of the run :mod:`.recorder`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Generic, TypeVar, overload

from greenlet import greenlet  # type: ignore[import-untyped]

from zerorename_model.engine.choices import Chooser, FirstChooser
from zerorename_model.engine.errors import ActorCrashed, ModelStoreError, RunAborted
from zerorename_model.engine.harness.driver import DriverRules
from zerorename_model.engine.harness.env import Env
from zerorename_model.engine.harness.events import (
    Call,
    Channel,
    Choice,
    Event,
    Failure,
    Move,
    MoveKind,
    NoteKind,
    Op,
    PendingOp,
    Reported,
    Said,
    call_pending,
    store_pending,
)
from zerorename_model.engine.harness.faults import FaultMoves, denied
from zerorename_model.engine.harness.recorder import Recorder
from zerorename_model.engine.harness.state import (
    Actor,
    Greenlet,
    HarnessStore,
    JobState,
    RunResult,
    RunState,
    TaskKilled,
)
from zerorename_model.engine.scenario import CommitterFactory, JobSpec, Scenario, TaskSpec
from zerorename_model.engine.stores.store import ModelStore

T = TypeVar("T")
V = TypeVar("V")


class _Shared(Generic[V]):
    """An attribute of the run's :class:`~.state.RunState`, read and set through the run
    itself (``run.jobs``, ``run.forget_finished``): what the explorer, the checkers and the
    tests read of a run, named as before the state was one object."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    @overload
    def __get__(self, run: None, owner: type) -> _Shared[V]: ...

    @overload
    def __get__(self, run: Run, owner: type) -> V: ...

    def __get__(self, run: Run | None, owner: type) -> V | _Shared[V]:
        if run is None:
            return self
        value: V = getattr(run.state, self.name)
        return value

    def __set__(self, run: Run, value: V) -> None:
        setattr(run.state, self.name, value)


class Run:
    """One execution of a scenario.  Drive it with :meth:`run`, or step by step with
    :meth:`options` and :meth:`apply` (the explorer and the hypothesis state machine do).

    Built by composition: the shared :class:`~.state.RunState`, and over it the
    :class:`~.recorder.Recorder`, the :class:`~.driver.DriverRules` and the
    :class:`~.faults.FaultMoves`, each holding the state; this class is the scheduler that
    steps the actors, and what those parts reach of it is :class:`~.control.Scheduling`."""

    scenario: _Shared[Scenario] = _Shared()
    store: _Shared[HarnessStore] = _Shared()
    cluster: _Shared[ModelStore] = _Shared()
    max_steps: _Shared[int] = _Shared()
    budget: _Shared[dict[str, int]] = _Shared()
    events: _Shared[list[Event]] = _Shared()
    current: _Shared[Actor | None] = _Shared()
    actors: _Shared[list[Actor]] = _Shared()
    by_name: _Shared[dict[str, Actor]] = _Shared()
    effects: _Shared[int] = _Shared()
    steps: _Shared[int] = _Shared()
    written: _Shared[dict[str, dict[str, bytes]]] = _Shared()
    jobs: _Shared[list[JobState]] = _Shared()
    forget_finished: _Shared[bool] = _Shared()
    counts_inconsistency: _Shared[bool] = _Shared()

    def __init__(self, scenario: Scenario, factory: CommitterFactory,
                 max_steps: int = 400, backend: HarnessStore | None = None) -> None:
        """``backend`` replaces the model store of ``scenario.store`` with another object of
        the same shape (a real store seen through ``zerorename_bridge.backends``)."""
        self.state = state = RunState.start(scenario, factory, max_steps, backend)
        self.recorder = Recorder(state)
        # a factory may put its own client (a retry loop) around the destination store
        env = Env(self, getattr(factory, "store_client", None))
        self.driver_rules = DriverRules(state, self.recorder, self, env)
        self.fault_moves = FaultMoves(state, self.recorder, self.driver_rules, self)
        state.store.between_steps = self._sub_step
        self._setup()

    def _setup(self) -> None:
        state = self.state
        store = state.store
        for index, dest in enumerate(state.scenario.dests):
            job_id = "job0" if state.scenario.same_job_id else f"job{index}"
            spec = JobSpec(dest=dest, job_id=job_id, attempt=0, index=index)
            state.preexisting[dest] = {}
            for rel, content in state.scenario.preexisting:
                state.preexisting[dest][rel] = content.encode()
                store.put(f"{dest}/{rel}", content.encode())
            store.settle_all()
            store.reset_counts()
            state.jobs.append(JobState(spec))
            self.driver_rules.spawn_driver(index, spec)

    # -- the record (the recorder's, for the run's callers) --------------------------------------

    def note(self, message: str, kind: NoteKind = NoteKind.INFO,
             task: TaskSpec | None = None) -> None:
        """Record a harness event (:meth:`.recorder.Recorder.note`)."""
        self.recorder.note(message, kind, task)

    def digest(self) -> str:
        """The digest a trace's ``end`` line records (:meth:`.recorder.Recorder.digest`)."""
        return self.recorder.digest()

    def fingerprint(self) -> bytes:
        """The state, for pruning (:meth:`.recorder.Recorder.fingerprint`)."""
        return self.recorder.fingerprint()

    def result(self) -> RunResult:
        """End the record and give the run's result (:meth:`.recorder.Recorder.result`)."""
        return self.recorder.result()

    # -- actors ----------------------------------------------------------------------------------

    def spawn(self, actor: Actor) -> None:
        state = self.state
        state.actors.append(actor)
        state.by_name[actor.name] = actor
        glet: Greenlet = greenlet(self._actor_main(actor))
        actor.glet = glet
        self.recorder.note(f"start {actor.name}")
        self.resume(actor, None)

    def spawn_worker(self, owner: Actor, body: Callable[[], object]) -> Actor:
        """Start a pool worker of ``owner`` (see :mod:`.workers`): a child actor in the same
        process, named after it, that runs ``body`` up to its first pause."""
        counts = self.state.worker_counts
        index = counts.get(owner.name, 0)
        counts[owner.name] = index + 1
        worker = Actor(f"{owner.name}.w{index}", body, task=owner.task,
                       job_index=owner.job_index, role=owner.role, owner=owner,
                       partitioned=owner.partitioned)
        self.spawn(worker)
        return worker

    def _actor_main(self, actor: Actor) -> Callable[[], None]:
        def main(_command: object = None) -> None:
            try:
                actor.body()
            except (ActorCrashed, RunAborted):
                pass
            except Exception as error:  # the protocol failed: the attempt or job fails
                message = f"{actor.name} failed: {type(error).__name__}: {error}"
                self.recorder.note(message)
                self.state.incidents.append(Failure(actor.name, actor.job_index, message))
                self.driver_rules.on_actor_error(actor, error)
            actor.done = True
            actor.pending = None
        return main

    # -- scheduling ----------------------------------------------------------------------------

    def options(self) -> list[Move]:
        """Every move possible now.  Option 0 is always the plainest (step an actor)."""
        self._wake_waiters()
        runnable = [a for a in self.state.actors if a.runnable()]
        moves = [Move(MoveKind.STEP, a.name) for a in runnable]
        return moves + self.fault_moves.options(runnable)

    def actor(self, move: Move) -> Actor:
        """The actor ``move`` moves."""
        return self.state.by_name[move.actor]

    def describe(self, move: Move) -> str:
        """The move as traces record it (and as bugs' steered schedules match it)."""
        return Choice(0, 0, move, self._shown(move)).text

    def _shown(self, move: Move) -> object:
        """What a move acts on, as its description names it."""
        if move.kind is MoveKind.SETTLE:
            return self.state.store.pending[move.settle]
        if move.kind is MoveKind.SPECULATE:
            return None
        return self.state.by_name[move.actor].pending

    def finished(self) -> bool:
        self._wake_waiters()
        state = self.state
        return not any(a.runnable() for a in state.actors) or state.steps >= state.max_steps

    def apply(self, move: Move) -> None:
        state = self.state
        state.steps += 1
        if move.kind is MoveKind.STEP:
            actor = state.by_name[move.actor]
            pending = actor.pending
            if (state.scenario.faults.settle_eagerly and state.store.pending
                    and pending is not None and pending.destination_op in _READS):
                state.store.settle_all()
                self.recorder.note("visible: every pending event (settled eagerly before a read)")
            self.resume(actor, "go")
        else:
            self.fault_moves.apply(move)

    def run(self, chooser: Chooser | None = None) -> RunResult:
        chooser = chooser or FirstChooser()
        try:
            while not self.finished():
                moves = self.options()
                index = chooser.choose("move", _Descriptions(self, moves))
                self.choose(moves, index)
        finally:
            self.kill_all()
        return self.result()

    def choose(self, moves: Sequence[Move], index: int) -> None:
        """Record the choice of ``moves[index]`` and apply it."""
        move = moves[index]
        self.state.events.append(Choice(len(moves), index, move, self._shown(move)))
        self.apply(move)

    # -- the actors' side ----------------------------------------------------------------------

    def store_op(self, cluster: bool, op: str, method: Callable[..., object],
                 args: Sequence[object], kwargs: Mapping[str, object]) -> object:
        state = self.state
        actor = state.current
        if actor is None:  # outside any actor (set-up, checks): perform directly
            return method(*args, **kwargs)
        frozen = _frozen(args) if any(isinstance(a, list) for a in args) else tuple(args)
        pending = store_pending(op, frozen, cluster)
        actor.conditional = bool(kwargs.get("if_none_match") or kwargs.get("if_match"))
        command = self._pause(actor, pending)
        if not cluster and command == "go" and denied(state.budget, op):
            command = "deny"  # the kind was denied earlier: refused like the first
        if command in _REFUSED:
            error = _REFUSED[str(command)](str(args[0]) if args else "")
            self._said(actor, pending, error)
            raise error
        try:
            result = method(*args, **kwargs)
        except ModelStoreError as error:
            self._said(actor, pending, error)
            raise
        if command == "lost_answer":  # it took effect; the caller is told it timed out
            lost = ModelStoreError(str(args[0]) if args else "", "ReadTimeout", 599,
                                   "the answer was lost (the request took effect)")
            self._said(actor, pending, lost)
            raise lost
        self._said(actor, pending, result)
        if actor.owner is not None:
            # a worker's step may finish a result its owner waits for (waking it): shared
            # state, so the explorer never takes it as independent (see .workers)
            state.effects += 1
        if actor.partitioned and state.jobs[actor.job_index].abort_started and args:
            # A zombie writing after its job began to abort: nothing can fence it on an
            # object store, so what it leaves is reported apart from the committer's leftovers.
            state.zombie_urls.update(str(a) for a in args[:2] if isinstance(a, str))
        return result

    def sync(self, what: str, action: Callable[[], T]) -> T:
        """A step that is not a store operation (asking the driver, reporting to it)."""
        actor = self._require_actor()
        pending = call_pending(what)
        self._pause(actor, pending)
        result = action()
        self._said(actor, pending, result)
        return result

    def wait(self, what: Call, condition: Callable[[], bool]) -> None:
        actor = self._require_actor()
        actor.waiting = condition
        self._pause(actor, PendingOp(Channel.WAIT, what.value, (), what))

    def _said(self, actor: Actor, pending: PendingOp, result: object) -> None:
        said = Said(pending, result)
        state = self.state
        if pending.call is not None and pending.call.reports:
            state.incidents.append(Reported(actor.name, actor.job_index))
        actor.history.append(said)
        actor.said_text.append(str(said))
        state.events.append(Op(actor.name, said, actor.task))

    def _require_actor(self) -> Actor:
        current = self.state.current
        if current is None:
            raise RuntimeError("only an actor can pause")
        return current

    def _pause(self, actor: Actor, pending: PendingOp) -> object:
        if actor.crashed:
            raise ActorCrashed(actor.name)
        actor.pending = pending
        parent = actor.glet.parent if actor.glet else None
        assert parent is not None
        command: object = parent.switch(("paused", actor.name))
        actor.waiting = None
        actor.pending = None
        if command == "crash":
            raise ActorCrashed(actor.name)
        if command == "kill" or (command == "go" and actor.killed
                                 and not actor.kill_delivered
                                 and pending.channel is not Channel.WAIT):
            # a kill that found the actor waiting for its workers reaches it at its next
            # operation (the driver resumes only actors paused at one with "kill")
            actor.kill_delivered = True
            raise TaskKilled(actor.name)
        if command == "abort":
            raise RunAborted(actor.name)
        return command

    def _sub_step(self, what: str) -> None:
        """The store's hook between the parts of a non-atomic operation (``rename <key>``)."""
        actor = self.state.current
        if actor is not None:
            op, _, key = what.partition(" ")  # the store's own label: "rename <key>"
            self._pause(actor, PendingOp(Channel.SUBSTEP, op, (key,)))

    def resume(self, actor: Actor, command: str | None) -> None:
        assert actor.glet is not None
        state = self.state
        previous, state.current = state.current, actor
        scheduler: Greenlet = greenlet.getcurrent()
        actor.glet.parent = scheduler
        try:
            actor.glet.switch(command)
        finally:
            state.current = previous

    def _wake_waiters(self) -> None:
        """A waiting actor whose condition now holds resumes at once, up to its next pause.
        Not a choice: resuming performs no operation, so it cannot change what others see,
        and leaving it to the scheduler would only multiply equivalent schedules."""
        woke = True
        while woke:
            woke = False
            for actor in list(self.state.actors):
                if actor.waiting is not None and not actor.done and actor.waiting():
                    assert actor.pending is not None
                    self._said(actor, actor.pending, "ready")
                    self.resume(actor, "go")
                    woke = True

    def crash_process(self, root: Actor) -> None:
        """Crash ``root`` (paused: at an operation or waiting) and every pool worker of its
        process still running."""
        root.crashed = True
        self.resume(root, "crash")
        for worker in self.state.workers_of(root):
            if not worker.done:
                worker.crashed = True
                self.resume(worker, "crash")

    def kill_all(self) -> None:
        for actor in self.state.actors:
            if actor.glet is not None and not actor.glet.dead:
                actor.crashed = True
                self.resume(actor, "abort")


_READS = frozenset({"get", "head", "list_page", "copy", "rename"})

#: the fault commands that refuse an operation before it takes effect, and the error each gives
_REFUSED: dict[str, Callable[[str], ModelStoreError]] = {
    "throttle": lambda url: ModelStoreError(url, "SlowDown", 503, "throttled"),
    "conflict": lambda url: ModelStoreError(url, "ConditionalRequestConflict", 409,
                                            "a concurrent conditional request on the key"),
    "deny": lambda url: ModelStoreError(url, "AccessDenied", 403,
                                        "the role's policy does not allow this request"),
}


def _frozen(args: Sequence[object]) -> tuple[object, ...]:
    """The arguments as they were when the operation was asked for (lists copied to tuples:
    a committer may reuse a list after passing it)."""
    return tuple(_freeze(a) for a in args)


def _freeze(value: object) -> object:
    if isinstance(value, list | tuple):
        return tuple(_freeze(v) for v in value)
    return value


class _Descriptions(Sequence[str]):
    """Option descriptions, computed only when a chooser looks (most never do)."""

    def __init__(self, run: Run, moves: list[Move]) -> None:
        self._run = run
        self._moves = moves

    def __len__(self) -> int:
        return len(self._moves)

    @overload
    def __getitem__(self, index: int) -> str: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[str]: ...

    def __getitem__(self, index: int | slice) -> str | Sequence[str]:
        if isinstance(index, slice):
            return [self._run.describe(m) for m in self._moves[index]]
        return self._run.describe(self._moves[index])
