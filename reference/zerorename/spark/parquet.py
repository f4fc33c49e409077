"""Hive-partitioned Parquet files streamed through a task committer's ``open()``.

One task attempt turns Arrow record batches into one Parquet file per partition directory it
touches (``year=2024/month=3/part-00003-<job>.parquet``), the layout ``spark.read.parquet``
discovers.  Files are streamed a row group at a time: each file is opened through the
committer (for the magic committer that is a multipart upload whose parts go out while rows
arrive), and rows wait in memory only until a row group's worth is there, so a task's memory
is bounded by about two row groups plus the committer's parts, not by its data.

Why file names carry the task and job but not the attempt: every attempt of one task writes
the *same* names, so whichever attempt the committer lets through, the output has exactly one
file per (task, partition) — a second attempt can replace, never add.  The job UUID makes
names unique across jobs (appends never collide) and lets cleanup recognise a job's files.
"""

from __future__ import annotations

import contextlib
import math
import sys
from collections.abc import Callable, Iterable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import IO, Any, Protocol

import pyarrow as pa  # type: ignore[import-untyped]
import pyarrow.parquet as pq  # type: ignore[import-untyped]

from .encoding import ParquetSettings

#: Hive's (and Spark's) directory name for a null partition value.
NULL_PARTITION = "__HIVE_DEFAULT_PARTITION__"

#: Characters Spark escapes in partition directory names (``ExternalCatalogUtils.charToEscape``).
_ESCAPE = frozenset(
    [chr(c) for c in range(0x01, 0x20)]
    + ['"', "#", "%", "'", "*", "/", ":", "=", "?", "\\", "\x7f", "{", "[", "]", "^"]
)

Opener = Callable[[str], AbstractContextManager[IO[bytes]]]

def escape_partition_value(value: Any) -> str:
    """Render one partition value as Spark does: ``true``/``false``, ``%XX`` escapes, null."""
    if value is None:
        return NULL_PARTITION
    if isinstance(value, bool):
        text = "true" if value else "false"
    elif isinstance(value, float) and not math.isfinite(value):  # Java's spelling, as Spark's
        text = "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    else:
        text = str(value)
    if text == "":
        return NULL_PARTITION
    return "".join(f"%{ord(ch):02X}" if ch in _ESCAPE else ch for ch in text)


def partition_dir(columns: Sequence[str], values: Sequence[Any]) -> str:
    """``year=2024/month=3`` for columns ``(year, month)`` and values ``(2024, 3)``."""
    return "/".join(
        f"{escape_partition_value(col)}={escape_partition_value(val)}"
        for col, val in zip(columns, values, strict=True)
    )


class _CountingSink:
    """The file-like object pyarrow writes to: forwards to the committer's file, counts bytes.

    pyarrow's ``PythonFile`` needs ``write``, ``flush``, ``close`` and ``closed``; ``close`` is
    deliberately a no-op so that closing the Parquet writer does not publish the file — the
    committer's context manager decides that, after the footer is written.
    """

    def __init__(self, target: IO[bytes]) -> None:
        self.target = target
        self.size = 0
        self.closed = False

    def write(self, data: bytes) -> int:
        self.target.write(data)
        self.size += len(data)
        return len(data)

    def flush(self) -> None:
        """Nothing to do: the committer's file decides when to send (part size)."""

    def close(self) -> None:
        self.closed = True


class TaskFileWriter(Protocol):
    """What turns one task's batches into files through the committer: rows encoded here
    (:class:`PartitionedParquetWriter`) or files Spark encoded
    (:class:`~zerorename.spark.chunks.ChunkedFileWriter`)."""

    written: list[WrittenFile]

    def write_batch(self, batch: Any) -> None: ...

    def close(self) -> None: ...

    def discard(self) -> None: ...


def write_all(writer: TaskFileWriter, batches: Iterable[Any]) -> list[WrittenFile]:
    """Write every batch and finish every file; on any failure (a crash included) close what
    is open with the error, so the committer drops it, and re-raise."""
    try:
        for batch in batches:
            writer.write_batch(batch)
        writer.close()
    except BaseException:
        writer.discard()
        raise
    return writer.written


