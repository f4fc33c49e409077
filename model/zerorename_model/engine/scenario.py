"""What a run is about: the scenario (serialisable, so a trace can replay it), the identities of
jobs and task attempts, and the interface a committer offers the harness.

Model committers implement :class:`Committer` directly; reference committers are adapted to it in
``property_tests/adapters.py``.  A committer factory is ``factory(env, job, task, options)``:
``task`` is None for the job (driver) side, as in ``zr.create_committer``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from typing import Any, Protocol, TypedDict, TypeVar, Unpack, runtime_checkable

# the store protocol committers are written against: the production package's types-only module
# (the one thing the model imports from it, tests/test_towers.py)
from zerorename.store import Store

T = TypeVar("T")


@dataclass(frozen=True)
class Faults:
    """Fault budgets for one run; each use of a fault is a choice the harness may make."""

    crash: int = 0  # crash a task attempt between two store operations
    partition: int = 0  # the driver considers an attempt failed, but it keeps running
    speculate: int = 0  # launch a duplicate attempt of a running task
    throttle: int = 0  # fail one store request with 503 SlowDown
    restart: int = 0  # crash the job driver and start the next job attempt
    fail_job: int = 0  # the driver gives up and aborts the job
    #: a store request takes effect but its answer is lost: the caller sees a transport error
    #: (a read timeout) and cannot tell whether it did (issue 34)
    lost_answer: int = 0
    #: a conditional request (If-None-Match, If-Match) answers 409 ConditionalRequestConflict
    #: and takes no effect: AWS's answer to concurrent conditional writes on one key
    conflict: int = 0
    #: from some point on, every request of one kind (the kind of the request it strikes, e.g.
    #: every ListMultipartUploads) answers 403 AccessDenied and takes no effect: a role
    #: missing the one IAM action that request needs
    deny: int = 0
    settle: bool = True  # pending visibility events may take effect at any point
    #: every pending visibility event takes effect just before each read: the lagging store
    #: then behaves like its consistent counterpart, one of the behaviours it allows (used to
    #: reach consistent-store violations on it before exploring the anomalies)
    settle_eagerly: bool = False
    #: every pending visibility event may take effect before every move, not only before an
    #: operation that can tell (the store's whole freedom: what the default offering is
    #: tested against, tests/model/test_settle_offers.py)
    settle_anytime: bool = False
    #: bounded staleness: at most this many visibility events pending at once, the oldest
    #: taking effect when one more is queued (None: unbounded, the store's whole freedom)
    max_lag: int | None = None


@dataclass(frozen=True)
class Scenario:
    """A run's fixed inputs.  ``files`` are relative paths; ``{task}`` is replaced by the task id.

    ``driver`` is ``spark`` (commit_job receives the accepted task messages) or ``hadoop``
    (commit_job(None): the committer discovers committed tasks in the store).
    """

    committer: str
    store: str = "s3"
    tasks: int = 2
    files: tuple[str, ...] = ("part-{task:05d}",)
    max_attempts: int = 2
    dests: tuple[str, ...] = ("s3://bucket/out",)
    driver: str = "spark"
    faults: Faults = field(default_factory=Faults)
    preexisting: tuple[tuple[str, str], ...] = ()
    options: tuple[tuple[str, str], ...] = ()
    reader: bool = False  # after the job commits, a reader lists the destination
    same_job_id: bool = False  # SPARK-33402: two jobs started in the same second shared an ID

    def to_json(self) -> dict[str, object]:
        cached: dict[str, object] | None = self.__dict__.get("_json")
        if cached is None:
            cached = asdict(self)
            faults = cached["faults"]
            assert isinstance(faults, dict)
            if not self.faults.settle_anytime:  # a test's knob: traces keep their old header
                del faults["settle_anytime"]
            if self.faults.max_lag is None:  # likewise: only a bounded scope records its bound
                del faults["max_lag"]
            for ambiguous in ("lost_answer", "conflict", "deny"):  # only a scope using them
                if not faults[ambiguous]:
                    del faults[ambiguous]
            object.__setattr__(self, "_json", cached)
        return cached  # shared: callers must not mutate it

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Scenario:
        """Parse a trace header's scenario.  ``data`` is parsed JSON (a trace file's first
        line): its values are whatever the file holds, and the dataclass constructors are what
        check them, so it stays ``dict[str, Any]``."""
        data = dict(data)
        data["faults"] = Faults(**data.get("faults", {}))
        for name in ("files", "dests"):
            data[name] = tuple(data[name])
        data["preexisting"] = tuple(tuple(p) for p in data.get("preexisting", ()))
        data["options"] = tuple(tuple(p) for p in data.get("options", ()))
        return cls(**data)

    def with_(self, **changes: Unpack[ScenarioChanges]) -> Scenario:
        """``dataclasses.replace`` with the fields named and typed (:class:`ScenarioChanges`)."""
        return replace(self, **changes)

    def __str__(self) -> str:
        return json.dumps(self.to_json(), sort_keys=True)


class ScenarioChanges(TypedDict, total=False):
    """The fields of :class:`Scenario`, any of them: what :meth:`Scenario.with_` may change."""

    committer: str
    store: str
    tasks: int
    files: tuple[str, ...]
    max_attempts: int
    dests: tuple[str, ...]
    driver: str
    faults: Faults
    preexisting: tuple[tuple[str, str], ...]
    options: tuple[tuple[str, str], ...]
    reader: bool
    same_job_id: bool


@dataclass(frozen=True)
class JobSpec:
    """One job attempt: its destination, job ID and attempt number (0, 1… after restarts)."""

    dest: str
    job_id: str
    attempt: int = 0
    index: int = 0  # which of the scenario's jobs


@dataclass(frozen=True)
class TaskSpec:
    job: JobSpec
    task_id: int
    attempt: int

    @property
    def attempt_id(self) -> str:
        """Hadoop-style attempt ID: unique per job attempt, task and task attempt."""
        job = self.job
        return f"attempt_{job.job_id}_{job.attempt:02d}_m_{self.task_id:06d}_{self.attempt}"

    @property
    def name(self) -> str:
        return f"j{self.job.index}.t{self.task_id}.a{self.attempt}"


@dataclass(frozen=True)
class CommittedByAnother:
    """What ``commit_task`` returns when another attempt of the task had already committed it
    (a fenced committer's task commit lost its ``If-None-Match`` PUT): the driver records
    *that* attempt as the task's committed one, with its ``message``, so it knows whose output
    the job will publish, and does not retry the task (HADOOP-17258's failure mode)."""

    attempt_id: str
    #: the winner's task commit message, as its ``commit_task`` would have returned it; the
    #: driver only passes it on to ``commit_job``
    message: object


class CommitterEnv(Protocol):
    """What a committer may use (the harness's ``Env`` is one; a bridge backend's is another):
    the destination store, the consistent cluster filesystem (staging committers keep their
    pendingsets there), the calling actor's local disk, and ``step`` for a service call (a
    lakeFS merge) that is one harness step without being a store operation.  Read-only
    properties, so that an implementation may hold any :class:`Store` (a stepped one)."""

    @property
    def store(self) -> Store: ...

    @property
    def cluster(self) -> Store: ...

    def local(self) -> Store: ...

    def step(self, what: str, action: Callable[[], T]) -> T: ...


class Committer(Protocol):
    """The committer operations the harness drives (Hadoop's OutputCommitter, plus ``write``).

    ``commit_task`` returns the task commit message (or :class:`CommittedByAnother`), which the
    driver hands back, unread, in ``commit_job``'s list under Spark's protocol.  Each committer
    has its own message type, and the harness holds committers of every protocol at once, so
    the list is ``list[Any]`` here: an implementation declares the precise element type it
    returned (``list[PendingSet] | None``), which this protocol accepts."""

    def setup_job(self) -> None: ...
    def setup_task(self) -> None: ...
    def write(self, relpath: str, data: bytes) -> None: ...
    def needs_task_commit(self) -> bool: ...
    def commit_task(self) -> object: ...
    def abort_task(self) -> None: ...
    def commit_job(self, messages: list[Any] | None) -> None: ...
    def abort_job(self) -> None: ...
    def cleanup_job(self) -> None: ...


@runtime_checkable
class RecoveringCommitter(Committer, Protocol):
    """A committer whose next job attempt can take over a committed task of the previous one
    (Hadoop's ``recoverTask``); its factory says ``supports_recovery``."""

    def recover_task(self, task: TaskSpec) -> None: ...


@runtime_checkable
class TaskCommitListener(Committer, Protocol):
    """A committer whose job side is told, on the driver, each task commit message the driver
    accepts (Spark's ``FileCommitProtocol.onTaskCommit``).  The harness calls it under Spark's
    protocol only, at the step in which the driver accepts the message (and, in a job attempt
    that recovers tasks, for each recovered task's message as it starts), so it must stay
    local: no store request, no other step."""

    def on_task_commit(self, message: Any) -> None: ...


class CommitterFactory(Protocol):
    """Builds a committer; ``supports_recovery`` says whether a restarted job attempt can reuse
    the previous attempt's committed tasks (``recover_task``), as Hadoop's v1 can."""

    supports_recovery: bool

    def __call__(self, env: CommitterEnv, job: JobSpec, task: TaskSpec | None,
                 options: dict[str, str]) -> Committer: ...


def file_data(job: JobSpec, task: TaskSpec, relpath: str) -> bytes:
    """Content that names its writer, so a mix of two attempts is visible in the bytes."""
    return f"{job.job_id}|t{task.task_id}|a{task.attempt}|j{job.attempt}|{relpath}".encode()
