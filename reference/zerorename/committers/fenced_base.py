"""The fenced committer's state and names shared by its task side and its job side: the job
root, the job attempt's marker, the task records' keys (named by task, never by attempt, so
the attempts of a task race for one key) and the commit record that fences them.

Apart from :mod:`~zerorename.committers.fenced` (job setup, commit and cleanup) and
:mod:`~zerorename.committers.fenced_task` (task output and task commit) so that each side reads
the same layout without repeating it.
"""

from __future__ import annotations

import threading
from typing import ClassVar

from zerorename import statistics as S
from zerorename.committers.base import BaseCommitter
from zerorename.committers.fenced_records import FencedCommitRecord
from zerorename.committers.layout import FENCED_AREA, FENCED_COMMIT_RECORD, JobLayout
from zerorename.context import JobContext, TaskContext
from zerorename.errors import CommitError, NotFoundError
from zerorename.formats import SinglePendingCommit
from zerorename.store import Store
from zerorename.urls import join

__all__ = ["FencedBase"]


class FencedBase(BaseCommitter):
    """Layout and state of a fenced committer (see :mod:`zerorename.committers.fenced`)."""

    name: ClassVar[str] = "fenced"
    hadoop_class: ClassVar[str] = ""
    tasks_counter: ClassVar[str] = S.COMMITTER_TASKS_SUCCEEDED

    def __init__(self, store: Store, job: JobContext, task: TaskContext | None = None) -> None:
        super().__init__(store, job, task)
        if not self.caps.multipart:
            raise CommitError(self.dest, f"the fenced committer needs multipart uploads, "
                                         f"which store {store.name} does not offer")
        self.root = FENCED_AREA.root(self.dest, self.job.id)
        self.layout = JobLayout(self.root, job.attempt)
        self._commits: dict[str, SinglePendingCommit] = {}
        self._commits_lock = threading.Lock()
        self._record_saved: bytes | None = None
        self._recovered: dict[str, str] = {}

    # -- layout ------------------------------------------------------------------------------

    def job_layout(self) -> JobLayout:
        return self.layout

    @property
    def marker(self) -> str:
        """This job attempt's marker (``<NN>/_job.json``), also the capability probe's key."""
        return self.layout.marker

    @property
    def commit_record_url(self) -> str:
        return join(self.root, FENCED_COMMIT_RECORD)

    def tasks_dir(self, job_attempt: int | None = None) -> str:
        attempt = self.job.attempt if job_attempt is None else job_attempt
        return JobLayout(self.root, attempt).tasks_dir

    def task_record_url(self, task: TaskContext) -> str:
        """Named by job, job attempt and task — the same for every attempt of the task, so
        the attempts race for it and ``If-None-Match: *`` lets exactly one win."""
        return join(self.tasks_dir(task.job.attempt), f"{task.task_name}.pendingset")

    @property
    def attempt_name(self) -> str:
        return self.task.attempt_id if self.task is not None else ""

    def _work_path(self, task: TaskContext) -> str:
        return self.dest  # uploads go to the final keys; they are invisible until completed

    def is_recovery_supported(self) -> bool:
        return True

    def _read_commit_record(self) -> FencedCommitRecord | None:
        try:
            data = self.store.get(self.commit_record_url)
        except NotFoundError:
            return None
        return FencedCommitRecord.from_bytes(data, self.commit_record_url, job_id=self.job.id,
                                             dest=self.dest)
