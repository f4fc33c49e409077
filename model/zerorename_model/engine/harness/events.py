"""Typed moves, pending operations, history entries and trace events.

A run is driven by :class:`Move` values (what the scheduler may do next) and recorded as typed
events.  Nothing here is recovered by parsing text: a paused actor's :class:`PendingOp` says
which channel it waits on (the destination store, the cluster filesystem, a call to its driver)
and which keys the operation touches, so exploration can tell independent steps apart and
Table V's probes can ask "was this attempt told it may commit?".

Every record renders the text earlier versions of the harness wrote (``describe`` strings, trace
JSON lines, history entries): saved traces replay by matching move descriptions, and the digest
of a run's final state hashes actor histories as that text.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal, NotRequired, TypedDict, cast

from zerorename_model.engine.errors import ModelStoreError
from zerorename_model.engine.scenario import TaskSpec

STORE_OPS = (
    "put", "get", "head", "list_page", "delete", "delete_many", "copy", "rename",
    "create_multipart", "upload_part", "complete_multipart", "abort_multipart",
    "list_multipart_uploads",
)

READ_OPS = ("get", "head", "list_page", "copy", "rename")

#: operations that read a whole prefix rather than named keys
PREFIX_OPS = frozenset({"list_page", "list_multipart_uploads"})


class MoveKind(enum.Enum):
    """What a move does.  The values are the words traces and fault budgets use."""

    STEP = "step"            # let an actor perform the operation it is paused before
    THROTTLE = "throttle"    # fail that operation with 503 SlowDown
    CRASH = "crash"          # crash a task attempt before its operation
    PARTITION = "partition"  # the driver loses a task attempt, which keeps running
    RESTART = "restart"      # crash a job driver; the next job attempt starts
    SPECULATE = "speculate"  # launch a duplicate attempt of a running task
    FAIL_JOB = "fail_job"    # the driver gives up and aborts the job
    SETTLE = "settle"        # a lagging write becomes visible
    LOST_ANSWER = "lost_answer"  # perform that operation, then fail it with a transport error
    CONFLICT = "conflict"    # fail that conditional operation with 409, nothing taken effect
    DENY = "deny"            # from now on, every request of that operation's kind answers 403


@dataclass(frozen=True, slots=True)
class Move:
    """One possible move.  ``actor`` names the actor moved (all kinds but SPECULATE and
    SETTLE); ``job``/``task`` the task a SPECULATE duplicates; ``settle`` the index of the
    store's pending visibility event a SETTLE makes visible."""

    kind: MoveKind
    actor: str = ""
    job: int = -1
    task: int = -1
    settle: int = -1


class Channel(enum.Enum):
    """Where a paused actor's next operation goes."""

    STORE = "store"      # the destination store
    CLUSTER = "cluster"  # the consistent cluster filesystem (staging committers)
    SUBSTEP = "substep"  # the next part of a non-atomic destination operation (GCS rename)
    CALL = "call"        # a call to the driver, or to a service (lakeFS), that is one step
    WAIT = "wait"        # waiting for a condition (the driver awaiting its tasks)


class Call(enum.Enum):
    """The harness's own calls between task attempts and their driver."""

    CAN_COMMIT = "can_commit?"
    REPORT_SUCCESS = "report success"
    REPORT_NOTHING = "report success (nothing to commit)"
    AWAIT_TASKS = "await tasks"
    AWAIT_WORKERS = "await workers"  # an actor waiting for its pool's workers (.workers)
    SERVICE = "service"  # a service call through Env.step (its label is the operation)

    @property
    def reports(self) -> bool:
        return self in (Call.REPORT_SUCCESS, Call.REPORT_NOTHING)


