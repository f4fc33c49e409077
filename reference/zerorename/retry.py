"""The one retry loop: bounded attempts, exponential backoff with full jitter, injectable sleep.

**One loop per logical operation.**  A store operation can pass through several layers that
each know how to retry — a committer's :class:`~zerorename.committers.reliable.ReliableStore`, an
:class:`~zerorename.stores.s3.S3Store`, botocore inside the boto3 client.  Stacked, their
attempts multiply (4 × 5 × 3 = 60 HTTP requests for one PUT under a persistent 503).  So:

* every layer of ours retries through :meth:`RetryPolicy.call`, and a ``call`` made while
  another ``call`` is already running in the same context (thread, greenlet) runs its function
  exactly once: **the outermost loop owns the retries**.  Under a committer that is
  ``ReliableStore``, whose policy comes from ``fs.s3a.retry.limit``; an ``S3Store`` used on its
  own retries with its ``retry`` policy.  Either way one policy bounds the operation;
* botocore's loop is switched off on whatever client S3Store is given (see
  :func:`zerorename.stores.s3.disable_botocore_retries`), so one attempt of ours is one HTTP
  request.

One logical operation therefore sends at most ``max_attempts`` requests (``fs.s3a.retry.limit``
+ 1 under a committer).  Requests that check the outcome of a repeat (a HEAD, below) are
operations of their own, with their own bound.

Why our own loop instead of botocore's: committers must decide *which* failures are worth
repeating (a 412 never is, a 503 SlowDown always is), must count every attempt as a request
(request counts are the benchmark metric), must recognise a repeated request that meets its own
earlier success, and tests must run retry paths without real sleeping.

**Backoff.**  Full jitter (AWS Architecture Blog, "Exponential Backoff And Jitter"): retry
``n`` (0 for the first) sleeps a uniform random time in ``[0, min(max_delay, base_delay *
2**n))``.  It spreads a fleet of tasks that were throttled together, which fixed or "equal"
jitter does not.  The total sleep of one operation is at most :meth:`RetryPolicy.max_total_delay`
(``sum(min(max_delay, base_delay * 2**n) for n < max_attempts - 1)``); committers use
``fs.s3a.retry.interval`` as ``base_delay`` and 16 intervals, at least 1 s, as ``max_delay``.

**A repeat that meets its own earlier success.**  A request whose answer was lost may still
have taken effect; its repeat then fails in a telling way.  ``call(landed=...)`` asks, after
a *repeated* attempt failed, whether an earlier attempt landed; :func:`put_landed` and
:func:`complete_landed` are the two checks, used by every loop, so which layer repeated the
request does not matter.
"""

from __future__ import annotations

import hashlib
import random
import re
import time
from collections.abc import Callable, Iterable
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import TypeVar

from zerorename.errors import NotFoundError, PreconditionFailedError, StoreError
from zerorename.logs import retry_answered, retry_gave_up
from zerorename.store import ObjectInfo

__all__ = [
    "DEFAULT_RETRY",
    "NO_RETRY",
    "TRANSIENT_CODES",
    "Landed",
    "RetryPolicy",
    "complete_landed",
    "is_retryable",
    "multipart_etag",
    "put_landed",
]

T = TypeVar("T")

#: Given the error a repeated attempt ended with: the result an earlier attempt that took
#: effect would have returned, or None when none did (the error then stands).
Landed = Callable[[BaseException], T | None]

#: Codes that are transient even though :attr:`StoreError.retryable` does not list them:
#: connection-level failures (mapped from botocore exceptions by the S3 store) and S3's
#: ``ConditionalRequestConflict`` (409), which AWS documents as "retry the request".
TRANSIENT_CODES = frozenset(
    {
        "ConnectionError",
        "ConnectTimeout",
        "ReadTimeout",
        "EndpointConnectionError",
        "ConnectionClosedError",
        "ConditionalRequestConflict",
        "RequestTimeTooSkewed",
    }
)

#: True while a :meth:`RetryPolicy.call` loop runs in this context: inner calls then defer.
_LOOP_RUNNING: ContextVar[bool] = ContextVar("zerorename_retry_loop_running", default=False)


