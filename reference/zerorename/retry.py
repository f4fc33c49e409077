"""Retry policy: bounded attempts, exponential backoff with full jitter, injectable sleep.

Why our own loop instead of botocore's: committers must decide *which* failures are worth
repeating (a 412 never is, a 503 SlowDown always is), must count every attempt as a request
(request counts are the benchmark metric), and tests must run retry paths without real sleeping.
Clients made by :func:`zerorename.stores.s3.make_s3_client` therefore disable botocore's own
retries (``total_max_attempts=1``) and every :class:`~zerorename.stores.s3.S3Store` call goes
through :meth:`RetryPolicy.call`.

Full jitter (AWS Architecture Blog, "Exponential Backoff And Jitter"): the n-th retry sleeps a
uniform random time in ``[0, min(max_delay, base_delay * 2**n))``.  It spreads a fleet of tasks
that were throttled together, which fixed or "equal" jitter does not.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

from zerorename.errors import StoreError

T = TypeVar("T")

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


def is_retryable(exc: BaseException) -> bool:
    """Default predicate: throttling, 5xx and connection failures; never 4xx such as 404/412."""
    if not isinstance(exc, StoreError):
        return False
    return exc.retryable or exc.code in TRANSIENT_CODES


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how patiently to repeat a failed request.

    ``max_attempts`` counts the first try (1 = no retry).  ``sleep`` and ``random`` are
    injectable so that tests record the delays instead of waiting, and so that simulations
    can make the jitter deterministic.
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
        cap = min(self.max_delay, self.base_delay * (2.0**retry_number))
        return self.random() * cap

    def call(
        self,
        fn: Callable[[], T],
        *,
        on_retry: Callable[[int, BaseException, float], None] | None = None,
    ) -> T:
        """Run ``fn`` until it succeeds, fails with a non-retryable error, or attempts run out.

        The last error is re-raised unchanged, so callers see the same exception type they
        would without retries (a permanent 500 surfaces as the :class:`StoreError` it is).
        ``on_retry(attempt, error, delay)`` is called before each sleep, for logging/metrics.
        """
        attempt = 1
        while True:
            try:
                return fn()
            except Exception as exc:
                if attempt >= self.max_attempts or not self.retryable(exc):
                    raise
                wait = self.delay(attempt - 1)
                if on_retry is not None:
                    on_retry(attempt, exc, wait)
                self.sleep(wait)
                attempt += 1


#: A policy that never retries: for tests that want to see the first error.
NO_RETRY = RetryPolicy(max_attempts=1)

#: The default for S3 stores: 5 attempts, 50 ms base, 5 s cap (worst case ≈ 0.75 s total).
DEFAULT_RETRY = RetryPolicy()