def close_with_error(stacks: Iterable[contextlib.ExitStack]) -> None:
    """Exit each open file's context with the exception in flight (best effort): the
    committer then aborts the file instead of publishing a torn one."""
    error = sys.exc_info()
    for stack in stacks:
        with contextlib.suppress(Exception):
            stack.__exit__(*error)


def file_relpath(file_stem: str, directory: str, roll: int) -> str:
    """``month=3/part-00003-<job>-c001.parquet``: a task's ``roll``-th file in ``directory``
    (``""``: the destination itself); Spark names rolled files the same way."""
    name = file_stem + (f"-c{roll:03d}" if roll else "") + ".parquet"
    return f"{directory}/{name}" if directory else name


@dataclass
class WrittenFile:
    """One finished file: path relative to the destination, bytes and rows."""

    relpath: str
    size: int
    rows: int


@dataclass
class _OpenFile:
    """A file being written: rows are buffered until a row group's worth is there."""

    relpath: str
    stack: contextlib.ExitStack
    sink: _CountingSink
    settings: ParquetSettings
    #: created with the first row group, whose rows decide the dictionary columns
    writer: Any = None
    rows: int = 0
    pending: list[Any] = field(default_factory=list)
    pending_rows: int = 0
    pending_bytes: int = 0

    def buffer(self, batch: Any) -> None:
        self.pending.append(batch)
        self.pending_rows += batch.num_rows
        self.pending_bytes += batch.nbytes
        self.rows += batch.num_rows

    def flush(self) -> None:
        """Write the buffered rows as one row group (no copy: a chunked table)."""
        if self.pending_rows:
            table = pa.Table.from_batches(self.pending)
            if self.writer is None:
                self.writer = pq.ParquetWriter(pa.PythonFile(self.sink, mode="w"), table.schema,
                                               **self.settings.writer_options(table))
            self.writer.write_table(table, row_group_size=self.pending_rows)
        self.pending.clear()
        self.pending_rows = self.pending_bytes = 0


@dataclass
class PartitionedParquetWriter:
    """Split batches by ``partition_by`` and stream each partition to its own Parquet file.

    ``open_file`` is the task committer's ``open``.  ``file_stem`` names the files
    (``part-00003-<job uuid>``).  At most ``max_open_files`` files are open at once; when a
    task touches more partitions than that, the least recently used file is finished and a
    later batch for it starts a new file with a ``-c001`` suffix (Spark rolls files the same
    way); a file that reaches ``settings.max_records_per_file`` rows rolls the same way.
    Rows are buffered per file up to a row group (``settings.row_group_bytes``); when all
    open files together buffer more than two row groups, the largest buffer is written out
    early, so memory stays bounded however many partitions a task touches.  ``on_batch`` is
    called after every batch written (the demo's fault injection uses it to crash mid-write).
    """

    open_file: Opener
    file_stem: str
    partition_by: Sequence[str] = ()
    settings: ParquetSettings = field(default_factory=ParquetSettings)
    max_open_files: int = 32
    on_batch: Callable[[], None] | None = None
    written: list[WrittenFile] = field(default_factory=list, init=False)
    _buffered: int = field(default=0, init=False)
    #: open files and roll counts by partition *directory* (``d=-0.0``), not by values:
    #: Python holds ``-0.0 == 0.0`` (one dict key) where Spark names two directories, and
    #: holds ``None != ""`` where Spark names one (``__HIVE_DEFAULT_PARTITION__``)
    _open: dict[str, _OpenFile] = field(default_factory=dict, init=False)
    _rolls: dict[str, int] = field(default_factory=dict, init=False)

    def write_all(self, batches: Iterable[Any]) -> list[WrittenFile]:
        """Write every batch, finish every file; on any failure discard what is open."""
        return write_all(self, batches)

    def write_batch(self, batch: Any) -> None:
        """Route the rows of one ``pyarrow.RecordBatch`` to their partitions' files."""
        if batch.num_rows == 0:
            return
        if not self.partition_by:
            self._append((), batch)
        else:
            for values, rows in split_by_partition(batch, self.partition_by):
                self._append(values, rows.drop_columns(list(self.partition_by)))
        if self.on_batch is not None:
            self.on_batch()

    def close(self) -> None:
        """Finish every open file (writes the Parquet footers; the committer publishes)."""
        while self._open:
            key = next(iter(self._open))
            self._finish(key)

    def discard(self) -> None:
        """Close open files with an error so the committer drops them (best effort)."""
        close_with_error(handle.stack for handle in self._open.values())
        self._open.clear()

    def _append(self, values: tuple[Any, ...], batch: Any) -> None:
        key = partition_dir(self.partition_by, values) if values else ""
        limit = self.settings.max_records_per_file
        while batch.num_rows:
            handle = self._open.pop(key, None)
            if handle is None:
                if len(self._open) >= self.max_open_files:
                    self._finish(next(iter(self._open)))
                handle = self._start(key)
            self._open[key] = handle  # re-insert: dict order is the LRU order
            room = limit - handle.rows if limit else batch.num_rows
            piece, batch = batch.slice(0, room), batch.slice(room)
            self._buffer(handle, piece)
            if limit and handle.rows >= limit:
                self._finish(key)

    def _buffer(self, handle: _OpenFile, batch: Any) -> None:
        """Add ``batch`` to the file's row group, cut where the row group reaches its size."""
        limit = self.settings.row_group_bytes
        while batch.num_rows:
            per_row = batch.nbytes / batch.num_rows
            room = max(1, int((limit - handle.pending_bytes) / per_row)) if per_row else \
                batch.num_rows
            piece, batch = batch.slice(0, room), batch.slice(room)
            self._buffered -= handle.pending_bytes
            handle.buffer(piece)
            if batch.num_rows or handle.pending_bytes >= limit:
                handle.flush()
            self._buffered += handle.pending_bytes
        if self._buffered > 2 * self.settings.row_group_bytes:
            largest = max(self._open.values(), key=lambda h: h.pending_bytes)
            self._buffered -= largest.pending_bytes
            largest.flush()

    def _start(self, key: str) -> _OpenFile:
        roll = self._rolls.get(key, 0)
        self._rolls[key] = roll + 1
        relpath = file_relpath(self.file_stem, key, roll)
        stack = contextlib.ExitStack()
        target = stack.enter_context(self.open_file(relpath))
        return _OpenFile(relpath, stack, _CountingSink(target), self.settings)

    def _finish(self, key: str) -> None:
        handle = self._open.pop(key)
        self._buffered -= handle.pending_bytes
        handle.flush()
        if handle.writer is not None:
            handle.writer.close()
        handle.stack.close()
        self.written.append(WrittenFile(handle.relpath, handle.sink.size, handle.rows))


