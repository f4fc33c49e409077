"""zerorename's stream sink with its task ``write()`` and driver ``commit()`` timed, for
``bench/stream_sink_profile.py`` (``format("zerorename_timing")``, option ``timings``: the
JSON-lines file every Spark process appends its measurements to)."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from typing import Any

from pyspark.sql.datasource import WriterCommitMessage

from zerorename.spark.datasource import ZeroRenameDataSource
from zerorename.spark.streaming import BATCH_ID_PROPERTY
from zerorename.spark.streaming_writer import ZeroRenameStreamWriter, stream_writer


class TimingWriter(ZeroRenameStreamWriter):
    def __init__(self, base: ZeroRenameStreamWriter, timings: str) -> None:
        super().__init__(base.stream)
        self.timings = timings

    def _note(self, what: str, batch: int, started: float) -> None:
        with open(self.timings, "a", encoding="utf-8") as out:
            out.write(json.dumps({"what": what, "batch": batch, "pid": os.getpid(),
                                  "s": round(time.perf_counter() - started, 4)}) + "\n")

    def write(self, iterator: Iterator[Any]) -> WriterCommitMessage:
        from pyspark import TaskContext

        started = time.perf_counter()
        message = super().write(iterator)
        context = TaskContext.get()
        batch = context.getLocalProperty(BATCH_ID_PROPERTY) if context else None
        self._note("write", int(batch or -1), started)
        return message

    def commit(self, messages: list[WriterCommitMessage | None], batchId: int) -> None:
        started = time.perf_counter()
        super().commit(messages, batchId)
        self._note("commit", batchId, started)


class TimingSource(ZeroRenameDataSource):
    @classmethod
    def name(cls) -> str:
        return "zerorename_timing"

    def streamWriter(self, schema: Any, overwrite: bool) -> TimingWriter:
        options = dict(self.options)
        timings = options.pop("timings")
        return TimingWriter(stream_writer(options, schema, overwrite), timings)