@dataclass(frozen=True, slots=True)
class PendingOp:
    """The operation an actor is paused before.  ``op`` is the store operation's name (one of
    :data:`STORE_OPS`) on the store channels, the call's label otherwise."""

    channel: Channel
    op: str
    args: tuple[object, ...] = ()
    call: Call | None = None

    @property
    def destination_op(self) -> str | None:
        """The store operation, if this is one on the destination store (where throttling and
        lagging visibility apply); None for the cluster filesystem and calls."""
        return self.op if self.channel in (Channel.STORE, Channel.SUBSTEP) else None

    @property
    def store_op(self) -> str | None:
        """The store operation on either store, else None."""
        return None if self.channel in (Channel.CALL, Channel.WAIT) else self.op

    def urls(self) -> tuple[str, ...]:
        """The keys (URLs) a store operation names: both for copy/rename, every one for
        delete_many, the prefix for a listing (see :attr:`is_prefix`)."""
        args = self.args
        if not args or self.store_op is None:
            return ()
        if self.op == "delete_many":
            urls = cast("Iterable[object]", args[0])  # delete_many(urls: Sequence[str])
            return tuple(str(u) for u in urls)
        if self.op in ("copy", "rename"):
            return (str(args[0]), str(args[1]))
        return (str(args[0]),)

    @property
    def is_prefix(self) -> bool:
        return self.op in PREFIX_OPS

    def __str__(self) -> str:
        if self.channel is Channel.STORE:
            return f"{self.op} {brief(self.args)}"
        if self.channel is Channel.CLUSTER:
            return f"cluster:{self.op} {brief(self.args)}"
        if self.channel is Channel.SUBSTEP:
            return f"{self.op} {brief(self.args)}"
        return self.op


def store_pending(op: str, args: Sequence[object], cluster: bool) -> PendingOp:
    return PendingOp(Channel.CLUSTER if cluster else Channel.STORE, op, tuple(args))


def call_pending(label: str) -> PendingOp:
    """A call's pending operation: one of the harness's :class:`Call` labels, or a service."""
    try:
        call = Call(label)
    except ValueError:
        call = Call.SERVICE
    return PendingOp(Channel.CALL, label, (), call)


@dataclass(frozen=True, slots=True)
class Said:
    """One entry of an actor's history: an operation it performed and what it was told
    (a store operation's result, a call's return value, ``"ready"`` for a wait)."""

    op: PendingOp
    result: object

    @property
    def call(self) -> Call | None:
        return self.op.call

    def __str__(self) -> str:
        if self.op.channel is Channel.WAIT:
            return f"{self.op.op}=ready"
        if self.op.channel is Channel.CALL:
            return f"{self.op.op}={self.result!r}"
        return f"{self.op.op}{brief(self.op.args)}={summary(self.result)}"


# -- the lines of a trace file ------------------------------------------------------------------
# (what the events below render themselves as; :mod:`zerorename_model.experiments.trace` re-exports
# them, and it imports the harness, so they are defined here)

class HeaderLine(TypedDict):
    """Line 1: the scenario (``Scenario.to_json``; a recorded reference run gives the fields
    it knows, and says it cannot be replayed)."""

    t: Literal["header"]
    scenario: dict[str, object]
    replayable: NotRequired[bool]


class ChoiceLine(TypedDict):
    """A scheduler choice: option ``i`` of ``n``, and what it meant."""

    t: Literal["choice"]
    n: int
    i: int
    move: str


class OpLine(TypedDict):
    """An actor's store operation (with its arguments, bytes shown as their length) or
    driver call, and its result as text."""

    t: Literal["op"]
    actor: str
    op: str
    result: str
    args: NotRequired[list[object]]


class NoteLine(TypedDict):
    """A harness event: a launch, a crash, a visibility event, an injected fault."""

    t: Literal["note"]
    msg: str


class EndLine(TypedDict):
    """The last line: the outcomes, the requests by operation, the final state's digest."""

    t: Literal["end"]
    outcomes: list[str]
    requests: dict[str, int]
    digest: NotRequired[str]
    violations: NotRequired[list[str]]


#: one line of a trace file, as written (a trace *read back* is parsed JSON: see
#: :mod:`zerorename_model.experiments.trace`)
TraceLine = HeaderLine | ChoiceLine | OpLine | NoteLine | EndLine


# -- trace events -----------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class Header:
    scenario: dict[str, object]

    def to_json(self) -> HeaderLine:
        return {"t": "header", "scenario": self.scenario}


