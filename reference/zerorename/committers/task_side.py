"""The task attempt's half of the protocol in the executors: set up, ask whether there is
anything to commit, commit (returning the message for the driver) and abort.

Apart from the job side because a task attempt has its own rules: it commits at most once,
a failed task commit cannot be retried on the same attempt (what it wrote may be gone), and
an abort may come at any moment, from another thread or another process, and always wins.
The subclass supplies the ``_setup_task``, ``_needs_task_commit``, ``_commit_task`` and
``_abort_task`` steps.
"""

from __future__ import annotations

import contextlib
from typing import Any

from zerorename import statistics as S
from zerorename.committers.paths import dest_url
from zerorename.committers.phases import Phase
from zerorename.committers.state import CommitterState
from zerorename.context import TaskContext
from zerorename.errors import CallOrderError, CommitError, NotFoundError
from zerorename.messages import TaskCommitMessage

__all__ = ["TaskSide"]


class TaskSide(CommitterState):
    """``setup_task``/``needs_task_commit``/``commit_task``/``abort_task`` and their checks."""

    @property
    def task_phase(self) -> Phase:
        """Where this task attempt is in its protocol (on this committer object)."""
        return self._task_phase

    def setup_task(self) -> None:
        """Prepare this task attempt (once): the calls that write and commit need it."""
        task = self._require_task()
        with self._state_lock:
            if self._task_phase is not Phase.NEW:
                if self._task_phase is Phase.SET_UP:
                    raise CallOrderError(task.attempt_id, f"setup_task: task attempt "
                                         f"{task.attempt_id} is already set up")
                raise self._task_refusal(task, "setup_task")
        with self.stats.duration(S.TASK_STAGE_SETUP):
            self._setup_task()
        with self._state_lock:
            if self._task_phase is Phase.NEW:  # (an abort_task meanwhile wins)
                self._task_phase = Phase.SET_UP

    def _setup_task(self) -> None:
        return None

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
            with self.stats.duration(S.TASK_STAGE_COMMIT):
                message = self._commit_task(task)
        except BaseException:
            # what the attempt wrote may be gone (the staging committers delete it): a retry
            # on this attempt could commit nothing and report success
            self._finish_task_phase(Phase.FAILED)
            self.stats.incr(S.COMMITTER_TASKS_FAILED)
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
        with self.stats.duration(S.TASK_STAGE_ABORT_TASK):
            self._abort_task(task)

    def _abort_task(self, task: TaskContext) -> None:
        raise NotImplementedError
