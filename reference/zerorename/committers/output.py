"""The files a task writes: :class:`OutputFile`, the write-only file object every committer
hands out, and :class:`ObjectWriter`, the one that writes a single object (PUT, or a
multipart upload once it outgrows a part) — plus the part size both depend on.

A committer decides *where* a file goes and what happens at close; the file object only
buffers, streams parts, and calls back, so each committer's file is a few hooks.
"""

from __future__ import annotations

import io
import threading
from collections.abc import Callable, Iterable, Iterator
from types import TracebackType
from typing import TYPE_CHECKING, BinaryIO

from zerorename import options as O
from zerorename.committers.cleanup import abort_quietly
from zerorename.committers.reliable import ReliableStore
from zerorename.errors import CommitError, OptionValueError
from zerorename.store import StoreCapabilities

if TYPE_CHECKING:
    from _typeshed import ReadableBuffer

__all__ = [
    "DEFAULT_PART_SIZE",
    "PART_SIZE_OPTION",
    "ObjectWriter",
    "OutputFile",
    "check_part_size",
]

#: Default ``fs.s3a.multipart.size``.  Hadoop's is 64M, but the magic committer buffers one
#: part in memory per open file; 16 MiB × 10,000 parts still allows 160 GB files.
DEFAULT_PART_SIZE = 16 << 20
PART_SIZE_OPTION = O.PART_SIZE.name


def check_part_size(size: int, caps: StoreCapabilities, *, given: object = None) -> int:
    """``size`` (``fs.s3a.multipart.size``, written ``given``) if the store's multipart
    limits allow it, else an :class:`OptionValueError` naming the option and its value.

    Checked when a committer is built: a part under the store's minimum would otherwise fail
    only when job commit completes the uploads (S3's EntityTooSmall), after every task wrote
    its data.  The number of parts (``max_parts``) depends on each file's size, so it is not
    checked here."""
    value = f"value {size}" if given is None or str(given).strip() == str(size) \
        else f"value {str(given).strip()!r} ({size} bytes)"
    if size < 1:
        raise OptionValueError(PART_SIZE_OPTION, f"{value} is not a size of at least 1 byte")
    if not caps.multipart:
        return size
    if size < caps.min_part_size:
        raise OptionValueError(PART_SIZE_OPTION, f"{value} is below the minimum part size of "
                               f"the store, {caps.min_part_size} bytes (every part but a "
                               "file's last must be at least that large)")
    if caps.max_part_size is not None and size > caps.max_part_size:
        raise OptionValueError(PART_SIZE_OPTION, f"{value} is above the maximum part size of "
                               f"the store, {caps.max_part_size} bytes")
    return size


