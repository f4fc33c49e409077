"""The RDD route: ``mapPartitionsWithIndex`` writes, ``collect`` returns messages, driver commits.

For pipelines built on RDDs rather than DataFrames.  Spark's scheduler gives this the same
guarantee the Data Source relies on (measured on PySpark 4.3): ``collect`` returns exactly
one result per partition, from the attempt that succeeded, so the driver commits exactly those
task messages.  Failed or losing attempts may have staged data; ``commit_job`` (and
``abort_job`` when the Spark job fails) find it by job-scoped listing.

Unlike the Data Source, the job committer here lives in the caller's own driver process, so
the caller gets the job commit's request counts and timing back directly.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .core import JobDriver, TaskOutcome, WriteSpec, run_task, spec_from_options

if TYPE_CHECKING:
    from pyspark import RDD

#: Records are converted to Arrow in batches of this many rows.
BATCH_ROWS = 10_000


@dataclass(frozen=True)
class RDDWriteResult:
    """What the job did: the winning task outcomes, and the driver's commit cost."""

    spec: WriteSpec
    outcomes: list[TaskOutcome]
    commit_seconds: float
    driver_requests: dict[str, int]
    skipped: bool = False

    @property
    def files(self) -> int:
        return sum(o.files for o in self.outcomes)

    @property
    def bytes(self) -> int:
        return sum(o.bytes for o in self.outcomes)


def _batches(records: Iterable[Any], schema: Any, rows: int) -> Iterator[Any]:
    """pyarrow RecordBatches from Rows, dicts, tuples, or RecordBatches/Tables passed as is."""
    import pyarrow as pa  # type: ignore[import-untyped]

    pending: list[Any] = []

    def flush() -> Iterator[Any]:
        if pending:
            table = pa.Table.from_pylist(pending, schema=schema)
            yield from table.to_batches()
            pending.clear()

    for record in records:
        if isinstance(record, pa.RecordBatch):
            yield from flush()
            yield record
        elif isinstance(record, pa.Table):
            yield from flush()
            yield from record.to_batches()
        else:
            if hasattr(record, "asDict"):
                record = record.asDict()
            elif isinstance(record, tuple):
                record = dict(zip(schema.names, record, strict=True))
            pending.append(record)
            if len(pending) >= rows:
                yield from flush()
    yield from flush()


def _task_function(spec: WriteSpec, schema: Any,
                   rows: int) -> Callable[[int, Iterable[Any]], Iterator[TaskOutcome]]:
    def write_partition(index: int, records: Iterable[Any]) -> Iterator[TaskOutcome]:
        from pyspark import TaskContext

        context = TaskContext.get()
        attempt = context.attemptNumber() if context is not None else 0
        yield run_task(spec, index, attempt, _batches(records, schema, rows))

    return write_partition


def write_rdd(
    rdd: RDD[Any],
    dest: str,
    *,
    schema: Any,
    committer: str = "auto",
    partition_by: Sequence[str] | str | None = None,
    mode: str = "append",
    batch_rows: int = BATCH_ROWS,
    **options: Any,
) -> RDDWriteResult:
    """Write an RDD of records as partitioned Parquet under ``dest`` through ``committer``.

    ``schema`` is a ``pyarrow.Schema`` (or a Spark ``StructType``, converted); records are
    Rows, dicts, tuples in schema order, or pyarrow RecordBatches/Tables.  Options and modes
    are those of :func:`zerorename.spark.write`.  If the Spark job fails, the job is aborted
    (nothing visible, nothing pending) and the Spark error is re-raised.
    """
    from pyspark.sql.types import StructType

    if isinstance(schema, StructType):
        from pyspark.sql.pandas.types import to_arrow_schema

        schema = to_arrow_schema(schema, timezone="UTC")  # naive datetimes are taken as UTC
    spec = spec_from_options({**options, "path": dest, "committer": committer, "mode": mode,
                              "partition_by": partition_by or ()})
    driver = JobDriver(spec)
    spec = driver.setup()
    if spec.skip:
        return RDDWriteResult(spec, [], 0.0, {}, skipped=True)
    try:
        outcomes = rdd.mapPartitionsWithIndex(_task_function(spec, schema, batch_rows)).collect()
    except BaseException as error:
        try:
            driver.abort()
        except Exception as abort_error:  # keep Spark's error; say what may have leaked
            error.add_note(f"aborting job {spec.job_id} also failed: {abort_error}")
        raise
    started = time.monotonic()
    driver.commit(outcomes)
    elapsed = time.monotonic() - started
    return RDDWriteResult(spec, outcomes, elapsed, dict(driver.store.request_counts()))
