"""Job commit as named stages, in the style of Hadoop's manifest committer.

Each stage runs at most once per commit, is timed under its Hadoop statistic name (failures
under ``<name>.failures``) and reports progress, so a slow or failed commit says *where*.
Here: the framework, the loading and validating shared by every family, and the S3A stages;
the rename family's are in :mod:`zerorename.rename_stages`.

S3A committers (staging, magic)::

    job_stage_scan_records → job_stage_load_pendingsets → [job_stage_prepare_destination]
    → job_stage_complete_uploads (beside it: job_stage_read_owned, the GETs of what the job
    owns besides) → job_stage_abort_uncommitted → job_stage_save_success_marker
    → job_stage_cleanup

(The abort of uncommitted uploads follows the completes, as in Hadoop's job commit: listing
the destination's uploads before them cost one request per 1,000 files on the critical path,
and after them only the leftovers are listed.)

Memory stays bounded: loaded records are streamed through a bounded executor into a local
spool file (one JSON line per file to commit) and read back from it, so a job commit keeps
per-*task* metadata and one small digest per destination in memory, not every etag
(HADOOP-16570).  Each task's statistics go to a second spool and are added up once the winning
attempt of every task is known, so no per-task copy of them stays in memory either.
Every destination is validated — inside the job destination, unique across the whole job —
before the first upload is completed or the first file renamed.

A job commit that fails takes back what it published: S3A's ``complete_uploads`` deletes the
objects it completed; the rename committers journal every file they publish in a
:class:`~zerorename.rename_stages.Publication` and move (or, where the source is still there,
delete) each one back, never deleting the only copy of a file.
"""

from __future__ import annotations

import hashlib
import json
import tempfile
import threading
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from types import TracebackType
from typing import IO, Any, Protocol, TypeVar

from zerorename import statistics as S
from zerorename.context import JobContext, ProgressEvent
from zerorename.errors import (
    CommitError,
    DuplicateDestinationError,
    FormatError,
    JobFailedError,
    NotFoundError,
)
from zerorename.executor import BoundedExecutor
from zerorename.formats import (
    SUCCESS_FILE_LIMIT,
    PendingSet,
    parse_json,
)
from zerorename.messages import TaskCommitMessage
from zerorename.stats import IOStatistics
from zerorename.store import Store

__all__ = [
    "SAVED_KEY",
    "TASK_ATTEMPT_NUMBER_KEY",
    "TASK_NAME_KEY",
    "AttemptMeta",
    "CommitStore",
    "EntrySpool",
    "FilenameSample",
    "Loaded",
    "Progress",
    "StageContext",
    "StageRunner",
    "TaskSource",
    "check_job",
    "check_unique",
    "complete_uploads",
    "load_pendingsets",
    "parse_int",
    "select_winners",
]

T = TypeVar("T")

#: pendingset/manifest extraData keys written by zerorename task commits.
SAVED_KEY = "zerorename.saved"
TASK_NAME_KEY = "zerorename.task.name"
TASK_ATTEMPT_NUMBER_KEY = "zerorename.task.attempt"


# -- framework -------------------------------------------------------------------------------


class StageRunner:
    """Runs named stages once each, timing them into ``stats`` and reporting progress."""

    def __init__(self, stats: IOStatistics, job: JobContext) -> None:
        self.stats = stats
        self.job = job
        self.completed: list[str] = []
        self.current = ""

    def run(self, name: str, fn: Callable[[], T]) -> T:
        if name in self.completed:
            raise CommitError(name, "stage attempted twice")
        self.current = name
        self.job.report(ProgressEvent(name, 0))
        with self.stats.duration(name):
            result = fn()
        self.completed.append(name)
        return result


class Progress:
    """Thread-safe item counter that reports each item to the job's progress callback."""

    def __init__(self, job: JobContext, stage: str, total: int | None) -> None:
        self.job = job
        self.stage = stage
        self.total = total
        self.done = 0
        self._lock = threading.Lock()

    def tick(self, path: str | None = None) -> None:
        with self._lock:
            self.done += 1
            done = self.done
        self.job.report(ProgressEvent(self.stage, done, self.total, path))


