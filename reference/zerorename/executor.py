"""A bounded thread pool that lives for exactly one committer operation.

Three rules, each from a production lesson:

* **Bounded submission.**  Work items are pulled lazily from an iterable and at most
  ``capacity`` are in flight, so a job commit streams through millions of pending uploads with
  bounded memory (HADOOP-16570: terasort job commit ran out of heap holding every etag).
* **Lifetime = one operation.**  The pool is created on entry and shut down (waiting for its
  threads) on exit, even on failure, so no committer leaks threads (Hadoop's suites assert
  this after every class).
* **``threads <= 1`` runs inline**, in the caller's thread, creating no thread at all.

Stop-on-first-failure: once a work item fails, nothing new is submitted, the in-flight items
finish, and the first error is raised (later ones are attached as notes).

*How* the work runs is a seam: a :class:`PoolBackend` (given to the job through
``JobContext.pool_backend``) starts the workers of each pool; the default runs them on
threads.  A simulation harness supplies its own, so that the order in which a job commit's
parallel requests land becomes something it can choose and explore, with the same bounded,
stop-on-first-failure code above it.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable, Collection, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from types import TracebackType
from typing import Any, Protocol, TypeVar

from zerorename.context import Options

__all__ = ["THREAD_PREFIX", "BoundedExecutor", "PoolBackend", "ThreadBackend", "WorkerPool",
           "thread_count"]

T = TypeVar("T")
R = TypeVar("R")

#: Every pool thread's name starts with this (tests look for leaked threads by it).
THREAD_PREFIX = "zerorename-"

_NEVER = sys.maxsize  # a count no pool reaches: nobody waits


def thread_count(options: Options, *names: str, default: int) -> int:
    """Threads from the first of ``names`` that is set; Hadoop's rule for negative values:
    ``-n`` means n times the number of CPU cores.  0 and 1 both mean "inline"."""
    value = options.get_int(*names, default=default) if names else default
    if value < 0:
        value = -value * (os.cpu_count() or 1)
    return max(1, value)


class WorkerPool(Protocol):
    """The workers of one :class:`BoundedExecutor`, for its lifetime."""

    def submit(self, fn: Callable[[T], R], item: T) -> Future[R]:
        """Run ``fn(item)`` on a worker; the future completes with its result or error."""
        ...

    def wait(self, futures: Collection[Future[Any]], *, first: bool,
             at_least: int = 1) -> None:
        """Block until all of ``futures`` are done, or (``first``) until one of them is.

        With ``first``, ``at_least`` lets the pool sleep on until that many are done (all, if
        fewer) or one has failed: a caller that refills in batches then wakes once a batch,
        not once a future.  A permission, not a promise: a pool may return at the first
        done, and callers take whatever is done when it returns."""
        ...

    def shutdown(self) -> None:
        """Cancel what has not started and wait for what runs."""
        ...


class PoolBackend(Protocol):
    """How the pools of a job's committers run their work (``JobContext.pool_backend``)."""

    def width(self, threads: int) -> int:
        """The number of workers a pool asked for ``threads`` gets (1 or less: inline)."""
        ...

    def start(self, name: str, workers: int) -> WorkerPool:
        """Start the workers of the pool ``name``."""
        ...


class _ThreadPool:
    """Threads, and a :meth:`wait` that costs the waiting thread no lock per future and wakes
    it once per batch.

    :func:`concurrent.futures.wait` takes every future's lock twice per call and holds all of
    them while it installs its waiter: :meth:`BoundedExecutor.imap` waits once per finished
    item over its ``capacity`` (2T) pending futures, so a job commit of F files took
    F × 4T locks in its driver thread, and a worker finishing a future meanwhile blocked on
    one of them (measured on moto at F = 10,000, T = 32: 1.96 s of the driver thread's CPU
    against 0.23 s for a plain ``ThreadPoolExecutor.map`` of the same completes; see
    bench/results/HISTORY.md).  Here each future of this pool bumps a counter when it finishes, and
    :meth:`wait` sleeps until the counter reaches what it waits for, then looks at the
    futures again.  A finished future wakes the waiter only when it completes that count
    (``at_least``) or failed, so a batch of T completes costs the waiting thread one wake-up,
    not T, each of which had to take the GIL back from T busy workers."""

    def __init__(self, name: str, workers: int) -> None:
        self._pool = ThreadPoolExecutor(max_workers=workers,
                                        thread_name_prefix=f"{THREAD_PREFIX}{name}")
        self._changed = threading.Condition(threading.Lock())
        self._finished = 0  # futures of this pool finished (or cancelled) so far
        self._failed = 0  # of which failed or were cancelled
        self._targets: list[int] = []  # the counts waiting threads sleep until
        self._wake_at = _NEVER  # the least of them

    def submit(self, fn: Callable[[T], R], item: T) -> Future[R]:
        future = self._pool.submit(fn, item)
        future.add_done_callback(self._on_done)  # runs at once if already done
        return future

    def _on_done(self, future: Future[Any]) -> None:
        failed = future.cancelled() or future.exception() is not None
        with self._changed:
            self._finished += 1
            if failed:
                self._failed += 1
            if failed or self._finished >= self._wake_at:
                self._changed.notify_all()

    def wait(self, futures: Collection[Future[Any]], *, first: bool,
             at_least: int = 1) -> None:
        """Block until all of ``futures`` are done, or (``first``) until ``at_least`` of them
        (all, if fewer) are done or one of them failed.  They must be futures of this pool:
        another's finishing would not wake this wait."""
        need = min(max(1, at_least), len(futures)) if first else len(futures)
        while need:
            with self._changed:
                seen, failed = self._finished, self._failed
            # a future is done before its callbacks run: one that finishes after this check
            # moves the counters, so the sleep below cannot miss it
            done = 0
            for future in futures:
                if future.done():
                    if first and failed and (future.cancelled()
                                             or future.exception() is not None):
                        return
                    done += 1
            if done >= need:
                return
            target = seen + need - done  # each future still running moves the count once
            with self._changed:
                self._targets.append(target)
                self._wake_at = min(self._targets)
                try:
                    while self._finished < target and not (first and self._failed > failed):
                        self._changed.wait()
                finally:
                    self._targets.remove(target)
                    self._wake_at = min(self._targets, default=_NEVER)

    def shutdown(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)


