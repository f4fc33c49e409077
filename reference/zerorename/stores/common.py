"""What both production stores share: request and byte accounting, the bulk-delete error,
and the ETag helpers.

Request counts are the benchmark's primary, hardware-independent metric and the retry tests'
evidence, so :class:`S3Store <zerorename.stores.s3.S3Store>` and :class:`LocalStore
<zerorename.stores.local.LocalStore>` count the same way, through one :class:`RequestCounter`
each, and expose it through the same :class:`CountedRequests` methods.  ETags compare equal
across the two stores because both hand them out bare (:func:`bare_etag`) and a single-part
object's ETag is the MD5 hex of its bytes on both (:func:`md5_hex`).
"""

from __future__ import annotations

import hashlib
import threading
from collections import Counter

from zerorename.errors import StoreError

__all__ = ["CountedRequests", "DeleteManyError", "RequestCounter", "bare_etag", "md5_hex"]


class DeleteManyError(StoreError):
    """Some keys of a bulk delete failed; ``failures`` maps each URL to its own error.

    Raised after every batch has been tried, so one bad key never stops the rest from being
    deleted.  ``code``/``status`` are those of the first failure, whose reason the message
    ends with (for AccessDenied: the IAM action to add).
    """

    def __init__(self, failures: dict[str, StoreError], total: int) -> None:
        first_url, first = next(iter(failures.items()))
        shown = ", ".join(f"{u} ({e.code or e.status})" for u, e in list(failures.items())[:5])
        more = "" if len(failures) <= 5 else f" and {len(failures) - 5} more"
        super().__init__(
            first_url,
            f"{len(failures)} of {total} deletes failed: {shown}{more}; first: {first.reason}",
            code=first.code,
            status=first.status,
        )
        self.failures = failures


class RequestCounter:
    """Thread-safe request and byte counters, shared by every store implementation.

    Request counts are the benchmark's primary, hardware-independent metric, so each store
    counts every request it issues (every retry attempt too), by operation name.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._counts: Counter[str] = Counter()
        self._read = 0
        self._written = 0

    def add(self, op: str, n: int = 1) -> None:
        with self._lock:
            self._counts[op] += n

    def add_bytes(self, *, read: int = 0, written: int = 0) -> None:
        with self._lock:
            self._read += read
            self._written += written

    def counts(self) -> dict[str, int]:
        with self._lock:
            return dict(self._counts)

    @property
    def bytes_read(self) -> int:
        with self._lock:
            return self._read

    @property
    def bytes_written(self) -> int:
        with self._lock:
            return self._written

    def reset(self) -> None:
        with self._lock:
            self._counts.clear()
            self._read = 0
            self._written = 0


class CountedRequests:
    """The store protocol's accounting methods, over the store's :class:`RequestCounter`
    (``_counter``, set by the store's constructor)."""

    _counter: RequestCounter

    def request_counts(self) -> dict[str, int]:
        """Requests sent, by store operation; every retry attempt counts (it was sent)."""
        return self._counter.counts()

    @property
    def bytes_read(self) -> int:
        return self._counter.bytes_read

    @property
    def bytes_written(self) -> int:
        return self._counter.bytes_written

    def reset_counters(self) -> None:
        self._counter.reset()


def md5_hex(data: bytes) -> str:
    """The ETag S3 gives a single-part object: MD5 hex of the bytes."""
    return hashlib.md5(data, usedforsecurity=False).hexdigest()


def bare_etag(etag: str) -> str:
    """An ETag without the surrounding double quotes S3 puts on the wire."""
    return etag.strip().strip('"')
