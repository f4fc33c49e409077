"""The ``zerorename`` Python Data Source: DataFrame writes through a zerorename committer.

Usage (Spark >= 4.0; importing :mod:`zerorename.spark` registers the source on first use)::

    (df.write.format("zerorename")
        .option("committer", "magic").option("partition_by", "year,month")
        .mode("append")                        # or "overwrite"
        .save("s3://bucket/events"))

Spark accepts only ``append`` and ``overwrite`` as save modes for Python data sources (it
raises ``UNSUPPORTED_DATA_SOURCE_SAVE_MODE`` for the others), so ``error`` and ``ignore`` are
passed as ``.option("mode", "error"|"ignore")``; :func:`zerorename.spark.write` does that
for you.  Why a Data Source and not ``spark.sql.sources.commitProtocolClass``: that setting
must name a JVM class, and Spark rejects a Python one at session start (docs/user/spark.md).

Where each method runs (measured on 4.3): ``writer()`` in a planning Python worker on the
driver host, ``write()`` in executor Python workers, ``commit()``/``abort()`` in another
driver-side worker.  The :class:`~zerorename.spark.core.WriteSpec` is the only state that
travels between them.

``auto`` is decided in ``writer()``, before any task runs, and the tasks and the commit get the
decided committer and its reason in the spec.  That worker's stderr is copied into the driver's
stderr by Spark, but its Python logging is unconfigured (INFO is dropped), so it sends the
Spark writer's log lines, the decision among them, there (:func:`_log_to_driver`): the reason
reaches the driver's log, as under :func:`zerorename.spark.write`, not only ``_SUCCESS``.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pyspark.sql.datasource import (
    DataSource,
    DataSourceArrowWriter,
    DataSourceReader,
    DataSourceStreamWriter,
    InputPartition,
    WriterCommitMessage,
)

from .core import JobDriver, TaskOutcome, WriteSpec, make_store, spec_from_options

if TYPE_CHECKING:
    from pyspark.sql.types import StructType

NAME = "zerorename"


#: What the driver-side workers send to the driver's log at INFO: the Spark writer's decisions
#: (``auto``'s choice) and the committers' job stages (one line per stage of setup, commit
#: and abort: files, bytes, requests, time).  Task stages are DEBUG, so they stay out.
DRIVER_LOGGERS = ("zerorename.spark", "zerorename.committer")


def _log_to_driver() -> None:
    """In a driver-side Python worker whose logging nobody configured, send the Spark
    writer's and the committers' job-level log lines (INFO and above) to stderr, which Spark
    copies into the driver's log: ``auto``'s decision, and a line per stage of the job's
    setup and commit, which run in these workers (never in the user's driver process, whose
    logging therefore cannot show them).  A process with handlers of its own (a user's, a
    test's) is left alone."""
    if logging.getLogger().handlers:
        return
    for name in DRIVER_LOGGERS:
        ours = logging.getLogger(name)
        if ours.handlers:
            continue
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
        ours.addHandler(handler)
        if ours.level == logging.NOTSET:
            ours.setLevel(logging.INFO)


@dataclass
class ZeroRenameCommitMessage(WriterCommitMessage):
    """One task attempt's report: the committer's TaskCommitMessage (JSON) and statistics."""

    outcome: TaskOutcome


class ZeroRenameDataSource(DataSource):
    """``format("zerorename")``: writes through a committer; reads visible Parquet via boto3.

    Reading exists for stores the session's JVM cannot open (``s3://`` without
    ``hadoop-aws``); where ``spark.read.parquet(dest)`` works it reads the same files.
    """

    @classmethod
    def name(cls) -> str:
        return NAME

    def _read_spec(self) -> WriteSpec:
        return spec_from_options(dict(self.options))

    def schema(self) -> StructType:
        from pyspark.sql.pandas.types import from_arrow_schema

        from .reader import infer_schema, table_data_files

        spec = self._read_spec()
        store = make_store(spec)
        return from_arrow_schema(infer_schema(store, table_data_files(store, spec.dest),
                                              spec.dest))

    def reader(self, schema: StructType) -> ZeroRenameReader:
        return ZeroRenameReader(self._read_spec(), schema)

    def writer(self, schema: StructType, overwrite: bool) -> ZeroRenameWriter:
        spec = spec_from_options(dict(self.options), overwrite=overwrite)
        if spec.encoder == "spark":
            check_chunk_input(spec, schema)
        missing = [c for c in spec.partition_by if c not in schema.fieldNames()]
        if missing and spec.encoder != "spark":
            raise ValueError(f"partition_by columns {missing} are not in the DataFrame "
                             f"(columns: {schema.fieldNames()})")
        _log_to_driver()  # auto is decided here, on the driver host: say it in its log
        spec = JobDriver(spec).setup()
        return ZeroRenameWriter(spec, _empty_output_schema(spec, schema))

    def streamWriter(self, schema: StructType, overwrite: bool) -> DataSourceStreamWriter:
        """``df.writeStream.format("zerorename")``: see :mod:`zerorename.spark.streaming`."""
        from .streaming_writer import stream_writer

        return stream_writer(dict(self.options), schema, overwrite)


def check_chunk_input(spec: WriteSpec, schema: StructType) -> None:
    """``encoder=spark`` on the data source means "the rows are chunks Spark's encoder made":
    only :func:`zerorename.spark.write` can turn a DataFrame into those."""
    from .chunks import CHUNK_COLUMNS
    from .spec import WriteOptionError

    if tuple(schema.fieldNames()) != CHUNK_COLUMNS:
        raise WriteOptionError(spec.dest, "encoder='spark' needs zerorename.spark.write(df, "
                               "...): df.write.format('zerorename') hands the rows to Python "
                               "workers, which encode them with pyarrow (encoder='python')")


@dataclass
class FilePartition(InputPartition):
    """One Spark input partition: a few visible data files read by one task."""

    files: tuple[tuple[str, int, tuple[tuple[str, str | None], ...]], ...]


class ZeroRenameReader(DataSourceReader):
    """Lists the destination once (driver side); each task reads its files with pyarrow.

    Files are packed into partitions the way Spark packs splits
    (``spark.sql.files.maxPartitionBytes`` 128 MB, ``openCostInBytes`` 4 MB), so a dataset of
    many small files is not one task per file.
    """

    MAX_PARTITION_BYTES = 128 << 20
    OPEN_COST = 4 << 20

    def __init__(self, spec: WriteSpec, schema: StructType) -> None:
        self.spec = spec
        self.schema = schema

    def partitions(self) -> list[FilePartition]:
        from .reader import table_data_files

        groups: list[list[tuple[str, int, tuple[tuple[str, str | None], ...]]]] = [[]]
        filled = 0
        for f in table_data_files(make_store(self.spec), self.spec.dest):
            cost = f.size + self.OPEN_COST
            if groups[-1] and filled + cost > self.MAX_PARTITION_BYTES:
                groups.append([])
                filled = 0
            groups[-1].append((f.url, f.size, f.partition))
            filled += cost
        return [FilePartition(tuple(g)) for g in groups if g]

    def read(self, partition: InputPartition) -> Iterator[Any]:
        from pyspark.sql.pandas.types import to_arrow_schema

        from .reader import DataFile, read_file

        if not isinstance(partition, FilePartition):
            return  # no files to read (Spark asks for one partition even when there are none)
        store = make_store(self.spec)
        schema = to_arrow_schema(self.schema, timezone="UTC")  # instants; Spark re-zones
        for url, size, values in partition.files:
            yield from read_file(store, DataFile(url, size, values), schema)


def _empty_output_schema(spec: WriteSpec, schema: StructType) -> Any:
    """The Arrow schema of the file a write of no rows leaves (see :meth:`ZeroRenameWriter.
    commit`), or None where none is written: a partitioned write (a file beside partition
    directories would break Spark's partition discovery; Spark writes none either) and
    chunks of Spark-encoded files (``encoder=spark``: not the user's columns)."""
    if spec.partition_by or spec.encoder == "spark" or spec.skip:
        return None
    from pyspark.sql.pandas.types import to_arrow_schema

    return to_arrow_schema(schema, timezone="UTC")


class ZeroRenameWriter(DataSourceArrowWriter):
    """Task side: Arrow batches → Parquet via the task committer; driver side: job commit.

    A write whose tasks wrote no file at all (an empty DataFrame, or one of no partitions)
    commits one Parquet file of the schema and no rows, written by the driver's commit: the
    output then reads back as an empty frame of its columns, and an empty overwrite leaves a
    readable destination.
    """

    def __init__(self, spec: WriteSpec, empty_schema: Any = None) -> None:
        self.spec = spec
        self.empty_schema = empty_schema

    def write(self, iterator: Iterator[Any]) -> ZeroRenameCommitMessage:
        from .core import run_task
        from .task_context import current_task

        task = current_task("ZeroRenameWriter")
        outcome = run_task(self.spec, task.partition, task.attempt, iterator)
        return ZeroRenameCommitMessage(outcome)

    def commit(self, messages: list[WriterCommitMessage | None]) -> None:
        _log_to_driver()  # the job commit's stages, in the driver's log
        outcomes = [m.outcome if isinstance(m, ZeroRenameCommitMessage) else None
                    for m in messages]
        if self.empty_schema is not None and all(o is not None and o.files == 0
                                                 for o in outcomes):
            from .core import write_schema_only

            outcomes.append(write_schema_only(self.spec, len(outcomes), self.empty_schema))
        JobDriver(self.spec).commit(outcomes)

    def abort(self, messages: list[WriterCommitMessage | None]) -> None:
        # The messages are not trusted: Spark passes None even for tasks that succeeded.
        _log_to_driver()
        JobDriver(self.spec).abort()
