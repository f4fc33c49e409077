"""What a committer object is made of, and the state its lifecycle checks.

Apart from the lifecycle (:mod:`.job_side`, :mod:`.task_side`, :mod:`.task_files`) because
every one of those calls stands on the same checked construction: the job and task contexts
must agree, the options must be valid, and the retrying store, the statistics, the thread
count and the part size are fixed once here, before any request.  The phases and the lock
that guards them live here too, since both the task side and file opening refuse a call by
the same rule (:meth:`CommitterState._require_task_set_up`).
"""

from __future__ import annotations

import threading
from typing import Any, ClassVar

from zerorename import options as O
from zerorename import statistics as S
from zerorename.committers.destinations import check_destination_shape
from zerorename.committers.output import (
    DEFAULT_PART_SIZE,
    PART_SIZE_OPTION,
    OutputFile,
    check_part_size,
)
from zerorename.committers.phases import TASK_REFUSALS, Phase
from zerorename.committers.reliable import ReliableStore, retry_policy
from zerorename.committers.success import JobReports
from zerorename.context import JobContext, TaskContext
from zerorename.errors import CallOrderError, CommitError
from zerorename.executor import BoundedExecutor, thread_count
from zerorename.formats import SuccessData
from zerorename.logs import JobLog
from zerorename.stats import IOStatistics
from zerorename.store import Store

__all__ = ["MARK_SUCCESS_OPTION", "THREADS_OPTION", "CommitterState"]

MARK_SUCCESS_OPTION = O.MARK_SUCCESS.name
THREADS_OPTION = O.THREADS.name


class CommitterState(JobReports):
    """The checked construction, identity and phases that every part of a committer shares."""

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

    # -- the task's phase, as the task side and file opening check it -----------------------

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

    # -- shared machinery ------------------------------------------------------------------

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