def split_by_partition(batch: Any, columns: Sequence[str]) -> list[tuple[tuple[Any, ...], Any]]:
    """``[(partition values, rows of batch with those values)]``, in first-seen order.

    Vectorised: one single-threaded ``group_by`` collects each key's row numbers (in row
    order), then one ``take`` per key gathers its rows, so a batch costs about two passes over
    Arrow memory however many partitions it touches (a mask and a filter per key cost one
    pass per key: 12 months, 12 passes).  Nulls form their own group, and so does NaN (a
    comparison with NaN is never true, so a mask would have dropped those rows).
    """
    missing = [c for c in columns if c not in batch.schema.names]
    if missing:
        raise ValueError(f"partition columns {missing} are not in the data ({batch.schema.names})")
    keys = pa.Table.from_batches([batch]).select(list(columns))
    keys = keys.append_column(_ROW, _row_numbers(batch.num_rows))
    groups = keys.group_by(list(columns), use_threads=False).aggregate([(_ROW, "list")])
    rows = groups[f"{_ROW}_list"].combine_chunks()
    return [(tuple(key[c] for c in columns), batch.take(rows[i].values))
            for i, key in enumerate(groups.select(list(columns)).to_pylist())]


#: The row-number column :func:`split_by_partition` groups (a name no DataFrame column has).
_ROW = "__zerorename_row__"
_ROW_NUMBERS: list[Any] = [pa.array([], type=pa.int64())]


def _row_numbers(count: int) -> Any:
    """``0, 1, ... count - 1`` as an Arrow array: a zero-copy slice of one cached array, grown
    (doubled) when a batch is longer than any before, so a batch does not build it anew."""
    if len(_ROW_NUMBERS[0]) < count:
        _ROW_NUMBERS[0] = pa.array(range(max(count, 2 * len(_ROW_NUMBERS[0]))), type=pa.int64())
    return _ROW_NUMBERS[0].slice(0, count)
