"""What every zerorename committer shares: the lifecycle (setup → write → task commit →
job commit, or abort) with its state checks and the task commit messages.

The public methods here are Hadoop's ``OutputCommitter`` (plus ``open``/``write``).  They
check the call is legal (task methods need a task, a task commits once, a job commits once),
run the subclass's step with a per-call :class:`~zerorename.executor.BoundedExecutor`, keep
statistics, and turn a failed job commit into an aborted job with a failure report.  The
pieces it stands on are their own modules: the retrying store (:mod:`.reliable`), the
directories of a job (:mod:`.layout`), path checks (:mod:`.paths`), file objects
(:mod:`.output`), the phases and their refusals (:mod:`.phases`), ``_SUCCESS`` and the
summary report (:mod:`.success`).
"""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from zerorename import options as O
from zerorename import statistics as S
from zerorename.committers.destinations import check_destination_shape
from zerorename.committers.layout import JobLayout
from zerorename.committers.output import (
    DEFAULT_PART_SIZE,
    PART_SIZE_OPTION,
    OutputFile,
    check_part_size,
)
from zerorename.committers.paths import check_destination, check_relpath, dest_url
from zerorename.committers.phases import TASK_REFUSALS, Phase
from zerorename.committers.reliable import ReliableStore, retry_policy
from zerorename.committers.success import JobReports
from zerorename.context import JobContext, TaskContext
from zerorename.errors import (
    CallOrderError,
    CommitError,
    DuplicateDestinationError,
    FormatError,
    JobFailedError,
    NotFoundError,
)
from zerorename.executor import BoundedExecutor, thread_count
from zerorename.formats import SuccessData
from zerorename.logs import JobLog
from zerorename.messages import TaskCommitMessage
from zerorename.stats import IOStatistics
from zerorename.store import Store
from zerorename.urls import parse_url

__all__ = ["BaseCommitter"]

MARK_SUCCESS_OPTION = O.MARK_SUCCESS.name
THREADS_OPTION = O.THREADS.name


