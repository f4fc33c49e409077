"""A model run with its committer calls marked: which actor called which committer method
when, around the store operations the run's events already record.

The trace of a run says what each actor did to the store, not which committer call it was in;
a Hadoop schedule needs both (a task attempt's ``commitTask`` is one Java call whose filesystem
calls are the breakpoints).  :class:`MarkedRun` wraps the run's committers so that every call
leaves a :class:`CallMark` at its start and a :class:`ReturnMark` at its end, each at its
position among the run's events.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from enum import Enum

from zerorename_model.engine.choices import Chooser, ScriptedChooser
from zerorename_model.engine.errors import ActorCrashed, RunAborted
from zerorename_model.engine.harness import Run, RunResult
from zerorename_model.engine.harness.events import Event
from zerorename_model.engine.harness.state import TaskKilled
from zerorename_model.engine.scenario import (
    Committer,
    CommitterEnv,
    CommitterFactory,
    JobSpec,
    RecoveringCommitter,
    Scenario,
    TaskSpec,
)
from zerorename_model.experiments.trace import choices_of, committer_factory


class Outcome(Enum):
    """How a committer call ended."""

    RETURNED = "returned"
    FAILED = "failed"    # it raised an exception the committer or a store threw
    CRASHED = "crashed"  # the harness ended the actor inside it (crash, kill, restart, abort)


@dataclass(frozen=True)
class CallMark:
    """``actor`` entered committer method ``method`` (the model's name) of the committer for
    ``job`` (and ``task``, None for a job driver)."""

    position: int
    actor: str
    method: str
    job: JobSpec
    task: TaskSpec | None
    arg: str = ""
    data: bytes = b""


@dataclass(frozen=True)
class ReturnMark:
    position: int
    actor: str
    method: str
    outcome: Outcome
    value: str = ""  # a returned bool (needs_task_commit), or the exception


Mark = CallMark | ReturnMark


@dataclass
class MarkedResult:
    """A run's result and its marks, in order of position."""

    result: RunResult
    marks: list[Mark] = field(default_factory=list)

    def stream(self) -> Iterator[Mark | Event]:
        """The run's events with the marks among them (a mark at position ``p`` comes before
        event ``p``)."""
        marks = iter(self.marks)
        pending = next(marks, None)
        for index, event in enumerate(self.result.events):
            while pending is not None and pending.position <= index:
                yield pending
                pending = next(marks, None)
            yield event
        while pending is not None:
            yield pending
            pending = next(marks, None)


class _Marked:
    """A committer whose every call is marked in its run (see the module docstring)."""

    def __init__(self, run: MarkedRun, inner: Committer, job: JobSpec,
                 task: TaskSpec | None) -> None:
        self._run = run
        self._inner = inner
        self._job = job
        self._task = task

    def _call(self, method: str, body: Callable[[], object], arg: str = "",
              data: bytes = b"") -> object:
        run = self._run
        actor = run.current.name if run.current is not None else "harness"
        run.marks.append(CallMark(len(run.events), actor, method, self._job, self._task, arg,
                                  data))
        try:
            value = body()
        except (ActorCrashed, RunAborted, TaskKilled) as error:
            run.marks.append(ReturnMark(len(run.events), actor, method, Outcome.CRASHED,
                                        type(error).__name__))
            raise
        except Exception as error:
            run.marks.append(ReturnMark(len(run.events), actor, method, Outcome.FAILED,
                                        f"{type(error).__name__}: {error}"))
            raise
        shown = str(value) if isinstance(value, bool) else ""
        run.marks.append(ReturnMark(len(run.events), actor, method, Outcome.RETURNED, shown))
        return value

    def setup_job(self) -> None:
        self._call("setup_job", self._inner.setup_job)

    def setup_task(self) -> None:
        self._call("setup_task", self._inner.setup_task)

    def write(self, relpath: str, data: bytes) -> None:
        self._call("write", lambda: self._inner.write(relpath, data), relpath, data)

    def needs_task_commit(self) -> bool:
        return bool(self._call("needs_task_commit", self._inner.needs_task_commit))

    def commit_task(self) -> object:
        return self._call("commit_task", self._inner.commit_task)

    def abort_task(self) -> None:
        self._call("abort_task", self._inner.abort_task)

    def commit_job(self, messages: list[object] | None) -> None:
        self._call("commit_job", lambda: self._inner.commit_job(messages))

    def abort_job(self) -> None:
        self._call("abort_job", self._inner.abort_job)

    def cleanup_job(self) -> None:
        self._call("cleanup_job", self._inner.cleanup_job)

    def recover_task(self, task: TaskSpec) -> None:
        inner = self._inner
        if not isinstance(inner, RecoveringCommitter):
            raise TypeError(f"{type(inner).__name__} cannot recover tasks")
        self._call("recover_task", lambda: inner.recover_task(task), str(task.task_id))


class _MarkingFactory:
    """The factory of marked committers, with the wrapped factory's declarations."""

    def __init__(self, run: MarkedRun, inner: CommitterFactory) -> None:
        self._run = run
        self._inner = inner
        self.supports_recovery: bool = bool(getattr(inner, "supports_recovery", False))
        self.takes_messages: bool = bool(getattr(inner, "takes_messages", True))
        self.visible_before_job_commit: bool = bool(
            getattr(inner, "visible_before_job_commit", False))

    def __call__(self, env: CommitterEnv, job: JobSpec, task: TaskSpec | None,
                 options: dict[str, str]) -> Committer:
        return _Marked(self._run, self._inner(env, job, task, options), job, task)


class MarkedRun(Run):
    """A :class:`Run` whose committers mark their calls in :attr:`marks`."""

    def __init__(self, scenario: Scenario, factory: CommitterFactory) -> None:
        self.marks: list[Mark] = []
        super().__init__(scenario, _MarkingFactory(self, factory))


def run_marked(scenario: Scenario, chooser: Chooser,
               factory: CommitterFactory | None = None) -> MarkedResult:
    """Run ``scenario`` (its registered committer, or ``factory``) with ``chooser``."""
    run = MarkedRun(scenario, committer_factory(scenario, factory))
    result = run.run(chooser)
    return MarkedResult(result, run.marks)


def replay_marked(events: Sequence[dict[str, object]]) -> MarkedResult:
    """Re-run a trace (its lines, header first) with its recorded choices."""
    from zerorename_model.engine.json_values import json_object

    scenario = Scenario.from_json(json_object(events[0]["scenario"]))
    return run_marked(scenario, ScriptedChooser(choices_of(events)))

