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
from typing import TypeVar, overload

from greenlet import greenlet  # type: ignore[import-untyped]

from zerorename_model.engine.choices import Chooser, FirstChooser
from zerorename_model.engine.errors import ActorCrashed, ModelStoreError, RunAborted
from zerorename_model.engine.harness.driver import DriverRules
from zerorename_model.engine.harness.env import Env
from zerorename_model.engine.harness.events import (
    Call,
    Channel,
    Choice,
    Failure,
    Header,
    Incident,
    Move,
    MoveKind,
    Op,
    PendingOp,
    Reported,
    Said,
    call_pending,
    store_pending,
)
from zerorename_model.engine.harness.faults import FaultMoves
from zerorename_model.engine.harness.recorder import Recorder
from zerorename_model.engine.harness.state import (
    Actor,
    Greenlet,
    HarnessStore,
    JobState,
    RunResult,
    TaskKilled,
)
from zerorename_model.engine.scenario import CommitterFactory, JobSpec, Scenario
from zerorename_model.engine.stores import CLUSTER_PROFILE, ModelStore

T = TypeVar("T")

class Run(DriverRules, FaultMoves, Recorder):
    """One execution of a scenario.  Drive it with :meth:`run`, or step by step with
    :meth:`options` and :meth:`apply` (the explorer and the hypothesis state machine do)."""

    def __init__(self, scenario: Scenario, factory: CommitterFactory,
                 max_steps: int = 400, backend: HarnessStore | None = None) -> None:
        """``backend`` replaces the model store of ``scenario.store`` with another object of
        the same shape (a real store seen through ``zerorename_bridge.backends``)."""
        self.scenario = scenario
        self.factory = factory
        self.options_map = dict(scenario.options)
        self.store: HarnessStore = (backend if backend is not None
                                    else ModelStore(scenario.store, scenario.faults.max_lag))
        self.cluster = ModelStore(CLUSTER_PROFILE)
        self.locals: dict[str, ModelStore] = {}
        self.forget_finished = False
        self.counts_inconsistency = False
        # a factory may put its own client (a retry loop) around the destination store
        self.env = Env(self, getattr(factory, "store_client", None))
        self.actors: list[Actor] = []
        self.by_name: dict[str, Actor] = {}
        self.current: Actor | None = None
        self.events = [Header(scenario.to_json())]
        self.incidents: list[Incident] = []
        self._worker_counts: dict[str, int] = {}  # owner -> pool workers it has started
        self.effects = 0  # counts noted changes to shared harness state (see note())
        self.steps = 0
        self.max_steps = max_steps
        f = scenario.faults
        self.budget = {
            "crash": f.crash, "partition": f.partition, "speculate": f.speculate,
            "throttle": f.throttle, "restart": f.restart, "fail_job": f.fail_job,
        }
        # the ambiguous outcomes only where a scenario uses them: the budgets are part of
        # every run's digest, which the traces recorded before them must still reach
        self.budget.update({name: count for name, count in (
            ("lost_answer", f.lost_answer), ("conflict", f.conflict)) if count})
        self.written: dict[str, dict[str, bytes]] = {}
        self.attempt_dest: dict[str, str] = {}
        self.preexisting: dict[str, dict[str, bytes]] = {}
        self.jobs: list[JobState] = []
        self.zombie_urls: set[str] = set()
        self.store.between_steps = self._sub_step
        self._setup()

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
        self.by_name[actor.name] = actor
        glet: Greenlet = greenlet(self._actor_main(actor))
        actor.glet = glet
        self.note(f"start {actor.name}")
        self._resume(actor, None)

    def spawn_worker(self, owner: Actor, body: Callable[[], object]) -> Actor:
        """Start a pool worker of ``owner`` (see :mod:`.workers`): a child actor in the same
        process, named after it, that runs ``body`` up to its first pause."""
        index = self._worker_counts.get(owner.name, 0)
        self._worker_counts[owner.name] = index + 1
        worker = Actor(f"{owner.name}.w{index}", body, task=owner.task,
                       job_index=owner.job_index, role=owner.role, owner=owner,
                       partitioned=owner.partitioned)
        self._spawn(worker)
        return worker

    def _actor_main(self, actor: Actor) -> Callable[[], None]:
        def main(_command: object = None) -> None:
            try:
                actor.body()
            except (ActorCrashed, RunAborted):
                pass
            except Exception as error:  # the protocol failed: the attempt or job fails
                message = f"{actor.name} failed: {type(error).__name__}: {error}"
                self.note(message)
                self.incidents.append(Failure(actor.name, actor.job_index, message))
                self._on_actor_error(actor, error)
            actor.done = True
            actor.pending = None
        return main

    # -- scheduling ----------------------------------------------------------------------------

    def options(self) -> list[Move]:
        """Every move possible now.  Option 0 is always the plainest (step an actor)."""
        self._wake_waiters()
        runnable = [a for a in self.actors if a.runnable()]
        moves = [Move(MoveKind.STEP, a.name) for a in runnable]
        return moves + self.fault_options(runnable)

    def actor(self, move: Move) -> Actor:
        """The actor ``move`` moves."""
        return self.by_name[move.actor]

    def describe(self, move: Move) -> str:
        """The move as traces record it (and as bugs' steered schedules match it)."""
        return Choice(0, 0, move, self._shown(move)).text

    def _shown(self, move: Move) -> object:
        """What a move acts on, as its description names it."""
        if move.kind is MoveKind.SETTLE:
            return self.store.pending[move.settle]
        if move.kind is MoveKind.SPECULATE:
            return None
        return self.by_name[move.actor].pending

    def finished(self) -> bool:
        self._wake_waiters()
        return not any(a.runnable() for a in self.actors) or self.steps >= self.max_steps

    def apply(self, move: Move) -> None:
        self.steps += 1
        if move.kind is MoveKind.STEP:
            actor = self.by_name[move.actor]
            pending = actor.pending
            if (self.scenario.faults.settle_eagerly and self.store.pending
                    and pending is not None and pending.destination_op in _READS):
                self.store.settle_all()
                self.note("visible: every pending event (settled eagerly before a read)")
            self._resume(actor, "go")
        else:
            self.apply_fault(move)

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
        self.events.append(Choice(len(moves), index, move, self._shown(move)))
        self.apply(move)

    # -- the actors' side ----------------------------------------------------------------------

    def store_op(self, cluster: bool, op: str, method: Callable[..., object],
                 args: Sequence[object], kwargs: Mapping[str, object]) -> object:
        actor = self.current
        if actor is None:  # outside any actor (set-up, checks): perform directly
            return method(*args, **kwargs)
        frozen = _frozen(args) if any(isinstance(a, list) for a in args) else tuple(args)
        pending = store_pending(op, frozen, cluster)
        actor.conditional = bool(kwargs.get("if_none_match") or kwargs.get("if_match"))
        command = self._pause(actor, pending)
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
            self.effects += 1
        if actor.partitioned and self.jobs[actor.job_index].abort_started and args:
            # A zombie writing after its job began to abort: nothing can fence it on an
            # object store, so what it leaves is reported apart from the committer's leftovers.
            self.zombie_urls.update(str(a) for a in args[:2] if isinstance(a, str))
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
        if pending.call is not None and pending.call.reports:
            self.incidents.append(Reported(actor.name, actor.job_index))
        actor.history.append(said)
        actor.said_text.append(str(said))
        self.events.append(Op(actor.name, said, actor.task))

    def _require_actor(self) -> Actor:
        if self.current is None:
            raise RuntimeError("only an actor can pause")
        return self.current

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
        actor = self.current
        if actor is not None:
            op, _, key = what.partition(" ")  # the store's own label: "rename <key>"
            self._pause(actor, PendingOp(Channel.SUBSTEP, op, (key,)))

    def _resume(self, actor: Actor, command: str | None) -> None:
        assert actor.glet is not None
        previous, self.current = self.current, actor
        scheduler: Greenlet = greenlet.getcurrent()
        actor.glet.parent = scheduler
        try:
            actor.glet.switch(command)
        finally:
            self.current = previous

    def _wake_waiters(self) -> None:
        """A waiting actor whose condition now holds resumes at once, up to its next pause.
        Not a choice: resuming performs no operation, so it cannot change what others see,
        and leaving it to the scheduler would only multiply equivalent schedules."""
        woke = True
        while woke:
            woke = False
            for actor in list(self.actors):
                if actor.waiting is not None and not actor.done and actor.waiting():
                    assert actor.pending is not None
                    self._said(actor, actor.pending, "ready")
                    self._resume(actor, "go")
                    woke = True

    def _crash_process(self, root: Actor) -> None:
        """Crash ``root`` (paused: at an operation or waiting) and every pool worker of its
        process still running."""
        root.crashed = True
        self._resume(root, "crash")
        for worker in self._workers_of(root):
            if not worker.done:
                worker.crashed = True
                self._resume(worker, "crash")

    def _workers_of(self, root: Actor) -> list[Actor]:
        return [a for a in self.actors if a.owner is not None and a.process is root]

    def kill_all(self) -> None:
        for actor in self.actors:
            if actor.glet is not None and not actor.glet.dead:
                actor.crashed = True
                self._resume(actor, "abort")


_READS = frozenset({"get", "head", "list_page", "copy", "rename"})

#: the fault commands that refuse an operation before it takes effect, and the error each gives
_REFUSED: dict[str, Callable[[str], ModelStoreError]] = {
    "throttle": lambda url: ModelStoreError(url, "SlowDown", 503, "throttled"),
    "conflict": lambda url: ModelStoreError(url, "ConditionalRequestConflict", 409,
                                            "a concurrent conditional request on the key"),
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