class FilenameSample:
    """The first :data:`SUCCESS_FILE_LIMIT` committed files, for ``_SUCCESS.filenames``."""

    def __init__(self, limit: int = SUCCESS_FILE_LIMIT) -> None:
        self.limit = limit
        self.names: list[str] = []
        self._lock = threading.Lock()

    def add(self, name: str) -> None:
        with self._lock:
            if len(self.names) < self.limit:
                self.names.append(name)


class EntrySpool:
    """Append-then-replay JSON lines in an anonymous local temp file (deleted on close)."""

    def __init__(self) -> None:
        self._file: IO[str] = tempfile.TemporaryFile("w+", encoding="utf-8")  # noqa: SIM115
        self.count = 0

    def add(self, record: dict[str, Any]) -> None:
        self._file.write(json.dumps(record, ensure_ascii=False, separators=(",", ":")))
        self._file.write("\n")
        self.count += 1

    def __iter__(self) -> Iterator[dict[str, Any]]:
        self._file.flush()
        self._file.seek(0)
        for line in self._file:
            record: dict[str, Any] = json.loads(line)
            yield record
        self._file.seek(0, 2)

    def close(self) -> None:
        self._file.close()

    def __enter__(self) -> EntrySpool:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()


class CommitStore(Store, Protocol):
    """A store that can complete an upload idempotently (see ``ReliableStore``)."""

    def complete_checked(self, url: str, upload_id: str, parts: list[tuple[int, str]],
                         length: int) -> str: ...


@dataclass
class StageContext:
    """What a stage needs: the (reliable) store, the job, statistics, a pool, progress."""

    store: CommitStore
    job: JobContext
    stats: IOStatistics
    pool: BoundedExecutor
    runner: StageRunner
    committer: str
    #: where task records are read (default: ``store``); uploads are always on ``store``
    records_store: Store | None = None

    @property
    def records(self) -> Store:
        return self.records_store if self.records_store is not None else self.store

    @property
    def dest(self) -> str:
        return self.job.dest


@dataclass(frozen=True)
class TaskSource:
    """A committed task to load: a message (Spark protocol) or a saved record URL (Hadoop)."""

    url: str = ""
    message: TaskCommitMessage | None = None

    @property
    def path(self) -> str:
        return self.message.path if self.message is not None else self.url


@dataclass
class AttemptMeta:
    """Per-task-attempt facts kept in memory while the commit streams its files (the
    attempt's statistics are spooled, not kept here: they are the bulk of a record)."""

    attempt_id: str
    task_name: str
    attempt_number: int
    saved: int
    path: str
    files: int = 0


@dataclass
class Loaded:
    """The outcome of a load stage: who won, what will be committed, and its totals."""

    spool: EntrySpool
    #: one line per loaded attempt: {"a": attempt id, "s": its iostatistics}; closed once
    #: the winners' statistics are in ``task_stats``
    stats_spool: EntrySpool = field(default_factory=EntrySpool)
    attempts: dict[str, AttemptMeta] = field(default_factory=dict)
    winners: set[str] = field(default_factory=set)
    committed_ids: set[str] = field(default_factory=set)
    loser_ids: dict[str, str] = field(default_factory=dict)
    directories: set[str] = field(default_factory=set)
    files: int = 0
    bytes: int = 0
    task_stats: IOStatistics = field(default_factory=IOStatistics)
    duplicates_resolved: list[str] = field(default_factory=list)

    def winning_records(self) -> Iterator[dict[str, Any]]:
        return (r for r in self.spool if r["a"] in self.winners)

    def committed_among(self, urls: set[str]) -> set[str]:
        """Which of ``urls`` are destinations this commit publishes: streamed from the spool,
        so no set of every destination is held (a job commit asks about a few keys)."""
        return {r["u"] for r in self.winning_records() if r["u"] in urls}

    def add_attempt(self, meta: AttemptMeta, stats: dict[str, Any]) -> None:
        """Record a loaded attempt; its statistics wait in the stats spool."""
        self.attempts[meta.attempt_id] = meta
        if stats:
            self.stats_spool.add({"a": meta.attempt_id, "s": stats})

    def close(self) -> None:
        self.stats_spool.close()
        self.spool.close()


