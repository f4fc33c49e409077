"""Racing writers: N threads send one conditional request on one key at the same moment.

A sequential check (write, then try again) only shows that a store *knows* the header; a
fence needs the check and the write to be one step, which only concurrent writers can show.
Each round prepares everything first (the key's current ETag for If-Match, each writer's
multipart upload and part for a complete: If-None-Match ``*`` on a fresh key, If-Match on one
just written), then releases all writers together with a
:class:`threading.Barrier`, so the requests are in flight at once: botocore and the file
system release the GIL while they wait.  Every writer writes its own bytes, so a retry that
meets its own first attempt is recognised (the store's landed check) and the final object
tells which writer's bytes survived.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from zerorename.errors import NotFoundError, PreconditionFailedError, StoreError
from zerorename.store import Store
from zerorename.stores.probe_report import RaceOp, RaceResult

__all__ = ["race"]

#: How many unexpected errors a race keeps verbatim (the count is kept in full).
_KEEP_ERRORS = 3
#: How long writers wait at the barrier before the round is called off (a stuck writer).
_BARRIER_TIMEOUT = 60.0


class _PoolFullFilter(logging.Filter):
    """Drops urllib3's "Connection pool is full, discarding connection" warnings.

    A race sends more requests at once than boto3's default pool keeps (10): the extra
    connections are opened on purpose and discarded after their one request, which urllib3
    reports once per connection — 18 lines per probe of 16 writers, none of them a problem.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        return not record.getMessage().startswith("Connection pool is full")


@contextlib.contextmanager
def _quiet_pool_overflow() -> Iterator[None]:
    """While a race runs: no pool-overflow warnings from urllib3 (only those)."""
    quiet = _PoolFullFilter()
    logger = logging.getLogger("urllib3.connectionpool")
    logger.addFilter(quiet)
    try:
        yield
    finally:
        logger.removeFilter(quiet)


@dataclass(frozen=True)
class _Round:
    """One round's result: which writers won, the final bytes, and the unexpected errors."""

    won: tuple[bytes, ...]
    final: bytes | None
    errors: tuple[str, ...]


def race(store: Store, area: str, op: RaceOp, *, writers: int, rounds: int) -> RaceResult:
    """Race ``writers`` writers on ``op`` for ``rounds`` rounds, each on a fresh key under
    ``area`` (a directory URL ending in ``/``).  Leaves the keys for the caller's cleanup;
    aborts the multipart uploads that lost."""
    if writers < 2:
        raise ValueError(f"a race needs at least 2 writers, not {writers}")
    started = time.monotonic()
    results = []
    with _quiet_pool_overflow(), \
            ThreadPoolExecutor(max_workers=writers, thread_name_prefix="zr-race") as pool:
        for n in range(rounds):
            key = f"{area}race-{op.name.lower()}-{n}"
            results.append(_ROUNDS[op](store, key, writers, pool))
    errors = [e for r in results for e in r.errors]
    return RaceResult(
        op=op, writers=writers, rounds=rounds,
        winners=tuple(len(r.won) for r in results),
        lost_writes=sum(1 for r in results if r.won and r.final not in r.won),
        error_count=len(errors), errors=tuple(errors[:_KEEP_ERRORS]),
        seconds=time.monotonic() - started)


def _bodies(writers: int) -> list[bytes]:
    tag = uuid.uuid4().hex
    return [f"zerorename probe race {tag} writer {i:03d}\n".encode() for i in range(writers)]


def _run(pool: ThreadPoolExecutor, actions: list[Callable[[], None]]) -> list[str | None]:
    """Run every action at once (after a shared barrier); each returns ``None`` on success,
    ``"412"`` when its condition failed, else the error's text."""
    barrier = threading.Barrier(len(actions))

    def attempt(action: Callable[[], None]) -> str | None:
        barrier.wait(_BARRIER_TIMEOUT)
        try:
            action()
        except PreconditionFailedError:
            return "412"
        except StoreError as exc:
            return f"{type(exc).__name__}: {exc}"
        return None

    futures = [pool.submit(attempt, a) for a in actions]
    return [f.result() for f in futures]


def _finish(store: Store, key: str, bodies: list[bytes], answers: list[str | None]) -> _Round:
    won = tuple(b for b, a in zip(bodies, answers, strict=True) if a is None)
    final: bytes | None = None
    # nothing there is a lost write; a read the store refuses (403) says nothing about the
    # writes, and raises (judging it a lost write would call a fencing store racy)
    with contextlib.suppress(NotFoundError):
        final = store.get(key)
    errors = tuple(a for a in answers if a is not None and a != "412")
    return _Round(won, final, errors)


def _put_if_none_match(store: Store, key: str, writers: int,
                       pool: ThreadPoolExecutor) -> _Round:
    bodies = _bodies(writers)
    answers = _run(pool, [functools.partial(_put, store, key, b, None) for b in bodies])
    return _finish(store, key, bodies, answers)


def _put_if_match(store: Store, key: str, writers: int, pool: ThreadPoolExecutor) -> _Round:
    etag = store.put(key, b"zerorename probe race: the version every writer means to replace\n")
    bodies = _bodies(writers)
    answers = _run(pool, [functools.partial(_put, store, key, b, etag) for b in bodies])
    return _finish(store, key, bodies, answers)


def _complete_if_none_match(store: Store, key: str, writers: int,
                            pool: ThreadPoolExecutor) -> _Round:
    return _complete_race(store, key, writers, pool, None)


def _complete_if_match(store: Store, key: str, writers: int, pool: ThreadPoolExecutor) -> _Round:
    etag = store.put(key, b"zerorename probe race: the version every complete means to replace\n")
    return _complete_race(store, key, writers, pool, etag)


def _complete_race(store: Store, key: str, writers: int, pool: ThreadPoolExecutor,
                   if_match: str | None) -> _Round:
    """Each writer completes its own one-part upload on ``key``: If-Match ``if_match`` when
    given, else If-None-Match ``*``."""
    bodies = _bodies(writers)
    uploads = [store.create_multipart(key) for _ in bodies]
    parts = [store.upload_part(key, u, 1, b) for u, b in zip(uploads, bodies, strict=True)]
    answers = _run(pool, [functools.partial(_complete, store, key, u, p, if_match)
                          for u, p in zip(uploads, parts, strict=True)])
    for upload, answer in zip(uploads, answers, strict=True):
        if answer is not None:  # the losers' uploads stay open on S3: abort them
            with contextlib.suppress(StoreError):
                store.abort_multipart(key, upload)
    return _finish(store, key, bodies, answers)


def _put(store: Store, key: str, body: bytes, if_match: str | None) -> None:
    """If-Match ``if_match`` when given, else If-None-Match ``*``."""
    if if_match is None:
        store.put(key, body, if_none_match=True)
    else:
        store.put(key, body, if_match=if_match)


def _complete(store: Store, key: str, upload: str, part: str, if_match: str | None) -> None:
    """If-Match ``if_match`` when given, else If-None-Match ``*``."""
    if if_match is None:
        store.complete_multipart(key, upload, [(1, part)], if_none_match=True)
    else:
        store.complete_multipart(key, upload, [(1, part)], if_match=if_match)


_ROUNDS: dict[RaceOp, Callable[[Store, str, int, ThreadPoolExecutor], _Round]] = {
    RaceOp.PUT_IF_NONE_MATCH: _put_if_none_match,
    RaceOp.PUT_IF_MATCH: _put_if_match,
    RaceOp.COMPLETE_IF_NONE_MATCH: _complete_if_none_match,
    RaceOp.COMPLETE_IF_MATCH: _complete_if_match,
}
