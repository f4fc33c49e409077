"""What a run holds: actors, the driver's knowledge of each job, the state a run's parts share
(:class:`RunState`), and the result a finished run leaves for the checkers (what committers may
use, the environment and its stepped stores, is :mod:`.env`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar, cast

from zerorename.store import Store
from zerorename_model.engine.harness.events import (
    Event,
    Header,
    Incident,
    PendingOp,
    Role,
    Said,
    TraceLine,
)
from zerorename_model.engine.scenario import (
    Committer,
    CommitterFactory,
    JobSpec,
    Scenario,
    TaskSpec,
)
from zerorename_model.engine.stores.profiles import CLUSTER_PROFILE, Profile
from zerorename_model.engine.stores.records import Visibility
from zerorename_model.engine.stores.store import ModelStore

T = TypeVar("T")


class HarnessStore(Store, Protocol):
    """The destination store of a run, as the harness uses it: the store protocol committers
    use, and what the harness needs besides (a
    :class:`~zerorename_model.engine.stores.store.ModelStore`, or a real store seen through
    ``zerorename_bridge.backends``): its profile, its pending visibility events and how to
    settle them, the truth as a snapshot, the uploads in progress, a digest, and the hook
    between the parts of a non-atomic operation."""

    #: called between the parts of a non-atomic operation (``"rename <key>"``)
    between_steps: Callable[[str], None]

    @property
    def profile(self) -> Profile: ...

    @property
    def pending(self) -> Sequence[Visibility]:
        """The visibility events a SETTLE move may make visible (empty on a real store)."""
        ...

    @property
    def inconsistent_answers(self) -> int: ...

    def settle(self, index: int) -> Visibility: ...
    def settle_all(self) -> None: ...
    def reset_counts(self) -> None: ...
    def snapshot(self) -> dict[str, bytes]: ...
    def upload_urls(self) -> list[str]: ...
    def digest(self) -> str: ...


class Greenlet(Protocol):
    """What the harness uses of a greenlet (the greenlet package ships no types): an actor's
    greenlet, switched to with a command, and the scheduler's it switches back to."""

    parent: Greenlet | None

    @property
    def dead(self) -> bool: ...

    def switch(self, *args: object) -> object: ...


class TaskKilled(BaseException):
    """Raised in a task attempt the driver cancels (another attempt won, or the job failed);
    like Spark's TaskKilledException, the attempt then runs abort_task."""


class Prune(Exception):
    """Raised by the explorer to abandon a run whose state was already explored."""


@dataclass(eq=False)
class Actor:
    """A job driver, task attempt or reader, running on its own greenlet.  ``pending`` is the
    operation it is paused before (None while it runs or once it is done)."""

    name: str
    body: Callable[[], object]
    task: TaskSpec | None = None
    job_index: int = 0
    glet: Greenlet | None = None
    waiting: Callable[[], bool] | None = None  # paused in wait(): runnable when this is true
    pending: PendingOp | None = None
    done: bool = False
    crashed: bool = False
    partitioned: bool = False
    killed: bool = False  # cancelled by the driver: it aborts itself, then ends
    history: list[Said] = field(default_factory=list)
    #: ``history`` as text, rendered once per entry (what the digest and fingerprint hash)
    said_text: list[str] = field(default_factory=list)
    #: what the actor is (None: an attempt if it has a task, else a driver)
    role: Role | None = None
    #: the actor whose pool worker this is (None: a process of its own); see .workers
    owner: Actor | None = None
    kill_delivered: bool = False  # the kill was raised in it (TaskKilled), once
    #: its pending store operation carries a condition (If-None-Match, If-Match): a 409
    #: ConditionalRequestConflict can strike it
    conditional: bool = False

    @property
    def process(self) -> Actor:
        """The actor whose process this one runs in: itself, or its pool's owner's."""
        return self if self.owner is None else self.owner.process

    def __post_init__(self) -> None:
        if self.role is None:
            self.role = Role.ATTEMPT if self.task is not None else Role.DRIVER

    def runnable(self) -> bool:
        return not self.done and (self.waiting is None or self.waiting())

    @property
    def pending_text(self) -> str:
        """The pending operation as move descriptions show it ("" when none)."""
        return "" if self.pending is None else str(self.pending)


@dataclass
class JobState:
    """The driver's knowledge of one job (survives driver restarts, like the YARN history)."""

    spec: JobSpec
    attempts: dict[int, list[TaskSpec]] = field(default_factory=dict)  # task -> launched
    live: dict[str, bool] = field(default_factory=dict)  # attempt name -> considered alive
    holder: dict[int, str] = field(default_factory=dict)  # task -> attempt allowed to commit
    #: task -> the attempt whose commit the driver accepted, and its task commit message
    accepted: dict[int, tuple[TaskSpec, object]] = field(default_factory=dict)
    #: attempts that ended denied their commit (not task failures; still ``live`` in the
    #: driver's view, as earlier versions recorded, so saved traces keep their digests)
    denied: set[str] = field(default_factory=set)
    failed: bool = False
    outcome: str = "running"  # running, committed, aborted, commit-failed, abort-failed, lost
    error: str = ""
    dest_at_commit: dict[str, bytes] | None = None
    uploads_after_cleanup: list[str] | None = None
    temp_after_cleanup: list[str] | None = None
    reader_saw: list[str] | None = None
    abort_started: bool = False  # what a reader listed after the commit
    #: the job side of the committer of the current job attempt (its driver's), told of each
    #: accepted task commit message when it listens (Spark's onTaskCommit: see the driver)
    driver_committer: Committer | None = field(default=None, compare=False, repr=False)


