"""The simulation harness: actors, a scheduler, faults, and the record of a run.

A package split by concern: typed moves and events (:mod:`.events`), what a run holds
(:mod:`.state`), the scheduler (:mod:`.scheduler`), the fault moves (:mod:`.faults`), the
drivers' rules (:mod:`.driver`: Spark's OutputCommitCoordinator, Spark's and YARN's reactions
to failures) and the recorder (:mod:`.recorder`: the trace, digests and the run's result).
"""

from zerorename_model.harness.events import (
    READ_OPS,
    STORE_OPS,
    Call,
    Channel,
    Choice,
    End,
    Event,
    Header,
    Move,
    MoveKind,
    Note,
    NoteKind,
    Op,
    PendingOp,
    Said,
)
from zerorename_model.harness.scheduler import Run
from zerorename_model.harness.state import (
    Actor,
    Env,
    JobState,
    Prune,
    RunResult,
    SteppedStore,
    TaskKilled,
    hidden,
)

__all__ = [
    "READ_OPS", "STORE_OPS", "Actor", "Call", "Channel", "Choice", "End", "Env", "Event",
    "Header", "JobState", "Move", "MoveKind", "Note", "NoteKind", "Op", "PendingOp", "Prune",
    "Run", "RunResult", "Said", "SteppedStore", "TaskKilled", "hidden",
]
