"""Pools whose workers are actors: the order in which parallel requests land becomes a choice.

A committer's thread pool (a job commit completing uploads or deleting files in parallel) would
run inline under the harness, one request after another in a fixed order.  :class:`ActorPools`
is a pool backend of the same shape as the reference's ``zerorename.executor.PoolBackend``
(structurally: the model does not import the committers): each submitted item runs on a
*worker*, a child actor of the actor that submitted it, named after it (``driver0.w0``,
``j0.t1.a0.w1``).  A worker pauses before each store operation like any actor, so the scheduler
interleaves workers with each other and with every other actor; the owner blocks in the
harness's wait until the results it needs are done.

Like a thread pool, at most ``width`` workers of a pool run at once; a worker takes queued items
until none is left, then ends.  Workers belong to their owner's process: a crash or partition
strikes the owner and all its workers together (:mod:`.faults`), a restart crashes a driver's
workers with it, and a kill (another attempt won) interrupts the owner's wait, after which the
pool's shutdown waits for the workers in flight, as a thread pool's does.

Exploration: a worker's step counts as a change to shared state (it may complete a result its
owner waits for, which wakes the owner), so the explorer's sleep sets never treat it as
independent of another move.  That is sound and costs reduction only among workers' steps.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Collection
from concurrent.futures import Future
from typing import Generic, Protocol, TypeVar

from zerorename_model.engine.errors import ActorCrashed, RunAborted
from zerorename_model.engine.harness.control import RunControl
from zerorename_model.engine.harness.events import Call
from zerorename_model.engine.harness.state import Actor, TaskKilled

T = TypeVar("T")
R = TypeVar("R")

#: workers per pool unless told otherwise: two already make every order of two requests
#: reachable, and each more multiplies the states to explore
DEFAULT_WIDTH = 2


class ActorPools:
    """A pool backend whose workers are actors of ``run`` (``width`` per pool)."""

    def __init__(self, run: RunControl, width: int = DEFAULT_WIDTH) -> None:
        self._run = run
        self._width = width

    def width(self, threads: int) -> int:
        """The harness decides the width, whatever the committer's thread option says: the
        harness's options ask for one thread, and the point is to interleave."""
        return self._width

    def start(self, name: str, workers: int) -> ActorPool:
        owner = self._run.state.current
        if owner is None:
            raise RuntimeError(f"pool {name}: only an actor can start workers")
        return ActorPool(self._run, owner, workers)


class _Queued(Protocol):
    """A submitted item waiting for a worker (whatever its types)."""

    def cancel(self) -> None: ...
    def run(self) -> None: ...


class _Item(Generic[T, R]):
    """``fn(item)``, and the future its result or exception goes to."""

    __slots__ = ("fn", "future", "item")

    def __init__(self, future: Future[R], fn: Callable[[T], R], item: T) -> None:
        self.future = future
        self.fn = fn
        self.item = item

    def cancel(self) -> None:
        self.future.cancel()

    def run(self) -> None:
        """Run the item on the calling worker, unless it was cancelled before it started."""
        future = self.future
        if not future.set_running_or_notify_cancel():
            return  # cancelled before it started
        try:
            result = self.fn(self.item)
        except (ActorCrashed, RunAborted, TaskKilled) as error:
            future.set_exception(error)  # this worker's process ended: so does it
            raise
        except Exception as error:  # the item failed: the owner sees it, as from a thread
            future.set_exception(error)
        else:
            future.set_result(result)


class ActorPool:
    """One pool's workers, children of ``owner``."""

    def __init__(self, run: RunControl, owner: Actor, width: int) -> None:
        self._run = run
        self._owner = owner
        self._width = max(1, width)
        self._queue: deque[_Queued] = deque()
        self._workers: list[Actor] = []

    def submit(self, fn: Callable[[T], R], item: T) -> Future[R]:
        future: Future[R] = Future()
        self._queue.append(_Item(future, fn, item))
        if sum(not w.done for w in self._workers) < self._width:
            self._workers.append(self._run.spawn_worker(self._owner, self._work))
        return future

    def _work(self) -> None:
        """A worker's body: take queued items until none is left."""
        while self._queue:
            self._queue.popleft().run()

    def wait(self, futures: Collection[Future[object]], *, first: bool,
             at_least: int = 1) -> None:
        """Block the owner until one (``first``) or all of ``futures`` are done.  A kill of the
        owner interrupts a wait for the first result (the committer then aborts, and leaves
        the pool through :meth:`shutdown`).

        ``at_least`` (a thread pool's permission to sleep until a batch is done) is not
        taken: the owner is ready at the first done, and the scheduler may still run workers
        before it, so every point at which a batching pool's owner wakes (after any number of
        results) stays reachable, and the runs explored, the states counted and the stored
        traces stay those of the per-result wait."""
        owner = self._owner
        pending = list(futures)

        def ready() -> bool:
            if first:
                return (any(f.done() for f in pending)
                        or (owner.killed and not owner.kill_delivered))
            return all(f.done() for f in pending)

        if not ready():
            self._run.wait(Call.AWAIT_WORKERS, ready)
        if first and owner.killed and not owner.kill_delivered:
            owner.kill_delivered = True
            raise TaskKilled(owner.name)

    def shutdown(self) -> None:
        """Cancel the items no worker took, then wait for the workers still running."""
        while self._queue:
            self._queue.popleft().cancel()
        running = [w for w in self._workers if not w.done]
        if running:
            self._run.wait(Call.AWAIT_WORKERS, lambda: all(w.done for w in running))
