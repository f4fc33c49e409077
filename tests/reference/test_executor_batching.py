"""BoundedExecutor.imap refills in batches: a full pool's driver waits until ``capacity -
threads`` items are done (T of 2T) rather than once per item, and still stops at the first
failure, keeps at most ``capacity`` pending, and yields several done results in submission
order.  The thread backend's wait honours ``at_least`` and wakes at once on a failure."""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Collection, Iterator
from concurrent.futures import Future
from typing import Any, TypeVar

import pytest

from zerorename.executor import BoundedExecutor, ThreadBackend, WorkerPool

T = TypeVar("T")
R = TypeVar("R")


class _Stepped:
    """A backend of ``threads`` workers whose pool runs nothing until waited on, then the
    oldest queued items, as many as the wait may sleep for (``at_least``; all when not
    ``first``), stopping early at a failure: a thread pool that honours ``at_least``, made
    deterministic.  Counts the waits and the most items submitted and not yet done."""

    def __init__(self, threads: int) -> None:
        self.threads = threads
        self.pool: _SteppedPool | None = None

    def width(self, threads: int) -> int:
        return self.threads

    def start(self, name: str, workers: int) -> WorkerPool:
        self.pool = _SteppedPool()
        return self.pool


class _SteppedPool:
    def __init__(self) -> None:
        self.queued: deque[tuple[Future[Any], Callable[[Any], Any], Any]] = deque()
        self.waits = 0
        self.undone = 0
        self.peak = 0

    def submit(self, fn: Callable[[T], R], item: T) -> Future[R]:
        future: Future[R] = Future()
        self.queued.append((future, fn, item))
        self.undone += 1
        self.peak = max(self.peak, self.undone)
        return future

    def wait(self, futures: Collection[Future[Any]], *, first: bool,
             at_least: int = 1) -> None:
        self.waits += 1
        need = min(at_least, len(futures)) if first else len(self.queued)
        ran = 0
        while self.queued and ran < need:
            future, fn, item = self.queued.popleft()
            ran += 1
            self.undone -= 1
            if not future.set_running_or_notify_cancel():
                continue  # cancelled
            try:
                future.set_result(fn(item))
            except Exception as exc:
                future.set_exception(exc)
                if first:
                    return

    def shutdown(self) -> None:
        while self.queued:
            self.queued.popleft()[0].cancel()


@pytest.mark.parametrize(("items", "threads"), [(400, 4), (1000, 8), (37, 3)])
def test_a_full_pool_waits_once_per_batch_of_threads_items(items: int, threads: int) -> None:
    backend = _Stepped(threads)
    with BoundedExecutor(threads, "batch", backend=backend) as pool:
        results = list(pool.imap(lambda i: i, range(items)))
        stepped = backend.pool
        assert stepped is not None
    assert results == list(range(items)), "done together: submission order"
    assert stepped.peak <= pool.capacity == 2 * threads
    # per item it was items - capacity + 1 waits: now one per batch of T, two to drain
    assert stepped.waits <= items // threads + 2


def test_a_failure_in_a_batch_stops_submission_at_once() -> None:
    backend = _Stepped(4)
    pulled = 0

    def source() -> Iterator[int]:
        nonlocal pulled
        for i in range(1000):
            pulled += 1
            yield i

    def work(i: int) -> int:
        if i == 50:
            raise ValueError("boom at 50")
        return i

    seen: list[int] = []
    with BoundedExecutor(4, "fail", backend=backend) as pool, \
            pytest.raises(ValueError, match="boom at 50"):
        for result in pool.imap(work, source()):
            seen.append(result)
    assert seen == list(range(50))
    assert pulled <= 50 + pool.capacity, "nothing pulled once the failure was seen"
    stepped = backend.pool
    assert stepped is not None and not stepped.queued


def test_the_thread_pools_wait_sleeps_until_at_least_are_done() -> None:
    pool = ThreadBackend().start("at-least", 4)
    gates = [threading.Event() for _ in range(4)]
    returned = threading.Event()
    try:
        futures = [pool.submit(lambda i: gates[i].wait(10) and i, i) for i in range(4)]

        def waiter() -> None:
            pool.wait(futures, first=True, at_least=3)
            returned.set()

        thread = threading.Thread(target=waiter)
        thread.start()
        gates[0].set()
        futures[0].result(10)
        # one done of the three it waits for: it must still be asleep
        assert not returned.wait(0.2)
        gates[1].set()
        gates[2].set()
        assert returned.wait(10)
        thread.join(10)
        assert sum(f.done() for f in futures) >= 3
        threading.Timer(0.05, gates[3].set).start()
        pool.wait(futures, first=True, at_least=10)  # more than there are: all of them
        assert all(f.done() for f in futures)
    finally:
        for gate in gates:
            gate.set()
        pool.shutdown()


def test_the_thread_pools_wait_wakes_at_a_failure_before_its_batch() -> None:
    pool = ThreadBackend().start("at-failure", 4)
    gates = [threading.Event() for _ in range(4)]

    def work(i: int) -> int:
        gates[i].wait(10)
        if i == 2:
            raise ValueError("boom")
        return i

    try:
        futures = [pool.submit(work, i) for i in range(4)]
        threading.Timer(0.05, gates[2].set).start()
        pool.wait(futures, first=True, at_least=4)
        assert futures[2].done() and isinstance(futures[2].exception(), ValueError)
        assert not any(futures[i].done() for i in (0, 1, 3))
        # a failure already done when it looks: returns at once too
        pool.wait(futures, first=True, at_least=4)
        assert not futures[0].done()
    finally:
        for gate in gates:
            gate.set()
        pool.shutdown()


def test_a_thread_pool_refills_in_batches_and_stays_bounded() -> None:
    """Real threads: at most ``capacity`` pending, every result once, and fewer waits than
    items (each wait returns with a batch done)."""
    lock = threading.Lock()
    pulled = done = peak = 0
    waits = 0
    inner = ThreadBackend()

    class Counting:
        def width(self, threads: int) -> int:
            return threads

        def start(self, name: str, workers: int) -> WorkerPool:
            real = inner.start(name, workers)

            class Pool:
                def submit(self, fn: Callable[[T], R], item: T) -> Future[R]:
                    return real.submit(fn, item)

                def wait(self, futures: Collection[Future[Any]], *, first: bool,
                         at_least: int = 1) -> None:
                    nonlocal waits
                    waits += 1
                    real.wait(futures, first=first, at_least=at_least)

                def shutdown(self) -> None:
                    real.shutdown()

            return Pool()

    def source() -> Iterator[int]:
        nonlocal pulled, peak
        for i in range(400):
            with lock:
                pulled += 1
                peak = max(peak, pulled - done)
            yield i

    results: list[int] = []
    with BoundedExecutor(4, "real", backend=Counting()) as pool:
        for result in pool.imap(lambda i: i, source()):
            with lock:
                done += 1
            results.append(result)
    assert sorted(results) == list(range(400))
    assert peak <= pool.capacity
    assert waits <= 400 // 4 + 2
