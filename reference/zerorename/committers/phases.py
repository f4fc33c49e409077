"""The phases of a committer's protocol, and why each refuses the calls it refuses.

Kept apart so the call-order rules read as one table (the enum and the refusals), not as
checks scattered through the lifecycle methods that apply them.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from types import MappingProxyType

__all__ = ["TASK_REFUSALS", "Phase"]


class Phase(enum.Enum):
    """Where one committer object is in its protocol; a task committer and a job committer
    each have one (``task_phase``, ``job_phase``).

    ``NEW`` → ``SET_UP`` (``setup_task``/``setup_job``) → ``COMMITTING`` (a commit started) →
    ``COMMITTED``.  A task commit that raised leaves ``FAILED``; a job commit that raised
    stays ``COMMITTING`` when it aborted the job (S3A committers) and returns to ``SET_UP``
    when the committer keeps the job for a rerun (v1/v2/manifest).  ``abort_task``,
    ``abort_job`` and ``cleanup_job`` lead to ``ABORTED`` from anywhere.  Only the
    transitions the protocol allows are accepted; any other call raises
    :class:`~zerorename.errors.CallOrderError` before its first request.
    """

    NEW = "new"
    SET_UP = "set up"
    COMMITTING = "committing"
    COMMITTED = "committed"
    FAILED = "failed"
    ABORTED = "aborted"


#: Why a task call is refused in each phase but ``SET_UP`` (the one phase that allows work).
TASK_REFUSALS: Mapping[Phase, str] = MappingProxyType({
    Phase.NEW: "is not set up: call setup_task() first",
    Phase.COMMITTING: "is being committed",
    Phase.COMMITTED: "is already committed (a retry is a new task attempt)",
    Phase.FAILED: "failed its task commit: call abort_task() and run a new task attempt",
    Phase.ABORTED: "was aborted (a retry is a new task attempt)",
})
