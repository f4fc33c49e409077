"""Files written straight to their final keys as multipart uploads the task never completes:
the magic and fenced committers' files.

Both committers stream a file's parts to an upload of its final key and keep, at close, the
pending commit (upload ID, part ETags, size) that job commit completes.  They differ only in
when the upload is created (at open, or once the file outgrows one part) and in what happens
to the pending commit besides handing it to the committer (a ``.pending`` record, or nothing)
— so the streaming, the part arithmetic (every part but the last exactly ``part_size``, which
S3 requires and Cloudflare R2 insists on) and the rules for failures live here once: an error
aborts the file's upload; an interrupt (a ``BaseException``) touches nothing remote and leaves
the file open in its committer, whose ``abort_task`` aborts the upload.
"""

from __future__ import annotations

from typing import Any, Protocol

from zerorename import statistics as S
from zerorename.clock import Clock
from zerorename.committers.cleanup import abort_quietly
from zerorename.committers.output import OutputFile
from zerorename.committers.reliable import ReliableStore
from zerorename.context import TaskContext
from zerorename.errors import CommitError
from zerorename.formats import TASK_ATTEMPT_ID, PendingSet, SinglePendingCommit
from zerorename.stages import SAVED_KEY, TASK_ATTEMPT_NUMBER_KEY, TASK_NAME_KEY
from zerorename.stats import IOStatistics

__all__ = ["PendingUploadFile", "UploadOwner", "task_pendingset"]


class UploadOwner(Protocol):
    """What a :class:`PendingUploadFile` needs from the committer that opened it."""

    store: ReliableStore
    stats: IOStatistics
    clock: Clock
    part_size: int

    @property
    def job_id(self) -> str: ...

    def file_done(self, rel: str, commit: SinglePendingCommit | None) -> None:
        """The file is closed (``commit``: its pending commit) or aborted (None)."""


class PendingUploadFile(OutputFile):
    """One file of a task attempt: an upload to its final key, never completed here.

    ``upload_id`` is given when the committer created the upload at open; otherwise the
    upload is created by :meth:`_start_upload` when the first full part is sent, and a file
    closed before that is handed over by :meth:`_close_without_upload`."""

    def __init__(self, owner: UploadOwner, rel: str, final: str, task_attempt_id: str,
                 upload_id: str | None) -> None:
        super().__init__(final)
        self.owner = owner
        self.store = owner.store
        self.rel = rel
        self.task_attempt_id = task_attempt_id
        self.upload_id = upload_id
        self.part_size = owner.part_size
        self._buf = bytearray()
        self._etags: list[str] = []

    # hooks
    def _start_upload(self) -> str:
        """Create the upload of a file opened without one."""
        raise CommitError(self.url, "this file was opened without an upload")

    def _close_without_upload(self) -> None:
        """Close a file whose upload was never created (it stayed under one part)."""
        raise CommitError(self.url, "this file was opened without an upload")

    def _record(self, commit: SinglePendingCommit) -> None:
        """Keep the closed file's pending commit somewhere besides the committer's memory."""
        return None

    # OutputFile
    def _send(self, chunk: bytes) -> None:
        if self.upload_id is None:
            self.upload_id = self._start_upload()
        number = len(self._etags) + 1
        self._etags.append(self.store.upload_part(self.url, self.upload_id, number, chunk))
        self.owner.stats.incr(S.STREAM_WRITE_BLOCK_UPLOADS)

    def _write(self, data: bytes) -> None:
        """Send every whole part; keep the rest.  Parts are cut from ``data`` itself where
        they can be (one copy each), not appended to the buffer and sliced off it (three: a
        Parquet row group arrives in a few large writes)."""
        view = memoryview(data)
        if self._buf:
            room = self.part_size - len(self._buf)
            self._buf += view[:room]
            view = view[room:]
            if len(self._buf) < self.part_size:
                return
            self._send(bytes(self._buf))
            self._buf = bytearray()
        while len(view) >= self.part_size:
            self._send(bytes(view[: self.part_size]))
            view = view[self.part_size:]
        self._buf += view

    def _finish(self) -> None:
        if self.upload_id is None:
            self._close_without_upload()
            return
        try:
            if self._buf or not self._etags:  # a 0-byte file is one empty part
                self._send(bytes(self._buf))
            self._buf = bytearray()
            commit = SinglePendingCommit.create(
                self.url, self.upload_id, self._etags, self._pos, job_id=self.owner.job_id,
                task_id=self.task_attempt_id, now=self.owner.clock.now_millis())
            self._record(commit)
        except Exception:
            try:
                abort_quietly(self.store, self.url, self.upload_id)
            finally:
                self.owner.file_done(self.rel, None)
            raise
        except BaseException:
            # interrupted: touch nothing remote now, and keep the file open in the committer
            # (not committed, not forgotten), so that abort_task aborts its upload
            raise
        self.owner.file_done(self.rel, commit)

    def _abort(self) -> None:
        """Abort the upload, if one was started (an upload whose create answer was lost is
        not this ``upload_id``: the job's sweep of the key finds it)."""
        self._buf = bytearray()
        try:
            if self.upload_id is not None:
                abort_quietly(self.store, self.url, self.upload_id)
        finally:
            self.owner.file_done(self.rel, None)


def task_pendingset(committer: str, task: TaskContext, commits: list[SinglePendingCommit],
                    stats: dict[str, Any], saved_millis: int) -> PendingSet:
    """The record of a task attempt's pending uploads (Hadoop's ``.pendingset``), naming the
    attempt, its task and the committer that wrote it — what job commit reads to pick each
    task's winning attempt, whichever committer saved it."""
    return PendingSet(job_id=task.job.id, commits=commits, extra_data={
        TASK_ATTEMPT_ID: task.attempt_id, TASK_NAME_KEY: task.task_name,
        TASK_ATTEMPT_NUMBER_KEY: str(task.attempt), SAVED_KEY: str(saved_millis),
        "zerorename.committer": committer,
    }, iostatistics=stats)
