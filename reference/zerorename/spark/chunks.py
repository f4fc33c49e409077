"""Task side of Spark's own Parquet encoding: the finished files' bytes, through the committer.

The JVM half (``ParquetChunks`` in the project's ``jvm/spark``, loaded by
:mod:`zerorename.spark.jvm`) hands each task its files as chunk rows in file order: every chunk
names its file (a number within the task), the file's partition directory and roll, and the last
one carries the file's row count. Here each file is opened through the committer on its first
chunk, written chunk by chunk (no copy: the bytes are Arrow buffers) and closed on its last, so
for the magic committer its parts go out while later files are still being encoded. Names come
from :func:`~zerorename.spark.parquet.file_relpath`, as for files encoded in Python: every
attempt of a task writes the same names. """

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import IO, Any

from .parquet import Opener, WrittenFile, close_with_error, file_relpath, write_all

#: The chunk rows' columns, in the order ``ParquetChunks.java`` emits them.
CHUNK_COLUMNS = ("file", "dir", "roll", "data", "rows", "last")


class IncompleteChunksError(RuntimeError):
    """The chunk rows of a task ended with a file not finished: the encoder broke its contract
    (a task must never publish a file without its footer)."""


@dataclass
class _Receiving:
    """A file whose chunks are arriving."""

    relpath: str
    stack: contextlib.ExitStack
    target: IO[bytes]
    size: int = 0


@dataclass
class ChunkedFileWriter:
    """Writes the files of one task's chunk rows; the counterpart of
    :class:`~zerorename.spark.parquet.PartitionedParquetWriter` for Spark-encoded input."""

    open_file: Opener
    file_stem: str
    on_batch: Callable[[], None] | None = None
    written: list[WrittenFile] = field(default_factory=list, init=False)
    _open: dict[int, _Receiving] = field(default_factory=dict, init=False)

    def write_all(self, batches: Iterable[Any]) -> list[WrittenFile]:
        """Write every chunk; on any failure close what is open with the error (the committer
        then drops it)."""
        return write_all(self, batches)

    def write_batch(self, batch: Any) -> None:
        """Route the chunks of one ``pyarrow.RecordBatch`` (columns :data:`CHUNK_COLUMNS`)."""
        if batch.num_rows == 0:
            return
        files, dirs, rolls, data, rows, last = (batch.column(name) for name in CHUNK_COLUMNS)
        numbers, directories, roll_numbers = files.to_pylist(), dirs.to_pylist(), \
            rolls.to_pylist()
        row_counts, lasts = rows.to_pylist(), last.to_pylist()
        for i in range(batch.num_rows):
            handle = self._open.get(numbers[i])
            if handle is None:
                handle = self._start(numbers[i], directories[i], roll_numbers[i])
            chunk = data[i].as_buffer()
            handle.target.write(memoryview(chunk))
            handle.size += chunk.size
            if lasts[i]:
                self._finish(numbers[i], row_counts[i])
        if self.on_batch is not None:
            self.on_batch()

    def close(self) -> None:
        """The chunks ended: every file must have had its last chunk."""
        if self._open:
            raise IncompleteChunksError(
                f"the chunks ended before these files were finished: "
                f"{sorted(h.relpath for h in self._open.values())}")

    def discard(self) -> None:
        """Close open files with the error in flight so the committer drops them."""
        close_with_error(handle.stack for handle in self._open.values())
        self._open.clear()

    def _start(self, number: int, directory: str, roll: int) -> _Receiving:
        relpath = file_relpath(self.file_stem, directory, roll)
        stack = contextlib.ExitStack()
        target = stack.enter_context(self.open_file(relpath))
        handle = _Receiving(relpath, stack, target)
        self._open[number] = handle
        return handle

    def _finish(self, number: int, rows: int) -> None:
        handle = self._open.pop(number)
        handle.stack.close()
        self.written.append(WrittenFile(handle.relpath, handle.size, rows))
