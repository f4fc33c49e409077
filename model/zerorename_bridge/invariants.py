"""What must hold after *every* move of a run, not only when it ends.

The paper's properties (``zerorename_model.check.properties``) are checked on a finished run: the
destination at job commit and at the end.  A committer can break a promise in between and
repair it before anyone looks — publish a task's files during task commit and delete them again
before job commit — and no end-of-run check sees it, while a reader listing the destination at
that moment reads output of a job that has not committed (and may never).  These checks run
after each step of the hypothesis state machine (:mod:`zerorename_bridge.statemachine`):

* :func:`published_before_commit` — no output of a job is in its destination before the job's
  commit can have begun, for committers that promise it (the committer class declares whether
  its output is ``visible_before_job_commit``: v2 and the direct committers are);
* :meth:`StepWatch.accepted_changes` — once the driver has accepted an attempt of a task, the
  task's accepted attempt never changes within that job attempt (one attempt's output per
  task);
* :func:`store_inconsistencies` — a store whose profile is consistent never answered
  inconsistently and has no pending visibility events; listings of a model store on such a
  profile are exactly its objects.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from zerorename.store import list_all
from zerorename_model.engine.harness import Run, hidden
from zerorename_model.engine.stores.store import ModelStore

#: the attribute a committer class (model protocol or reference committer) declares
VISIBILITY_ATTRIBUTE = "visible_before_job_commit"


class DeclaresVisibility(Protocol):
    """A committer factory that says whether its output may be visible before job commit."""

    visible_before_job_commit: bool


def promises_invisibility(factory: Callable[..., Any]) -> bool:
    """Whether the committer behind ``factory`` promises that nothing of a job is visible in
    its destination before job commit.  Model protocols are their own factories; the bridge's
    ``ReferenceFactory`` reports its production class's attribute.  A factory that declares
    nothing is refused: a promise nobody made must not be checked, nor one made go
    unchecked."""
    declared = getattr(factory, VISIBILITY_ATTRIBUTE, None)
    if not isinstance(declared, bool):
        raise TypeError(f"{factory!r} does not declare {VISIBILITY_ATTRIBUTE} (a bool)")
    return not declared


@dataclass
class StepWatch:
    """What the per-step checks remember between steps of one run."""

    #: jobs (by index) whose driver has had every task accepted at some point: from then on
    #: its commit may have begun (a restarted attempt may redo it), so its output may appear
    committing: set[int] = field(default_factory=set)
    #: (job index, job attempt, task id) -> the attempt the driver accepted
    accepted: dict[tuple[int, int, int], str] = field(default_factory=dict)

    def observe(self, run: Run) -> list[str]:
        """Record what the run's drivers know now; the violations of acceptance it shows."""
        found = []
        for index, job in enumerate(run.jobs):
            if len(job.accepted) == run.scenario.tasks and not job.failed:
                self.committing.add(index)
            for task_id, (task, _message) in job.accepted.items():
                key = (index, job.spec.attempt, task_id)
                before = self.accepted.setdefault(key, task.name)
                if before != task.name:
                    found.append(f"job {index} attempt {job.spec.attempt} accepted {task.name} "
                                 f"for task {task_id} after accepting {before}")
        return found


def _written_by(data: bytes, job_id: str) -> bool:
    """Whether ``data`` was written by a task of ``job_id`` (``scenario.file_data`` puts
    the writer's job ID first)."""
    return data.startswith(f"{job_id}|".encode())


def _output_in(store: Any, dest: str) -> Mapping[str, bytes]:
    """Every object under ``dest`` that a reader would take for output (no hidden name),
    by relative path.  A model store is read directly; a real one (moto, RGW) is listed,
    and only those objects are fetched — this runs after every step."""
    prefix = dest + "/"
    if isinstance(store, ModelStore):
        return {url[len(prefix):]: obj.data for url, obj in store.objects.items()
                if url.startswith(prefix) and not hidden(url[len(prefix):])}
    return {info.url[len(prefix):]: store.get(info.url) for info in list_all(store, prefix)
            if not hidden(info.url[len(prefix):])}


def published_before_commit(run: Run, watch: StepWatch) -> list[str]:
    """Output of a job that is visible in its destination although the job cannot yet have
    begun to commit."""
    watch.observe(run)  # idempotent: whichever invariant runs first sees this step's drivers
    found = []
    for index, job in enumerate(run.jobs):
        if index in watch.committing:
            continue
        for rel, data in sorted(_output_in(run.store, job.spec.dest).items()):
            if _written_by(data, job.spec.job_id):
                found.append(f"{rel} of job {index} is visible before job commit "
                             f"({data.decode(errors='replace')})")
    return found


def store_inconsistencies(run: Run) -> list[str]:
    """Inconsistency on a store whose profile promises none."""
    store = run.store
    if not store.profile.consistent:
        return []
    found = []
    if store.pending:
        found.append(f"{store.name} is consistent but has pending events {store.pending}")
    if store.inconsistent_answers:
        found.append(f"{store.name} is consistent but answered inconsistently "
                     f"{store.inconsistent_answers} time(s)")
    if isinstance(store, ModelStore) and store.listed != set(store.objects):
        found.append(f"{store.name} lists {sorted(store.listed ^ set(store.objects))} "
                     "differently from what it holds")
    return found
