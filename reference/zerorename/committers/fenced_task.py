"""The fenced committer's task side: files stream to uploads of their final keys (created at
open, never completed here); task commit is one conditional PUT of the task's record at a key
named by the task, so the first attempt to commit a task wins and every later one learns who
did; a task commit that lands after the job's commit point is fenced (its uploads aborted).

Apart from :mod:`~zerorename.committers.fenced` (the job side) because the two run in
different processes and share only the layout of :mod:`~zerorename.committers.fenced_base`.
"""

from __future__ import annotations

from collections.abc import Iterable

from zerorename import statistics as S
from zerorename.committers.cleanup import abort_quietly
from zerorename.committers.fenced_base import FencedBase
from zerorename.committers.fenced_records import (
    TaskCommittedByOtherAttemptError,
    TaskFencedError,
)
from zerorename.committers.output import OutputFile
from zerorename.committers.paths import dest_url
from zerorename.committers.uploads import PendingUploadFile, task_pendingset
from zerorename.context import TaskContext
from zerorename.errors import CommitError, NotFoundError, PreconditionFailedError
from zerorename.formats import PendingSet, SinglePendingCommit
from zerorename.messages import TaskCommitMessage
from zerorename.stages import TASK_ATTEMPT_NUMBER_KEY
from zerorename.urls import join

__all__ = ["FencedFile", "FencedTaskCommitter"]


class FencedFile(PendingUploadFile):
    """One file of a task attempt: an upload to its final key (created at open) whose part
    ETags stay in memory; never completed here."""


