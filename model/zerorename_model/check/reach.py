"""The states a property constrains, and which of them a run reached.

A property is a claim about some runs only: completeness speaks of a job that committed,
abortability of one that aborted.  A ``holds`` is as convincing as the runs that reached those
states: a scope in which no job ever aborts proves nothing about abortability.  So each property
declares the states it constrains (:data:`~zerorename_model.check.properties.CONSTRAINS`), the
explorer counts, per scope, how many runs reached each (``Exploration.reach``), and a cell whose
runs never reached one of its property's states is reported ``vacuous``, never ``holds``
(:mod:`zerorename_model.experiments.verdicts`).

Each state is read from the finished run's typed record (its jobs' outcomes and its incidents),
as the checkers read it, never from a trace's text.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from enum import StrEnum

from zerorename_model.engine.harness import MoveKind, RunResult
from zerorename_model.engine.harness.events import Fault, Role


class State(StrEnum):
    """A state of a run that a property speaks about (its value is how reports name it)."""

    JOB_COMMITTED = "a job committed"
    COMMITTED_AFTER_PARTITION = "a job committed with an attempt of it partitioned"
    COMMITTED_UNDER_LAG = "a job committed after the store answered inconsistently"
    JOBS_SHARED_A_RUN = "a job committed beside another job"
    JOB_ABORTED = "a job aborted"
    JOB_ENDED = "a job ended (committed, aborted or failed)"


def _committed(result: RunResult) -> bool:
    return any(job.outcome == "committed" for job in result.jobs)


def _partitioned_jobs(result: RunResult) -> set[int]:
    return {incident.job for incident in result.incidents
            if isinstance(incident, Fault) and incident.kind is MoveKind.PARTITION
            and incident.role is Role.ATTEMPT}


def _committed_after_partition(result: RunResult) -> bool:
    return any(result.jobs[i].outcome == "committed" for i in _partitioned_jobs(result)
               if i < len(result.jobs))


def _committed_under_lag(result: RunResult) -> bool:
    return result.inconsistent_answers > 0 and _committed(result)


def _beside_another(result: RunResult) -> bool:
    return len(result.jobs) > 1 and _committed(result)


def _aborted(result: RunResult) -> bool:
    return any(job.outcome in ("aborted", "abort-failed") for job in result.jobs)


def _ended(result: RunResult) -> bool:
    return any(job.outcome not in ("running", "lost") for job in result.jobs)


#: how each state is recognised in a finished run
RECOGNISE: dict[State, Callable[[RunResult], bool]] = {
    State.JOB_COMMITTED: _committed,
    State.COMMITTED_AFTER_PARTITION: _committed_after_partition,
    State.COMMITTED_UNDER_LAG: _committed_under_lag,
    State.JOBS_SHARED_A_RUN: _beside_another,
    State.JOB_ABORTED: _aborted,
    State.JOB_ENDED: _ended,
}


def reached(result: RunResult, states: Iterable[State]) -> list[State]:
    """Which of ``states`` the finished run ``result`` reached."""
    return [state for state in states if RECOGNISE[state](result)]


def vacuous_states(constrains: Iterable[State], reach: Mapping[str, int]) -> list[State]:
    """The constrained states no run reached (``reach``: state value -> runs)."""
    return [state for state in constrains if reach.get(state.value, 0) == 0]
