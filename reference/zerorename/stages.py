"""Job commit as named stages, in the style of Hadoop's manifest committer.

Each stage runs at most once per commit, is timed under its Hadoop statistic name (failures
under ``<name>.failures``) and reports progress, so a slow or failed commit says *where*.

S3A committers (staging, magic)::

    job_stage_scan_records → job_stage_load_pendingsets → [job_stage_prepare_destination]
    → job_stage_complete_uploads (beside it: job_stage_read_owned, the GETs of what the job
    owns besides) → job_stage_abort_uncommitted → job_stage_save_success_marker
    → job_stage_cleanup

(The abort of uncommitted uploads follows the completes, as in Hadoop's job commit: listing
the destination's uploads before them cost one request per 1,000 files on the critical path,
and after them only the leftovers are listed.)

Manifest committer::

    job_stage_load_manifests → job_stage_create_target_dirs → job_stage_rename_files
    → [job_stage_optional_validate_output] → job_stage_save_success_marker → job_stage_cleanup

Memory stays bounded: loaded records are streamed through a bounded executor into a local
spool file (one JSON line per file to commit) and read back from it, so a job commit keeps
per-*task* metadata and one small digest per destination in memory, not every etag
(HADOOP-16570).  Each task's statistics go to a second spool and are added up once the winning
attempt of every task is known, so no per-task copy of them stays in memory either.
Every destination is validated — inside the job destination, unique across the whole job —
before the first upload is completed or the first file renamed.

A job commit that fails takes back what it published: S3A's ``complete_uploads`` deletes the
objects it completed; the rename committers journal every file they publish in a
:class:`Publication` and move (or, where the source is still there, delete) each one back,
never deleting the only copy of a file.
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
    TaskManifest,
    parse_json,
)
from zerorename.messages import TaskCommitMessage
from zerorename.stats import IOStatistics
from zerorename.store import Store
from zerorename.urls import is_under

__all__ = [
    "AttemptMeta",
    "CommitStore",
    "EntrySpool",
    "FilenameSample",
    "Loaded",
    "Progress",
    "Publication",
    "RevertOutcome",
    "StageContext",
    "StageRunner",
    "TaskSource",
    "complete_uploads",
    "create_directories",
    "load_manifests",
    "load_pendingsets",
    "rename_files",
    "validate_output",
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


def _select_winners(loaded: Loaded, ctx: StageContext) -> None:
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
            ctx.stats.incr("committer_task_duplicate_commits", len(metas) - 1)
    for record in loaded.stats_spool:  # the winners' statistics, streamed back
        if record["a"] in loaded.winners:
            loaded.task_stats.aggregate(record["s"])
    loaded.stats_spool.close()


def _check_job(job_id: str, ctx: StageContext, path: str) -> None:
    if job_id != ctx.job.id:
        raise FormatError(path, f"written by job {job_id or '(none)'}, not this job {ctx.job.id}")


def _digest(url: str) -> bytes:
    return hashlib.blake2b(url.encode("utf-8"), digest_size=16).digest()


def _check_unique(loaded: Loaded, key: str = "u") -> None:
    """Across the whole job, each destination is committed by one task only."""
    seen: dict[bytes, str] = {}
    for record in loaded.winning_records():
        digest = _digest(record[key])
        if digest in seen:
            raise DuplicateDestinationError(
                record["p"], f"destination {record[key]} is also written by task attempt "
                             f"{seen[digest]}: two tasks cannot commit the same file")
        seen[digest] = loaded.attempts[record["a"]].attempt_id


# -- S3A: pendingsets -----------------------------------------------------------------------


def _load_one_pendingset(ctx: StageContext, source: TaskSource,
                         check: Callable[[str, str], str]) -> tuple[TaskSource, PendingSet]:
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
    _check_job(pset.job_id, ctx, source.path)
    for commit in pset.commits:
        if commit.job_id and commit.job_id != ctx.job.id:
            _check_job(commit.job_id, ctx, source.path)
        check(commit.url, source.path)
    return source, pset


def load_pendingsets(ctx: StageContext, sources: Iterable[TaskSource],
                     check: Callable[[str, str], str]) -> Loaded:
    """Load, validate and spool every committed task's pendingset; pick one attempt per task;
    check destinations are unique across the job.  Nothing is completed here."""
    loaded = Loaded(spool=EntrySpool())
    progress = Progress(ctx.job, "job_stage_load_pendingsets", None)

    def load(source: TaskSource) -> tuple[TaskSource, PendingSet]:
        return _load_one_pendingset(ctx, source, check)

    try:
        for source, pset in ctx.pool.imap(load, sources):
            attempt_id = pset.task_attempt_id or (
                source.message.attempt_id if source.message is not None else source.url)
            if attempt_id in loaded.attempts:
                raise FormatError(source.path, f"task attempt {attempt_id} is loaded twice")
            meta = AttemptMeta(
                attempt_id=attempt_id,
                task_name=pset.extra_data.get(TASK_NAME_KEY, attempt_id),
                attempt_number=_int(pset.extra_data.get(TASK_ATTEMPT_NUMBER_KEY)),
                saved=_int(pset.extra_data.get(SAVED_KEY)), path=source.path,
                files=len(pset.commits),
            )
            if source.message is not None:
                meta.task_name = f"task-{source.message.task_id}"
            loaded.add_attempt(meta, pset.iostatistics)
            ctx.stats.incr("committer_load_pendingset")
            ctx.stats.sample("committer_task_file_count", len(pset.commits))
            for c in pset.commits:
                loaded.spool.add({"a": attempt_id, "u": c.url, "i": c.upload_id,
                                  "e": c.etags, "z": c.length, "p": source.path})
            progress.tick(source.path)
        _select_winners(loaded, ctx)
        seen: dict[bytes, str] = {}
        for record in loaded.spool:
            if record["a"] not in loaded.winners:
                loaded.loser_ids[record["i"]] = record["u"]
                continue
            digest = _digest(record["u"])
            if digest in seen:
                raise DuplicateDestinationError(
                    record["p"], f"destination {record['u']} is also written by task attempt "
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
    progress = Progress(ctx.job, "job_stage_complete_uploads", loaded.files)
    lock = threading.Lock()
    completed: dict[str, str] = {}  # upload id -> url

    def complete(record: dict[str, Any]) -> None:
        url, upload_id, length = record["u"], record["i"], int(record["z"])
        parts = [(i + 1, str(e)) for i, e in enumerate(record["e"])]
        ctx.store.complete_checked(url, upload_id, parts, length)
        with lock:
            completed[upload_id] = url
        ctx.stats.incr("committer_commits_completed")
        ctx.stats.incr("committer_files_committed")
        ctx.stats.incr("committer_bytes_committed", length)
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
    ctx.stats.incr("committer_commits_reverted", reverted)
    remaining = [(r["i"], r["u"]) for r in loaded.winning_records() if r["i"] not in completed]

    def abort(item: tuple[str, str]) -> bool:
        try:
            ctx.store.abort_multipart(item[1], item[0])
        except NotFoundError:
            return False
        return True

    results, _errors = ctx.pool.run_all(abort, remaining)
    aborted = sum(1 for r in results if r)
    ctx.stats.incr("committer_commits_aborted", aborted)
    return reverted, aborted


# -- manifest committer ----------------------------------------------------------------------


def _load_one_manifest(ctx: StageContext, source: TaskSource,
                       check: Callable[[str, str], str],
                       task_dir: Callable[[str], str]) -> tuple[TaskSource, TaskManifest]:
    if source.message is not None:
        msg = source.message
        if msg.kind != "manifest":
            raise FormatError(msg.path, f"payload is a {msg.kind}, not a manifest")
        manifest = TaskManifest.from_json(msg.payload.get("manifest"), msg.path)
        if manifest.task_attempt_id != msg.attempt_id:
            raise FormatError(msg.path, f"manifest of {manifest.task_attempt_id} in the message "
                                        f"of {msg.attempt_id}")
    else:
        manifest = TaskManifest.from_json(parse_json(ctx.store.get(source.url), source.url),
                                          source.url)
    _check_job(manifest.job_id, ctx, source.path)
    if manifest.job_attempt != ctx.job.attempt:
        raise FormatError(source.path, f"from job attempt {manifest.job_attempt}, this is job "
                                       f"attempt {ctx.job.attempt}")
    expected_dir = task_dir(manifest.task_attempt_id)
    if manifest.task_attempt_dir.rstrip("/") != expected_dir:
        raise FormatError(source.path, f"task attempt directory {manifest.task_attempt_dir} is "
                                       f"not this job's {expected_dir}")
    for entry in manifest.files:
        if not is_under(entry.source, expected_dir) or entry.source.rstrip("/") == expected_dir:
            raise FormatError(source.path, f"source {entry.source} is outside the task "
                                           f"attempt directory {expected_dir}")
        check(entry.dest, source.path)
    return source, manifest


def load_manifests(ctx: StageContext, sources: Iterable[TaskSource],
                   check: Callable[[str, str], str], task_dir: Callable[[str], str]) -> Loaded:
    """Load and validate every committed task's manifest in parallel, spooling its entries."""
    loaded = Loaded(spool=EntrySpool())
    progress = Progress(ctx.job, "job_stage_load_manifests", None)

    def load(source: TaskSource) -> tuple[TaskSource, TaskManifest]:
        return _load_one_manifest(ctx, source, check, task_dir)

    try:
        for source, manifest in ctx.pool.imap(load, sources):
            attempt_id = manifest.task_attempt_id
            if attempt_id in loaded.attempts:
                raise FormatError(source.path, f"task attempt {attempt_id} is loaded twice")
            loaded.add_attempt(AttemptMeta(
                attempt_id=attempt_id, task_name=manifest.task_id,
                attempt_number=_int(manifest.extra_data.get(TASK_ATTEMPT_NUMBER_KEY)),
                saved=_int(manifest.extra_data.get(SAVED_KEY)), path=source.path,
                files=len(manifest.files),
            ), manifest.iostatistics)
            ctx.stats.incr("op_load_manifest")
            ctx.stats.sample("committer_task_file_count", len(manifest.files))
            ctx.stats.sample("committer_task_directory_count", len(manifest.directories))
            for entry in manifest.files:
                loaded.spool.add({"a": attempt_id, "s": entry.source, "u": entry.dest,
                                  "z": entry.size, "e": entry.etag, "p": source.path})
            progress.tick(source.path)
        _select_winners(loaded, ctx)
        _check_unique(loaded)
        for record in loaded.winning_records():
            loaded.files += 1
            loaded.bytes += int(record["z"])
            parent = record["u"].rsplit("/", 1)[0]
            if parent != ctx.dest:
                loaded.directories.add(parent)
    except BaseException:
        loaded.close()
        raise
    return loaded