class FencedTaskCommitter(FencedBase):
    """The task side of the fenced committer."""

    def _open(self, task: TaskContext, rel: str) -> OutputFile:
        final = dest_url(self.dest, rel)
        upload_id = self.store.create_multipart(final)
        self.stats.incr(S.COMMITTER_FENCED_FILES_CREATED)
        return FencedFile(self, rel, final, task.attempt_id, upload_id)

    def file_done(self, rel: str, commit: SinglePendingCommit | None) -> None:
        """Called by a :class:`FencedFile` when it is closed (``commit``) or aborted (None)."""
        self._file_closed(rel, reopenable=commit is None)
        if commit is not None:
            with self._commits_lock:
                self._commits[rel] = commit

    def _needs_task_commit(self, task: TaskContext) -> bool:
        with self._commits_lock:
            return bool(self._commits)

    def _commit_task(self, task: TaskContext) -> TaskCommitMessage:
        with self._commits_lock:
            commits = [self._commits[rel] for rel in sorted(self._commits)]
        url = self.task_record_url(task)
        stats = self.count_task_success()
        pset = task_pendingset(self.name, task, commits, stats, self.clock.now_millis())
        data = pset.to_bytes()
        with self.stats.duration(S.TASK_STAGE_SAVE_TASK_RECORD):
            winner = self._put_task_record(url, data)
        if winner is not None:
            self._abort_own(commits)
            winner_id = winner.task_attempt_id or "(an attempt that did not name itself)"
            raise TaskCommittedByOtherAttemptError(
                url, f"task {task.task_name} was committed by attempt {winner_id}; attempt "
                f"{task.attempt_id} aborted its {len(commits)} upload(s)", winner_id,
                self._message_of(task, winner, url))
        self._record_saved = data
        # A task commit that lands after the job's commit point must not count.
        commit = self._read_commit_record()
        if commit is not None and task.attempt_id not in commit.attempts:
            self._abort_own(commits)
            self.store.delete(url)
            self._record_saved = None
            raise TaskFencedError(url, f"job {self.job.id} was committed (by job attempt "
                                       f"{commit.job_attempt}) without attempt "
                                       f"{task.attempt_id}; its {len(commits)} upload(s) "
                                       "were aborted")
        self.stats.sample(S.COMMITTER_TASK_FILE_COUNT, len(commits))
        return self.make_message(task, "pendingset", {"pendingset": pset.to_json()}, url, stats)

    def _put_task_record(self, url: str, data: bytes) -> PendingSet | None:
        """PUT the record if absent.  None: it is ours now (possibly by an earlier try whose
        answer was lost); else the record that holds the key.  Ours is recognised by its
        bytes: they name this attempt and its upload IDs, which no other writer has (no random
        nonce is needed, so records are reproducible — the model harness relies on it)."""
        try:
            self.store.put(url, data, if_none_match=True)
            return None
        except PreconditionFailedError:
            existing = self.store.get(url)
        if existing == data:
            return None
        return PendingSet.from_bytes(existing, url)

    def _message_of(self, task: TaskContext, pset: PendingSet, url: str
                    ) -> TaskCommitMessage | None:
        """The commit message the winning attempt sent (or would have sent) its driver."""
        try:
            attempt = int(pset.extra_data.get(TASK_ATTEMPT_NUMBER_KEY, ""))
        except ValueError:
            return None
        if not pset.task_attempt_id:
            return None
        return TaskCommitMessage(
            committer=self.name, job_id=self.job.id, job_attempt=self.job.attempt,
            task_id=task.task_id, task_attempt=attempt, attempt_id=pset.task_attempt_id,
            kind="pendingset", payload={"pendingset": pset.to_json()}, record=url,
            iostatistics=dict(pset.iostatistics))

    def _abort_own(self, commits: Iterable[SinglePendingCommit]) -> None:
        failures: list[tuple[str, BaseException]] = []
        for c in commits:
            try:
                abort_quietly(self.store, c.url, c.upload_id)
            except CommitError as exc:
                failures.append((c.url, exc))
        with self._commits_lock:
            self._commits.clear()
        if failures:
            url, first = failures[0]
            raise CommitError(url, f"could not abort {len(failures)} upload(s) of task attempt "
                                   f"{self.attempt_name}: {first}")

    def _abort_task(self, task: TaskContext) -> None:
        """Abort this attempt's uploads — from memory, and from its record (which a commit
        whose answer was lost may have saved, or which another process aborting the attempt
        finds) — and delete the record, unless the job has committed this attempt."""
        url = self.task_record_url(task)
        with self._commits_lock:
            commits = list(self._commits.values())
        try:
            pset: PendingSet | None = PendingSet.from_bytes(self.store.get(url), url)
        except NotFoundError:
            pset = None
        mine = pset is not None and pset.task_attempt_id == task.attempt_id
        if pset is not None and mine:
            commit = self._read_commit_record()
            if commit is not None and task.attempt_id in commit.attempts:
                return  # published by the job: not this attempt's to undo
            known = {c.upload_id for c in commits}
            commits.extend(c for c in pset.commits if c.upload_id not in known)
            self.store.delete(url)  # first: a job commit must never find aborted uploads
        self._record_saved = None
        self._abort_own(commits)

    def recover_task(self, task: TaskContext | None = None) -> None:
        """A task committed in an earlier job attempt keeps its output: its record is copied
        (conditionally) into this attempt's area, where job commit finds it.  Call before
        ``setup_job``, which rolls back every earlier record not recovered."""
        if task is None:
            raise CommitError(self.job.id, "recover_task needs the task of the earlier job "
                                           "attempt")
        source = self.task_record_url(task)
        try:
            data = self.store.get(source)
        except NotFoundError:
            raise NotFoundError(source, f"task {task.task_name} has no committed record in "
                                        f"job attempt {task.job.attempt}: rerun the task") \
                from None
        target = join(self.tasks_dir(), f"{task.task_name}.pendingset")
        try:
            self.store.put(target, data, if_none_match=True)
        except PreconditionFailedError:
            if self.store.get(target) != data:
                raise CommitError(target, f"task {task.task_name} is already committed in "
                                          f"job attempt {self.job.attempt}") from None
        self._recovered[task.task_name] = target