class BaseCommitter(JobReports):
    """Lifecycle, checks and shared machinery; subclasses implement the ``_steps``."""

    name: ClassVar[str] = ""
    #: Hadoop's name for the committer class, recorded in _SUCCESS diagnostics.
    hadoop_class: ClassVar[str] = ""
    thread_options: ClassVar[tuple[str, ...]] = (O.THREADS.aliases[0],)
    default_threads: ClassVar[int] = 8
    #: task-completion counter name in this committer family's statistics
    tasks_counter: ClassVar[str] = S.COMMITTER_TASKS_COMPLETED
    #: whether a job's output may be visible in the destination before its job commit (v2's
    #: task commit renames into it); every other committer promises it is not, and the
    #: property suites check that promise after every step of a run
    visible_before_job_commit: ClassVar[bool] = False

    def __init__(self, store: Store, job: JobContext, task: TaskContext | None = None) -> None:
        if not isinstance(job, JobContext):
            raise CommitError(str(job), "job must be a zerorename.JobContext")
        if task is not None:
            if not isinstance(task, TaskContext):
                raise CommitError(str(task), "task must be a zerorename.TaskContext")
            if task.job.id != job.id or task.job.attempt != job.attempt \
                    or task.job.dest != job.dest:
                raise CommitError(task.attempt_id, f"task belongs to job {task.job.id} attempt "
                                  f"{task.job.attempt}, not {job.id} attempt {job.attempt}")
        O.validate(job.opts.as_dict())
        self.job = job
        self.task = task
        self.dest = check_destination_shape(job.dest)
        self.opts = job.opts
        #: every timestamp and duration this committer records (fixed by an option: see clock)
        self.clock = job.clock
        self.stats = IOStatistics(self.clock)
        self.stats.observer = JobLog(
            f"job {job.id}" + (f" task {task.attempt_id}" if task else ""), self.log_facts)
        self.raw_store = store
        self.store = ReliableStore(store, retry_policy(self.opts), self.stats)
        self.caps = store.capabilities()
        self.threads = thread_count(self.opts, THREADS_OPTION, *self.thread_options,
                                    default=self.default_threads)
        self.part_size = check_part_size(
            self.opts.get_size(PART_SIZE_OPTION, default=DEFAULT_PART_SIZE), self.caps,
            given=self.opts.raw(PART_SIZE_OPTION))
        self.mark_success = self.opts.get_bool(MARK_SUCCESS_OPTION, default=True)
        self._opened: set[str] = set()
        self._open_files: dict[str, OutputFile] = {}
        #: guards the phases and the open-file sets (tasks write files from many threads)
        self._state_lock = threading.Lock()
        self._task_phase = Phase.NEW
        self._job_started = Phase.NEW  # see job_phase
        self._job_committed = False
        self._published = False
        self.last_success: SuccessData | None = None
        self._commit_started: float | None = None

    # -- identity and paths ----------------------------------------------------------------

    @property
    def job_id(self) -> str:
        return self.job.id

    @property
    def work_path(self) -> str:
        """Where this task attempt's output is written before commit (a URL)."""
        return self._work_path(self._require_task())

    def _work_path(self, task: TaskContext) -> str:
        raise NotImplementedError

    def _require_task(self) -> TaskContext:
        if self.task is None:
            raise CommitError(self.dest, f"{self.name}: this is a job committer; task "
                              "operations need create_committer(..., task=job.task(...))")
        return self.task

    # -- lifecycle -------------------------------------------------------------------------

    @property
    def task_phase(self) -> Phase:
        """Where this task attempt is in its protocol (on this committer object)."""
        return self._task_phase

    @property
    def job_phase(self) -> Phase:
        """Where this job is in its protocol, as far as this committer object knows: a job
        another object set up is ``NEW`` here (``commit_job`` then checks the store)."""
        return Phase.COMMITTED if self._job_committed else self._job_started

    def _task_refusal(self, task: TaskContext, call: str, path: str | None = None
                      ) -> CallOrderError:
        return CallOrderError(path or task.attempt_id, f"{call}: task attempt {task.attempt_id} "
                              f"{TASK_REFUSALS[self._task_phase]}")

    def _require_task_set_up(self, call: str, path: str | None = None) -> TaskContext:
        """The task, if this attempt is set up and not finished; else CallOrderError.
        Call with ``_state_lock`` held."""
        task = self._require_task()
        if self._task_phase is not Phase.SET_UP:
            raise self._task_refusal(task, call, path)
        return task

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

    def executor(self, name: str, capacity: int | None = None) -> BoundedExecutor:
        return BoundedExecutor(self.threads, f"{self.name}-{name}", capacity,
                               backend=self.job.pool_backend)

    def log_facts(self) -> dict[str, object]:
        """What the set-up line of the log says about this committer's choices (names and
        plain values only: never an option's value, which may be a secret)."""
        facts: dict[str, object] = {"committer": self.name, "destination": self.dest,
                                    "job attempt": self.job.attempt,
                                    "job ID from": self.job.job_id_source,
                                    "threads": self.threads}
        mode = getattr(self, "conflict_mode", None)
        if isinstance(mode, str):
            facts["conflict mode"] = mode
        return facts

    def iostatistics(self) -> dict[str, Any]:
        return self.stats.snapshot()

    def __repr__(self) -> str:
        who = self.task.attempt_id if self.task else f"job {self.job.id}"
        return f"{type(self).__name__}({self.dest!r}, {who})"

    # -- job side --------------------------------------------------------------------------

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

    # -- task side -------------------------------------------------------------------------

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

    def open(self, relpath: str) -> OutputFile:
        """Open ``relpath`` (relative to the destination) for writing by this task attempt."""
        self._require_task()
        rel = check_relpath(relpath)
        with self._state_lock:
            task = self._require_task_set_up("open", dest_url(self.dest, rel))
            if rel in self._opened:
                raise DuplicateDestinationError(
                    dest_url(self.dest, rel), f"task attempt {task.attempt_id} already "
                    "opened this path: one task may write each destination once")
            self._opened.add(rel)
        try:
            handle = self._open(task, rel)
        except BaseException:
            with self._state_lock:
                self._opened.discard(rel)
            raise
        with self._state_lock:
            self._open_files[rel] = handle
        return handle

    def _open(self, task: TaskContext, rel: str) -> OutputFile:
        raise NotImplementedError

    def _file_closed(self, rel: str, *, reopenable: bool = False) -> None:
        """A file is closed; ``reopenable`` (it was aborted) lets the task write it again."""
        with self._state_lock:
            self._open_files.pop(rel, None)
            if reopenable:
                self._opened.discard(rel)

    def write(self, relpath: str, data: bytes) -> None:
        """Write a whole file in one call (``open`` + ``write`` + ``close``)."""
        with self.open(relpath) as f:
            f.write(data)

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

    # -- messages --------------------------------------------------------------------------

    def make_message(self, task: TaskContext, kind: str, payload: dict[str, Any], record: str,
                     stats: dict[str, Any]) -> TaskCommitMessage:
        return TaskCommitMessage(
            committer=self.name, job_id=self.job.id, job_attempt=self.job.attempt,
            task_id=task.task_id, task_attempt=task.attempt, attempt_id=task.attempt_id,
            kind=kind, payload=payload, record=record, iostatistics=stats,
        )

    def _parse_messages(self, messages: Sequence[TaskCommitMessage | Mapping[str, Any] | str]
                        ) -> list[TaskCommitMessage]:
        if isinstance(messages, (str, bytes, Mapping)):
            raise FormatError("task commit messages", "expected a list of messages")
        parsed: list[TaskCommitMessage] = []
        seen: dict[int, str] = {}
        for raw in messages:
            msg = TaskCommitMessage.from_json(raw)
            if msg.job_id != self.job.id:
                raise FormatError(msg.path, f"written by job {msg.job_id}, not this job "
                                            f"{self.job.id}")
            if msg.job_attempt != self.job.attempt:
                raise FormatError(msg.path, f"from job attempt {msg.job_attempt}, this is job "
                                            f"attempt {self.job.attempt}")
            if msg.committer != self.name:
                raise FormatError(msg.path, f"written by the {msg.committer} committer, not "
                                            f"{self.name}")
            if msg.task_id in seen:
                raise CommitError(msg.path, f"task {msg.task_id} is committed twice (also by "
                                            f"{seen[msg.task_id]}): which output wins is "
                                            "undefined")
            seen[msg.task_id] = msg.attempt_id
            parsed.append(msg)
        return parsed

    # -- small helpers ---------------------------------------------------------------------

    def check_in_destination(self, url: str, path: str) -> str:
        """:func:`~zerorename.committers.paths.check_destination` against this job's
        destination: every URL a task record names passes it before job commit uses it."""
        return check_destination(url, self.dest, path)

    def put_json(self, url: str, data: Mapping[str, Any]) -> None:
        self.records_store().put(url, json.dumps(dict(data), ensure_ascii=False)
                                 .encode("utf-8"))

    def records_store(self) -> ReliableStore:
        """Where the job keeps its records (markers, intents, pendingsets): the destination
        store unless a committer keeps them elsewhere (the staging committers' cluster
        filesystem)."""
        return self.store

    def write_marker(self) -> None:
        self.put_json(self.job_layout().marker, {
            "jobId": self.job.id, "jobAttempt": self.job.attempt, "committer": self.name,
            "destination": self.dest,
        })

    def job_layout(self) -> JobLayout:
        raise NotImplementedError

    def require_marker(self) -> None:
        """Hadoop protocol: commit_job of a job attempt that was never set up, or has already
        been committed or aborted (both delete the marker), must fail, not publish again."""
        marker = self.job_layout().marker
        if self.records_store().head(marker) is None:
            raise NotFoundError(marker, f"job attempt directory does not exist: job {self.job.id}"
                                        " was never set up, or was already committed or aborted")

