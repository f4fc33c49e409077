"""The scheduler as the other parts of a run see it: Protocols that the scheduler's ``Run``
satisfies, so that those parts depend on these and never on the scheduler, which is built on
them.

* :class:`RunControl` is what a committer's side uses (:mod:`.env`'s stepped stores,
  :mod:`.workers`' pools): the shared state, a store operation, a step, a wait, a pool worker.
* :class:`Scheduling` is what the drivers' rules (:mod:`.driver`) and the fault moves
  (:mod:`.faults`) use: start an actor, resume one with a command, crash a process, and the
  step and wait a driver's body takes."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Protocol, TypeVar

from zerorename_model.engine.harness.events import Call
from zerorename_model.engine.harness.state import Actor, RunState

T = TypeVar("T")


class Steps(Protocol):
    """The two ways an actor pauses besides a store operation."""

    def sync(self, what: str, action: Callable[[], T]) -> T:
        """One step that is not a store operation: pause, then run ``action`` atomically."""
        ...

    def wait(self, what: Call, condition: Callable[[], bool]) -> None:
        """Pause until ``condition`` holds."""
        ...


class RunControl(Steps, Protocol):
    """What :class:`~.env.Env`, :class:`~.env.SteppedStore` and :class:`~.workers.ActorPools`
    use of a run."""

    state: RunState

    def store_op(self, cluster: bool, op: str, method: Callable[..., object],
                 args: Sequence[object], kwargs: Mapping[str, object]) -> object: ...

    def spawn_worker(self, owner: Actor, body: Callable[[], object]) -> Actor: ...


class Scheduling(Steps, Protocol):
    """What :class:`~.driver.DriverRules` and :class:`~.faults.FaultMoves` use of a run."""

    def spawn(self, actor: Actor) -> None:
        """Add ``actor`` and run it up to its first pause."""
        ...

    def resume(self, actor: Actor, command: str | None) -> None:
        """Switch to the paused ``actor`` with ``command`` until it pauses again."""
        ...

    def crash_process(self, root: Actor) -> None:
        """Crash ``root`` and every pool worker of its process still running."""
        ...
