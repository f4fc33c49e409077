"""What a committer may use under the harness: the environment (:class:`Env`) and its stepped
stores, each operation one harness step.  They reach the run only through
:class:`~.control.RunControl`, so this module needs neither the scheduler nor the rest of it."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, TypeVar

from zerorename.store import ListPage, ObjectInfo, Store, StoreCapabilities, UploadInfo
from zerorename_model.engine.harness.control import RunControl
from zerorename_model.engine.harness.events import STORE_OPS
from zerorename_model.engine.harness.workers import ActorPools
from zerorename_model.engine.stores.profiles import CLUSTER_PROFILE
from zerorename_model.engine.stores.store import ModelStore

T = TypeVar("T")


class Env:
    """What a committer may use: the destination store, the consistent cluster filesystem
    (staging committers propagate pendingsets through it) and a per-actor local disk."""

    def __init__(self, run: RunControl,
                 client: Callable[[Store], Store] | None = None) -> None:
        """``client``: what the committer puts around the destination store (the model's
        committers: their retry loop, :mod:`zerorename_model.systems.protocols.retrying`);
        each request it sends stays a step of its own."""
        self._run = run
        self._state = state = run.state
        stepped = SteppedStore(run, state.store, cluster=False)
        self.store: Store = client(stepped) if client is not None else stepped
        self.cluster = SteppedStore(run, state.cluster, cluster=True)
        self.profile = state.store.profile

    def local(self) -> ModelStore:
        """The calling actor's local disk: private, so its operations are not steps."""
        actor = self._state.current
        key = actor.task.name if actor and actor.task else "driver"
        return self._state.locals.setdefault(key, ModelStore(CLUSTER_PROFILE))

    def step(self, what: str, action: Callable[[], T]) -> T:
        """One harness step that is not a store operation (a service call such as a lakeFS
        merge): the actor pauses, then ``action`` runs atomically.  Outside an actor it just
        runs."""
        if self._state.current is None:
            return action()
        return self._run.sync(what, action)

    def worker_pools(self, width: int) -> ActorPools:
        """A pool backend whose workers are actors (``width`` per pool), for committers
        whose thread pools the harness should interleave (see :mod:`.workers`)."""
        return ActorPools(self._run, width)

    @property
    def actor_name(self) -> str:
        current = self._state.current
        return current.name if current else "harness"


class SteppedStore:
    """A store whose every operation is one harness step (pause, then perform and record).

    The operations (:data:`~.events.STORE_OPS`) are looked up when asked for and passed the
    caller's arguments as given (they are what the trace records); for type checkers they are
    declared with the signatures of :class:`zerorename.store.Store`, so a stepped store is a
    ``Store``."""

    def __init__(self, run: RunControl, inner: Store, cluster: bool) -> None:
        self._run = run
        self._inner = inner
        self._cluster = cluster
        self.name: str = inner.name

    def capabilities(self) -> StoreCapabilities:
        return self._inner.capabilities()

    def request_counts(self) -> dict[str, int]:
        return self._inner.request_counts()

    @property
    def unstepped(self) -> Store:
        """The store underneath, for services whose own calls are steps (see Env.step)."""
        return self._inner

    if TYPE_CHECKING:  # the operations __getattr__ steps, as Store declares them
        def put(self, url: str, data: bytes, *, if_none_match: bool = False,
                if_match: str | None = None) -> str: ...
        def get(self, url: str) -> bytes: ...
        def head(self, url: str) -> ObjectInfo | None: ...
        def list_page(self, prefix: str, *, delimiter: str | None = None,
                      token: str | None = None, max_keys: int = 1000) -> ListPage: ...
        def delete(self, url: str) -> None: ...
        def delete_many(self, urls: Sequence[str]) -> None: ...
        def copy(self, src: str, dst: str) -> str: ...
        def rename(self, src: str, dst: str) -> None: ...
        def create_multipart(self, url: str) -> str: ...
        def upload_part(self, url: str, upload_id: str, part_number: int,
                        data: bytes) -> str: ...
        def complete_multipart(self, url: str, upload_id: str,
                               parts: Sequence[tuple[int, str]], *,
                               if_none_match: bool = False,
                               if_match: str | None = None) -> str: ...
        def abort_multipart(self, url: str, upload_id: str) -> None: ...
        def list_multipart_uploads(self, prefix: str) -> list[UploadInfo]: ...

    def __getattr__(self, op: str) -> Callable[..., object]:
        if op not in STORE_OPS:
            raise AttributeError(op)
        method: Callable[..., object] = getattr(self._inner, op)
        run, cluster = self._run, self._cluster

        def stepped(*args: object, **kwargs: object) -> object:
            return run.store_op(cluster, op, method, args, kwargs)

        return stepped