def select_winners(loaded: Loaded, ctx: StageContext) -> None:
    """One attempt per task: the last committed (Hadoop's HADOOP-17258 rule: ``saved`` time,
    then the higher attempt number).  Only possible with the Hadoop protocol; messages
    (Spark) name exactly one attempt per task."""
    by_task: dict[str, list[AttemptMeta]] = {}
    for meta in loaded.attempts.values():
        by_task.setdefault(meta.task_name, []).append(meta)
    for task_name, metas in sorted(by_task.items()):
        metas.sort(key=lambda m: (m.saved, m.attempt_number, m.attempt_id))
        winner = metas[-1]
        loaded.winners.add(winner.attempt_id)
        if len(metas) > 1:
            losers = ", ".join(m.attempt_id for m in metas[:-1])
            loaded.duplicates_resolved.append(f"{task_name}: {winner.attempt_id} over {losers}")
            ctx.stats.incr(S.COMMITTER_TASK_DUPLICATE_COMMITS, len(metas) - 1)
    for record in loaded.stats_spool:  # the winners' statistics, streamed back
        if record["a"] in loaded.winners:
            loaded.task_stats.aggregate(record["s"])
    loaded.stats_spool.close()


def check_job(job_id: str, ctx: StageContext, path: str) -> None:
    if job_id != ctx.job.id:
        raise FormatError(path, f"written by job {job_id or '(none)'}, not this job {ctx.job.id}")


def _digest(url: str) -> bytes:
    return hashlib.blake2b(url.encode("utf-8"), digest_size=16).digest()


def check_unique(loaded: Loaded, key: str = "u") -> None:
    """Across the whole job, each destination is committed by one task only."""
    seen: dict[bytes, str] = {}
    for record in loaded.winning_records():
        digest = _digest(record[key])
        if digest in seen:
            raise DuplicateDestinationError(
                loaded.attempts[record["a"]].path,
                f"destination {record[key]} is also written by task attempt "
                             f"{seen[digest]}: two tasks cannot commit the same file")
        seen[digest] = loaded.attempts[record["a"]].attempt_id


# -- S3A: pendingsets -----------------------------------------------------------------------


def _load_one_pendingset(ctx: StageContext, source: TaskSource, check: Callable[[str, str], str]
                         ) -> tuple[TaskSource, PendingSet, list[str]]:
    """Parse and validate one task's pendingset; with it, each commit's destination URL
    (decoded once here: the spool and the checks reuse it)."""
    if source.message is not None:
        msg = source.message
        if msg.kind != "pendingset":
            raise FormatError(msg.path, f"payload is a {msg.kind}, not a pendingset")
        pset = PendingSet.from_json(msg.payload.get("pendingset"), msg.path)
        if pset.task_attempt_id and pset.task_attempt_id != msg.attempt_id:
            raise FormatError(msg.path, f"pendingset of {pset.task_attempt_id} in the message "
                                        f"of {msg.attempt_id}")
    else:
        pset = PendingSet.from_json(parse_json(ctx.records.get(source.url), source.url),
                                    source.url)
    check_job(pset.job_id, ctx, source.path)
    urls: list[str] = []
    for commit in pset.commits:
        if commit.job_id and commit.job_id != ctx.job.id:
            check_job(commit.job_id, ctx, source.path)
        url = commit.url
        check(url, source.path)
        urls.append(url)
    return source, pset, urls


