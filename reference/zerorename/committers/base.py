"""What every zerorename committer shares: the reliable store, paths, files, and the
lifecycle (setup → write → task commit → job commit, or abort) with its state checks.

The public methods here are Hadoop's ``OutputCommitter`` (plus ``open``/``write``).  They
check the call is legal (task methods need a task, a task commits once, a job commits once),
run the subclass's step with a per-call :class:`~zerorename.executor.BoundedExecutor`, keep
statistics, and turn a failed job commit into an aborted job with a failure report.
"""

from __future__ import annotations

import contextlib
import enum
import io
import json
import logging
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType, TracebackType
from typing import TYPE_CHECKING, Any, BinaryIO, ClassVar, TypeVar

from zerorename.committers.cleanup import (
    PENDING,
    abort_all_under,
    abort_owned,
    abort_quietly,
    delete_tree,
    scan_job,
)
from zerorename.context import JobContext, Options, TaskContext, hostname
from zerorename.errors import (
    CallOrderError,
    CommitError,
    DestinationEscapeError,
    DuplicateDestinationError,
    FormatError,
    JobFailedError,
    KeyTooLongError,
    NotFoundError,
    OptionValueError,
)
from zerorename.executor import BoundedExecutor, thread_count
from zerorename.formats import (
    TASK_ATTEMPT_ID,
    PendingSet,
    SinglePendingCommit,
    SuccessData,
    parse_json,
)
from zerorename.messages import TaskCommitMessage
from zerorename.retry import Landed, RetryPolicy, complete_landed, put_landed
from zerorename.stages import (
    SAVED_KEY,
    TASK_ATTEMPT_NUMBER_KEY,
    TASK_NAME_KEY,
    FilenameSample,
    StageContext,
    StageRunner,
    TaskSource,
    complete_uploads,
    load_pendingsets,
)
from zerorename.stats import IOStatistics
from zerorename.store import (
    ListPage,
    ObjectInfo,
    Store,
    StoreCapabilities,
    UploadInfo,
    list_dir,
)
from zerorename.stores import store_for_url
from zerorename.urls import join, parse_url

if TYPE_CHECKING:
    from _typeshed import ReadableBuffer

__all__ = [
    "BaseCommitter",
    "JobLayout",
    "ObjectWriter",
    "OutputFile",
    "ReliableStore",
    "check_destination",
    "check_relpath",
]

T = TypeVar("T")

LOG = logging.getLogger(__name__)

#: Default ``fs.s3a.multipart.size``.  Hadoop's is 64M, but the magic committer buffers one
#: part in memory per open file; 16 MiB × 10,000 parts still allows 160 GB files.
DEFAULT_PART_SIZE = 16 << 20
SUCCESS_MARKER = "_SUCCESS"
#: First path elements a task may not write under, and why: the committers' working
#: directories sit at the root of the destination, and so does the job's ``_SUCCESS`` — a file
#: *under* ``_SUCCESS/`` would make the marker's name a directory, and job commit fail after
#: the data was published.  (Deeper elements are ordinary names: ``a/_SUCCESS`` is output.)
RESERVED_FIRST_ELEMENTS: Mapping[str, str] = MappingProxyType({
    "_temporary": "is reserved for committer data (the rename committers' working directory)",
    SUCCESS_MARKER: "is reserved: job commit writes the _SUCCESS marker there",
})
#: First-element prefixes of the magic and staging committers' per-job directories.
RESERVED_PREFIXES = ("__magic", "__staging_job-", "__fenced_job-")

RETRY_LIMIT_OPTION = "fs.s3a.retry.limit"
RETRY_INTERVAL_OPTION = "fs.s3a.retry.interval"
MARK_SUCCESS_OPTION = "mapreduce.fileoutputcommitter.marksuccessfuljobs"
SUMMARY_DIR_OPTIONS = (
    "fs.s3a.committer.summary.report.directory",
    "mapreduce.manifest.committer.summary.report.directory",
)
THREADS_OPTION = "zerorename.committer.threads"


# -- the store, made reliable ---------------------------------------------------------------


def retry_policy(options: Options) -> RetryPolicy:
    """Committer-level retries, the one loop every store request of a committer goes through.

    ``fs.s3a.retry.limit`` retries (default 3) after the first attempt, so one logical store
    operation sends at most limit + 1 requests (:mod:`zerorename.retry`: an S3Store underneath
    defers to this loop, botocore's is switched off).  Retry ``n`` (0 for the first) waits a
    uniform random time below ``min(cap, interval * 2**n)``: ``fs.s3a.retry.interval``
    (default 50ms) is the base, the cap is 16 intervals but at least 1 s; the whole wait is at
    most :meth:`RetryPolicy.max_total_delay` (0.35 s with the defaults).  A negative limit or
    interval is a :class:`CommitError` naming the option."""
    retries = options.get_int(RETRY_LIMIT_OPTION, default=3)
    if retries < 0:
        raise CommitError(RETRY_LIMIT_OPTION, f"retry limit {retries} is negative")
    interval = options.get_seconds(RETRY_INTERVAL_OPTION, default=0.05)
    if interval < 0:
        raise CommitError(RETRY_INTERVAL_OPTION, f"retry interval {interval}s is negative")
    return RetryPolicy(max_attempts=retries + 1, base_delay=interval,
                       max_delay=max(interval * 16, 1.0))


