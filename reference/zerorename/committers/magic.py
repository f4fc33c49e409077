"""The magic committer: tasks stream straight to the final keys as multipart uploads that
only job commit completes (Hadoop's ``MagicS3GuardCommitter``, per-job ``__magic_job-<id>``).

Per file written by a task attempt:

1. PUT an upload intent ``<task dir>/__base/<sha256 of path>.intent`` (so the upload can be
   found and aborted even if the writer dies before step 4);
2. create a multipart upload to ``<dest>/<path>`` — always, even for a 0-byte file, so nothing
   is visible before job commit;
3. upload fixed-size parts (``fs.s3a.multipart.size``; every part but the last has exactly
   that size, which S3 requires and Cloudflare R2 insists on);
4. on close, PUT the ``.pending`` record (Hadoop's SinglePendingCommit) beside the intent.

Task commit gathers the attempt's commits — from memory when this committer wrote them, else
by listing its ``.pending`` files — into ``pendingsets/<attempt id>.pendingset``.  Job commit
completes the uploads of the committed attempts (see :mod:`zerorename.stages`).

Differences from Hadoop, on purpose: no 0-byte "marker" object at the magic path (readers of
this API never open magic paths); records are named by a digest of the path, not the path
itself (Hadoop's ``__base/<path>.pending`` is ~150 bytes longer than the user's key, so a
valid key near S3's 1,024-byte limit would fail); the pendingset is named by task *attempt*,
never overwritten; an intent precedes every upload and is kept until the job ends.
"""

from __future__ import annotations

import contextlib
import hashlib
import threading
from typing import ClassVar

from zerorename.committers.base import (
    OutputFile,
    ReliableStore,
    S3ACommitter,
    check_destination,
    check_key_length,
    dest_url,
)
from zerorename.committers.cleanup import INTENT, PENDING, abort_quietly
from zerorename.context import JobContext, TaskContext
from zerorename.errors import CommitError, NotFoundError
from zerorename.formats import (
    SinglePendingCommit,
    UploadIntent,
    check_unique_destinations,
    encode_url,
)
from zerorename.messages import TaskCommitMessage
from zerorename.store import Store, list_dir
from zerorename.urls import join

__all__ = ["MagicCommitter", "MagicFile"]

MAGIC_ENABLED_OPTION = "fs.s3a.committer.magic.enabled"


def record_name(rel: str) -> str:
    """The name of ``rel``'s intent and ``.pending`` records (before the suffix): the SHA-256
    of the path.  Fixed-length, so a record's key does not grow with the user's key — a key
    of S3's maximum length stays valid, and its records fit too.  The records hold the real
    destination URL, which is all anyone reads them for."""
    return hashlib.sha256(rel.encode("utf-8")).hexdigest()


class MagicFile(OutputFile):
    """One file of a magic task attempt: an upload to its final key, never completed here."""

    def __init__(self, committer: MagicCommitter, task: TaskContext, rel: str, final: str,
                 record: str, upload_id: str) -> None:
        super().__init__(final)
        self.committer = committer
        self.store: ReliableStore = committer.store
        self.task = task
        self.rel = rel
        self.record = record
        self.upload_id = upload_id
        self.part_size = committer.part_size
        self._buf = bytearray()
        self._etags: list[str] = []

    def _send(self, chunk: bytes) -> None:
        number = len(self._etags) + 1
        self._etags.append(self.store.upload_part(self.url, self.upload_id, number, chunk))
        self.committer.stats.incr("stream_write_block_uploads")

    def _write(self, data: bytes) -> None:
        self._buf += data
        while len(self._buf) >= self.part_size:
            self._send(bytes(self._buf[: self.part_size]))
            del self._buf[: self.part_size]

    def _finish(self) -> None:
        try:
            if self._buf or not self._etags:  # a 0-byte file is one empty part
                self._send(bytes(self._buf))
            self._buf = bytearray()
            commit = SinglePendingCommit.create(
                self.url, self.upload_id, self._etags, self._pos, job_id=self.committer.job_id,
                task_id=self.task.attempt_id, now=self.committer.clock.now_millis())
            self.store.put(self.record + PENDING, commit.to_bytes())
        except Exception:
            try:
                abort_quietly(self.store, self.url, self.upload_id)
            finally:
                self.committer.file_done(self.rel, None)
            raise
        except BaseException:  # a crash: forget the file locally, touch nothing remote
            self.committer.file_done(self.rel, None)
            raise
        self.committer.file_done(self.rel, commit)

    def _abort(self) -> None:
        """Abort the upload; the intent stays for the job's sweep of this key, which also
        finds an upload whose create answer was lost (not this ``upload_id``)."""
        self._buf = bytearray()
        try:
            abort_quietly(self.store, self.url, self.upload_id)
        finally:
            self.committer.file_done(self.rel, None)