def is_retryable(exc: BaseException) -> bool:
    """Default predicate: throttling, 5xx and connection failures; never 4xx such as 404/412."""
    if not isinstance(exc, StoreError):
        return False
    return exc.retryable or exc.code in TRANSIENT_CODES


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how patiently to repeat a failed request.

    ``max_attempts`` counts the first try (1 = no retry), so it is the most requests one
    operation sends.  ``sleep`` and ``random`` are injectable so that tests record the delays
    instead of waiting, and so that simulations can make the jitter deterministic.
    """

    max_attempts: int = 5
    base_delay: float = 0.05
    max_delay: float = 5.0
    sleep: Callable[[float], None] = field(default=time.sleep, repr=False, compare=False)
    random: Callable[[], float] = field(default=random.random, repr=False, compare=False)
    retryable: Callable[[BaseException], bool] = field(
        default=is_retryable, repr=False, compare=False
    )

    def __post_init__(self) -> None:
        if self.max_attempts < 1:
            raise ValueError(f"max_attempts must be >= 1, got {self.max_attempts}")
        if self.base_delay < 0 or self.max_delay < 0:
            raise ValueError("delays must be >= 0")

    def delay(self, retry_number: int) -> float:
        """Seconds to wait before retry ``retry_number`` (0 for the first retry): full jitter."""
        return self.random() * self._cap(retry_number)

    def _cap(self, retry_number: int) -> float:
        return min(self.max_delay, self.base_delay * (2.0**retry_number))

    def max_total_delay(self) -> float:
        """The longest one operation can sleep between its attempts (every jitter at its top)."""
        return sum(self._cap(n) for n in range(self.max_attempts - 1))

    def call(
        self,
        fn: Callable[[], T],
        *,
        on_retry: Callable[[int, BaseException, float], None] | None = None,
        landed: Landed[T] | None = None,
    ) -> T:
        """Run ``fn`` until it succeeds, fails with a non-retryable error, or attempts run out.

        Inside another ``call`` (an outer layer's loop, same thread or greenlet) ``fn`` runs
        once and its error goes to that loop: the outermost loop alone repeats, so layers never
        multiply attempts.  The last error is re-raised unchanged, so callers see the exception
        type they would without retries — unless the operation was repeated and
        ``landed(error)`` finds that an earlier attempt took effect, whose result is returned.
        ``landed`` runs after the loop, so requests it makes are retried on their own.
        ``on_retry(attempt, error, delay)`` is called before each sleep, for logging/metrics.
        """
        if _LOOP_RUNNING.get():
            return fn()
        attempt = 1
        token = _LOOP_RUNNING.set(True)
        try:
            while True:
                try:
                    return fn()
                except Exception as exc:
                    if attempt >= self.max_attempts or not self.retryable(exc):
                        error = exc
                        break
                    wait = self.delay(attempt - 1)
                    if on_retry is not None:
                        on_retry(attempt, exc, wait)
                    self.sleep(wait)
                    attempt += 1
        finally:
            _LOOP_RUNNING.reset(token)
        if attempt > 1 and landed is not None:
            result = landed(error)
            if result is not None:
                return result
        if attempt > 1:
            (retry_gave_up if self.retryable(error) else retry_answered)(attempt, error)
        raise error


# -- what a repeated request may meet ----------------------------------------------------------


def _bare(etag: str) -> str:
    return etag.strip().strip('"')


def put_landed(head: Callable[[], ObjectInfo | None], data: bytes) -> Landed[str]:
    """The check for a repeated *conditional* PUT (If-None-Match / If-Match) that met 412:
    if the object now holds exactly ``data`` (its ETag is their MD5), the earlier attempt
    landed and its ETag is the result.  Writers that use If-None-Match as a lock must write
    bodies that differ per writer, or another writer's identical bytes would pass for ours."""
    mine = hashlib.md5(data, usedforsecurity=False).hexdigest()

    def check(error: BaseException) -> str | None:
        if not isinstance(error, PreconditionFailedError):
            return None
        info = head()
        return mine if info is not None and _bare(info.etag) == mine else None

    return check


_MULTIPART_ETAG = re.compile(r"[0-9a-f]{32}-[0-9]+")
_MD5_HEX = re.compile(r"[0-9a-f]{32}")


def multipart_etag(part_etags: Iterable[str]) -> str | None:
    """The ETag S3 gives a multipart object: the MD5 of the concatenated binary MD5s of its
    parts, then ``-<number of parts>``; None when a part ETag is not an MD5 (some
    S3-compatible servers, encrypted objects)."""
    digests = []
    for etag in part_etags:
        bare = _bare(etag).lower()
        if not _MD5_HEX.fullmatch(bare):
            return None
        digests.append(bytes.fromhex(bare))
    if not digests:
        return None
    return f"{hashlib.md5(b''.join(digests), usedforsecurity=False).hexdigest()}-{len(digests)}"


def complete_landed(
    head: Callable[[], ObjectInfo | None],
    parts: Iterable[tuple[int, str]],
    size: int | None = None,
) -> Landed[str]:
    """The check for a repeated CompleteMultipartUpload that met NoSuchUpload: the server may
    have applied the first complete and lost its answer.  The object counts as ours when it
    exists and every check we can make holds: its ETag, if in S3's multipart form, is the one
    our ``parts`` produce; its size is ``size``, when the caller knows it.  With neither check
    possible (an ETag scheme we cannot predict and no size) the error stands."""
    expected = multipart_etag(e for _, e in sorted(parts, key=lambda p: p[0]))

    def check(error: BaseException) -> str | None:
        if not isinstance(error, NotFoundError) or error.code != "NoSuchUpload":
            return None
        info = head()
        if info is None:
            return None
        etag = _bare(info.etag)
        checked = False
        if size is not None:
            if info.size != size:
                return None
            checked = True
        if _MULTIPART_ETAG.fullmatch(etag.lower()):
            if etag.lower() != expected:
                return None
            checked = True
        return etag if checked else None

    return check


#: A policy that never retries: for tests that want to see the first error.
NO_RETRY = RetryPolicy(max_attempts=1)

#: The default for S3 stores: 5 attempts, 50 ms base, 5 s cap (at most 0.75 s of sleep).
DEFAULT_RETRY = RetryPolicy()