class ReliableStore:
    """A :class:`~zerorename.store.Store` that retries transient failures and counts calls.

    Its loop is the only one that repeats a committer's request: a store underneath that has
    its own (S3Store) runs each attempt once inside it (:meth:`RetryPolicy.call`), so
    ``fs.s3a.retry.limit`` bounds the requests whatever the store and its client.

    Retrying is only safe when a repeated request means the same thing, so two operations
    resolve "my earlier attempt may have landed", with the checks every loop uses
    (:func:`~zerorename.retry.put_landed`, :func:`~zerorename.retry.complete_landed`): a
    conditional PUT that meets 412 on a repeat accepts an object holding exactly its bytes; a
    complete that meets NoSuchUpload on a repeat accepts an object with the ETag its parts
    produce and, in :meth:`complete_checked`, the expected length.  Callers of ``rename``
    handle a vanished source themselves.
    """

    def __init__(self, inner: Store, policy: RetryPolicy, stats: IOStatistics) -> None:
        self.inner = inner
        self.name = inner.name
        self.policy = policy
        self.stats = stats

    def _call(self, op: str, fn: Callable[[], T], *, landed: Landed[T] | None = None) -> T:
        def once() -> T:
            with self.stats.duration(f"store_{op}"):
                return fn()

        def on_retry(attempt: int, exc: BaseException, delay: float) -> None:
            self.stats.incr("store_retries")

        return self.policy.call(once, on_retry=on_retry, landed=landed)

    def capabilities(self) -> StoreCapabilities:
        return self.inner.capabilities()

    def request_counts(self) -> dict[str, int]:
        return self.inner.request_counts()

    def put(self, url: str, data: bytes, *, if_none_match: bool = False,
            if_match: str | None = None) -> str:
        conditional = if_none_match or if_match is not None
        return self._call("put", lambda: self.inner.put(
            url, data, if_none_match=if_none_match, if_match=if_match),
            landed=put_landed(lambda: self.head(url), data) if conditional else None)

    def get(self, url: str) -> bytes:
        return self._call("get", lambda: self.inner.get(url))

    def head(self, url: str) -> ObjectInfo | None:
        return self._call("head", lambda: self.inner.head(url))

    def list_page(self, prefix: str, *, delimiter: str | None = None, token: str | None = None,
                  max_keys: int = 1000) -> ListPage:
        return self._call("list_page", lambda: self.inner.list_page(
            prefix, delimiter=delimiter, token=token, max_keys=max_keys))

    def delete(self, url: str) -> None:
        self._call("delete", lambda: self.inner.delete(url))

    def delete_many(self, urls: Sequence[str]) -> None:
        if urls:
            self._call("delete_many", lambda: self.inner.delete_many(list(urls)))

    def copy(self, src: str, dst: str) -> str:
        return self._call("copy", lambda: self.inner.copy(src, dst))

    def rename(self, src: str, dst: str) -> None:
        self._call("rename", lambda: self.inner.rename(src, dst))

    def create_multipart(self, url: str) -> str:
        return self._call("create_multipart", lambda: self.inner.create_multipart(url))

    def upload_part(self, url: str, upload_id: str, part_number: int, data: bytes) -> str:
        return self._call("upload_part",
                          lambda: self.inner.upload_part(url, upload_id, part_number, data))

    def complete_multipart(self, url: str, upload_id: str, parts: Sequence[tuple[int, str]], *,
                           if_none_match: bool = False) -> str:
        return self._call("complete_multipart", lambda: self.inner.complete_multipart(
            url, upload_id, parts, if_none_match=if_none_match),
            landed=self._complete_landed(url, parts, None))

    def complete_checked(self, url: str, upload_id: str, parts: Sequence[tuple[int, str]],
                         length: int) -> str:
        """Complete; if a repeated complete finds the upload gone, accept the object only when
        it is there with the expected ``length`` (and the parts' ETag, where the store uses
        S3's multipart ETags): our earlier attempt did land."""
        return self._call("complete_multipart", lambda: self.inner.complete_multipart(
            url, upload_id, parts), landed=self._complete_landed(url, parts, length))

    def _complete_landed(self, url: str, parts: Sequence[tuple[int, str]],
                         length: int | None) -> Landed[str]:
        check = complete_landed(lambda: self.head(url), parts, length)

        def counted(error: BaseException) -> str | None:
            etag = check(error)
            if etag is not None:
                self.stats.incr("store_complete_recovered")
            return etag

        return counted

    def abort_multipart(self, url: str, upload_id: str) -> None:
        self._call("abort_multipart", lambda: self.inner.abort_multipart(url, upload_id))

    def list_multipart_uploads(self, prefix: str) -> list[UploadInfo]:
        return self._call("list_multipart_uploads",
                          lambda: self.inner.list_multipart_uploads(prefix))


# -- paths -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class JobLayout:
    """Where a job keeps its records: ``root`` holds every job attempt; ``attempt_dir`` this
    one.  Task data and records are per task *attempt*, so attempts never share a path."""

    root: str
    attempt: int

    @property
    def attempt_dir(self) -> str:
        return join(self.root, f"{self.attempt:02d}")

    def attempt_dir_of(self, attempt: int) -> str:
        return join(self.root, f"{attempt:02d}")

    @property
    def marker(self) -> str:
        """Written by setup_job; Hadoop-protocol job commit requires it (a second commit of
        the same job finds it gone and fails, as Hadoop's does)."""
        return join(self.attempt_dir, "_job.json")

    @property
    def tasks_dir(self) -> str:
        return join(self.attempt_dir, "tasks")

    def task_dir(self, attempt_id: str) -> str:
        return join(self.tasks_dir, attempt_id)

    def task_intent(self, attempt_id: str) -> str:
        return join(self.tasks_dir, f"{attempt_id}.intent")

    @property
    def pendingsets_dir(self) -> str:
        return join(self.attempt_dir, "pendingsets")

    def pendingset(self, attempt_id: str) -> str:
        return join(self.pendingsets_dir, f"{attempt_id}.pendingset")

    @property
    def manifests_dir(self) -> str:
        return join(self.attempt_dir, "manifests")

    def manifest(self, attempt_id: str) -> str:
        return join(self.manifests_dir, f"{attempt_id}-manifest.json")

    @property
    def committed_dir(self) -> str:
        return join(self.attempt_dir, "committed")

    def committed_task_dir(self, task_name: str, attempt: int | None = None) -> str:
        base = self.committed_dir if attempt is None else join(self.attempt_dir_of(attempt),
                                                              "committed")
        return join(base, task_name)


