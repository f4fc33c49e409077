"""The Spark task a Python data source writer runs in: its partition and attempt numbers.

One helper for the batch writer (:mod:`.datasource`) and the stream writer
(:mod:`.streaming_writer`) because both need the same three facts from Spark's
``TaskContext`` before they run the task committer — the partition (the task id), the
attempt (which attempt of it this is) and, for the stream writer, the local properties that
say which micro-batch this is — and both must fail the same clear way when called outside a
task.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pyspark import TaskContext

__all__ = ["SparkTask", "current_task"]


@dataclass(frozen=True)
class SparkTask:
    """The running Spark task: what the task committer is named by, and Spark's context."""

    partition: int
    attempt: int
    context: TaskContext


def current_task(writer: str) -> SparkTask:
    """The task ``writer``'s ``write`` runs in (``writer`` names it in the error otherwise)."""
    from pyspark import TaskContext

    context = TaskContext.get()
    if context is None:  # pragma: no cover - Spark always provides one in a task
        raise RuntimeError(f"{writer}.write must run inside a Spark task")
    return SparkTask(context.partitionId(), context.attemptNumber(), context)