class MagicCommitter(S3ACommitter):
    """See the module docstring.  ``work_path`` is ``<dest>/__magic_job-<id>/<NN>/tasks/
    <attempt id>/__base``: records only, the data goes to the final keys."""

    name: ClassVar[str] = "magic"
    hadoop_class: ClassVar[str] = "org.apache.hadoop.fs.s3a.commit.magic.MagicS3GuardCommitter"
    root_pattern: ClassVar[str] = "__magic_job-{id}"

    def __init__(self, store: Store, job: JobContext, task: TaskContext | None = None) -> None:
        super().__init__(store, job, task)
        if not self.opts.get_bool(MAGIC_ENABLED_OPTION, default=True):
            raise CommitError(self.dest, f"the magic committer is disabled "
                                         f"({MAGIC_ENABLED_OPTION}=false)")
        self._commits: dict[str, SinglePendingCommit] = {}
        self._commits_lock = threading.Lock()

    def _work_path(self, task: TaskContext) -> str:
        return join(self.layout.task_dir(task.attempt_id), "__base")

    def _open(self, task: TaskContext, rel: str) -> OutputFile:
        final = check_key_length(dest_url(self.dest, rel), rel)
        record = f"{self._work_path(task)}/{record_name(rel)}"
        intent = UploadIntent(job_id=self.job_id, task_attempt_id=task.attempt_id,
                              uris=[encode_url(final)], created=self.clock.now_millis())
        self.store.put(record + INTENT, intent.to_bytes())
        upload_id = self.store.create_multipart(final)
        self.stats.incr("committer_magic_files_created")
        return MagicFile(self, task, rel, final, record, upload_id)

    def file_done(self, rel: str, commit: SinglePendingCommit | None) -> None:
        """Called by a :class:`MagicFile` when it is closed (``commit``) or aborted (None)."""
        self._file_closed(rel, reopenable=commit is None)
        if commit is not None:
            with self._commits_lock:
                self._commits[rel] = commit

    # -- task ------------------------------------------------------------------------------

    def _needs_task_commit(self, task: TaskContext) -> bool:
        if self._commits:
            return True
        return any(o.url.endswith(PENDING)
                   for o in list_dir(self.store, self.layout.task_dir(task.attempt_id)))

    def _task_commits(self, task: TaskContext) -> list[SinglePendingCommit]:
        """This attempt's commits: from memory if this committer wrote them, else from the
        ``.pending`` files in the store (another process committing the attempt)."""
        with self._commits_lock:
            if self._commits:
                return [self._commits[rel] for rel in sorted(self._commits)]
        self.require_marker()
        urls = [o.url for o in list_dir(self.store, self.layout.task_dir(task.attempt_id))
                if o.url.endswith(PENDING)]
        with self.executor("load-pending") as pool:
            commits = pool.run(lambda u: SinglePendingCommit.from_bytes(self.store.get(u), u),
                               urls)
        return sorted(commits, key=lambda c: c.url)

    def _commit_task(self, task: TaskContext) -> TaskCommitMessage:
        commits = self._task_commits(task)
        try:
            for commit in commits:
                where = commit.filename or self.layout.task_dir(task.attempt_id)
                check_destination(commit.url, self.dest, where)
                if commit.job_id and commit.job_id != self.job_id:
                    raise CommitError(where, f"written by job {commit.job_id}, not "
                                             f"{self.job_id}")
            check_unique_destinations((c.url for c in commits),
                                      self.layout.task_dir(task.attempt_id))
            self.stats.sample("committer_task_file_count", len(commits))
            return self.save_pendingset(task, commits)
        except Exception:
            self._abort_commits(commits)
            raise

    def _abort_commits(self, commits: list[SinglePendingCommit]) -> None:
        for commit in commits:
            try:
                abort_quietly(self.store, commit.url, commit.upload_id)
            except CommitError:
                continue  # the job's abort finds it through the records

    def _abort_task(self, task: TaskContext) -> None:
        with self._commits_lock:
            known = {c.upload_id: c.url for c in self._commits.values()}
            self._commits.clear()
        with contextlib.suppress(NotFoundError):
            self.abort_recorded(task, known)