def check_relpath(rel: str, *, where: str | None = None) -> str:
    """Validate a path relative to the destination: no escape, no reserved committer area.

    Rejected: empty; absolute or with a scheme; empty, ``.`` or ``..`` elements; a first
    element reserved for committer data (``_temporary``, ``__magic…``, ``__staging_job-…``)
    or for the job's marker (``_SUCCESS``, and anything under ``_SUCCESS/``).
    """
    name = where or rel
    if not isinstance(rel, str) or not rel:
        raise DestinationEscapeError(str(name), "empty path")
    if "\x00" in rel:
        raise DestinationEscapeError(name, "NUL byte in path")
    if rel.startswith("/") or "://" in rel:
        raise DestinationEscapeError(name, "absolute path; expected a path relative to the "
                                           "job destination")
    parts = rel.split("/")
    if any(p in ("", ".", "..") for p in parts):
        raise DestinationEscapeError(name, f"path {rel!r} has an empty, '.' or '..' element")
    first = parts[0]
    if first in RESERVED_FIRST_ELEMENTS:
        raise DestinationEscapeError(name, f"path {rel!r}: {first!r} "
                                           f"{RESERVED_FIRST_ELEMENTS[first]}")
    if first.startswith(RESERVED_PREFIXES):
        raise DestinationEscapeError(name, f"path {rel!r}: {first!r} is reserved for "
                                           "committer data (a committer's job directory)")
    return rel


_SCHEME_ALIASES = {"s3a": "s3", "s3n": "s3"}


def check_destination(url: str, dest: str, path: str) -> str:
    """The path of ``url`` below the job destination ``dest``; a
    :class:`DestinationEscapeError` naming ``path`` (the record) if it lies anywhere else
    (another bucket or scheme, a sibling like ``dest10``, ``..``, a reserved area)."""
    try:
        u = parse_url(url)
    except CommitError as exc:
        raise DestinationEscapeError(path, f"destination {url!r} is not a URL: {exc.reason}") \
            from None
    d = parse_url(dest)
    same_store = (_SCHEME_ALIASES.get(u.scheme, u.scheme) == _SCHEME_ALIASES.get(d.scheme, d.scheme)
                  and u.bucket == d.bucket)
    prefix = d.key.rstrip("/") + "/" if d.key.strip("/") else ""
    if not same_store or not u.key.startswith(prefix):
        raise DestinationEscapeError(path, f"destination {url} is outside the job "
                                           f"destination {dest}")
    rel = u.key[len(prefix):]
    try:
        return check_relpath(rel)
    except DestinationEscapeError as exc:
        raise DestinationEscapeError(path, f"destination {url}: {exc.reason}") from None


def dest_url(dest: str, rel: str) -> str:
    """``dest/rel`` for a validated ``rel`` (no normalisation: keys are kept exactly)."""
    return f"{dest.rstrip('/')}/{rel}"


#: S3's limit on a key: 1,024 bytes of UTF-8 (RGW, GCS and R2 have the same or larger).
MAX_KEY_BYTES = 1024


def check_key_length(url: str, rel: str) -> str:
    """``url`` (the final URL of ``rel``) if its key fits S3's limit; else a
    :class:`KeyTooLongError` naming ``rel``, so a bad path fails when opened, not as a raw
    store error halfway through a commit."""
    size = len(parse_url(url).key.encode("utf-8"))
    if size > MAX_KEY_BYTES:
        raise KeyTooLongError(rel, f"its key {url} is {size} bytes of UTF-8; S3 keys are at "
                                   f"most {MAX_KEY_BYTES}")
    return url


PART_SIZE_OPTION = "fs.s3a.multipart.size"


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


# -- files being written -------------------------------------------------------------------


