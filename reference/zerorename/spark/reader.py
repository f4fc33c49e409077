"""Read back what zerorename wrote, on stores Spark's JVM cannot reach.

``spark.read.parquet(dest)`` is the reader for ``file://`` destinations and for S3 where the
cluster has ``hadoop-aws``.  The PySpark wheel ships without ``hadoop-aws`` (and Maven is not
reachable from many build machines), so ``s3://`` on a local session has no JVM filesystem.
This module gives the same view through boto3: list the destination, skip hidden names
(``_``/``.``, exactly Hadoop's rule, so ``_SUCCESS`` and any staging are never data), infer
Hive partition columns from ``col=value`` directories with Spark's type rules, and read each
Parquet file with pyarrow.  ``spark.read.format("zerorename").load(dest)`` uses it, one Spark
input partition per file.
"""

from __future__ import annotations

import io
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote

import pyarrow as pa  # type: ignore[import-untyped]
import pyarrow.parquet as pq  # type: ignore[import-untyped]

from zerorename.errors import NotFoundError
from zerorename.store import Store, list_dir
from zerorename.table_log import TableLog
from zerorename.urls import is_hidden, relative_to

from .parquet import NULL_PARTITION

_INT32 = (-(2**31), 2**31 - 1)


@dataclass(frozen=True)
class DataFile:
    """One visible data file: URL, size, and its partition values (as directory text)."""

    url: str
    size: int
    partition: tuple[tuple[str, str | None], ...]


def _data_file(url: str, size: int, dest: str) -> DataFile | None:
    """``url`` as a data file with its partition values, or None if it is not visible data."""
    rel = relative_to(url, dest)
    if is_hidden(rel) or not rel.endswith(".parquet"):
        return None
    parts: list[tuple[str, str | None]] = []
    for element in rel.split("/")[:-1]:
        name, eq, value = element.partition("=")
        if eq:
            text = unquote(value)
            parts.append((unquote(name), None if text == NULL_PARTITION else text))
    return DataFile(url, size, tuple(parts))


def list_data_files(store: Store, dest: str) -> list[DataFile]:
    """Every visible ``.parquet`` file under ``dest`` (sorted), with its partition values."""
    found = (_data_file(obj.url, obj.size, dest) for obj in list_dir(store, dest))
    return sorted((f for f in found if f is not None), key=lambda f: f.url)


def table_data_files(store: Store, dest: str) -> list[DataFile]:
    """The data files a reader should read: every visible ``.parquet`` file, except that a
    file a commit record names (the stream sink's batch records, the fenced committer's job
    records: :mod:`zerorename.table_log`) is read only when every file of its batch or job is
    in place — so a job still completing its uploads is not read in part.  Files no record
    names (written by another committer) are read as listed."""
    log = TableLog(store, dest)
    if not log.has_records:
        return list_data_files(store, dest)
    found = (_data_file(f.url, f.size, dest) for f in log.files(unrecorded=True))
    return [f for f in found if f is not None]


def _infer_type(values: Sequence[str | None]) -> Any:
    """Spark's partition type inference: int, then bigint, then double, else string."""
    present = [v for v in values if v is not None]
    try:
        ints = [int(v) for v in present]
    except ValueError:
        ints = None
    if ints is not None:
        if all(_INT32[0] <= i <= _INT32[1] for i in ints):
            return pa.int32()
        return pa.int64()
    try:
        for v in present:
            float(v)
    except ValueError:
        return pa.string()
    return pa.float64()


def infer_schema(store: Store, files: Sequence[DataFile], dest: str = "<destination>") -> Any:
    """Arrow schema of the dataset: the first file's columns, then the partition columns."""
    if not files:
        raise NotFoundError(
            dest, "no visible Parquet files here, so no schema to read: nothing was written "
                  "(a write of no rows leaves a file of its schema, except a partitioned "
                  "one), or the path is wrong; give the schema to read it as empty: "
                  "spark.read.format('zerorename').schema(...).load(...)")
    data_schema = pq.read_schema(io.BytesIO(store.get(files[0].url)))
    names = [name for name, _ in files[0].partition]
    fields = list(data_schema)
    for i, name in enumerate(names):
        fields.append(pa.field(name, _infer_type([f.partition[i][1] for f in files])))
    return pa.schema(fields)


def read_file(store: Store, file: DataFile, schema: Any) -> Iterator[Any]:
    """RecordBatches of one file, with partition columns added and cast to ``schema``."""
    table = pq.read_table(io.BytesIO(store.get(file.url)))
    for name, value in file.partition:
        typ = schema.field(name).type
        typed = None if value is None else (pa.scalar(value).cast(typ))
        table = table.append_column(name, pa.array([typed] * table.num_rows, type=typ)
                                    if typed is not None else pa.nulls(table.num_rows, typ))
    table = table.select(schema.names).cast(schema)
    yield from table.to_batches()


def read_table(store: Store, dest: str) -> Any:
    """The whole dataset as one Arrow table (small data only: tests and the demo)."""
    files = table_data_files(store, dest)
    schema = infer_schema(store, files, dest)
    batches = [b for f in files for b in read_file(store, f, schema)]
    return pa.Table.from_batches(batches, schema=schema)
