"""Hadoop's classic ``FileOutputCommitter``, algorithms 1 and 2, for stores with rename.

Both write task output under ``<dest>/_temporary/<job id>/<NN>/tasks/<attempt id>/`` and
publish it by renaming:

* **v1**: task commit renames the attempt directory to ``committed/<task>`` (one atomic
  directory rename on HDFS/POSIX); job commit renames every committed file into the
  destination.  Nothing is visible before job commit.  Supports task recovery after a driver
  restart (``recover_task`` moves the previous attempt's committed directory).
* **v2**: task commit renames each file straight into the destination; job commit only writes
  ``_SUCCESS``.  Faster, but **unsafe** (MAPREDUCE-7282): output of a task is visible before
  the job commits, a task that fails mid-commit leaves part of its output, and an aborted job
  cannot take back what its tasks published.  Kept for comparison and for users who accept it.

On stores without rename (S3) both would rename by copying — O(data) and not atomic — so they
refuse to run unless ``zerorename.fileoutput.rename-by-copy=true``; use ``magic``,
``directory`` or ``partitioned`` on S3 instead.  Differences from Hadoop, on purpose: the
temporary tree is per job ID (``_temporary/<job id>``, so concurrent jobs to one destination
do not delete each other's work), ``_SUCCESS`` is the JSON SuccessData rather than 0 bytes,
and file renames in job commit run in parallel.

A v1 or manifest job commit that fails before ``_SUCCESS`` is saved takes back every file it
published (moves it back, or deletes the copy where the source is still there: see
:class:`~zerorename.rename_stages.Publication`) and keeps the job's temporary tree, so that a
rerun of ``commit_job`` — or v1's ``recover_task`` in the next job attempt — finishes the job, and
``abort_job`` discards it.  Hadoop's FileOutputCommitter leaves the half-merged destination.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Iterator
from typing import Any, ClassVar

from zerorename import options as O
from zerorename import statistics as S
from zerorename.committers.base import BaseCommitter
from zerorename.committers.cleanup import abort_quietly
from zerorename.committers.deletes import delete_tree
from zerorename.committers.layout import RENAME_AREA, JobLayout
from zerorename.committers.output import ObjectWriter, OutputFile
from zerorename.committers.paths import check_relpath, dest_url
from zerorename.context import JobContext, TaskContext
from zerorename.errors import CommitError, FormatError, JobFailedError, NotFoundError, StoreError
from zerorename.formats import SuccessData
from zerorename.messages import TaskCommitMessage
from zerorename.rename_stages import Publication, moved_earlier
from zerorename.stages import FilenameSample, Progress, StageRunner
from zerorename.stats import IOStatistics
from zerorename.store import ObjectInfo, Store, list_dir
from zerorename.stores import rename_by_copy
from zerorename.urls import dir_prefix

__all__ = ["FileOutputCommitterV1", "FileOutputCommitterV2", "RenameCommitter"]

RENAME_BY_COPY_OPTION = O.RENAME_BY_COPY.name
#: Store error codes meaning "the rename target exists" (HDFS-like stores refuse).
TARGET_EXISTS = frozenset({"DestinationExists", "DirectoryNotEmpty", "TypeMismatch",
                            "FileAlreadyExists", "PreconditionFailed"})


class RenameCommitter(BaseCommitter):
    """Shared by v1, v2 and the manifest committer: task files are objects under the job's
    ``_temporary/<job id>`` tree, published by rename (or copy + delete where allowed)."""

    allow_copy_rename: ClassVar[bool] = False
    thread_options: ClassVar[tuple[str, ...]] = (O.THREADS.aliases[1],)

    def __init__(self, store: Store, job: JobContext, task: TaskContext | None = None) -> None:
        super().__init__(store, job, task)
        self.native_rename = self.caps.rename
        if not self.native_rename and not (
                self.allow_copy_rename or self.opts.get_bool(RENAME_BY_COPY_OPTION)):
            raise CommitError(self.dest, f"the {self.name} committer publishes by rename, and "
                              f"store {store.name} has none: it would copy every byte "
                              "(O(data), not atomic).  Use the magic, directory or partitioned "
                              f"committer, or set {RENAME_BY_COPY_OPTION}=true to accept it")
        self.layout = JobLayout(RENAME_AREA.root(self.dest, self.job.id), job.attempt)
        #: destinations a failed job commit published but could not take back (they are the
        #: job's files, and for a rename their only copy): abort_job deletes them
        self._unreverted: list[str] = []

    def job_layout(self) -> JobLayout:
        return self.layout

    def _work_path(self, task: TaskContext) -> str:
        return self.layout.task_dir(task.attempt_id)

    def _setup_job(self) -> None:
        self.write_marker()

    def _open(self, task: TaskContext, rel: str) -> OutputFile:
        return ObjectWriter(
            self.store, f"{self._work_path(task)}/{rel}", self.part_size, self.caps.multipart,
            on_close=lambda _url, _size, _etag: self._file_closed(rel),
            on_abort=lambda _url: self._file_closed(rel, reopenable=True),
        )

    def task_files(self, task: TaskContext) -> list[tuple[str, ObjectInfo]]:
        """(relative path, object) for every file the attempt wrote (any writer)."""
        base = dir_prefix(self._work_path(task))
        return sorted(((o.url[len(base):], o) for o in list_dir(self.store, base)),
                      key=lambda item: item[0])

    def _needs_task_commit(self, task: TaskContext) -> bool:
        page = self.store.list_page(dir_prefix(self._work_path(task)), max_keys=1)
        return bool(page.objects)

    def move(self, src: str, dst: str, *, replace: bool = True) -> None:
        """Rename one file; on a store that refuses to overwrite, delete the target first
        (Hadoop's merge: "file over existing file → delete then rename").

        Unless the source is gone: then the target is this very file, moved by an earlier
        attempt of the rename whose answer was lost (the retry met its own landing), and
        deleting it would delete the file's only copy.  That is reported as the source
        missing, which :meth:`Publication.publish` recognises as a landed rename."""
        try:
            self._move_once(src, dst)
        except StoreError as exc:
            if exc.code not in TARGET_EXISTS:
                raise
            if self.store.head(src) is None:
                raise NotFoundError(src, f"rename source missing (rename to {dst}): an "
                                         "earlier attempt moved it") from exc
            if not replace:
                raise
            self.store.delete(dst)
            self._move_once(src, dst)

    def _move_once(self, src: str, dst: str) -> None:
        if self.native_rename:
            self.store.rename(src, dst)
        else:
            self.store.copy(src, dst)
            self.store.delete(src)
            self.stats.incr(S.OP_RENAME_BY_COPY)

    def _copy_to_publish(self, src: str, dst: str) -> None:
        """Publish by copy on a store without rename; the source stays until the job's
        cleanup, so a failed job commit can delete the copy without losing the file."""
        self.store.copy(src, dst)
        self.stats.incr(S.OP_RENAME_BY_COPY)

    def _move_back(self, dest: str, source: str) -> None:
        """Undo a publish whose source is gone: the destination holds the only copy."""
        if self.native_rename:
            self.store.rename(dest, source)
        else:
            self.store.copy(dest, source)
            self.store.delete(dest)

    @contextlib.contextmanager
    def publishing(self, *, replace: bool) -> Iterator[Publication]:
        """The journal of the files this job commit publishes.  An error before ``_SUCCESS``
        is saved takes every one of them back and raises :class:`JobFailedError`; the job's
        temporary tree is left whole for a rerun of ``commit_job`` or for ``abort_job``.
        ``replace``: on a store whose rename refuses an existing target, delete it first."""
        transfer: Callable[[str, str], None]
        if not self.native_rename:
            transfer = self._copy_to_publish
        else:
            transfer = functools.partial(self.move, replace=replace)
        publication = Publication(self.store, transfer=transfer,
                                  keeps_source=not self.native_rename,
                                  move_back=self._move_back)
        with publication:
            try:
                yield publication
            except Exception as exc:  # (a crash — BaseException — must not touch the store)
                if self.published or publication.count == 0:
                    raise
                with self.executor("revert") as pool:
                    outcome = publication.revert(pool)
                self.stats.incr(S.COMMITTER_COMMITS_REVERTED, outcome.reverted)
                self._unreverted.extend(url for url, _exc in outcome.kept)
                path = exc.path if isinstance(exc, CommitError) else self.dest
                reason = exc.reason if isinstance(exc, CommitError) \
                    else f"{type(exc).__name__}: {exc}"
                raise JobFailedError(path, f"job commit failed: {reason}; "
                                           f"{outcome.describe()}; {self.kept_note()}") from exc

    def kept_note(self) -> str:
        return (f"the job's task output is kept under {self.layout.attempt_dir}: rerun "
                "commit_job to finish the job, or call abort_job to discard it")

    def _discard_after_failed_commit(self) -> bool:
        """Keep the task output of a job that is not published (the failed commit took back
        what it had published), so that a rerun can finish the job; once ``_SUCCESS`` is
        saved, a failure is in the cleanup, which abort repeats."""
        return self.published

    def move_dir(self, src: str, dst: str) -> None:
        if self.native_rename:
            self.store.rename(src, dst)
        else:
            self.stats.incr(S.OP_RENAME_BY_COPY, rename_by_copy(self.store, src, dst))

    def _abort_task(self, task: TaskContext) -> None:
        delete_tree(self.store, self._work_path(task))

    def _abort_job(self, *, failed: bool) -> None:
        """Delete the job's temporary tree (and abort uploads of large temp files in it).
        Repeated while it keeps finding something — attempts still finishing may write
        while we delete — up to three passes.  First, files that a failed job commit of this
        object published and could not take back are deleted: the job is being discarded —
        unless a later commit published the job (then they are its output, adopted)."""
        if self._unreverted and not self.published:
            self.store.delete_many(sorted(self._unreverted))
        self._unreverted.clear()
        known = [self.layout.marker]  # deleted even if a lagging listing misses it; once
        for _ in range(3):
            uploads = self.store.list_multipart_uploads(dir_prefix(self.layout.root))
            for upload in uploads:
                abort_quietly(self.store, upload.url, upload.upload_id)
            deleted = delete_tree(self.store, self.layout.root, known=known)
            known = []  # a later pass deletes only what it lists (no empty-handed DeleteObjects)
            if not deleted and not uploads:
                return

    def publish_files(self, moves: list[tuple[str, str, int]], stage: str,
                      filenames: FilenameSample, publication: Publication | None = None
                      ) -> None:
        """Rename (src, dst, size) in parallel, stopping at the first failure; with a
        ``publication``, through it (journaled for a revert; copies keep their source)."""
        progress = Progress(self.job, stage, len(moves))

        def one(item: tuple[str, str, int]) -> None:
            src, dst, size = item
            with self.stats.duration(S.COMMIT_FILE_RENAME):
                if publication is None:
                    try:
                        self.move(src, dst)
                    except NotFoundError:
                        if not moved_earlier(self.store, src, dst, size):
                            raise
                        self.stats.incr(S.COMMIT_FILE_RENAME_RECOVERED)
                elif publication.publish(src, dst, size):
                    self.stats.incr(S.COMMIT_FILE_RENAME_RECOVERED)
            self.stats.incr(S.COMMITTER_FILES_COMMITTED)
            self.stats.incr(S.COMMITTER_BYTES_COMMITTED, size)
            filenames.add(dst)
            progress.tick(dst)

        with self.executor(stage) as pool:
            pool.run(one, moves)

    def files_payload(self, files: list[tuple[str, ObjectInfo]]) -> list[dict[str, Any]]:
        return [{"rel": rel, "z": info.size} for rel, info in files]

    def finish_job(self, filenames: FilenameSample, stage_runner: StageRunner,
                   messages: list[TaskCommitMessage] | None) -> SuccessData:
        """Write _SUCCESS (with the tasks' statistics when their messages carry them) and
        delete the job's temporary tree."""
        self.stats.incr(S.COMMITTER_JOBS_COMPLETED)
        task_stats = IOStatistics(self.clock)
        for msg in messages or []:
            task_stats.aggregate(msg.iostatistics)
        success = self.success_data(filenames.names, stage=S.COMMITTER_COMMIT_JOB,
                                    task_stats=task_stats)
        self.save_success(success, stage_runner)
        self.clean_up_published(success, stage_runner, lambda: self._abort_job(failed=False))
        return success


def _message_files(msg: TaskCommitMessage) -> list[tuple[str, int]]:
    files = msg.payload.get("files")
    if not isinstance(files, list):
        raise FormatError(msg.path, "payload has no 'files' list")
    out: list[tuple[str, int]] = []
    for item in files:
        if not isinstance(item, dict) or not isinstance(item.get("rel"), str) \
                or not isinstance(item.get("z"), int) or isinstance(item.get("z"), bool):
            raise FormatError(msg.path, f"bad file entry {item!r}")
        out.append((check_relpath(item["rel"], where=msg.path), int(item["z"])))
    return out


class FileOutputCommitterV1(RenameCommitter):
    """Algorithm 1: task commit = directory rename; job commit = rename into place."""

    name: ClassVar[str] = "v1"
    hadoop_class: ClassVar[str] = "org.apache.hadoop.mapreduce.lib.output.FileOutputCommitter"

    def _commit_task(self, task: TaskContext) -> TaskCommitMessage:
        files = self.task_files(task)
        committed = self.layout.committed_task_dir(task.task_name)
        for rel, _info in files:
            check_relpath(rel, where=f"{self._work_path(task)}/{rel}")
        if files:
            if self.store.list_page(dir_prefix(committed), max_keys=1).objects:
                delete_tree(self.store, committed)  # a previous attempt's: the last one wins
            self.move_dir(self._work_path(task), committed)
        stats = self.count_task_success()
        return self.make_message(task, "files", {"committedDir": committed,
                                                 "files": self.files_payload(files)},
                                 committed, stats)

    def _commit_job(self, messages: list[TaskCommitMessage] | None) -> SuccessData:
        runner = StageRunner(self.stats, self.job)
        moves: list[tuple[str, str, int]] = []
        if messages is None:
            self.require_marker()
            base = dir_prefix(self.layout.committed_dir)
            for info in list_dir(self.store, self.layout.committed_dir):
                _task, _, rel = info.url[len(base):].partition("/")
                check_relpath(rel, where=info.url)
                moves.append((info.url, dest_url(self.dest, rel), info.size))
        else:
            for msg in messages:
                committed = self.layout.committed_task_dir(f"task_{self.job_id}_m_"
                                                           f"{msg.task_id:06d}")
                if msg.payload.get("committedDir") != committed:
                    raise FormatError(msg.path, f"committed directory "
                                      f"{msg.payload.get('committedDir')!r} is not {committed}")
                moves.extend((f"{committed}/{rel}", dest_url(self.dest, rel), size)
                             for rel, size in _message_files(msg))
        filenames = FilenameSample()
        with self.publishing(replace=True) as publication:
            runner.run(S.JOB_STAGE_RENAME_FILES, lambda: self.publish_files(
                moves, S.JOB_STAGE_RENAME_FILES, filenames, publication))
            return self.finish_job(filenames, runner, messages)

    def is_recovery_supported(self) -> bool:
        return True

    def recover_task(self, task: TaskContext | None = None) -> None:
        """Move the previous job attempt's committed output of ``task`` into this attempt."""
        task = task or self._require_task()
        if self.job.attempt == 0:
            raise CommitError(task.attempt_id, "cannot recover task output for first attempt")
        previous = self.layout.committed_task_dir(task.task_name, self.job.attempt - 1)
        current = self.layout.committed_task_dir(task.task_name)
        if not self.store.list_page(dir_prefix(previous), max_keys=1).objects:
            self.stats.incr(S.COMMITTER_TASK_RECOVERY_MISSING)
            return
        if self.store.list_page(dir_prefix(current), max_keys=1).objects:
            delete_tree(self.store, current)
        self.move_dir(previous, current)
        self.stats.incr(S.COMMITTER_TASKS_RECOVERED)


class FileOutputCommitterV2(RenameCommitter):
    """Algorithm 2: task commit renames files into the destination (visible at once)."""

    name: ClassVar[str] = "v2"
    hadoop_class: ClassVar[str] = "org.apache.hadoop.mapreduce.lib.output.FileOutputCommitter"
    visible_before_job_commit: ClassVar[bool] = True

    def _commit_task(self, task: TaskContext) -> TaskCommitMessage:
        files = self.task_files(task)
        moves = []
        for rel, info in files:
            check_relpath(rel, where=info.url)
            moves.append((info.url, dest_url(self.dest, rel), info.size))
        self.publish_files(moves, S.TASK_STAGE_COMMIT, FilenameSample())
        stats = self.count_task_success()
        return self.make_message(task, "files", {"files": self.files_payload(files)}, "",
                                 stats)

    def _commit_job(self, messages: list[TaskCommitMessage] | None) -> SuccessData:
        runner = StageRunner(self.stats, self.job)
        filenames = FilenameSample()
        if messages is None:
            self.require_marker()
        else:
            for msg in messages:
                for rel, _size in _message_files(msg):
                    filenames.add(dest_url(self.dest, rel))
        return self.finish_job(filenames, runner, messages)