@dataclass(eq=False)
class RunState:
    """Everything a run's parts share: the scheduler (:mod:`.scheduler`), the drivers' rules
    (:mod:`.driver`), the fault moves (:mod:`.faults`) and the recorder (:mod:`.recorder`) each
    hold this one object and read or change it, and none holds state of its own that another
    reads.  Made by :meth:`start`, in the order the earlier versions set it up (the budgets and
    the header are part of every trace)."""

    scenario: Scenario
    factory: CommitterFactory
    options_map: dict[str, str]
    store: HarnessStore  # a ModelStore, or a real store through a bridge backend
    cluster: ModelStore
    max_steps: int
    #: fault -> how many uses are left (see :meth:`start`)
    budget: dict[str, int]
    events: list[Event]
    #: the actor running now (None: the scheduler runs)
    current: Actor | None = None
    actors: list[Actor] = field(default_factory=list)
    by_name: dict[str, Actor] = field(default_factory=dict)
    incidents: list[Incident] = field(default_factory=list)
    #: counts noted changes to shared harness state (see Recorder.note)
    effects: int = 0
    steps: int = 0
    written: dict[str, dict[str, bytes]] = field(default_factory=dict)
    attempt_dest: dict[str, str] = field(default_factory=dict)
    preexisting: dict[str, dict[str, bytes]] = field(default_factory=dict)
    jobs: list[JobState] = field(default_factory=list)
    zombie_urls: set[str] = field(default_factory=set)
    #: each actor's local disk, by task name ("driver" for the drivers)
    locals: dict[str, ModelStore] = field(default_factory=dict)
    #: owner name -> the pool workers it has started (see .workers)
    worker_counts: dict[str, int] = field(default_factory=dict)
    #: fingerprint finished actors without their histories (Recorder.fingerprint); only the
    #: explorer's property searches set it: Table V's observers read histories at every state
    forget_finished: bool = False
    #: fingerprint whether the store has answered inconsistently (what the consistency
    #: checker reads first); the explorer sets it when it checks consistency
    counts_inconsistency: bool = False

    @classmethod
    def start(cls, scenario: Scenario, factory: CommitterFactory, max_steps: int,
              backend: HarnessStore | None) -> RunState:
        """The state before any actor runs.  ``backend`` replaces the model store of
        ``scenario.store``."""
        f = scenario.faults
        budget = {
            "crash": f.crash, "partition": f.partition, "speculate": f.speculate,
            "throttle": f.throttle, "restart": f.restart, "fail_job": f.fail_job,
        }
        # the ambiguous outcomes only where a scenario uses them: the budgets are part of
        # every run's digest, which the traces recorded before them must still reach
        budget.update({name: count for name, count in (
            ("lost_answer", f.lost_answer), ("conflict", f.conflict), ("deny", f.deny))
            if count})
        store: HarnessStore = (backend if backend is not None
                               else ModelStore(scenario.store, f.max_lag))
        return cls(scenario=scenario, factory=factory, options_map=dict(scenario.options),
                   store=store, cluster=ModelStore(CLUSTER_PROFILE), max_steps=max_steps,
                   budget=budget, events=[Header(scenario.to_json())])

    def workers_of(self, root: Actor) -> list[Actor]:
        """The pool workers of ``root``'s process (see :mod:`.workers`)."""
        return [a for a in self.actors if a.owner is not None and a.process is root]


@dataclass
class RunResult:
    """What a finished run leaves for the property checkers (pure functions of this record).
    ``events`` is the typed record of the run; ``trace`` the same as JSON-able dicts (the
    trace file's lines), made when first asked for."""

    scenario: Scenario
    jobs: list[JobState]
    written: dict[str, dict[str, bytes]]  # attempt name -> relpath -> bytes (per job dest)
    attempt_dest: dict[str, str]  # attempt name -> its job's destination
    preexisting: dict[str, dict[str, bytes]]  # dest -> relpath -> bytes
    final: dict[str, bytes]  # every object in the destination store at the end, settled
    final_uploads: list[str]
    inconsistent_answers: int
    steps: int
    events: list[Event]
    digest: str
    #: the faults applied, the attempts that reported, the failures (typed: see run_facts)
    incidents: list[Incident] = field(default_factory=list)
    _trace: list[TraceLine] | None = field(default=None, repr=False)

    @property
    def trace(self) -> list[dict[str, Any]]:
        # The lines are TraceLine TypedDicts; answered as dict[str, Any] until the callers that
        # store or edit them (tablev.Cell.witness_trace, verdicts' witness trace) take
        # Mapping[str, object] lines: a list[TraceLine] is not a list[dict[str, Any]].
        if self._trace is None:
            self._trace = [event.to_json() for event in self.events]
        return cast("list[dict[str, Any]]", self._trace)


def hidden(relpath: str) -> bool:
    """Hadoop's rule: a path with any component starting with ``_`` or ``.`` is not output."""
    return any(part.startswith(("_", ".")) for part in relpath.split("/") if part)