class OutputFile(BinaryIO):
    """A binary file being written by a task: ``write``, then ``close`` (or ``abort``).

    A write-only :class:`typing.BinaryIO`, so writers such as pyarrow accept it.  Used as a
    context manager, an exception inside the block aborts the file (its upload or local data
    is discarded) instead of committing a partial file.  An interrupt (a ``BaseException``
    that is not an ``Exception``: ``KeyboardInterrupt``, a killed task) sends nothing more and
    leaves the file open in its committer: ``commit_task`` refuses it, ``abort_task`` aborts it.
    """

    def __init__(self, url: str) -> None:
        self.url = url
        self._pos = 0
        self._closed = False  # no more writes
        #: the file's remote state is final: closed (committed or aborted by its error) or
        #: aborted.  An interrupt leaves a file closed to writes but not settled, so that
        #: ``abort`` — the task's ``abort_task`` — still discards what it sent.
        self._settled = False
        self._lock = threading.Lock()

    @property
    def closed(self) -> bool:
        return self._closed

    @property
    def mode(self) -> str:
        return "wb"

    @property
    def name(self) -> str:
        return self.url

    def writable(self) -> bool:
        return True

    def readable(self) -> bool:
        return False

    def seekable(self) -> bool:
        return False

    def isatty(self) -> bool:
        return False

    def tell(self) -> int:
        return self._pos

    def flush(self) -> None:
        return None

    def fileno(self) -> int:
        raise io.UnsupportedOperation(f"{self.url}: no file descriptor")

    def read(self, n: int = -1) -> bytes:
        raise io.UnsupportedOperation(f"{self.url}: write-only")

    def readline(self, limit: int = -1) -> bytes:
        raise io.UnsupportedOperation(f"{self.url}: write-only")

    def readlines(self, hint: int = -1) -> list[bytes]:
        raise io.UnsupportedOperation(f"{self.url}: write-only")

    def seek(self, offset: int, whence: int = 0) -> int:
        raise io.UnsupportedOperation(f"{self.url}: not seekable")

    def truncate(self, size: int | None = None) -> int:
        raise io.UnsupportedOperation(f"{self.url}: not truncatable")

    def __iter__(self) -> Iterator[bytes]:
        raise io.UnsupportedOperation(f"{self.url}: write-only")

    def __next__(self) -> bytes:
        raise io.UnsupportedOperation(f"{self.url}: write-only")

    def write(self, s: ReadableBuffer) -> int:
        if self._closed:
            raise CommitError(self.url, "write to a closed file")
        chunk = bytes(s)
        with self._lock:
            self._write(chunk)
            self._pos += len(chunk)
        return len(chunk)

    def writelines(self, lines: Iterable[ReadableBuffer]) -> None:
        for line in lines:
            self.write(line)

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        try:
            self._finish()
        except Exception:  # the subclass aborted the file: settled
            self._settled = True
            raise
        # an interrupt (a BaseException) leaves it unsettled: ``abort`` still discards it
        self._settled = True

    def abort(self) -> None:
        """Discard the file: also one whose writing or closing was interrupted."""
        if self._settled:
            return
        self._closed = True
        self._settled = True
        self._abort()

    def __enter__(self) -> OutputFile:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if exc_type is None:
            self.close()
            return
        if not issubclass(exc_type, Exception):
            # interrupted or crashed: no more requests now, no more writes, no commit; the
            # file stays open in its committer, whose abort_task aborts it
            self._closed = True
            return
        try:
            self.abort()
        except Exception as secondary:  # keep the original error; note the abort failure
            if exc is not None:
                exc.add_note(f"aborting {self.url} also failed: {secondary}")

    # subclass hooks
    def _write(self, data: bytes) -> None:
        raise NotImplementedError

    def _finish(self) -> None:
        raise NotImplementedError

    def _abort(self) -> None:
        raise NotImplementedError


class ObjectWriter(OutputFile):
    """Writes one object: buffered and PUT on close, or — once it outgrows one part and the
    store has multipart uploads — streamed as a multipart upload completed on close.  Memory
    stays bounded by the part size whatever the file size."""

    def __init__(self, store: ReliableStore, url: str, part_size: int, multipart: bool,
                 on_close: Callable[[str, int, str], None],
                 on_abort: Callable[[str], None] | None = None) -> None:
        super().__init__(url)
        self.store = store
        self.part_size = part_size
        self.multipart = multipart
        self.on_close = on_close
        self.on_abort = on_abort
        self._buf = bytearray()
        self._upload: str | None = None
        self._parts: list[tuple[int, str]] = []

    def _write(self, data: bytes) -> None:
        self._buf += data
        if not self.multipart:
            return
        while len(self._buf) >= self.part_size:
            if self._upload is None:
                self._upload = self.store.create_multipart(self.url)
            self._send(bytes(self._buf[: self.part_size]))
            del self._buf[: self.part_size]

    def _send(self, chunk: bytes) -> None:
        assert self._upload is not None
        number = len(self._parts) + 1
        self._parts.append((number, self.store.upload_part(self.url, self._upload, number,
                                                           chunk)))

    def _finish(self) -> None:
        try:
            if self._upload is None:
                etag = self.store.put(self.url, bytes(self._buf))
            else:
                if self._buf or not self._parts:
                    self._send(bytes(self._buf))
                etag = self.store.complete_checked(self.url, self._upload, self._parts,
                                                   self._pos)
        except Exception:
            self._abort()
            raise
        self._buf = bytearray()
        self.on_close(self.url, self._pos, etag)

    def _abort(self) -> None:
        self._buf = bytearray()
        try:
            if self._upload is not None:
                abort_quietly(self.store, self.url, self._upload)
        finally:
            if self.on_abort is not None:
                self.on_abort(self.url)
