"""The one retry layer of a committer: :class:`ReliableStore` wraps any store so that every
request a committer makes is retried by one policy (``fs.s3a.retry.*``) and counted.

Kept apart from the committers because it is the only place that decides whether a request
is repeated; everything above it may assume a request either took effect or raised.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

from zerorename import options as O
from zerorename import statistics as S
from zerorename.context import Options
from zerorename.errors import CommitError
from zerorename.retry import Landed, RetryPolicy, complete_landed, put_landed
from zerorename.stats import IOStatistics
from zerorename.store import ListPage, ObjectInfo, Store, StoreCapabilities, UploadInfo

__all__ = ["RETRY_INTERVAL_OPTION", "RETRY_LIMIT_OPTION", "ReliableStore", "retry_policy"]

T = TypeVar("T")

RETRY_LIMIT_OPTION = O.RETRY_LIMIT.name
RETRY_INTERVAL_OPTION = O.RETRY_INTERVAL.name


def retry_policy(options: Options) -> RetryPolicy:
    """Committer-level retries, the one loop every store request of a committer goes through.

    ``fs.s3a.retry.limit`` retries (default 3) after the first attempt, so one logical store
    operation sends at most limit + 1 requests (:mod:`zerorename.retry`: an S3Store underneath
    defers to this loop, botocore's is switched off).  Retry ``n`` (0 for the first) waits a
    uniform random time below ``min(cap, interval * 2**n)``: ``fs.s3a.retry.interval``
    (default 50ms) is the base, the cap is 16 intervals but at least 1 s; the whole wait is at
    most :meth:`RetryPolicy.max_total_delay` (0.35 s with the defaults).  A negative limit or
    interval is a :class:`CommitError` naming the option."""
    retries = options.get_int(RETRY_LIMIT_OPTION, default=3)
    if retries < 0:
        raise CommitError(RETRY_LIMIT_OPTION, f"retry limit {retries} is negative")
    interval = options.get_seconds(RETRY_INTERVAL_OPTION, default=0.05)
    if interval < 0:
        raise CommitError(RETRY_INTERVAL_OPTION, f"retry interval {interval}s is negative")
    return RetryPolicy(max_attempts=retries + 1, base_delay=interval,
                       max_delay=max(interval * 16, 1.0))


class ReliableStore:
    """A :class:`~zerorename.store.Store` that retries transient failures and counts calls.

    Its loop is the only one that repeats a committer's request: a store underneath that has
    its own (S3Store) runs each attempt once inside it (:meth:`RetryPolicy.call`), so
    ``fs.s3a.retry.limit`` bounds the requests whatever the store and its client.

    Retrying is only safe when a repeated request means the same thing, so two operations
    resolve "my earlier attempt may have landed", with the checks every loop uses
    (:func:`~zerorename.retry.put_landed`, :func:`~zerorename.retry.complete_landed`): a
    conditional PUT that meets 412 on a repeat accepts an object holding exactly its bytes; a
    complete that meets NoSuchUpload on a repeat accepts an object with the ETag its parts
    produce and, in :meth:`complete_checked`, the expected length.  Callers of ``rename``
    handle a vanished source themselves.
    """

    def __init__(self, inner: Store, policy: RetryPolicy, stats: IOStatistics) -> None:
        self.inner = inner
        self.name = inner.name
        self.policy = policy
        self.stats = stats

    def _call(self, op: str, fn: Callable[[], T], *, landed: Landed[T] | None = None) -> T:
        def once() -> T:
            with self.stats.duration(S.request(op)):
                return fn()

        def on_retry(attempt: int, exc: BaseException, delay: float) -> None:
            self.stats.incr(S.STORE_RETRIES)

        return self.policy.call(once, on_retry=on_retry, landed=landed)

    def capabilities(self) -> StoreCapabilities:
        return self.inner.capabilities()

    def request_counts(self) -> dict[str, int]:
        return self.inner.request_counts()

    def put(self, url: str, data: bytes, *, if_none_match: bool = False,
            if_match: str | None = None) -> str:
        conditional = if_none_match or if_match is not None
        return self._call("put", lambda: self.inner.put(
            url, data, if_none_match=if_none_match, if_match=if_match),
            landed=put_landed(lambda: self.head(url), data) if conditional else None)

    def get(self, url: str) -> bytes:
        return self._call("get", lambda: self.inner.get(url))

    def head(self, url: str) -> ObjectInfo | None:
        return self._call("head", lambda: self.inner.head(url))

    def list_page(self, prefix: str, *, delimiter: str | None = None, token: str | None = None,
                  max_keys: int = 1000) -> ListPage:
        return self._call("list_page", lambda: self.inner.list_page(
            prefix, delimiter=delimiter, token=token, max_keys=max_keys))

    def delete(self, url: str) -> None:
        self._call("delete", lambda: self.inner.delete(url))

    def delete_many(self, urls: Sequence[str]) -> None:
        if urls:
            self._call("delete_many", lambda: self.inner.delete_many(list(urls)))

    def copy(self, src: str, dst: str) -> str:
        return self._call("copy", lambda: self.inner.copy(src, dst))

    def rename(self, src: str, dst: str) -> None:
        self._call("rename", lambda: self.inner.rename(src, dst))

    def create_multipart(self, url: str) -> str:
        return self._call("create_multipart", lambda: self.inner.create_multipart(url))

    def upload_part(self, url: str, upload_id: str, part_number: int, data: bytes) -> str:
        return self._call("upload_part",
                          lambda: self.inner.upload_part(url, upload_id, part_number, data))

    def complete_multipart(self, url: str, upload_id: str, parts: Sequence[tuple[int, str]], *,
                           if_none_match: bool = False, if_match: str | None = None) -> str:
        return self._call("complete_multipart", lambda: self.inner.complete_multipart(
            url, upload_id, parts, if_none_match=if_none_match, if_match=if_match),
            landed=self._complete_landed(url, parts, None))

    def complete_checked(self, url: str, upload_id: str, parts: Sequence[tuple[int, str]],
                         length: int) -> str:
        """Complete; if a repeated complete finds the upload gone, accept the object only when
        it is there with the expected ``length`` (and the parts' ETag, where the store uses
        S3's multipart ETags): our earlier attempt did land."""
        return self._call("complete_multipart", lambda: self.inner.complete_multipart(
            url, upload_id, parts), landed=self._complete_landed(url, parts, length))

    def _complete_landed(self, url: str, parts: Sequence[tuple[int, str]],
                         length: int | None) -> Landed[str]:
        def counted(error: BaseException) -> str | None:
            # built here, not up front: its expected ETag is an MD5 over the parts' digests,
            # which every complete paid for (twice, with S3Store's own: 3.5 µs a complete
            # here) and almost none uses
            etag = complete_landed(lambda: self.head(url), parts, length)(error)
            if etag is not None:
                self.stats.incr(S.STORE_COMPLETE_RECOVERED)
            return etag

        return counted

    def abort_multipart(self, url: str, upload_id: str) -> None:
        self._call("abort_multipart", lambda: self.inner.abort_multipart(url, upload_id))

    def list_multipart_uploads(self, prefix: str) -> list[UploadInfo]:
        return self._call("list_multipart_uploads",
                          lambda: self.inner.list_multipart_uploads(prefix))

