"""The attributes and primitives a run's parts share (the scheduler defines them; the fault
moves, driver rules and recorder use them).  Declared once here so each part type-checks
alone."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from zerorename_model.engine.harness.env import Env
from zerorename_model.engine.harness.events import Call, Event, Incident, NoteKind
from zerorename_model.engine.harness.state import Actor, HarnessStore, JobState
from zerorename_model.engine.scenario import CommitterFactory, JobSpec, Scenario, TaskSpec
from zerorename_model.engine.stores import ModelStore

T = TypeVar("T")


class RunBase:
    scenario: Scenario
    factory: CommitterFactory
    options_map: dict[str, str]
    store: HarnessStore  # a ModelStore, or a real store through a bridge backend
    cluster: ModelStore
    env: Env
    actors: list[Actor]
    by_name: dict[str, Actor]
    current: Actor | None
    events: list[Event]
    incidents: list[Incident]
    effects: int
    steps: int
    budget: dict[str, int]
    written: dict[str, dict[str, bytes]]
    attempt_dest: dict[str, str]
    preexisting: dict[str, dict[str, bytes]]
    jobs: list[JobState]
    zombie_urls: set[str]
    locals: dict[str, ModelStore]
    #: fingerprint finished actors without their histories (Recorder.fingerprint); only the
    #: explorer's property searches set it: Table V's observers read histories at every state
    forget_finished: bool
    #: fingerprint whether the store has answered inconsistently (what the consistency
    #: checker reads first); the explorer sets it when it checks consistency
    counts_inconsistency: bool

    def note(self, message: str, kind: NoteKind = NoteKind.INFO,
             task: TaskSpec | None = None) -> None:
        raise NotImplementedError

    def sync(self, what: str, action: Callable[[], T]) -> T:
        raise NotImplementedError

    def wait(self, what: Call, condition: Callable[[], bool]) -> None:
        raise NotImplementedError

    def _spawn(self, actor: Actor) -> None:
        raise NotImplementedError

    def _resume(self, actor: Actor, command: str | None) -> None:
        raise NotImplementedError

    def _crash_process(self, root: Actor) -> None:
        raise NotImplementedError

    def _workers_of(self, root: Actor) -> list[Actor]:
        raise NotImplementedError

    def _spawn_driver(self, index: int, spec: JobSpec) -> None:
        raise NotImplementedError

    def _launch_attempt(self, job: JobState, task_id: int, speculative: bool = False) -> None:
        raise NotImplementedError

    def _attempt_failed(self, actor: Actor) -> None:
        raise NotImplementedError

    def _record_leftovers(self, job: JobState) -> None:
        raise NotImplementedError

    def _visible(self, dest: str) -> dict[str, bytes]:
        raise NotImplementedError
