"""The ``zerorename`` logger hierarchy, and what a job says through it.

* ``zerorename.committer``: ``INFO`` once per job stage (the stage, the job, the files, bytes and
  requests it handled, how long it took) and for every decision a user may ask about later (the
  conflict mode, what a cleanup removed, a failed stage); ``DEBUG`` for each task stage.
* ``zerorename.store``: ``DEBUG`` for every request (its kind and time), ``WARNING`` for a retry
  loop that gave up (its attempts ran out), ``INFO`` for a repeated request that ended with a
  final answer (a lost race after a conflict: an answer, not a failure of the store).
* ``zerorename.spark``: the Spark writer's decisions (the committer ``auto`` chose, and why).

Stage and request lines come from one place: a committer's :class:`~zerorename.stats.IOStatistics`
already times every stage and every request under its statistic name, and calls the
:class:`JobLog` observer attached to it at the start and end of each.  So no committer logs by
itself, and what is logged is what ``_SUCCESS`` counts.

Only names, counts, durations and URLs are logged, never an option's value: options may carry
credentials (``fs.s3a.secret.key``), and a log is read by more people than a bucket is.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Protocol

from zerorename import statistics as S

__all__ = ["COMMITTER", "SPARK", "STORE", "DurationObserver", "JobLog", "retry_answered",
           "retry_gave_up"]

COMMITTER = logging.getLogger("zerorename.committer")
STORE = logging.getLogger("zerorename.store")
SPARK = logging.getLogger("zerorename.spark")


class DurationObserver(Protocol):
    """Told when a timed statistic starts and ends (see :meth:`IOStatistics.duration`);
    ``counters`` copies the counters, to be called only when needed (not for every request)."""

    def started(self, name: str, counters: Callable[[], Mapping[str, int]]) -> None: ...

    def finished(self, name: str, seconds: float, failed: bool,
                 counters: Callable[[], Mapping[str, int]]) -> None: ...


class JobLog:
    """Turns one committer's timed statistics into log lines.

    ``who`` names the job (and task attempt) in every line; ``facts`` are what the set-up line
    reports besides (the committer, its conflict mode, thread count): names and plain values
    chosen by the committer, never option values copied wholesale."""

    def __init__(self, who: str, facts: Callable[[], Mapping[str, object]]) -> None:
        self.who = who
        self.facts = facts
        self._before: dict[str, dict[str, int]] = {}

    def started(self, name: str, counters: Callable[[], Mapping[str, int]]) -> None:
        if S.is_stage(name):
            self._before[name] = dict(counters())

    def finished(self, name: str, seconds: float, failed: bool,
                 counters: Callable[[], Mapping[str, int]]) -> None:
        if S.is_request(name):
            if STORE.isEnabledFor(logging.DEBUG):
                STORE.debug("%s: %s %s in %.1f ms", self.who, S.request_op(name),
                            "failed" if failed else "ok", seconds * 1000)
            return
        if not S.is_stage(name):
            return
        before = self._before.pop(name, {})
        level = logging.DEBUG if S.is_task_stage(name) else logging.INFO
        if failed:
            level = max(level, logging.WARNING)
        if not COMMITTER.isEnabledFor(level):
            return
        delta = {k: v - before.get(k, 0) for k, v in counters().items()
                 if v != before.get(k, 0)}
        requests = sum(v for k, v in delta.items() if S.is_request(k))
        line = (f"{self.who}: {S.stage_title(name)} {'FAILED' if failed else 'done'} in "
                f"{seconds:.3f} s: {delta.get(S.COMMITTER_FILES_COMMITTED, 0)} files, "
                f"{delta.get(S.COMMITTER_BYTES_COMMITTED, 0)} bytes, {requests} requests")
        if name == S.JOB_STAGE_SETUP:
            line += "; " + ", ".join(f"{k} {v}" for k, v in self.facts().items())
        outcomes = {k: v for k, v in delta.items() if S.is_outcome(k)}
        if outcomes:
            line += "; " + ", ".join(f"{k} {v}" for k, v in sorted(outcomes.items()))
        COMMITTER.log(level, "%s", line)


def retry_gave_up(attempts: int, error: BaseException) -> None:
    """A retry loop ran out of attempts: the store kept failing."""
    STORE.warning("gave up after %d attempts: %s: %s", attempts, type(error).__name__,
                  error)


def retry_answered(attempts: int, error: BaseException) -> None:
    """A repeated operation met an error that repeating cannot change (a precondition that
    does not hold, a missing key): the caller handles it; said once, not as a warning."""
    STORE.info("attempt %d of a repeated request ended it: %s: %s", attempts,
               type(error).__name__, error)
