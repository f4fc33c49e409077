"""Stream sinks for the Structured Streaming tests: zerorename's, stopped at a chosen point, and a
broken one that is not idempotent per batch id.

A test arms a crash by creating a file (``arm``); the writer, in whichever Spark process runs
it, raises there while the file exists, so the query stops exactly at that point, and the test
disarms it before restarting the query from its checkpoint.  The classes are pickled by value
(Spark's Python workers cannot import the tests package).
"""

from __future__ import annotations

import pickle
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pyspark import cloudpickle
from pyspark.sql.datasource import WriterCommitMessage

from zerorename.spark.datasource import ZeroRenameDataSource
from zerorename.spark.streaming import CommitStep, batch_spec, commit_batch
from zerorename.spark.streaming_writer import (
    StreamCommitMessage,
    ZeroRenameStreamWriter,
    stream_writer,
)

cloudpickle.register_pickle_by_value(sys.modules[__name__])  # type: ignore[no-untyped-call]

#: where a crash happens: in the tasks after they wrote, or in the driver's commit
POINTS = ("task", *(step.name.lower() for step in CommitStep))


class InjectedCrash(RuntimeError):
    """The armed crash (a test's stand-in for a driver or executor dying there)."""


class CrashingStreamWriter(ZeroRenameStreamWriter):
    def __init__(self, base: ZeroRenameStreamWriter, arm: str, point: str, batch: int) -> None:
        super().__init__(base.stream)
        self.arm, self.point, self.batch = arm, point, batch

    def _armed(self, point: str, batch: int) -> bool:
        return point == self.point and batch == self.batch and Path(self.arm).exists()

    def write(self, iterator: Iterator[Any]) -> WriterCommitMessage:
        from pyspark import TaskContext

        message = super().write(iterator)
        context = TaskContext.get()
        batch = int(context.getLocalProperty("streaming.sql.batchId") or -1) if context else -1
        if self._armed("task", batch):
            raise InjectedCrash(f"task of batch {batch} stopped after writing")
        return message

    def commit(self, messages: list[WriterCommitMessage | None], batchId: int) -> None:
        ours = [m for m in messages if isinstance(m, StreamCommitMessage)]
        run_id = next((m.run_id for m in ours if m.run_id), "")

        def crash(step: CommitStep) -> None:
            if self._armed(step.name.lower(), batchId):
                raise InjectedCrash(f"driver stopped in batch {batchId}: {step.value}")

        commit_batch(self.stream, batchId, [m.outcome for m in ours], run_id, on_step=crash)


class CrashingSource(ZeroRenameDataSource):
    """``format("zerorename_crashing")``: zerorename's sink with options ``arm``, ``point``,
    ``batch`` saying where to stop."""

    @classmethod
    def name(cls) -> str:
        return "zerorename_crashing"

    def streamWriter(self, schema: Any, overwrite: bool) -> CrashingStreamWriter:
        options = dict(self.options)
        arm, point, batch = options.pop("arm"), options.pop("point"), options.pop("batch")
        base = stream_writer(options, schema, overwrite)
        return CrashingStreamWriter(base, arm, point, int(batch))


class NonIdempotentStreamWriter(ZeroRenameStreamWriter):
    """Broken on purpose: completes every commit's uploads, never asking whether the batch id
    was committed before — what a sink that ignores Spark's re-runs does."""

    def commit(self, messages: list[WriterCommitMessage | None], batchId: int) -> None:
        from zerorename.spark.core import make_store
        from zerorename.spark.streaming import _clean_job, _uploads
        from zerorename.table_log import complete_upload

        ours = [m for m in messages if isinstance(m, StreamCommitMessage)]
        spec = batch_spec(self.stream, batchId, ours[0].run_id)
        store = make_store(spec)
        files = _uploads([m.outcome for m in ours])
        for f in files:
            complete_upload(store, f)
        _clean_job(store, spec.dest, spec.job_id, {f.upload_id for f in files})


class BrokenSource(ZeroRenameDataSource):
    @classmethod
    def name(cls) -> str:
        return "zerorename_broken"

    def streamWriter(self, schema: Any, overwrite: bool) -> NonIdempotentStreamWriter:
        return NonIdempotentStreamWriter(stream_writer(dict(self.options), schema,
                                                       overwrite).stream)


class ZombieStreamWriter(ZeroRenameStreamWriter):
    """A driver that stalls in batch ``batch``'s commit instead of dying: while ``arm``
    exists it saves the commit it was about to make (the writer and the real tasks'
    messages) to ``hold`` and stops the query without aborting anything — its tasks' uploads
    stay pending, as a stalled driver's do — so the test can replay the commit later, after
    a newer run of the query took over."""

    def __init__(self, base: ZeroRenameStreamWriter, arm: str, hold: str, batch: int) -> None:
        super().__init__(base.stream)
        self.arm, self.hold, self.batch = arm, hold, batch

    def _stalled(self, batch_id: int) -> bool:
        return batch_id == self.batch and Path(self.arm).exists()

    def commit(self, messages: list[WriterCommitMessage | None], batchId: int) -> None:
        if self._stalled(batchId):
            Path(self.hold).write_bytes(pickle.dumps(
                (ZeroRenameStreamWriter(self.stream), messages, batchId)))
            raise InjectedCrash(f"driver stalled in the commit of batch {batchId}")
        super().commit(messages, batchId)

    def abort(self, messages: list[WriterCommitMessage | None], batchId: int) -> None:
        if not self._stalled(batchId):  # a stalled driver aborts nothing
            super().abort(messages, batchId)


class ZombieSource(ZeroRenameDataSource):
    """``format("zerorename_zombie")``: zerorename's sink with options ``arm``, ``hold``,
    ``batch`` saying where the driver stalls."""

    @classmethod
    def name(cls) -> str:
        return "zerorename_zombie"

    def streamWriter(self, schema: Any, overwrite: bool) -> ZombieStreamWriter:
        options = dict(self.options)
        arm, hold, batch = options.pop("arm"), options.pop("hold"), options.pop("batch")
        return ZombieStreamWriter(stream_writer(options, schema, overwrite), arm, hold,
                                  int(batch))
