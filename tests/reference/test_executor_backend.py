"""The pool-backend seam of BoundedExecutor: threads by default, any backend when given."""

from __future__ import annotations

import threading
from collections.abc import Callable, Collection
from concurrent.futures import Future
from pathlib import Path
from typing import Any, TypeVar

import zerorename as zr
from zerorename.executor import THREAD_PREFIX, BoundedExecutor, ThreadBackend, WorkerPool

T = TypeVar("T")
R = TypeVar("R")


class _Deferred:
    """A backend that runs nothing until waited on, then everything in reverse order of
    submission, recording what it was asked."""

    def __init__(self) -> None:
        self.started: list[tuple[str, int]] = []
        self.ran: list[Any] = []

    def width(self, threads: int) -> int:
        return 3

    def start(self, name: str, workers: int) -> WorkerPool:
        self.started.append((name, workers))
        return _DeferredPool(self)


class _DeferredPool:
    def __init__(self, backend: _Deferred) -> None:
        self._backend = backend
        self._queued: list[tuple[Future[Any], Callable[[Any], Any], Any]] = []

    def submit(self, fn: Callable[[T], R], item: T) -> Future[R]:
        future: Future[R] = Future()
        self._queued.append((future, fn, item))
        return future

    def wait(self, futures: Collection[Future[Any]], *, first: bool,
             at_least: int = 1) -> None:
        while self._queued:
            future, fn, item = self._queued.pop()
            future.set_running_or_notify_cancel()
            self._backend.ran.append(item)
            future.set_result(fn(item))

    def shutdown(self) -> None:
        self._queued.clear()


def test_the_default_backend_is_a_thread_pool() -> None:
    names: list[str] = []
    with BoundedExecutor(2, "t") as pool:
        assert isinstance(pool.backend, ThreadBackend)
        pool.run(lambda _i: names.append(threading.current_thread().name), range(4))
    assert names and all(n.startswith(f"{THREAD_PREFIX}t") for n in names)


def test_a_backend_decides_the_width_and_runs_the_work() -> None:
    backend = _Deferred()
    with BoundedExecutor(1, "commit", backend=backend) as pool:
        assert pool.threads == 3 and not pool.inline
        results = pool.run(lambda i: i * 10, range(5))
    assert backend.started == [("commit", 3)]
    assert sorted(results) == [0, 10, 20, 30, 40]
    assert backend.ran == [4, 3, 2, 1, 0], "capacity 6 takes all five before waiting"


def test_results_of_several_done_come_in_submission_order() -> None:
    with BoundedExecutor(1, "c", capacity=4, backend=_Deferred()) as pool:
        assert pool.run(lambda i: i, range(4)) == [0, 1, 2, 3]


def test_committers_take_the_backend_from_the_job_context(tmp_path: Path) -> None:
    backend = _Deferred()
    job = zr.JobContext(dest=tmp_path.as_uri(), job_id="j", pool_backend=backend)
    committer = zr.create_committer("v1", zr.LocalStore(), job)
    with committer.executor("x") as pool:
        assert pool.backend is backend


def test_beside_overlaps_the_block_on_threads_and_runs_first_inline() -> None:
    release = threading.Event()
    with BoundedExecutor(2, "b") as pool, pool.beside(lambda: release.wait(30)) as waiting:
        release.set()  # the side work waits for this: it must run concurrently
    assert waiting.result() is True
    order: list[str] = []
    with BoundedExecutor(1, "i") as pool:
        with pool.beside(lambda: order.append("side")) as side:
            order.append("block")
        assert side.done()
    assert order == ["side", "block"]


def test_the_thread_pools_wait_wakes_on_the_first_and_on_the_last_future() -> None:
    """The thread backend's wait (a counter its futures bump, not a lock per future): it
    returns once one of the futures is done (``first``) or all are, and a cancelled future
    counts as done."""
    pool = ThreadBackend().start("wait-test", 2)
    gates = [threading.Event(), threading.Event()]
    try:
        futures = [pool.submit(lambda i: gates[i].wait(5) and i, i) for i in range(2)]
        queued = pool.submit(lambda _: None, None)  # no worker left: stays queued
        assert queued.cancel()
        pool.wait([queued], first=False)  # cancelled: done, the wait returns
        threading.Timer(0.05, gates[1].set).start()
        pool.wait(futures, first=True)
        assert futures[1].done() and not futures[0].done()
        threading.Timer(0.05, gates[0].set).start()
        pool.wait(futures, first=False)
        assert all(f.done() for f in futures)
        pool.wait([], first=True)  # nothing to wait for: returns at once
    finally:
        for gate in gates:
            gate.set()
        pool.shutdown()
    assert [f.result() for f in futures] == [0, 1]
