"""The job's half of the protocol on the driver: set up, commit (with its guard and its
failure path), abort and clean up.

Apart from the task side because its rules are the job's: one job commit per job attempt,
possibly by another committer object than the one that set it up (the marker in the records
store is what they share), and a failed commit must end in a state a rerun or an abort
completes — the S3A committers abort the job, the rename committers keep it whole for a
rerun — with a failure report saved.  The subclass supplies the ``_setup_job``,
``_commit_job`` and ``_abort_job`` steps.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from zerorename import statistics as S
from zerorename.committers.job_records import JobRecords
from zerorename.committers.phases import Phase
from zerorename.committers.task_messages import TaskMessages
from zerorename.context import TaskContext
from zerorename.errors import CallOrderError, CommitError, JobFailedError
from zerorename.formats import SuccessData
from zerorename.messages import TaskCommitMessage
from zerorename.urls import parse_url

__all__ = ["JobSide"]


class JobSide(JobRecords, TaskMessages):
    """``setup_job``/``commit_job``/``abort_job``/``cleanup_job`` and their state checks."""

    @property
    def job_phase(self) -> Phase:
        """Where this job is in its protocol, as far as this committer object knows: a job
        another object set up is ``NEW`` here (``commit_job`` then checks the store)."""
        return Phase.COMMITTED if self._job_committed else self._job_started

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

    def setup_job(self) -> None:
        """Check the destination is usable and record that the job attempt exists (the
        marker that lets another committer object commit it).  Once per committer object."""
        with self._state_lock:
            phase = self.job_phase
            if phase is not Phase.NEW:
                state = "already set up" if phase is Phase.SET_UP else f"already {phase.value}"
                raise CallOrderError(self.dest, f"setup_job: job {self.job.id} is {state} on "
                                                "this committer")
        with self.stats.duration(S.JOB_STAGE_SETUP):
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
            with self.stats.duration(S.COMMITTER_COMMIT_JOB):
                success = self._commit_job(parsed)
        except Exception as exc:
            # Only errors: a BaseException (interrupt, the simulation's crash of an actor)
            # stops here without another store request, as a killed process would.
            self.stats.incr(S.COMMITTER_JOBS_FAILED)
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
            report = self.success_data([], stage=S.COMMITTER_COMMIT_JOB, success=False)
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
        with self.stats.duration(S.JOB_STAGE_ABORT):
            self._abort_job(failed=False)

    def _abort_job(self, *, failed: bool) -> None:
        raise NotImplementedError

    def cleanup_job(self) -> None:
        """Remove the job's temporary data (and any uploads it left).  Idempotent."""
        self._job_ended()
        with self.stats.duration(S.JOB_STAGE_CLEANUP):
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
