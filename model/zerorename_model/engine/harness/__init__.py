"""The simulation harness: actors, a scheduler, faults, and the record of a run.

A package split by concern: typed moves and events (:mod:`.events`), what a run holds
(:mod:`.state`, with :class:`RunState`, the state a run's parts share), what committers may use
(:mod:`.env`, reaching the run through :mod:`.control`), the scheduler (:mod:`.scheduler`), the
fault moves (:mod:`.faults`), the drivers' rules (:mod:`.driver`: Spark's
OutputCommitCoordinator, Spark's and YARN's reactions to failures), the recorder
(:mod:`.recorder`: the trace, digests and the run's result) and pools whose workers are actors
(:mod:`.workers`: a committer's parallel requests interleave).

The scheduler's :class:`Run` is composed, not inherited: it makes one :class:`RunState` and the
recorder, driver rules and fault moves that hold it; they reach the scheduler only through the
Protocols of :mod:`.control` (``tests/test_layers.py`` keeps the modules' imports pointing down).
"""

from zerorename_model.engine.harness.env import Env, SteppedStore
from zerorename_model.engine.harness.events import (
    READ_OPS,
    STORE_OPS,
    Call,
    Channel,
    Choice,
    End,
    Event,
    Failure,
    Fault,
    Header,
    Incident,
    Move,
    MoveKind,
    Note,
    NoteKind,
    Op,
    PendingOp,
    Reported,
    Role,
    Said,
)
from zerorename_model.engine.harness.scheduler import Run
from zerorename_model.engine.harness.state import (
    Actor,
    HarnessStore,
    JobState,
    Prune,
    RunResult,
    RunState,
    TaskKilled,
    hidden,
)

__all__ = [
    "READ_OPS", "STORE_OPS", "Actor", "Call", "Channel", "Choice", "End", "Env", "Event",
    "Failure", "Fault", "HarnessStore", "Header", "Incident", "JobState", "Move", "MoveKind",
    "Note", "NoteKind", "Op", "PendingOp", "Prune", "Reported", "Role", "Run", "RunResult",
    "RunState", "Said", "SteppedStore", "TaskKilled", "hidden",
]