def create_directories(ctx: StageContext, loaded: Loaded) -> int:
    """Make room for every destination directory: a *file* where a directory must go is
    deleted (Hadoop's CreateOutputDirectories), parents before children.  Directories
    themselves are implicit in the store protocol (created by the rename).  Returns the
    number of files deleted."""
    candidates: set[str] = set()
    for directory in loaded.directories:
        path = directory
        while path != ctx.dest and is_under(path, ctx.dest):
            candidates.add(path)
            path = path.rsplit("/", 1)[0]
    ordered = sorted(candidates, key=lambda p: (p.count("/"), p))

    def prepare(path: str) -> int:
        info = ctx.store.head(path)
        if info is None:
            return 0
        ctx.store.delete(path)
        ctx.stats.incr("op_delete_file_under_destination")
        return 1

    deleted = sum(ctx.pool.run(prepare, ordered))
    ctx.stats.incr("op_create_directories", len(loaded.directories))
    return deleted


@dataclass(frozen=True)
class RevertOutcome:
    """What :meth:`Publication.revert` did: files taken back, and the destinations it could
    not take back (each with its error), which therefore stay visible."""

    reverted: int
    kept: list[tuple[str, BaseException]]

    def describe(self) -> str:
        text = f"reverted {self.reverted} published file(s)"
        if self.kept:
            url, exc = self.kept[0]
            text += (f"; {len(self.kept)} could not be reverted and stay visible (first: {url}: "
                     f"{exc})")
        return text