class ThreadBackend:
    """The default: a pool's workers are threads (``threads`` of them)."""

    def width(self, threads: int) -> int:
        return threads

    def start(self, name: str, workers: int) -> WorkerPool:
        return _ThreadPool(name, workers)


THREADS = ThreadBackend()


class BoundedExecutor:
    """``with BoundedExecutor(threads, "commit") as pool: for r in pool.imap(fn, items): ...``

    ``backend`` starts the workers (threads unless told otherwise; see :class:`PoolBackend`)
    and decides how many a pool asked for ``threads`` gets."""

    def __init__(self, threads: int, name: str, capacity: int | None = None,
                 backend: PoolBackend | None = None) -> None:
        self.backend: PoolBackend = backend if backend is not None else THREADS
        self.threads = max(1, self.backend.width(max(1, threads)))
        self.name = name
        self.capacity = max(1, capacity if capacity is not None else 2 * self.threads)
        self._pool: WorkerPool | None = None
        self._lock = threading.Lock()

    @property
    def inline(self) -> bool:
        return self.threads <= 1

    def __enter__(self) -> BoundedExecutor:
        if not self.inline:
            self._pool = self.backend.start(self.name, self.threads)
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.shutdown()

    def shutdown(self) -> None:
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown()

    def imap(self, fn: Callable[[T], R], items: Iterable[T]) -> Iterator[R]:
        """Results of ``fn`` over ``items`` in completion order, at most ``capacity`` pending.

        Stops at the first failure: no further items are submitted, in-flight ones finish,
        and the error is raised from the iterator.

        Refills in batches: a full pool is refilled once ``capacity - threads`` of its items
        are done (T of 2T by default), when the rest still keep every worker busy, rather than
        at each item; a failure wakes it at once, so nothing more is submitted after it than
        before.  Waking the driver thread per item (each time taking the GIL back from busy
        workers) cost a magic job commit on moto at F = 4,000, T = 8 about 80 µs of driver
        CPU per file against minimal's 30; batched, 37 µs, and the process's CPU per file
        over minimal's went from +167..200 µs to +83 (bench/results/commit_trace/README.md).
        """
        if self._pool is None:
            for item in items:
                yield fn(item)
            return
        pool = self._pool
        batch = max(1, self.capacity - self.threads)
        pending: dict[Future[R], None] = {}  # in submission order: results come out in a
        source = iter(items)                 # deterministic order when several are done

        def finished() -> list[Future[R]]:
            pool.wait(pending.keys(), first=True, at_least=batch)
            done = [future for future in pending if future.done()]
            for future in done:
                del pending[future]
            return done

        try:
            while True:
                while len(pending) >= self.capacity:  # wait *before* pulling the next item
                    for future in finished():
                        yield future.result()
                try:
                    item = next(source)
                except StopIteration:
                    break
                pending[pool.submit(fn, item)] = None
            while pending:
                for future in finished():
                    yield future.result()
        finally:
            for future in pending:
                future.cancel()
            if pending:
                pool.wait(list(pending), first=False)

    @contextmanager
    def beside(self, fn: Callable[[], R]) -> Iterator[Future[R]]:
        """Run ``fn`` on one worker of its own (from the same backend) while the block runs;
        the block gets its future, and leaving the block waits for it.  Inline, ``fn`` runs
        first, in the caller.  For work that must overlap a pool's (reading what a job owns
        while its uploads complete) without a thread the backend does not know of."""
        future: Future[R] = Future()
        if self.inline:
            future.set_running_or_notify_cancel()
            try:
                future.set_result(fn())
            except Exception as exc:
                future.set_exception(exc)
            yield future
            return
        extra = self.backend.start(f"{self.name}-beside", 1)
        try:
            future = extra.submit(lambda _none: fn(), None)
            yield future
        finally:
            extra.wait([future], first=False)
            extra.shutdown()

    def run(self, fn: Callable[[T], R], items: Iterable[T]) -> list[R]:
        """All results (completion order); raises the first failure after draining."""
        return list(self.imap(fn, items))

    def run_all(
        self, fn: Callable[[T], R], items: Iterable[T]
    ) -> tuple[list[R], list[tuple[T, BaseException]]]:
        """Best effort: run every item even when some fail (aborts, deletes); returns the
        results and the ``(item, error)`` pairs."""
        errors: list[tuple[T, BaseException]] = []
        results: list[R] = []

        def guarded(item: T) -> None:
            try:
                value = fn(item)
            except Exception as exc:
                with self._lock:
                    errors.append((item, exc))
                return
            with self._lock:
                results.append(value)

        for _ in self.imap(guarded, items):
            pass
        return results, errors
