"""A bounded thread pool that lives for exactly one committer operation.

Three rules, each from a production lesson:

* **Bounded submission.**  Work items are pulled lazily from an iterable and at most
  ``capacity`` are in flight, so a job commit streams through millions of pending uploads with
  bounded memory (HADOOP-16570: terasort job commit ran out of heap holding every etag).
* **Lifetime = one operation.**  The pool is created on entry and shut down (waiting for its
  threads) on exit, even on failure, so no committer leaks threads (Hadoop's suites assert
  this after every class).
* **``threads <= 1`` runs inline**, in the caller's thread, creating no thread at all.  The
  simulation harness runs committers on greenlets, which must not be switched from a thread.

Stop-on-first-failure: once a work item fails, nothing new is submitted, the in-flight items
finish, and the first error is raised (later ones are attached as notes).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from types import TracebackType
from typing import TypeVar

from zerorename.context import Options

__all__ = ["THREAD_PREFIX", "BoundedExecutor", "thread_count"]

T = TypeVar("T")
R = TypeVar("R")

#: Every pool thread's name starts with this (tests look for leaked threads by it).
THREAD_PREFIX = "zerorename-"


def thread_count(options: Options, *names: str, default: int) -> int:
    """Threads from the first of ``names`` that is set; Hadoop's rule for negative values:
    ``-n`` means n times the number of CPU cores.  0 and 1 both mean "inline"."""
    value = options.get_int(*names, default=default) if names else default
    if value < 0:
        value = -value * (os.cpu_count() or 1)
    return max(1, value)


class BoundedExecutor:
    """``with BoundedExecutor(threads, "commit") as pool: for r in pool.imap(fn, items): ...``"""

    def __init__(self, threads: int, name: str, capacity: int | None = None) -> None:
        self.threads = max(1, threads)
        self.name = name
        self.capacity = max(1, capacity if capacity is not None else 2 * self.threads)
        self._pool: ThreadPoolExecutor | None = None
        self._lock = threading.Lock()

    @property
    def inline(self) -> bool:
        return self.threads <= 1

    def __enter__(self) -> BoundedExecutor:
        if not self.inline:
            self._pool = ThreadPoolExecutor(
                max_workers=self.threads, thread_name_prefix=f"{THREAD_PREFIX}{self.name}"
            )
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
            pool.shutdown(wait=True, cancel_futures=True)

    def imap(self, fn: Callable[[T], R], items: Iterable[T]) -> Iterator[R]:
        """Results of ``fn`` over ``items`` in completion order, at most ``capacity`` pending.

        Stops at the first failure: no further items are submitted, in-flight ones finish,
        and the error is raised from the iterator.
        """
        if self._pool is None:
            for item in items:
                yield fn(item)
            return
        pool = self._pool
        pending: set[Future[R]] = set()
        source = iter(items)
        try:
            while True:
                while len(pending) >= self.capacity:  # wait *before* pulling the next item
                    done, pending = wait(pending, return_when=FIRST_COMPLETED)
                    for future in done:
                        yield future.result()
                try:
                    item = next(source)
                except StopIteration:
                    break
                pending.add(pool.submit(fn, item))
            while pending:
                done, pending = wait(pending, return_when=FIRST_COMPLETED)
                for future in done:
                    yield future.result()
        finally:
            for future in pending:
                future.cancel()
            if pending:
                wait(pending)

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
