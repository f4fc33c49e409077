"""The rename family's job-commit stages (manifest committer, FileOutputCommitter v1/v2):
load and validate the task manifests, make room for the target directories, publish every
file by rename (or copy, on a store without one) with a journal for reverting, and validate
the output.

Apart from :mod:`zerorename.stages` (the stage framework and the S3A stages) because the two
families publish differently — completing uploads cannot be taken back file by file, a rename
can — and only this family keeps a :class:`Publication` journal.  Stage order::

    job_stage_load_manifests → job_stage_create_target_dirs → job_stage_rename_files
    → [job_stage_optional_validate_output] → job_stage_save_success_marker → job_stage_cleanup
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from types import TracebackType
from typing import Any

from zerorename import statistics as S
from zerorename.errors import CommitError, FormatError, NotFoundError
from zerorename.executor import BoundedExecutor
from zerorename.formats import TaskManifest, parse_json
from zerorename.stages import (
    SAVED_KEY,
    TASK_ATTEMPT_NUMBER_KEY,
    AttemptMeta,
    EntrySpool,
    FilenameSample,
    Loaded,
    Progress,
    StageContext,
    TaskSource,
    check_job,
    check_unique,
    parse_int,
    select_winners,
)
from zerorename.store import Store
from zerorename.urls import is_under

__all__ = [
    "Publication",
    "RevertOutcome",
    "create_directories",
    "load_manifests",
    "moved_earlier",
    "rename_files",
    "validate_output",
]


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
    check_job(manifest.job_id, ctx, source.path)
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
    progress = Progress(ctx.job, S.JOB_STAGE_LOAD_MANIFESTS, None)

    def load(source: TaskSource) -> tuple[TaskSource, TaskManifest]:
        return _load_one_manifest(ctx, source, check, task_dir)

    try:
        for source, manifest in ctx.pool.imap(load, sources):
            attempt_id = manifest.task_attempt_id
            if attempt_id in loaded.attempts:
                raise FormatError(source.path, f"task attempt {attempt_id} is loaded twice")
            loaded.add_attempt(AttemptMeta(
                attempt_id=attempt_id, task_name=manifest.task_id,
                attempt_number=parse_int(manifest.extra_data.get(TASK_ATTEMPT_NUMBER_KEY)),
                saved=parse_int(manifest.extra_data.get(SAVED_KEY)), path=source.path,
                files=len(manifest.files),
            ), manifest.iostatistics)
            ctx.stats.incr(S.OP_LOAD_MANIFEST)
            ctx.stats.sample(S.COMMITTER_TASK_FILE_COUNT, len(manifest.files))
            ctx.stats.sample(S.COMMITTER_TASK_DIRECTORY_COUNT, len(manifest.directories))
            for entry in manifest.files:
                loaded.spool.add({"a": attempt_id, "s": entry.source, "u": entry.dest,
                                  "z": entry.size, "e": entry.etag})
            progress.tick(source.path)
        select_winners(loaded, ctx)
        check_unique(loaded)
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
        ctx.stats.incr(S.OP_DELETE_FILE_UNDER_DESTINATION)
        return 1

    deleted = sum(ctx.pool.run(prepare, ordered))
    ctx.stats.incr(S.OP_CREATE_DIRECTORIES, len(loaded.directories))
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


def moved_earlier(store: Store, source: str, dest: str, size: int) -> bool:
    """Whether a rename of ``source`` to ``dest`` that failed with "source missing" had in
    fact landed, by an earlier attempt whose answer was lost: the source is gone and the
    destination has the expected ``size``."""
    info = store.head(dest)
    return info is not None and info.size == size and store.head(source) is None


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
            if not moved_earlier(self.store, source, dest, size):
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
    progress = Progress(ctx.job, S.JOB_STAGE_RENAME_FILES, loaded.files)

    def move(record: dict[str, Any]) -> None:
        src, dst, size = record["s"], record["u"], int(record["z"])
        progress.tick(dst)
        if delete_target:
            ctx.store.delete(dst)
        with ctx.stats.duration(S.COMMIT_FILE_RENAME):
            recovered = publication.publish(src, dst, size)
        if recovered:
            ctx.stats.incr(S.COMMIT_FILE_RENAME_RECOVERED)
        ctx.stats.incr(S.COMMITTER_FILES_COMMITTED)
        ctx.stats.incr(S.COMMITTER_BYTES_COMMITTED, size)
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
