"""What every zerorename committer shares: the lifecycle (setup → write → task commit →
job commit, or abort) with its state checks and the task commit messages.

The public methods here are Hadoop's ``OutputCommitter`` (plus ``open``/``write``).  They
check the call is legal (task methods need a task, a task commits once, a job commits once),
run the subclass's step with a per-call :class:`~zerorename.executor.BoundedExecutor`, keep
statistics, and turn a failed job commit into an aborted job with a failure report.

:class:`BaseCommitter` is assembled from parts with one concern each, so that each can be
read (and its rules checked) alone: the checked construction and the phases
(:mod:`.state`), the job's half of the protocol (:mod:`.job_side`) with its records
(:mod:`.job_records`) and the task commit messages (:mod:`.task_messages`), the task
attempt's half (:mod:`.task_side`) and the opening of its files (:mod:`.task_files`).  The
pieces those stand on are their own modules too: the retrying store (:mod:`.reliable`), the
directories of a job (:mod:`.layout`), path checks (:mod:`.paths`), file objects
(:mod:`.output`), the phases and their refusals (:mod:`.phases`), ``_SUCCESS`` and the
summary report (:mod:`.success`).
"""

from __future__ import annotations

from zerorename.committers.job_side import JobSide
from zerorename.committers.state import MARK_SUCCESS_OPTION, THREADS_OPTION
from zerorename.committers.task_files import TaskFiles
from zerorename.committers.task_side import TaskSide

__all__ = ["MARK_SUCCESS_OPTION", "THREADS_OPTION", "BaseCommitter"]


class BaseCommitter(JobSide, TaskSide, TaskFiles):
    """Lifecycle, checks and shared machinery; subclasses implement the ``_steps``."""
