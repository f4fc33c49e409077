"""The plumbing under every S3 call: URLs split into bucket and key, one retry loop, every
attempt counted, typed errors, and the endpoint's measured capabilities.

:class:`S3Requests` is the base of :class:`~zerorename.stores.s3.store.S3Store` and of its
parts (:mod:`.conditional`, :mod:`.listing`, :mod:`.multipart`): each part sends its requests
through :meth:`S3Requests._call`, so an operation costs at most the policy's attempts whatever
part it lives in, and :meth:`~zerorename.stores.common.CountedRequests.request_counts` sees
them all.  ``head`` lives here because conditional writes and multipart completion both
settle doubts with it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar
from urllib.parse import urlsplit

from botocore.exceptions import BotoCoreError, ClientError

from zerorename.errors import BadURLError, NotFoundError, StoreError
from zerorename.retry import DEFAULT_RETRY, Landed, RetryPolicy
from zerorename.store import (
    S3_MAX_PART_SIZE,
    S3_MAX_PARTS,
    S3_MIN_PART_SIZE,
    ObjectInfo,
    StoreCapabilities,
)
from zerorename.stores.capabilities import (
    DEFAULT_PROBE_PREFIX,
    cached_probe,
    endpoint_of,
    probe_capabilities,
)
from zerorename.stores.common import CountedRequests, RequestCounter, bare_etag
from zerorename.stores.s3.client import disable_botocore_retries
from zerorename.stores.s3.errors import translate_botocore_error, translate_client_error
from zerorename.urls import parse_url

if TYPE_CHECKING:
    from mypy_boto3_s3 import S3Client

__all__ = ["S3Requests"]

T = TypeVar("T")

#: What S3Store reports when it could not measure: S3 facts only (multipart ETags among
#: them), no conditional writes.
_UNKNOWN_CAPABILITIES = StoreCapabilities(conditional_put=False, conditional_complete=False,
                                          multipart_etags=True)


class S3Requests(CountedRequests):
    """A boto3 client with the store's retry policy, counters and capabilities (the
    constructor's arguments are described on :class:`~zerorename.stores.s3.store.S3Store`)."""

    def __init__(
        self,
        client: S3Client,
        *,
        retry: RetryPolicy | None = None,
        name: str = "s3",
        capabilities: StoreCapabilities | None = None,
        probe_prefix: str = DEFAULT_PROBE_PREFIX,
        probe_bucket: str | None = None,
        list_uploads_page_size: int | None = None,
        min_part_size: int = S3_MIN_PART_SIZE,
    ) -> None:
        disable_botocore_retries(client)
        self.client = client
        self.min_part_size = min_part_size
        self.name = name
        self.retry = retry if retry is not None else DEFAULT_RETRY
        self.endpoint = endpoint_of(client)
        self._fixed_capabilities = capabilities
        self._probe_prefix = probe_prefix
        self._probe_bucket = probe_bucket
        self._uploads_page_size = list_uploads_page_size
        self._probe_error: StoreError | None = None
        self._counter = RequestCounter()

    def __repr__(self) -> str:
        return f"S3Store(endpoint={self.endpoint!r}, name={self.name!r})"

    def race_probe_key(self) -> str | None:
        """The server whose conditional writes ``fenced`` must measure under racing writers
        (:mod:`zerorename.stores.fencing`): one probe per endpoint and process; None when the
        capabilities were given to the constructor (declared, so not measured)."""
        return None if self._fixed_capabilities is not None else self.endpoint

    def races_documented(self) -> bool:
        """AWS S3's endpoints: conditional writes are documented atomic (a concurrent
        conditional write answers 409 or 412; Amazon S3 user guide, "conditional writes"), so
        the fencing check sends one writer's two PUTs, not a race.  Every other endpoint
        (MinIO, Ceph RGW, SeaweedFS…) is raced."""
        host = urlsplit(self.endpoint).hostname or ""
        return host == "amazonaws.com" or host.endswith(".amazonaws.com")

    # -- plumbing -------------------------------------------------------------------------

    def _split(self, url: str) -> tuple[str, str, str]:
        u = parse_url(url)
        if u.scheme not in ("s3", "s3a"):
            raise BadURLError(url, "S3Store serves s3:// and s3a:// URLs only")
        return u.scheme, u.bucket, u.key

    def _call(self, op: str, url: str, fn: Callable[[], T], *,
              landed: Landed[T] | None = None) -> T:
        """One logical operation: counted attempts, typed errors, retried when transient by
        the one loop (``landed``: see :meth:`RetryPolicy.call`)."""

        def attempt() -> T:
            self._counter.add(op)
            try:
                return fn()
            except ClientError as exc:
                raise translate_client_error(exc, url, op) from exc
            except BotoCoreError as exc:
                raise translate_botocore_error(exc, url, op) from exc

        return self.retry.call(attempt, landed=landed)

    def _raw_retry(self) -> RetryPolicy:
        """This store's policy for code that handles botocore's exceptions itself (the
        capability probe): transient by the same rules, judged on the translated error."""
        policy = self.retry

        def retryable(exc: BaseException) -> bool:
            if isinstance(exc, ClientError):
                return policy.retryable(translate_client_error(exc, self.endpoint, "probe"))
            if isinstance(exc, BotoCoreError):
                return policy.retryable(translate_botocore_error(exc, self.endpoint, "probe"))
            return policy.retryable(exc)

        return dataclasses.replace(policy, retryable=retryable)

    # -- capabilities ---------------------------------------------------------------------

    def capabilities(self, url: str | None = None) -> StoreCapabilities:
        """Measured capabilities of this endpoint (probed once per endpoint and process),
        with S3's multipart limits (``min_part_size`` as given to the constructor); the
        ``capabilities`` given to the constructor, if any, exactly as given.

        The probe needs a bucket: ``url``'s, else ``probe_bucket``.  Without either, or when
        the probe itself fails (no permission under the probe prefix), returns a conservative
        answer (no conditional writes) without caching it.  Never the bucket the store
        happened to touch last: every committer asks (for the multipart limits) when it is
        built, so the probe — about 17 requests, three multipart uploads created and
        aborted — would run inside whichever job built a committer first after the store
        touched a bucket, and two identical jobs would not send the same requests.  S3 never
        has rename.
        """
        if self._fixed_capabilities is not None:
            return self._fixed_capabilities
        return dataclasses.replace(self._measured_capabilities(url),
                                   min_part_size=self.min_part_size,
                                   max_part_size=S3_MAX_PART_SIZE, max_parts=S3_MAX_PARTS)

    def capability_probe_error(self) -> StoreError | None:
        """Why :meth:`capabilities` answered conservatively: the probe's error (an
        ``AccessDeniedError`` naming the IAM action the role lacks, a missing bucket…), or
        None when it measured, was declared, or has not run."""
        return self._probe_error

    def _measured_capabilities(self, url: str | None) -> StoreCapabilities:
        cached = cached_probe(self.endpoint)
        if cached is not None:
            return cached.capabilities()
        bucket = self._split(url)[1] if url else self._probe_bucket
        if bucket is None or self._probe_error is not None:
            return _UNKNOWN_CAPABILITIES
        try:
            result = probe_capabilities(self.client, bucket, self._probe_prefix,
                                        retry=self._raw_retry())
        except StoreError as exc:
            # e.g. no permission under the probe prefix: answer conservatively, and do not
            # try again from this store (each attempt would cost requests and fail the same)
            self._probe_error = exc
            return _UNKNOWN_CAPABILITIES
        if cached_probe(self.endpoint) is result:
            self._counter.add("capability_probe", result.requests)
        return result.capabilities()

    def head(self, url: str) -> ObjectInfo | None:
        scheme, bucket, key = self._split(url)
        try:
            resp = self._call("head", url, lambda: self.client.head_object(Bucket=bucket, Key=key))
        except NotFoundError:
            return None
        return ObjectInfo(
            url=f"{scheme}://{bucket}/{key}",
            size=int(resp.get("ContentLength", 0)),
            etag=bare_etag(str(resp.get("ETag", ""))),
            mtime=resp["LastModified"].timestamp() if "LastModified" in resp else None,
        )

    def _etag_of(self, url: str) -> str:
        info = self.head(url)
        return info.etag if info is not None else ""