class Publication:
    """The journal of one job commit's published files, so that a failure before the job is
    committed can take every one of them back.

    ``transfer(source, dest)`` publishes one file.  ``keeps_source`` says whether the source
    survives it: a copy (a store without rename) leaves two copies, so reverting deletes the
    destination; a rename leaves the destination as the only copy, so reverting moves it back
    with ``move_back(dest, source)``.  Either way a revert never deletes the only copy of a
    file, and the job's task output is whole again for a rerun of the job commit.

    Entries are spooled to a local temp file (like the loaded records), so the journal costs
    no memory per file.  Only transfers that returned (or were found to have landed) are
    journaled: a crash — a ``BaseException`` — must not reach the store, so nothing reverts it.
    """

    def __init__(self, store: Store, *, transfer: Callable[[str, str], None],
                 keeps_source: bool, move_back: Callable[[str, str], None]) -> None:
        self.store = store
        self.transfer = transfer
        self.keeps_source = keeps_source
        self.move_back = move_back
        self.count = 0
        self._spool = EntrySpool()
        self._lock = threading.Lock()

    def publish(self, source: str, dest: str, size: int) -> bool:
        """Publish ``source`` as ``dest``; True when an earlier request had already moved it
        (the source is gone and the destination has the expected ``size``: a retried rename
        whose first attempt landed, or a file a failed commit could not take back)."""
        try:
            self.transfer(source, dest)
        except NotFoundError:
            info = self.store.head(dest)
            if info is None or info.size != size or self.store.head(source) is not None:
                raise
            self._journal(source, dest, source_kept=False)
            return True
        self._journal(source, dest, source_kept=self.keeps_source)
        return False

    def _journal(self, source: str, dest: str, *, source_kept: bool) -> None:
        with self._lock:
            self._spool.add({"s": source, "d": dest, "k": source_kept})
            self.count += 1

    def copied_sources(self) -> list[str]:
        """Sources still beside their published copy (to delete once the job is committed)."""
        with self._lock:
            return [e["s"] for e in self._spool if e["k"]]

    def revert(self, pool: BoundedExecutor) -> RevertOutcome:
        """Take back every journaled file: delete a destination whose source is still there,
        move any other back to its source.  Best effort: one failure does not stop the rest."""
        with self._lock:
            entries = list(self._spool)
        copies = [e["d"] for e in entries if e["k"]]
        moved = [(e["s"], e["d"]) for e in entries if not e["k"]]
        kept: list[tuple[str, BaseException]] = []
        reverted = 0
        for start in range(0, len(copies), 1000):
            batch = copies[start : start + 1000]
            try:
                self.store.delete_many(batch)
            except CommitError as exc:
                # a bulk delete names the keys that failed (DeleteManyError), else all did
                failed: dict[str, BaseException] = dict(getattr(exc, "failures", None)
                                                    or dict.fromkeys(batch, exc))
                kept.extend(failed.items())
                reverted += len(batch) - len(failed)
                continue
            reverted += len(batch)

        def back(item: tuple[str, str]) -> None:
            source, dest = item
            self.move_back(dest, source)

        _results, errors = pool.run_all(back, moved)
        reverted += len(moved) - len(errors)
        kept.extend((dest, exc) for (_source, dest), exc in errors)
        return RevertOutcome(reverted, kept)

    def close(self) -> None:
        self._spool.close()

    def __enter__(self) -> Publication:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()