class OutputFile(BinaryIO):
    """A binary file being written by a task: ``write``, then ``close`` (or ``abort``).

    A write-only :class:`typing.BinaryIO`, so writers such as pyarrow accept it.  Used as a
    context manager, an exception inside the block aborts the file (its upload or local data
    is discarded) instead of committing a partial file.
    """

    def __init__(self, url: str) -> None:
        self.url = url
        self._pos = 0
        self._closed = False
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
        self._finish()

    def abort(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._abort()

    def __enter__(self) -> OutputFile:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if exc_type is None:
            self.close()
            return
        if not issubclass(exc_type, Exception):  # interrupted or crashed: no more requests
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


# -- the committer ---------------------------------------------------------------------------


class Phase(enum.Enum):
    """Where one committer object is in its protocol; a task committer and a job committer
    each have one (``task_phase``, ``job_phase``).

    ``NEW`` → ``SET_UP`` (``setup_task``/``setup_job``) → ``COMMITTING`` (a commit started) →
    ``COMMITTED``.  A task commit that raised leaves ``FAILED``; a job commit that raised
    stays ``COMMITTING`` when it aborted the job (S3A committers) and returns to ``SET_UP``
    when the committer keeps the job for a rerun (v1/v2/manifest).  ``abort_task``,
    ``abort_job`` and ``cleanup_job`` lead to ``ABORTED`` from anywhere.  Only the
    transitions the protocol allows are accepted; any other call raises
    :class:`~zerorename.errors.CallOrderError` before its first request.
    """

    NEW = "new"
    SET_UP = "set up"
    COMMITTING = "committing"
    COMMITTED = "committed"
    FAILED = "failed"
    ABORTED = "aborted"


#: Why a task call is refused in each phase but ``SET_UP`` (the one phase that allows work).
_TASK_REFUSALS: Mapping[Phase, str] = MappingProxyType({
    Phase.NEW: "is not set up: call setup_task() first",
    Phase.COMMITTING: "is being committed",
    Phase.COMMITTED: "is already committed (a retry is a new task attempt)",
    Phase.FAILED: "failed its task commit: call abort_task() and run a new task attempt",
    Phase.ABORTED: "was aborted (a retry is a new task attempt)",
})


class BaseCommitter:
    """Lifecycle, checks and shared machinery; subclasses implement the ``_steps``."""

    name: ClassVar[str] = ""
    #: Hadoop's name for the committer class, recorded in _SUCCESS diagnostics.
    hadoop_class: ClassVar[str] = ""
    thread_options: ClassVar[tuple[str, ...]] = ("fs.s3a.committer.threads",)
    default_threads: ClassVar[int] = 8
    #: task-completion counter name in this committer family's statistics
    tasks_counter: ClassVar[str] = "committer_tasks_completed"

    def __init__(self, store: Store, job: JobContext, task: TaskContext | None = None) -> None:
        if not isinstance(job, JobContext):
            raise CommitError(str(job), "job must be a zerorename.JobContext")
        if task is not None:
            if not isinstance(task, TaskContext):
                raise CommitError(str(task), "task must be a zerorename.TaskContext")
            if task.job.id != job.id or task.job.attempt != job.attempt \
                    or task.job.dest != job.dest:
                raise CommitError(task.attempt_id, f"task belongs to job {task.job.id} attempt "
                                  f"{task.job.attempt}, not {job.id} attempt {job.attempt}")
        self.job = job
        self.task = task
        self.dest = job.dest
        self.opts = job.opts
        #: every timestamp and duration this committer records (fixed by an option: see clock)
        self.clock = job.clock
        self.stats = IOStatistics(self.clock)
        self.raw_store = store
        self.store = ReliableStore(store, retry_policy(self.opts), self.stats)
        self.caps = store.capabilities()
        self.threads = thread_count(self.opts, THREADS_OPTION, *self.thread_options,
                                    default=self.default_threads)
        self.part_size = check_part_size(
            self.opts.get_size(PART_SIZE_OPTION, default=DEFAULT_PART_SIZE), self.caps,
            given=self.opts.raw(PART_SIZE_OPTION))
        self.mark_success = self.opts.get_bool(MARK_SUCCESS_OPTION, default=True)
        self._opened: set[str] = set()
        self._open_files: dict[str, OutputFile] = {}
        #: guards the phases and the open-file sets (tasks write files from many threads)
        self._state_lock = threading.Lock()
        self._task_phase = Phase.NEW
        self._job_started = Phase.NEW  # see job_phase
        self._job_committed = False
        self._published = False
        self.last_success: SuccessData | None = None
        self._commit_started: float | None = None

    # -- identity and paths ----------------------------------------------------------------

    @property
    def job_id(self) -> str:
        return self.job.id

    @property
    def work_path(self) -> str:
        """Where this task attempt's output is written before commit (a URL)."""
        return self._work_path(self._require_task())

    def _work_path(self, task: TaskContext) -> str:
        raise NotImplementedError

    def _require_task(self) -> TaskContext:
        if self.task is None:
            raise CommitError(self.dest, f"{self.name}: this is a job committer; task "
                              "operations need create_committer(..., task=job.task(...))")
        return self.task

    # -- lifecycle -------------------------------------------------------------------------

    @property
    def task_phase(self) -> Phase:
        """Where this task attempt is in its protocol (on this committer object)."""
        return self._task_phase

    @property
    def job_phase(self) -> Phase:
        """Where this job is in its protocol, as far as this committer object knows: a job
        another object set up is ``NEW`` here (``commit_job`` then checks the store)."""
        return Phase.COMMITTED if self._job_committed else self._job_started

    def _task_refusal(self, task: TaskContext, call: str, path: str | None = None
                      ) -> CallOrderError:
        return CallOrderError(path or task.attempt_id, f"{call}: task attempt {task.attempt_id} "
                              f"{_TASK_REFUSALS[self._task_phase]}")

    def _require_task_set_up(self, call: str, path: str | None = None) -> TaskContext:
        """The task, if this attempt is set up and not finished; else CallOrderError.
        Call with ``_state_lock`` held."""
        task = self._require_task()
        if self._task_phase is not Phase.SET_UP:
            raise self._task_refusal(task, call, path)
        return task

    def _start_job_commit(self) -> Phase:
        """The guard of ``commit_job``: refuse a commit the protocol does not allow, before
        any request, and otherwise mark the commit started (so a second one, concurrent or
        after a failure, is refused).  Returns the phase before, to restore on refusal.

        "Set up" is detected through the store when this object did not call ``setup_job``
        itself: the job attempt's marker (``_job.json``, written by ``setup_job``, deleted by
        job commit and abort) must exist in the records store.  Spark's driver may build a new
        job committer to commit a job set up by another object or process; the marker is what
        they share.  One HEAD request, only on that path."""
        with self._state_lock:
            phase = self.job_phase
            if phase is Phase.COMMITTED:
                raise CallOrderError(self.dest, f"commit_job: job {self.job.id} was already "
                                                "committed")
            if phase is Phase.COMMITTING:
                raise CallOrderError(self.dest, f"commit_job: a job commit of {self.job.id} "
                                     "already ran on this committer and failed (the job was "
                                     "aborted; rerun it) or is still running")
            if phase is Phase.ABORTED:
                raise CallOrderError(self.dest, f"commit_job: job {self.job.id} was aborted")
            self._job_started = Phase.COMMITTING
        if phase is Phase.NEW:
            marker = self.job_layout().marker
            try:
                found = self.records_store().head(marker) is not None
            except BaseException:
                self._restore_job_phase(phase)
                raise
            if not found:
                self._restore_job_phase(phase)
                raise CallOrderError(marker, f"commit_job: job {self.job.id} attempt "
                                     f"{self.job.attempt} was never set up (no setup_job), or "
                                     "was already committed or aborted")
        return phase

    def _restore_job_phase(self, phase: Phase) -> None:
        with self._state_lock:
            if self._job_started is Phase.COMMITTING:
                self._job_started = phase

    def executor(self, name: str, capacity: int | None = None) -> BoundedExecutor:
        return BoundedExecutor(self.threads, f"{self.name}-{name}", capacity)

    def iostatistics(self) -> dict[str, Any]:
        return self.stats.snapshot()

    def __repr__(self) -> str:
        who = self.task.attempt_id if self.task else f"job {self.job.id}"
        return f"{type(self).__name__}({self.dest!r}, {who})"

    # -- job side --------------------------------------------------------------------------

    def setup_job(self) -> None:
        """Check the destination is usable and record that the job attempt exists (the
        marker that lets another committer object commit it).  Once per committer object."""
        with self._state_lock:
            phase = self.job_phase
            if phase is not Phase.NEW:
                state = "already set up" if phase is Phase.SET_UP else f"already {phase.value}"
                raise CallOrderError(self.dest, f"setup_job: job {self.job.id} is {state} on "
                                                "this committer")
        with self.stats.duration("job_stage_setup"):
            if parse_url(self.dest).key.strip("/") and self.store.head(self.dest) is not None:
                raise CommitError(self.dest, "destination is a file, not a directory")
            self._setup_job()
        with self._state_lock:
            if self._job_started is Phase.NEW:
                self._job_started = Phase.SET_UP

    def _setup_job(self) -> None:
        raise NotImplementedError

    def commit_job(self, messages: Sequence[TaskCommitMessage | Mapping[str, Any] | str]
                   | None = None) -> SuccessData:
        """Publish the committed tasks' output.

        ``messages=None``: Hadoop's protocol — find the committed tasks from the store.
        A list: Spark's protocol — commit exactly these tasks (no listing of task data).
        Either way, this job's uploads/data not in the committed set are discarded.  On any
        failure what was published is taken back and the error re-raised; the S3A committers
        then abort the job (what it owns is discarded), while v1/v2/manifest keep its task
        output, so that ``commit_job`` may be called again (to finish it) or ``abort_job``.
        """
        self._start_job_commit()
        self._published = False
        parsed: list[TaskCommitMessage] | None = None
        try:
            if messages is not None:
                parsed = self._parse_messages(messages)
            self._commit_started = self.clock.monotonic()
            with self.stats.duration("committer_commit_job"):
                success = self._commit_job(parsed)
        except Exception as exc:
            # Only errors: a BaseException (interrupt, the simulation's crash of an actor)
            # stops here without another store request, as a killed process would.
            self.stats.incr("committer_jobs_failed")
            if not self._after_job_failure(exc):
                with self._state_lock:  # the job is kept whole: a rerun may finish it
                    self._job_started = Phase.SET_UP
            if isinstance(exc, CommitError):
                raise
            raise JobFailedError(self.dest, f"job commit failed: {type(exc).__name__}: {exc}") \
                from exc
        self._job_committed = True
        self.last_success = success
        return success

    def _commit_job(self, messages: list[TaskCommitMessage] | None) -> SuccessData:
        raise NotImplementedError

    def _after_job_failure(self, exc: BaseException) -> bool:
        """Abort what the job owns (unless the committer keeps it for a rerun: see
        :meth:`_discard_after_failed_commit`) and save a failure report; never raises.
        Returns whether the job was aborted."""
        discard = self._discard_after_failed_commit()
        if discard:
            try:
                self._abort_job(failed=True)
            except Exception as secondary:
                exc.add_note(f"aborting the job after the failure also failed: {secondary}")
        try:
            report = self.success_data([], stage="committer_commit_job", success=False)
            report.diagnostics["exception"] = f"{type(exc).__name__}: {exc}"
            failure = self._save_report(report)
        except Exception as secondary:
            failure = secondary
        if failure is not None:
            exc.add_note(f"saving the failure report also failed: {failure}")
        return discard

    def _discard_after_failed_commit(self) -> bool:
        """Whether a failed job commit aborts the job.  The S3A committers do (their revert
        leaves nothing that a rerun could use); the rename committers override this."""
        return True

    @property
    def published(self) -> bool:
        """True once this object's job commit has passed its commit point — saving
        ``_SUCCESS`` (or that stage, with marksuccessfuljobs=false), or a committer's own
        (the fenced committer's commit record): from then on the job is committed, whatever
        fails, and nothing may be reverted."""
        return self._published

    def abort_job(self) -> None:
        """Discard everything this job owns (uploads, records, temporary data).  Idempotent;
        output already published by a completed job commit is not touched."""
        self._job_ended()
        with self.stats.duration("job_stage_abort"):
            self._abort_job(failed=False)

    def _abort_job(self, *, failed: bool) -> None:
        raise NotImplementedError

    def cleanup_job(self) -> None:
        """Remove the job's temporary data (and any uploads it left).  Idempotent."""
        self._job_ended()
        with self.stats.duration("job_stage_cleanup"):
            self._abort_job(failed=False)

    def _job_ended(self) -> None:
        """abort_job/cleanup_job remove the job's records: nothing is left to commit."""
        with self._state_lock:
            if not self._job_committed:
                self._job_started = Phase.ABORTED

    def is_recovery_supported(self) -> bool:
        return False

    def recover_task(self, task: TaskContext | None = None) -> None:
        who = task.attempt_id if task is not None else self.job.id
        raise CommitError(who, f"cannot recover task output: the {self.name} committer does "
                               "not support task recovery (rerun the task)")

    # -- task side -------------------------------------------------------------------------

    def setup_task(self) -> None:
        """Prepare this task attempt (once): the calls that write and commit need it."""
        task = self._require_task()
        with self._state_lock:
            if self._task_phase is not Phase.NEW:
                if self._task_phase is Phase.SET_UP:
                    raise CallOrderError(task.attempt_id, f"setup_task: task attempt "
                                         f"{task.attempt_id} is already set up")
                raise self._task_refusal(task, "setup_task")
        with self.stats.duration("task_stage_setup"):
            self._setup_task()
        with self._state_lock:
            if self._task_phase is Phase.NEW:  # (an abort_task meanwhile wins)
                self._task_phase = Phase.SET_UP

    def _setup_task(self) -> None:
        return None

    def open(self, relpath: str) -> OutputFile:
        """Open ``relpath`` (relative to the destination) for writing by this task attempt."""
        self._require_task()
        rel = check_relpath(relpath)
        with self._state_lock:
            task = self._require_task_set_up("open", dest_url(self.dest, rel))
            if rel in self._opened:
                raise DuplicateDestinationError(
                    dest_url(self.dest, rel), f"task attempt {task.attempt_id} already "
                    "opened this path: one task may write each destination once")
            self._opened.add(rel)
        try:
            handle = self._open(task, rel)
        except BaseException:
            with self._state_lock:
                self._opened.discard(rel)
            raise
        with self._state_lock:
            self._open_files[rel] = handle
        return handle

    def _open(self, task: TaskContext, rel: str) -> OutputFile:
        raise NotImplementedError

    def _file_closed(self, rel: str, *, reopenable: bool = False) -> None:
        """A file is closed; ``reopenable`` (it was aborted) lets the task write it again."""
        with self._state_lock:
            self._open_files.pop(rel, None)
            if reopenable:
                self._opened.discard(rel)

    def write(self, relpath: str, data: bytes) -> None:
        """Write a whole file in one call (``open`` + ``write`` + ``close``)."""
        with self.open(relpath) as f:
            f.write(data)

    def needs_task_commit(self) -> bool:
        """Has this set-up attempt anything to commit?  False once it is committed, failed
        or aborted (nothing of it is left to commit); refused before ``setup_task``."""
        task = self._require_task()
        with self._state_lock:
            if self._task_phase is Phase.NEW:
                raise self._task_refusal(task, "needs_task_commit")
            if self._task_phase is not Phase.SET_UP:
                return False
        return self._needs_task_commit(task)

    def _needs_task_commit(self, task: TaskContext) -> bool:
        raise NotImplementedError

    def commit_task(self) -> TaskCommitMessage:
        """Make this attempt's output part of the job (invisible until job commit, except
        for v2) and return the message for the driver."""
        with self._state_lock:
            task = self._require_task_set_up("commit_task")
            still_open = sorted(self._open_files)
            if not still_open:
                self._task_phase = Phase.COMMITTING
        if still_open:
            raise CommitError(dest_url(self.dest, still_open[0]),
                              f"{len(still_open)} file(s) still open at task commit: close "
                              "them first")
        try:
            with self.stats.duration("task_stage_commit"):
                message = self._commit_task(task)
        except BaseException:
            # what the attempt wrote may be gone (the staging committers delete it): a retry
            # on this attempt could commit nothing and report success
            self._finish_task_phase(Phase.FAILED)
            self.stats.incr("committer_tasks_failed")
            raise
        self._finish_task_phase(Phase.COMMITTED)
        return message

    def _finish_task_phase(self, phase: Phase) -> None:
        with self._state_lock:
            if self._task_phase is Phase.COMMITTING:  # (an abort_task meanwhile wins)
                self._task_phase = phase

    def _commit_task(self, task: TaskContext) -> TaskCommitMessage:
        raise NotImplementedError

    def count_task_success(self) -> dict[str, Any]:
        """Count this task's success and snapshot the statistics that travel to _SUCCESS."""
        self.stats.incr(self.tasks_counter)
        return self.stats.snapshot()

    def abort_task(self) -> None:
        """Discard this attempt's output.  Safe to call from another process (it finds the
        attempt's records in the store) and more than once."""
        task = self._require_task()
        with self._state_lock:
            self._task_phase = Phase.ABORTED
            handles = list(self._open_files.values())
            self._open_files.clear()
        for handle in handles:
            with contextlib.suppress(NotFoundError):
                handle.abort()
        with self.stats.duration("task_stage_abort_task"):
            self._abort_task(task)

    def _abort_task(self, task: TaskContext) -> None:
        raise NotImplementedError

    # -- messages --------------------------------------------------------------------------

    def make_message(self, task: TaskContext, kind: str, payload: dict[str, Any], record: str,
                     stats: dict[str, Any]) -> TaskCommitMessage:
        return TaskCommitMessage(
            committer=self.name, job_id=self.job.id, job_attempt=self.job.attempt,
            task_id=task.task_id, task_attempt=task.attempt, attempt_id=task.attempt_id,
            kind=kind, payload=payload, record=record, iostatistics=stats,
        )

    def _parse_messages(self, messages: Sequence[TaskCommitMessage | Mapping[str, Any] | str]
                        ) -> list[TaskCommitMessage]:
        if isinstance(messages, (str, bytes, Mapping)):
            raise FormatError("task commit messages", "expected a list of messages")
        parsed: list[TaskCommitMessage] = []
        seen: dict[int, str] = {}
        for raw in messages:
            msg = TaskCommitMessage.from_json(raw)
            if msg.job_id != self.job.id:
                raise FormatError(msg.path, f"written by job {msg.job_id}, not this job "
                                            f"{self.job.id}")
            if msg.job_attempt != self.job.attempt:
                raise FormatError(msg.path, f"from job attempt {msg.job_attempt}, this is job "
                                            f"attempt {self.job.attempt}")
            if msg.committer != self.name:
                raise FormatError(msg.path, f"written by the {msg.committer} committer, not "
                                            f"{self.name}")
            if msg.task_id in seen:
                raise CommitError(msg.path, f"task {msg.task_id} is committed twice (also by "
                                            f"{seen[msg.task_id]}): which output wins is "
                                            "undefined")
            seen[msg.task_id] = msg.attempt_id
            parsed.append(msg)
        return parsed

    # -- _SUCCESS --------------------------------------------------------------------------

    def success_data(self, filenames: list[str], *, stage: str, success: bool = True,
                     task_stats: IOStatistics | None = None) -> SuccessData:
        stats = IOStatistics(self.clock)
        stats.aggregate(self.stats)
        stats.aggregate(task_stats)
        if stage == "committer_commit_job" and self._commit_started is not None:
            # this commit, timed up to now: _SUCCESS is written before the commit returns
            stats.record_duration(stage, self.clock.monotonic() - self._commit_started,
                                  failed=not success)
        return SuccessData(
            committer=self.name, job_id=self.job.id, job_id_source=self.job.job_id_source,
            timestamp=self.clock.now_millis(),
            hostname=hostname(),
            description=f"zerorename {self.name} committer, job attempt {self.job.attempt}",
            success=success, filenames=filenames, stage=stage,
            state="SUCCEEDED" if success else "FAILED",
            diagnostics={
                "committer.class": f"{type(self).__module__}.{type(self).__name__}",
                "hadoop.committer": self.hadoop_class,
                "stage": stage,
                "threads": str(self.threads),
                "fs.s3a.multipart.size": str(self.part_size),
                "destination": self.dest,
            },
            iostatistics=stats.snapshot(),
        )

    def save_success(self, data: SuccessData, runner: StageRunner) -> None:
        """The SaveSuccess stage: ``_SUCCESS`` (unless marksuccessfuljobs=false), which
        publishes the job, then the optional summary report, which cannot fail it."""
        def save() -> None:
            if self.mark_success:
                self.store.put(join(self.dest, SUCCESS_MARKER), data.to_bytes())
            self._published = True
            self._save_report(data)

        runner.run("job_stage_save_success_marker", save)

    def _save_report(self, data: SuccessData) -> Exception | None:
        """Save ``data`` as ``summary-<job id>.json`` in the summary report directory, if one
        is set, through a store for that directory's own scheme (Hadoop's documented example
        is a ``file:///`` directory beside an S3 destination).

        Never raises: whether the job failed is decided before the report is written.  A
        report that cannot be saved is recorded (``summary.report.failure`` in ``data``'s
        diagnostics, statistic ``committer_summary_report_failures``), logged as a warning and
        returned."""
        directory = self.opts.get_str(*SUMMARY_DIR_OPTIONS)
        if not directory:
            return None
        url = join(directory, f"summary-{self.job.id}.json")
        try:
            self.report_store(directory).put(url, data.to_bytes())
        except Exception as exc:
            self.stats.incr("committer_summary_report_failures")
            data.diagnostics["summary.report.failure"] = f"{url}: {exc}"
            LOG.warning("job %s: the summary report %s could not be saved: %s", self.job.id,
                        url, exc)
            return exc
        return None

    def report_store(self, directory: str) -> Store:
        """The store for the summary report directory: the destination's own store when the
        directory has its scheme (``s3a`` counts as ``s3``), else a new one for the
        directory's scheme with default settings (:func:`zerorename.stores.store_for_url`)."""
        scheme = parse_url(directory).scheme
        dest_scheme = parse_url(self.dest).scheme
        if _SCHEME_ALIASES.get(scheme, scheme) == _SCHEME_ALIASES.get(dest_scheme, dest_scheme):
            return self.store
        return ReliableStore(store_for_url(directory), self.store.policy, self.stats)

    # -- small helpers ---------------------------------------------------------------------

    def put_json(self, url: str, data: Mapping[str, Any]) -> None:
        self.records_store().put(url, json.dumps(dict(data), ensure_ascii=False)
                                 .encode("utf-8"))

    def records_store(self) -> ReliableStore:
        """Where the job keeps its records (markers, intents, pendingsets): the destination
        store unless a committer keeps them elsewhere (the staging committers' cluster
        filesystem)."""
        return self.store

    def write_marker(self) -> None:
        self.put_json(self.job_layout().marker, {
            "jobId": self.job.id, "jobAttempt": self.job.attempt, "committer": self.name,
            "destination": self.dest,
        })

    def job_layout(self) -> JobLayout:
        raise NotImplementedError

    def require_marker(self) -> None:
        """Hadoop protocol: commit_job of a job attempt that was never set up, or has already
        been committed or aborted (both delete the marker), must fail, not publish again."""
        marker = self.job_layout().marker
        if self.records_store().head(marker) is None:
            raise NotFoundError(marker, f"job attempt directory does not exist: job {self.job.id}"
                                        " was never set up, or was already committed or aborted")


# -- the S3A family: uncompleted multipart uploads --------------------------------------------


ABORT_ALL_OPTIONS = ("fs.s3a.committer.abort.pending.uploads",
                     "fs.s3a.committer.staging.abort.pending.uploads")


class S3ACommitter(BaseCommitter):
    """Shared by the staging and magic committers: tasks leave uncompleted multipart uploads
    to the final keys and a ``.pendingset`` listing them; job commit completes them.

    Records live under a per-job root (``root_pattern``), one subdirectory per job attempt;
    ``pendingsets/<attempt id>.pendingset`` is named per task *attempt*, so a duplicate
    attempt can never overwrite a committed one (HADOOP-17258), and Hadoop-protocol job commit
    picks the last committed attempt of each task.
    """

    tasks_counter: ClassVar[str] = "committer_tasks_succeeded"
    root_pattern: ClassVar[str] = ""

    def __init__(self, store: Store, job: JobContext, task: TaskContext | None = None, *,
                 records: Store | None = None) -> None:
        super().__init__(store, job, task)
        #: where records live; uploads always go to ``store``
        self.records = (ReliableStore(records, self.store.policy, self.stats)
                        if records is not None else self.store)
        if not self.caps.multipart:
            raise CommitError(self.dest, f"the {self.name} committer needs multipart uploads, "
                                         f"which store {store.name} does not offer")
        self.abort_all_uploads = self.opts.get_bool(*ABORT_ALL_OPTIONS, default=False)
        self.layout = JobLayout(self._job_root(), job.attempt)

    def _job_root(self) -> str:
        return join(self.dest, self.root_pattern.format(id=self.job.id))

    def job_layout(self) -> JobLayout:
        return self.layout

    def records_store(self) -> ReliableStore:
        return self.records

    # -- job -------------------------------------------------------------------------------

    def _setup_job(self) -> None:
        self.check_conflicts_at_setup()
        self.write_marker()

    def check_conflicts_at_setup(self) -> None:
        return None

    def prepare_destination(self, ctx: Any, loaded: Any) -> None:
        """Conflict resolution before any upload completes (staging committers)."""
        return None

    def _commit_job(self, messages: list[TaskCommitMessage] | None) -> SuccessData:
        runner = StageRunner(self.stats, self.job)
        with self.executor("commit") as pool:
            ctx = StageContext(self.store, self.job, self.stats, pool, runner, self.name,
                               records_store=self.records)
            records = runner.run("job_stage_scan_records",
                                 lambda: scan_job(self.records, self.layout.root))
            if messages is None:
                if self.layout.marker not in records.urls:
                    raise NotFoundError(self.layout.marker, "job attempt directory does not "
                                        f"exist: job {self.job.id} was never set up, or was "
                                        "already committed or aborted")
                sources = [TaskSource(url=u)
                           for u in records.pendingsets_of_job_attempt(self.job.attempt)]
            else:
                sources = [TaskSource(message=m) for m in messages]

            def check(url: str, path: str) -> str:
                return check_destination(url, self.dest, path)

            loaded = runner.run("job_stage_load_pendingsets",
                                lambda: load_pendingsets(ctx, sources, check))
            with loaded.spool:
                outcome = runner.run("job_stage_abort_uncommitted", lambda: abort_owned(
                    self.store, records, pool, committed_ids=loaded.committed_ids,
                    committed_attempts=loaded.winners, dest=self.dest,
                    records_store=self.records))
                runner.run("job_stage_prepare_destination",
                           lambda: self.prepare_destination(ctx, loaded))
                filenames = FilenameSample()
                runner.run("job_stage_complete_uploads",
                           lambda: complete_uploads(ctx, loaded, filenames))
            self.stats.incr("committer_jobs_completed")
            success = self.success_data(filenames.names, stage="committer_commit_job",
                                        task_stats=loaded.task_stats)
            success.metrics.update({"files": loaded.files, "bytes": loaded.bytes,
                                    "tasks": len(loaded.winners)})
            if loaded.duplicates_resolved:
                success.diagnostics["duplicate.task.commits"] = "; ".join(
                    loaded.duplicates_resolved)
            if outcome.unreadable:
                success.diagnostics["unreadable.records"] = "; ".join(
                    str(e) for e in outcome.unreadable[:10])
            if outcome.failures:
                success.diagnostics["abort.failures"] = "; ".join(
                    f"{what}: {exc}" for what, exc in outcome.failures[:10])
            self.save_success(success, runner)
            known = [self.layout.marker, *(m.record for m in messages or [] if m.record)]
            runner.run("job_stage_cleanup", lambda: self._cleanup(not outcome.failures,
                                                                   loaded.committed_ids, known))
        return success

    def _cleanup(self, delete_records: bool, keep_ids: set[str], known: list[str]) -> None:
        self._abort_local()
        if self.abort_all_uploads:
            self.stats.incr("committer_commits_aborted",
                            abort_all_under(self.store, self.dest, keep_ids))
        if delete_records:
            delete_tree(self.records, self.layout.root, known=known)
            # Attempts still finishing (speculative, or ones the driver gave up on) may have
            # written records while we cleaned: sweep them too, never touching the committed.
            self._sweep_root(keep_ids, passes=2)

    def _abort_job(self, *, failed: bool) -> None:
        records = scan_job(self.records, self.layout.root)
        with self.executor("abort") as pool:
            outcome = abort_owned(self.store, records, pool, dest=self.dest,
                                  records_store=self.records)
        self.stats.incr("committer_commits_aborted", outcome.aborted)
        if self.abort_all_uploads:
            self.stats.incr("committer_commits_aborted", abort_all_under(self.store, self.dest))
        self._abort_local()
        if outcome.failures:
            what, first = outcome.failures[0]
            raise JobFailedError(what, f"could not abort {len(outcome.failures)} upload(s) of "
                                       f"job {self.job.id} ({first}); its records are kept "
                                       f"under {self.layout.root} for a retry of abort_job")
        delete_tree(self.records, self.layout.root, listed_urls=records.urls,
                    known=[self.layout.marker])
        self._sweep_root(set(), passes=2)

    def _sweep_root(self, keep_ids: set[str], *, passes: int) -> None:
        """Re-list the job root up to ``passes`` times; abort and delete whatever appeared
        since the last listing (records of attempts that were still running).  This narrows,
        but cannot close, the window of a process that keeps writing after its job ended."""
        for _ in range(passes):
            records = scan_job(self.records, self.layout.root)
            if not records.urls:
                return
            with self.executor("sweep") as pool:
                outcome = abort_owned(self.store, records, pool, dest=self.dest,
                                      committed_ids=keep_ids, records_store=self.records)
            self.stats.incr("committer_commits_aborted", outcome.aborted)
            if outcome.failures:
                return  # keep the records for a later abort_job
            delete_tree(self.records, self.layout.root, listed_urls=records.urls)

    def _abort_local(self) -> None:
        """Remove local data of this job in this process (staging committers)."""
        return None

    # -- task ------------------------------------------------------------------------------

    def save_pendingset(self, task: TaskContext, commits: list[Any]) -> TaskCommitMessage:
        """Save this attempt's pendingset (attempt-unique name) and build its message."""
        stats = self.count_task_success()
        pset = PendingSet(
            job_id=self.job.id, commits=commits,
            extra_data={
                TASK_ATTEMPT_ID: task.attempt_id, TASK_NAME_KEY: task.task_name,
                TASK_ATTEMPT_NUMBER_KEY: str(task.attempt), SAVED_KEY: str(self.clock.now_millis()),
                "zerorename.committer": self.name,
            },
            iostatistics=stats,
        )
        url = self.layout.pendingset(task.attempt_id)
        with self.stats.duration("task_stage_save_pendingset"):
            self.records.put(url, pset.to_bytes())
        return self.make_message(task, "pendingset", {"pendingset": pset.to_json()}, url, stats)

    def abort_recorded(self, task: TaskContext, known: dict[str, str]) -> None:
        """Abort the uploads this attempt recorded (its pendingset, its ``.pending`` files and
        ``known`` id → url), then delete those records.  Intents are kept: the job sweeps
        their keys, which also finds an upload whose create answer was lost (its ID is in no
        record); a task must not sweep, as a sibling attempt may be writing the same key."""
        ids = dict(known)
        to_delete: list[str] = []
        pset_url = self.layout.pendingset(task.attempt_id)
        try:
            pset = PendingSet.from_json(parse_json(self.records.get(pset_url), pset_url),
                                        pset_url)
            ids.update({c.upload_id: c.url for c in pset.commits})
            to_delete.append(pset_url)
        except NotFoundError:
            pass
        listed = [o.url for o in list_dir(self.records, self.layout.task_dir(task.attempt_id))]
        pendings = [u for u in listed if u.endswith(PENDING)]
        with self.executor("abort-task") as pool:
            def read(url: str) -> tuple[str, SinglePendingCommit | None]:
                try:
                    return url, SinglePendingCommit.from_bytes(self.records.get(url), url)
                except (NotFoundError, FormatError):
                    return url, None

            for url, commit in pool.imap(read, pendings):
                if commit is not None:
                    ids[commit.upload_id] = commit.url
                    to_delete.append(url)

            def abort(item: tuple[str, str]) -> bool:
                return abort_quietly(self.store, item[1], item[0])

            _results, errors = pool.run_all(abort, sorted(ids.items()))
        if errors:
            (uid, url), exc = errors[0]
            raise CommitError(url, f"could not abort upload {uid} of task attempt "
                                   f"{task.attempt_id}: {exc}")
        existing = set(listed) | {pset_url}
        self.records.delete_many(sorted(u for u in set(to_delete) if u in existing))
