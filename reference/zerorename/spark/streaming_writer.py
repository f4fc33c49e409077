"""``df.writeStream.format("zerorename")``: the Python stream writer Spark calls per micro-batch.

Usage (Spark >= 4.1, for the Arrow stream writer)::

    (df.writeStream.format("zerorename")
        .option("checkpointLocation", "s3a://bucket/checkpoints/events")  # Spark's own
        .option("partition_by", "year,month")
        .start("s3://bucket/events"))

Spark builds a writer for every micro-batch (:func:`stream_writer`, in a planning worker on
the driver): it checks the options as a batch write does.  ``write()``
runs in the tasks of every micro-batch and learns the batch id from Spark's local property;
``commit``/``abort`` run on the driver with the batch id.  The protocol itself is in
:mod:`zerorename.spark.streaming`.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pyspark.sql.datasource import DataSourceStreamArrowWriter, WriterCommitMessage

from zerorename import options as O
from zerorename.committers.fenced_records import TaskCommittedByOtherAttemptError
from zerorename.context import Options
from zerorename.errors import CommitError
from zerorename.table_fold import DEFAULT_TARGET_SIZE

from .core import TaskOutcome, run_task
from .spec import WriteOptionError, spec_from_options
from .streaming import (
    BATCH_ID_PROPERTY,
    RUN_ID_PROPERTY,
    StreamSpec,
    abort_batch,
    batch_spec,
    commit_batch,
    start_writer,
)
from .task_context import current_task

if TYPE_CHECKING:
    from pyspark.sql.types import StructType

__all__ = ["ZeroRenameStreamWriter", "stream_writer"]

#: options of Spark's stream writer, not the sink's (Spark passes them on; lower case)
SPARK_STREAM_OPTIONS = frozenset({"checkpointlocation", "queryname"})


def stream_writer(options: dict[str, Any], schema: StructType,
                  overwrite: bool) -> ZeroRenameStreamWriter:
    """Check the options against ``schema``, claim a run epoch, return the writer."""
    opts = {str(k).lower(): v for k, v in options.items()
            if str(k).lower() not in SPARK_STREAM_OPTIONS}
    dest = str(next((opts[n] for n in O.W_PATH.names if opts.get(n)), "<no destination>"))
    own = {o.name: opts.pop(o.name) for o in O.STREAM if o.name in opts}
    try:
        O.validate(own, O.Scope.STREAM)
        read = Options(own)
        keep = read.get_int(O.S_KEEP_BATCH_RECORDS.name)
        every = read.get_int(O.S_COMPACT_EVERY.name)
        target = read.get_size(O.S_COMPACT_TARGET_SIZE.name, default=DEFAULT_TARGET_SIZE)
    except CommitError as error:
        raise WriteOptionError(dest, str(error)) from None
    for option, value in ((O.S_KEEP_BATCH_RECORDS, keep), (O.S_COMPACT_EVERY, every),
                          (O.S_COMPACT_TARGET_SIZE, target - 1)):
        if value < 0:
            least = "at least 1" if option.kind is O.Kind.SIZE else ">= 0"
            raise WriteOptionError(dest, f"option {option.name}={own[option.name]!r} must be "
                                         f"{least}")
    if overwrite:
        raise WriteOptionError(dest, "the complete output mode rewrites the whole table each "
                                     "batch; the zerorename stream sink appends (use "
                                     "outputMode('append'))")
    spec = spec_from_options(opts)
    missing = [c for c in spec.partition_by if c not in schema.fieldNames()]
    if missing:
        raise WriteOptionError(spec.dest, f"partition_by columns {missing} are not in the "
                                          f"stream (columns: {schema.fieldNames()})")
    return ZeroRenameStreamWriter(start_writer(spec, keep_batch_records=keep,
                                               compact_every=every, compact_target_size=target))


@dataclass
class StreamCommitMessage(WriterCommitMessage):
    """One task's report: its outcome, and the query run it ran in (for the epoch fence)."""

    outcome: TaskOutcome
    run_id: str


class ZeroRenameStreamWriter(DataSourceStreamArrowWriter):
    """Tasks: Arrow batches → Parquet uploads of batch N's fenced job; driver: the batch record."""

    def __init__(self, stream: StreamSpec) -> None:
        self.stream = stream

    def write(self, iterator: Iterator[Any]) -> WriterCommitMessage:
        task = current_task("ZeroRenameStreamWriter")
        batch = task.context.getLocalProperty(BATCH_ID_PROPERTY)
        if batch is None or not batch.isdigit():
            raise WriteOptionError(self.stream.dest, f"Spark did not say which micro-batch "
                                   f"this task writes ({BATCH_ID_PROPERTY}={batch!r}): the "
                                   "zerorename stream sink needs micro-batch execution")
        run_id = task.context.getLocalProperty(RUN_ID_PROPERTY)
        if not run_id:
            raise WriteOptionError(self.stream.dest, f"Spark did not say which query run this "
                                   f"task belongs to ({RUN_ID_PROPERTY} is not set)")
        spec = batch_spec(self.stream, int(batch), run_id)
        try:
            outcome = run_task(spec, task.partition, task.attempt, iterator)
        except TaskCommittedByOtherAttemptError as won:
            if won.message is None:
                raise
            # an earlier attempt committed this task and died before reporting: its record
            # decides the task, so this attempt reports that attempt's output
            outcome = TaskOutcome(task.partition, won.message.task_attempt,
                                  won.message.compressed(), 0, 0, 0, {}, 0.0)
        return StreamCommitMessage(outcome, run_id)

    def commit(self, messages: list[WriterCommitMessage | None], batchId: int) -> None:
        ours = [m for m in messages if isinstance(m, StreamCommitMessage)]
        run_id = next((m.run_id for m in ours if m.run_id), "")
        commit_batch(self.stream, batchId, [m.outcome for m in ours], run_id)

    def abort(self, messages: list[WriterCommitMessage | None], batchId: int) -> None:
        run_id = next((m.run_id for m in messages if isinstance(m, StreamCommitMessage)), None)
        abort_batch(self.stream, batchId, run_id)