def load_pendingsets(ctx: StageContext, sources: Iterable[TaskSource],
                     check: Callable[[str, str], str]) -> Loaded:
    """Load, validate and spool every committed task's pendingset; pick one attempt per task;
    check destinations are unique across the job.  Nothing is completed here."""
    loaded = Loaded(spool=EntrySpool())
    progress = Progress(ctx.job, S.JOB_STAGE_LOAD_PENDINGSETS, None)

    def load(source: TaskSource) -> tuple[TaskSource, PendingSet, list[str]]:
        return _load_one_pendingset(ctx, source, check)

    try:
        for source, pset, urls in ctx.pool.imap(load, sources):
            attempt_id = pset.task_attempt_id or (
                source.message.attempt_id if source.message is not None else source.url)
            if attempt_id in loaded.attempts:
                raise FormatError(source.path, f"task attempt {attempt_id} is loaded twice")
            meta = AttemptMeta(
                attempt_id=attempt_id,
                task_name=pset.extra_data.get(TASK_NAME_KEY, attempt_id),
                attempt_number=parse_int(pset.extra_data.get(TASK_ATTEMPT_NUMBER_KEY)),
                saved=parse_int(pset.extra_data.get(SAVED_KEY)), path=source.path,
                files=len(pset.commits),
            )
            if source.message is not None:
                meta.task_name = f"task-{source.message.task_id}"
            loaded.add_attempt(meta, pset.iostatistics)
            ctx.stats.incr(S.COMMITTER_LOAD_PENDINGSET)
            ctx.stats.sample(S.COMMITTER_TASK_FILE_COUNT, len(pset.commits))
            for c, url in zip(pset.commits, urls, strict=True):
                loaded.spool.add({"a": attempt_id, "u": url, "i": c.upload_id,
                                  "e": c.etags, "z": c.length})
            progress.tick(source.path)
        select_winners(loaded, ctx)
        seen: dict[bytes, str] = {}
        for record in loaded.spool:
            if record["a"] not in loaded.winners:
                loaded.loser_ids[record["i"]] = record["u"]
                continue
            digest = _digest(record["u"])
            if digest in seen:
                raise DuplicateDestinationError(
                    loaded.attempts[record["a"]].path,
                    f"destination {record['u']} is also written by task attempt "
                                 f"{seen[digest]}: two tasks cannot commit the same file")
            seen[digest] = loaded.attempts[record["a"]].attempt_id  # shared, not a new string
            loaded.committed_ids.add(record["i"])
            loaded.files += 1
            loaded.bytes += int(record["z"])
            rel = record["u"][len(ctx.dest) + 1:]
            if "/" in rel:
                loaded.directories.add(rel.rsplit("/", 1)[0])
    except BaseException:
        loaded.close()
        raise
    return loaded


def complete_uploads(ctx: StageContext, loaded: Loaded, filenames: FilenameSample) -> None:
    """Complete every winning upload in parallel.  On the first failure: stop, delete the
    objects already completed (revert), abort the rest, and raise :class:`JobFailedError`."""
    progress = Progress(ctx.job, S.JOB_STAGE_COMPLETE_UPLOADS, loaded.files)
    lock = threading.Lock()
    completed: dict[str, str] = {}  # upload id -> url

    def complete(record: dict[str, Any]) -> None:
        url, upload_id, length = record["u"], record["i"], int(record["z"])
        parts = [(i + 1, str(e)) for i, e in enumerate(record["e"])]
        ctx.store.complete_checked(url, upload_id, parts, length)
        with lock:
            completed[upload_id] = url
        ctx.stats.incr(S.COMMITTER_COMMITS_COMPLETED)
        ctx.stats.incr(S.COMMITTER_FILES_COMMITTED)
        ctx.stats.incr(S.COMMITTER_BYTES_COMMITTED, length)
        filenames.add(url)
        progress.tick(url)

    try:
        for _ in ctx.pool.imap(complete, loaded.winning_records()):
            pass
    except Exception as exc:  # (a crash — BaseException — must not touch the store)
        reverted, aborted = _revert(ctx, loaded, completed)
        path = exc.path if isinstance(exc, CommitError) else ctx.dest
        reason = exc.reason if isinstance(exc, CommitError) else f"{type(exc).__name__}: {exc}"
        raise JobFailedError(path, f"job commit failed: {reason}; reverted (deleted) "
                                   f"{reverted} completed file(s), aborted {aborted} "
                                   "upload(s)") from exc


def _revert(ctx: StageContext, loaded: Loaded, completed: dict[str, str]) -> tuple[int, int]:
    urls = sorted(completed.values())
    reverted = 0
    for start in range(0, len(urls), 1000):
        try:
            ctx.store.delete_many(urls[start : start + 1000])
            reverted += len(urls[start : start + 1000])
        except CommitError:
            continue
    ctx.stats.incr(S.COMMITTER_COMMITS_REVERTED, reverted)
    remaining = [(r["i"], r["u"]) for r in loaded.winning_records() if r["i"] not in completed]

    def abort(item: tuple[str, str]) -> bool:
        try:
            ctx.store.abort_multipart(item[1], item[0])
        except NotFoundError:
            return False
        return True

    results, _errors = ctx.pool.run_all(abort, remaining)
    aborted = sum(1 for r in results if r)
    ctx.stats.incr(S.COMMITTER_COMMITS_ABORTED, aborted)
    return reverted, aborted


def parse_int(value: str | None) -> int:
    try:
        return int(value) if value is not None else 0
    except ValueError:
        return 0