@dataclass(frozen=True, slots=True)
class Choice:
    """The scheduler's choice: ``index`` of ``count`` options.  ``shown`` is what the move
    acted on when it was chosen (the actor's pending operation, or the visibility event
    settled), so its description is rendered only when the trace is written."""

    count: int
    index: int
    move: Move
    shown: object

    @property
    def text(self) -> str:
        """The move's description, as :meth:`~zerorename_model.engine.harness.Run.describe` gave
        it."""
        move = self.move
        if move.kind is MoveKind.SPECULATE:
            return f"speculate j{move.job}.t{move.task}"
        if move.kind is MoveKind.SETTLE:
            return f"settle {self.shown}"
        return f"{move.kind.value} {move.actor}: {'' if self.shown is None else self.shown}"

    def to_json(self) -> ChoiceLine:
        return {"t": "choice", "n": self.count, "i": self.index, "move": self.text}


@dataclass(frozen=True, slots=True)
class Op:
    """An actor's operation and its result (``task``: the attempt, None for drivers)."""

    actor: str
    said: Said
    task: TaskSpec | None = None

    def to_json(self) -> OpLine:
        op = self.said.op
        if op.channel is Channel.WAIT:
            return {"t": "op", "actor": self.actor, "op": op.op, "result": "ready"}
        if op.channel is Channel.CALL:
            return {"t": "op", "actor": self.actor, "op": op.op,
                    "result": repr(self.said.result)}
        return {"t": "op", "actor": self.actor, "op": op.op,
                "args": [jsonable(a) for a in op.args], "result": summary(self.said.result)}


class NoteKind(enum.Enum):
    INFO = "info"
    LAUNCH = "launch"    # a task attempt was launched (``task``)
    CRASH = "crash"      # a task attempt crashed
    RESTART = "restart"  # a driver crashed and its job restarts
    PROBE = "probe"      # a Table V probe's finding


@dataclass(frozen=True, slots=True)
class Note:
    msg: str
    kind: NoteKind = NoteKind.INFO
    task: TaskSpec | None = None

    def to_json(self) -> NoteLine:
        return {"t": "note", "msg": self.msg}


@dataclass(frozen=True, slots=True)
class End:
    outcomes: tuple[str, ...]
    digest: str
    requests: dict[str, int]

    def to_json(self) -> EndLine:
        return {"t": "end", "outcomes": list(self.outcomes), "digest": self.digest,
                "requests": self.requests}


Event = Header | Choice | Op | Note | End


# -- what the checkers need to know of a run ---------------------------------------------------

class Role(enum.Enum):
    """What an actor is to the drivers' rules."""

    DRIVER = "driver"    # a job driver (one per job attempt)
    ATTEMPT = "attempt"  # a task attempt
    READER = "reader"    # a downstream reader listing a committed job


@dataclass(frozen=True, slots=True)
class Fault:
    """A fault move the harness applied (``kind``: CRASH, PARTITION, THROTTLE, RESTART or
    FAIL_JOB) to ``actor`` (for a worker of a pool, the actor that owns it: the process a
    crash or partition strikes), of job ``job``.  ``before_report``: a CRASH that struck while
    the attempt was paused before reporting its finished task commit (so it had committed)."""

    kind: MoveKind
    actor: str
    job: int
    role: Role
    before_report: bool = False


@dataclass(frozen=True, slots=True)
class Reported:
    """Attempt ``actor`` of job ``job`` reported its task done to the driver (its
    ``commit_task`` had returned, or it had nothing to commit)."""

    actor: str
    job: int


@dataclass(frozen=True, slots=True)
class Failure:
    """The protocol failed in ``actor`` (an attempt or driver raised; a job commit failed):
    ``message`` is what the run's note says."""

    actor: str
    job: int
    message: str


#: the typed record of the fates liveness and valid-outcome judge (``RunResult.incidents``)
Incident = Fault | Reported | Failure


# -- rendering --------------------------------------------------------------------------------

def jsonable(value: object) -> object:
    if isinstance(value, bytes | bytearray):
        return f"<{len(value)} bytes>"
    if isinstance(value, str | int | float | bool) or value is None:
        return value
    if isinstance(value, list | tuple):
        return [jsonable(v) for v in value]
    return repr(value)


def brief(args: Sequence[object]) -> str:
    return " ".join(str(jsonable(a)) for a in args)


def summary(result: object) -> str:
    """A store operation's result as traces show it."""
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