def rename_files(ctx: StageContext, loaded: Loaded, filenames: FilenameSample, *,
                 delete_target: bool, publication: Publication) -> None:
    """Publish every winning file to its destination, in parallel, stopping at the first
    failure; each published file is journaled in ``publication`` for a revert.  A rename
    whose source vanished after a retry, but whose destination now has the expected size, is
    counted as recovered (the earlier attempt did rename it)."""
    progress = Progress(ctx.job, "job_stage_rename_files", loaded.files)

    def move(record: dict[str, Any]) -> None:
        src, dst, size = record["s"], record["u"], int(record["z"])
        progress.tick(dst)
        if delete_target:
            ctx.store.delete(dst)
        with ctx.stats.duration("commit_file_rename"):
            recovered = publication.publish(src, dst, size)
        if recovered:
            ctx.stats.incr("commit_file_rename_recovered")
        ctx.stats.incr("committer_files_committed")
        ctx.stats.incr("committer_bytes_committed", size)
        filenames.add(dst)

    for _ in ctx.pool.imap(move, loaded.winning_records()):
        pass


def validate_output(ctx: StageContext, loaded: Loaded) -> None:
    """Check every committed file exists with the length (and, where known, etag) that its
    manifest recorded (``mapreduce.manifest.committer.validate.output``)."""

    def check(record: dict[str, Any]) -> None:
        dst, size, etag = record["u"], int(record["z"]), record.get("e")
        info = ctx.store.head(dst)
        if info is None:
            raise CommitError(dst, f"output validation: expected a file renamed from "
                                   f"{record['s']}, but it was not found")
        if info.size != size:
            raise CommitError(dst, f"output validation: expected the file renamed from "
                                   f"{record['s']} with length {size} but found {info.size}")
        if etag and info.etag and info.etag.strip('"') != str(etag).strip('"'):
            raise CommitError(dst, f"output validation: etag {info.etag} differs from the "
                                   f"manifest's {etag}")

    for _ in ctx.pool.imap(check, loaded.winning_records()):
        pass


def _int(value: str | None) -> int:
    try:
        return int(value) if value is not None else 0
    except ValueError:
        return 0

