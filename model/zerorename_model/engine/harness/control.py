"""The run as the parts a committer touches see it (:mod:`.env`'s stepped stores, :mod:`.workers`'
pools): the calling actor, the stores, a step, a wait, a pool worker.  A :class:`typing.Protocol`
that the scheduler's ``Run`` satisfies, so those parts depend on this and never on the
scheduler, which is built on them."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Protocol, TypeVar

from zerorename_model.engine.harness.events import Call
from zerorename_model.engine.harness.state import Actor, HarnessStore
from zerorename_model.engine.stores import ModelStore

T = TypeVar("T")


class RunControl(Protocol):
    """What :class:`~.env.Env`, :class:`~.env.SteppedStore` and :class:`~.workers.ActorPools`
    use of a run."""

    current: Actor | None
    store: HarnessStore
    cluster: ModelStore
    locals: dict[str, ModelStore]

    def store_op(self, cluster: bool, op: str, method: Callable[..., object],
                 args: Sequence[object], kwargs: Mapping[str, object]) -> object: ...

    def sync(self, what: str, action: Callable[[], T]) -> T: ...

    def wait(self, what: Call, condition: Callable[[], bool]) -> None: ...

    def spawn_worker(self, owner: Actor, body: Callable[[], object]) -> Actor: ...
