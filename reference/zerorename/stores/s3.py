"""``S3Store``: the store protocol on a boto3 S3 client (AWS, moto, Ceph RGW, other S3s).

Design points, each for a reason:

* **The bucket comes from every URL** (``s3://bucket/key``, ``s3a://bucket/key``), so one store
  serves a whole job whatever buckets it touches, and listings answer in the scheme asked.
* **ETags are returned bare** (MD5 hex, no quotes) so they compare equal across S3Store and
  LocalStore; If-Match accepts either spelling and sends the one the endpoint understands.
* **One retry loop** (:mod:`zerorename.retry`): throttling (503 SlowDown), 5xx and
  connection errors are repeated with full-jitter backoff; 4xx never are.  botocore's own
  retries are switched off on whatever client the store is given
  (:func:`disable_botocore_retries`), and under a committer the committer's loop is the only
  one that repeats, so ``fs.s3a.retry.limit`` + 1 bounds the HTTP requests of an operation.
  Every attempt is counted in :meth:`S3Store.request_counts`.
* **Errors are typed** (:mod:`zerorename.errors`): 404 → ``NotFoundError``, 412 →
  ``PreconditionFailedError``, 503 → ``ThrottledError``, the rest ``StoreError`` with the
  server's code and status; every message names the URL.
* **Server quirks are measured, not assumed** (:mod:`zerorename.stores.capabilities`):
  RGW's empty ETag from CompleteMultipartUpload is derived from the parts' ETags (S3's rule;
  a HEAD only where parts have no MD5 ETags); its refusal of quoted
  If-Match is worked around; its ignored If-None-Match on complete is reported by
  ``capabilities().conditional_complete == False`` and backed by a (non-atomic) HEAD check;
  list-uploads pagination stops on servers that ignore markers (moto) instead of looping.
* **No rename**: S3 has none.  :func:`rename_by_copy` is the explicit, O(data), non-atomic
  emulation, for callers (the manifest committer) that accept those costs.

``copy`` uses CopyObject, which S3 limits to 5 GiB sources; larger objects need
UploadPartCopy, which committers do not need (they never copy data they wrote) and is not
implemented.
"""

from __future__ import annotations

import dataclasses
import os
import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Literal, TypeVar

import boto3
import botocore.session
from botocore.config import Config
from botocore.exceptions import (
    BotoCoreError,
    ChecksumError,
    ClientError,
    FlexibleChecksumError,
    HTTPClientError,
    IncompleteReadError,
)
from botocore.exceptions import ConnectionError as BotoConnectionError
from botocore.loaders import Loader, create_loader

from zerorename.errors import (
    BadURLError,
    ClientSideError,
    NotFoundError,
    PreconditionFailedError,
    StoreError,
    ThrottledError,
    UnsupportedOperationError,
)
from zerorename.retry import (
    DEFAULT_RETRY,
    Landed,
    RetryPolicy,
    complete_landed,
    multipart_etag,
    put_landed,
)
from zerorename.store import (
    S3_MAX_PART_SIZE,
    S3_MAX_PARTS,
    S3_MIN_PART_SIZE,
    ListPage,
    ObjectInfo,
    Store,
    StoreCapabilities,
    UploadInfo,
    list_all,
)
from zerorename.stores.capabilities import (
    DEFAULT_PROBE_PREFIX,
    cached_probe,
    endpoint_of,
    probe_capabilities,
)
from zerorename.stores.local import DeleteManyError, RequestCounter, bare_etag
from zerorename.urls import dir_prefix, is_under, parse_url

if TYPE_CHECKING:
    from mypy_boto3_s3 import S3Client

__all__ = ["S3Store", "disable_botocore_retries", "make_s3_client", "rename_by_copy",
           "translate_botocore_error", "translate_client_error"]

T = TypeVar("T")

#: S3's limit on keys per DeleteObjects request (moto accepts more; AWS rejects them).
DELETE_BATCH = 1000

_NOT_FOUND_CODES = frozenset({"NoSuchKey", "NoSuchUpload", "NoSuchBucket", "NotFound", "404"})
_THROTTLE_CODES = frozenset({"SlowDown", "Throttling", "ThrottlingException", "503",
                             "ServiceUnavailable", "RequestLimitExceeded"})
_KNOWN_STATUS = {"AccessDenied": 403, "InternalError": 500, "SlowDown": 503,
                 "ServiceUnavailable": 503, "NoSuchKey": 404, "NoSuchBucket": 404}

#: What S3Store reports when it could not measure: S3 facts only, no conditional writes.
_UNKNOWN_CAPABILITIES = StoreCapabilities(conditional_put=False, conditional_complete=False)

# Per endpoint: how If-Match must be spelled ("quoted" like S3 returns it, or "bare"), learnt
# from a probe or from one fallback.  Shared by all stores in the process, like the probe cache.
_IF_MATCH_STYLE: dict[str, str] = {}
_STYLE_LOCK = threading.Lock()


def translate_client_error(exc: ClientError, url: str, op: str) -> StoreError:
    """A botocore ClientError as the matching :mod:`zerorename.errors` class, naming ``url``."""
    err = exc.response.get("Error", {})
    code = str(err.get("Code", "") or "")
    message = str(err.get("Message", "") or "")
    meta = exc.response.get("ResponseMetadata", {})
    status = int(meta.get("HTTPStatusCode", 0) or 0) or _KNOWN_STATUS.get(code, 0)
    reason = f"{op} failed: {status} {code}" + (f" ({message})" if message else "")
    if status == 404 or code in _NOT_FOUND_CODES:
        return NotFoundError(url, reason, code=code or "NoSuchKey")
    if status == 412 or code == "PreconditionFailed":
        return PreconditionFailedError(url, reason)
    if status == 503 or code in _THROTTLE_CODES:
        return ThrottledError(url, reason)
    return StoreError(url, reason, code=code, status=status)


#: botocore errors raised while a response was being read: the request was sent, the answer
#: arrived damaged or incomplete — transient, as a dropped connection is.
_TRANSIENT_BOTOCORE = (BotoConnectionError, HTTPClientError, IncompleteReadError, ChecksumError,
                       FlexibleChecksumError)


def translate_botocore_error(exc: BotoCoreError, url: str, op: str) -> StoreError:
    """A botocore error raised *before* or *around* the HTTP exchange (not a ClientError) as a
    :mod:`zerorename.errors` class naming ``url``: connection and damaged-response failures
    are transient (code ``ConnectionError``, retried); anything else — parameter validation
    such as an invalid bucket name, missing credentials or region — is a
    :class:`ClientSideError` (never retried) whose reason is botocore's own message."""
    if isinstance(exc, _TRANSIENT_BOTOCORE):
        return StoreError(url, f"{op} failed: {type(exc).__name__}: {exc}",
                          code="ConnectionError")
    detail = " ".join(str(exc).split())  # botocore's messages span lines
    return ClientSideError(url, f"{op} refused by the S3 client before sending: {detail}",
                           code=type(exc).__name__)


def _per_key_error(url: str, code: str, message: str) -> StoreError:
    """An entry of DeleteObjects' ``Errors`` (no HTTP status of its own) as a StoreError."""
    status = _KNOWN_STATUS.get(code, 0)
    reason = f"delete failed: {code}" + (f" ({message})" if message else "")
    if code in _THROTTLE_CODES:
        return ThrottledError(url, reason)
    return StoreError(url, reason, code=code, status=status)


def disable_botocore_retries(client: S3Client | Any) -> None:
    """Switch off botocore's own retry loop on ``client``.

    botocore registers its retry handler — legacy, standard and adaptive mode alike — on the
    client's ``needs-retry.<service>`` event under the unique id ``retry-config-<service>``
    (``botocore/client.py`` and ``botocore/retries/standard.py``).  Unregistering it leaves
    one HTTP request per API call whatever ``Config(retries=...)`` the client was made with,
    while botocore's other ``needs-retry`` handlers stay: the S3 region redirector re-sends
    a request to the bucket's region once (then remembers the region), which is not a retry.
    A ``Config`` could only ask for fewer retries on clients made here (and its
    ``max_attempts`` counts retries, so 1 still means two tries); this works on the client the
    user hands in.  The tests count requests at the transport for every retry mode, so a
    botocore release that renames the handler fails them.  Adaptive mode's client-side rate
    limiter (a ``before-send`` handler) may still pace requests; it sends none of its own.
    Objects that are not botocore clients (test doubles) are left alone.
    """
    meta = getattr(client, "meta", None)
    events = getattr(meta, "events", None)
    service_model = getattr(meta, "service_model", None)
    if events is None or service_model is None:
        return
    service = service_model.service_id.hyphenize()
    events.unregister(f"needs-retry.{service}", unique_id=f"retry-config-{service}")


def make_s3_client(
    endpoint_url: str | None = None,
    region: str | None = None,
    checksums: Literal["when_required", "default"] = "when_required",
    *,
    access_key: str | None = None,
    secret_key: str | None = None,
    max_pool_connections: int = 32,
    connect_timeout: float = 10.0,
    read_timeout: float = 60.0,
) -> S3Client:
    """A boto3 S3 client configured the way S3Store expects.

    * botocore retries are off (``standard`` mode, ``total_max_attempts=1``; note that
      botocore's ``max_attempts`` counts *retries*, so 1 would still mean 2 tries): our loop
      retries, so attempts are counted once and tests can inject the sleep.  (S3Store also
      switches them off on any client it is given: :func:`disable_botocore_retries`.)
    * ``checksums="when_required"`` (default) sends/validates CRC checksums only where the API
      requires them.  boto3 >= 1.36 otherwise adds CRC32 to every upload, which several
      S3-compatible servers reject or store verbatim (MinIO, SeaweedFS, R2, Qumulo…).
      ``"default"`` keeps boto3's behaviour (fine on AWS).
    * A custom ``endpoint_url`` (moto server, RGW, MinIO) gets path-style addressing: such
      servers rarely have wildcard DNS for virtual-host buckets.
    * ``max_pool_connections`` defaults to 32 (boto3: 10) because committers upload and copy
      with thread pools; a pool smaller than the thread count serialises them.
    """
    if checksums not in ("when_required", "default"):
        raise ValueError(f"checksums must be 'when_required' or 'default', not {checksums!r}")
    options: dict[str, Any] = {
        "retries": {"mode": "standard", "total_max_attempts": 1},
        "max_pool_connections": max_pool_connections,
        "connect_timeout": connect_timeout,
        "read_timeout": read_timeout,
    }
    if endpoint_url:
        options["s3"] = {"addressing_style": "path"}
    if checksums == "when_required":
        options["request_checksum_calculation"] = "when_required"
        options["response_checksum_validation"] = "when_required"
    return _new_session().client(
        "s3",
        endpoint_url=endpoint_url,
        region_name=region or os.environ.get("AWS_DEFAULT_REGION") or "us-east-1",
        aws_access_key_id=access_key,
        aws_secret_access_key=secret_key,
        config=Config(**options),
    )


_LOADER_LOCK = threading.Lock()
_LOADER: Loader | None = None


def _new_session() -> boto3.session.Session:
    """A fresh boto3 session sharing one botocore data loader.

    Fresh, so each client resolves credentials from the environment as boto3 would; shared
    loader, because parsing the S3 service model costs ~0.1-0.2 s per session, which dominated
    test setup and short CLI runs.  The loader only caches parsed JSON, which is safe to share.
    """
    global _LOADER
    with _LOADER_LOCK:
        if _LOADER is None:
            _LOADER = create_loader()
        loader = _LOADER
    core = botocore.session.get_session()
    core.register_component("data_loader", loader)
    return boto3.session.Session(botocore_session=core)


class _KeysLeft(StoreError):
    """A DeleteObjects answer listed transient per-key errors: the attempt failed for those
    keys only.  Transient like its first error, so the retry loop repeats the attempt."""

    def __init__(self, failures: dict[str, StoreError]) -> None:
        first_url, first = next(iter(failures.items()))
        super().__init__(first_url, f"{len(failures)} keys not deleted yet: {first.reason}",
                         code=first.code, status=first.status)
        self.failures = failures


class S3Store:
    """The store protocol over S3.  See the module docstring for the design.

    ``retry``: the :class:`RetryPolicy` (default: 5 attempts, full jitter) for the store used
    on its own; under a committer the committer's loop repeats instead (:mod:`zerorename.retry`:
    the outermost loop owns the retries).  ``client``: any boto3 S3 client; its botocore
    retries are switched off (:func:`disable_botocore_retries`), so one attempt is one HTTP
    request and the policy alone bounds an operation.  ``capabilities``:
    skip probing and report these.  ``probe_prefix``/``probe_bucket``: where the once-per-
    endpoint capability probe writes its few temporary objects (default: the bucket of the URL
    given to :meth:`capabilities`, under ``.zerorename-probe/``).  ``list_uploads_page_size``:
    MaxUploads per ListMultipartUploads page (server default 1000; small values exercise
    pagination).
    ``min_part_size``: the smallest non-final part the endpoint accepts, reported in
    :meth:`capabilities` with S3's other multipart limits so that committers refuse a smaller
    ``fs.s3a.multipart.size`` when they are built (not at job commit, with EntityTooSmall):
    S3's 5 MiB, lower only for a server configured lower (moto's ``S3_UPLOAD_PART_MIN_SIZE``,
    RGW's ``rgw_multipart_min_part_size``).
    """

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

    # -- counters -------------------------------------------------------------------------

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

    def _if_match_value(self, etag: str) -> str:
        style, _ = self._if_match_style()
        bare = bare_etag(etag)
        return bare if style == "bare" else f'"{bare}"'

    def _if_match_style(self) -> tuple[str, bool]:
        """("quoted" | "bare", known): learnt per endpoint, from a probe or from experience."""
        with _STYLE_LOCK:
            style = _IF_MATCH_STYLE.get(self.endpoint)
        if style is not None:
            return style, True
        probe = cached_probe(self.endpoint)
        if probe is not None and probe.if_match_works:
            return ("quoted" if probe.if_match_quoted else "bare"), True
        return "quoted", False

    def _learn_if_match_style(self, style: str) -> None:
        with _STYLE_LOCK:
            _IF_MATCH_STYLE.setdefault(self.endpoint, style)

    # -- objects --------------------------------------------------------------------------

    def put(
        self, url: str, data: bytes, *, if_none_match: bool = False, if_match: str | None = None
    ) -> str:
        """PUT, optionally conditional; returns the bare ETag.

        A conditional PUT retried after a transient failure may meet its own first attempt
        (which did land): a 412 then is resolved by HEAD (:func:`~zerorename.retry.put_landed`)
        — if the object now holds exactly our bytes (same MD5), the write is reported as done.
        Writers that use If-None-Match as a lock must therefore write bodies that differ per
        writer (they include an attempt id).
        """
        _, bucket, key = self._split(url)
        kwargs: dict[str, Any] = {"Bucket": bucket, "Key": key, "Body": data}
        if if_none_match:
            kwargs["IfNoneMatch"] = "*"
        if if_match is not None:
            kwargs["IfMatch"] = self._if_match_value(if_match)
        conditional = if_none_match or if_match is not None

        def once() -> str:
            return str(self.client.put_object(**kwargs)["ETag"])

        landed = put_landed(lambda: self.head(url), data) if conditional else None
        try:
            etag = self._call("put", url, once, landed=landed)
        except PreconditionFailedError:
            if if_match is not None and self._quoted_if_match_refused(url, if_match):
                kwargs["IfMatch"] = bare_etag(if_match)
                etag = self._call("put", url, once)
            else:
                raise
        if if_match is not None:
            self._learn_if_match_style("bare" if kwargs["IfMatch"] == bare_etag(if_match)
                                       else "quoted")
        self._counter.add_bytes(written=len(data))
        return bare_etag(etag)

    def _quoted_if_match_refused(self, url: str, if_match: str) -> bool:
        """After a 412 on a quoted If-Match: is the ETag in fact current (RGW's quirk)?

        RGW compares the raw header with its unquoted stored ETag, so the quoted current ETag
        fails.  If HEAD shows the ETag we sent *is* current, the 412 was the quirk: remember
        to send it bare to this endpoint from now on, and tell the caller to resend.
        """
        style, known = self._if_match_style()
        if known or style == "bare":
            return False
        info = self.head(url)
        if info is None or info.etag != bare_etag(if_match):
            return False
        with _STYLE_LOCK:
            _IF_MATCH_STYLE[self.endpoint] = "bare"
        return True

    def get(self, url: str) -> bytes:
        _, bucket, key = self._split(url)

        def once() -> bytes:
            # the body is read inside the attempt: a connection cut mid-body is retried too
            return bytes(self.client.get_object(Bucket=bucket, Key=key)["Body"].read())

        data = self._call("get", url, once)
        self._counter.add_bytes(read=len(data))
        return data

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

    def list_page(
        self, prefix: str, *, delimiter: str | None = None, token: str | None = None,
        max_keys: int = 1000,
    ) -> ListPage:
        """One ListObjectsV2 page; ``token`` is S3's ContinuationToken."""
        scheme, bucket, key = self._split(prefix)
        kwargs: dict[str, Any] = {"Bucket": bucket, "Prefix": key, "MaxKeys": max_keys}
        if delimiter:
            kwargs["Delimiter"] = delimiter
        if token:
            kwargs["ContinuationToken"] = token
        resp = self._call("list_page", prefix, lambda: self.client.list_objects_v2(**kwargs))
        base = f"{scheme}://{bucket}/"
        objects = [
            ObjectInfo(
                url=base + o["Key"],
                size=int(o.get("Size", 0)),
                etag=bare_etag(str(o.get("ETag", ""))),
                mtime=o["LastModified"].timestamp() if "LastModified" in o else None,
            )
            for o in resp.get("Contents", [])
        ]
        prefixes = [base + p["Prefix"] for p in resp.get("CommonPrefixes", []) if "Prefix" in p]
        next_token: str | None = None
        if resp.get("IsTruncated"):
            next_token = resp.get("NextContinuationToken")
            if not next_token:
                raise StoreError(prefix, "listing truncated without a continuation token",
                                 code="BadListing", status=0)
        return ListPage(objects=objects, prefixes=prefixes, token=next_token)

    def delete(self, url: str) -> None:
        """DeleteObject; a missing key is success (S3 semantics)."""
        _, bucket, key = self._split(url)
        self._call("delete", url, lambda: self.client.delete_object(Bucket=bucket, Key=key))

    def delete_many(self, urls: Sequence[str]) -> None:
        """DeleteObjects in batches of 1000 per bucket.

        Per-key errors that are transient (SlowDown, InternalError) are retried, with backoff,
        for just those keys; the rest are collected, every batch is still attempted, and a
        :class:`DeleteManyError` mapping each failed URL to its StoreError is raised at the end.
        """
        by_bucket: dict[tuple[str, str], list[str]] = {}
        for url in urls:
            scheme, bucket, key = self._split(url)
            by_bucket.setdefault((scheme, bucket), []).append(key)
        failures: dict[str, StoreError] = {}
        for (scheme, bucket), keys in by_bucket.items():
            for start in range(0, len(keys), DELETE_BATCH):
                batch = keys[start : start + DELETE_BATCH]
                failures.update(self._delete_batch(scheme, bucket, batch))
        if failures:
            raise DeleteManyError(failures, len(urls))

    def _delete_batch(self, scheme: str, bucket: str, keys: list[str]) -> dict[str, StoreError]:
        """One batch through the one retry loop: an answer listing transient per-key errors
        ends the attempt with :class:`_KeysLeft`, and the next attempt sends just those keys,
        so a batch costs at most ``max_attempts`` requests like any operation.  Returns the
        keys that failed for good (and, when attempts run out, the transient ones)."""
        failed: dict[str, StoreError] = {}
        pending = list(keys)

        def once() -> None:
            nonlocal pending
            resp = self.client.delete_objects(
                Bucket=bucket, Delete={"Objects": [{"Key": k} for k in pending], "Quiet": True},
            )
            left: dict[str, tuple[str, StoreError]] = {}
            for e in resp.get("Errors", []):
                key = str(e.get("Key", ""))
                url = f"{scheme}://{bucket}/{key}"
                err = _per_key_error(url, str(e.get("Code", "")), str(e.get("Message", "")))
                if self.retry.retryable(err):
                    left[url] = (key, err)
                else:
                    failed[url] = err
            if left:
                pending = [key for key, _ in left.values()]
                raise _KeysLeft({url: err for url, (_, err) in left.items()})

        try:
            self._call("delete_many", f"{scheme}://{bucket}/{keys[0]}", once)
        except _KeysLeft as exc:
            failed.update(exc.failures)
        return failed

    def copy(self, src: str, dst: str) -> str:
        """Server-side CopyObject (sources up to 5 GiB); returns the new bare ETag."""
        _, sb, sk = self._split(src)
        _, db, dk = self._split(dst)
        def once() -> Any:
            return self.client.copy_object(Bucket=db, Key=dk, CopySource={"Bucket": sb, "Key": sk})

        resp = self._call("copy", src, once)
        return bare_etag(str(resp.get("CopyObjectResult", {}).get("ETag", "")))

    def rename(self, src: str, dst: str) -> None:
        """S3 has no rename: always :class:`UnsupportedOperationError`.

        See :func:`rename_by_copy` for the explicit copy + delete emulation.
        """
        raise UnsupportedOperationError(
            src,
            f"S3 has no rename (to {dst}); use zerorename.stores.rename_by_copy "
            "(copy + delete: O(data), not atomic)",
        )

    # -- multipart ------------------------------------------------------------------------

    def create_multipart(self, url: str) -> str:
        _, bucket, key = self._split(url)
        resp = self._call(
            "create_multipart", url,
            lambda: self.client.create_multipart_upload(Bucket=bucket, Key=key),
        )
        return str(resp["UploadId"])

    def upload_part(self, url: str, upload_id: str, part_number: int, data: bytes) -> str:
        _, bucket, key = self._split(url)
        resp = self._call(
            "upload_part", url,
            lambda: self.client.upload_part(
                Bucket=bucket, Key=key, UploadId=upload_id, PartNumber=part_number, Body=data
            ),
        )
        self._counter.add_bytes(written=len(data))
        return bare_etag(str(resp["ETag"]))

    def complete_multipart(
        self, url: str, upload_id: str, parts: Sequence[tuple[int, str]], *,
        if_none_match: bool = False,
    ) -> str:
        """CompleteMultipartUpload (parts sorted by number); returns the object's bare ETag.

        ``if_none_match`` sends If-None-Match ``*``.  On an endpoint measured to ignore it
        (Ceph RGW), the object is first checked with HEAD, which catches a pre-existing object
        but not a concurrent racer: ``capabilities().conditional_complete`` stays False there so
        committers that need exclusivity know.

        An empty ETag in the response (Ceph RGW) is derived from the parts' ETags, as S3
        forms it (the MD5 of their binary MD5s, then ``-<parts>``:
        :func:`~zerorename.retry.multipart_etag`), so completing costs one request whatever
        the server; only parts whose ETags are not MD5s (SSE-KMS, servers with their own
        scheme) leave nothing to derive, and then the ETag is read back with HEAD.

        A repeated complete whose first attempt the server applied (its answer lost) meets
        NoSuchUpload; it is accepted when the object is there with the ETag our parts produce
        (:func:`~zerorename.retry.complete_landed`, the check every retry loop uses).
        """
        _, bucket, key = self._split(url)
        emulate = if_none_match and not self.capabilities(url).conditional_complete
        if emulate and self.head(url) is not None:
            raise PreconditionFailedError(
                url, "object exists (If-None-Match emulated by HEAD: this endpoint ignores "
                "If-None-Match on complete-multipart)",
            )
        ordered = sorted(parts, key=lambda p: p[0])
        kwargs: dict[str, Any] = {
            "Bucket": bucket,
            "Key": key,
            "UploadId": upload_id,
            "MultipartUpload": {
                "Parts": [{"PartNumber": n, "ETag": f'"{bare_etag(e)}"'} for n, e in ordered]
            },
        }
        if if_none_match:
            kwargs["IfNoneMatch"] = "*"

        def once() -> str:
            resp = self.client.complete_multipart_upload(**kwargs)
            return bare_etag(str(resp.get("ETag", "") or ""))

        etag = self._call("complete_multipart", url, once,
                          landed=complete_landed(lambda: self.head(url), ordered))
        if not etag:
            etag = multipart_etag(e for _n, e in ordered) or self._etag_of(url)
        return etag

    def _etag_of(self, url: str) -> str:
        info = self.head(url)
        return info.etag if info is not None else ""

    def abort_multipart(self, url: str, upload_id: str) -> None:
        """AbortMultipartUpload; an unknown upload is :class:`NotFoundError` (NoSuchUpload)."""
        _, bucket, key = self._split(url)
        self._call(
            "abort_multipart", url,
            lambda: self.client.abort_multipart_upload(Bucket=bucket, Key=key, UploadId=upload_id),
        )

    def list_multipart_uploads(self, prefix: str) -> list[UploadInfo]:
        """Every incomplete upload under ``prefix``, following KeyMarker/UploadIdMarker.

        Defensive against servers that do not paginate as AWS does: moto ignores the markers
        (returns page 1 again), RGW treats KeyMarker as inclusive.  So uploads are de-duplicated
        by (key, upload id), and the loop stops when a page brings nothing new or the markers
        do not advance — it always terminates.
        """
        scheme, bucket, key = self._split(prefix)
        base = f"{scheme}://{bucket}/"
        seen: set[tuple[str, str]] = set()
        found: list[UploadInfo] = []
        markers: tuple[str, str] | None = None
        while True:
            kwargs: dict[str, Any] = {"Bucket": bucket, "Prefix": key}
            if self._uploads_page_size:
                kwargs["MaxUploads"] = self._uploads_page_size
            if markers is not None:
                kwargs["KeyMarker"], kwargs["UploadIdMarker"] = markers

            def once(kw: dict[str, Any] = kwargs) -> Any:
                return self.client.list_multipart_uploads(**kw)

            resp = self._call("list_multipart_uploads", prefix, once)
            uploads = resp.get("Uploads", [])
            new = 0
            for u in uploads:
                ident = (str(u["Key"]), str(u["UploadId"]))
                if ident in seen:
                    continue
                seen.add(ident)
                new += 1
                initiated = u["Initiated"].timestamp() if "Initiated" in u else None
                found.append(UploadInfo(base + ident[0], ident[1], initiated))
            if not resp.get("IsTruncated") or new == 0:
                break
            next_markers = (
                str(resp.get("NextKeyMarker") or ""), str(resp.get("NextUploadIdMarker") or "")
            )
            if not next_markers[0] and uploads:  # truncated without markers: use the last upload
                last = uploads[-1]
                next_markers = (str(last["Key"]), str(last["UploadId"]))
            if not next_markers[0] or next_markers == markers:
                break
            markers = next_markers
        return found


def rename_by_copy(store: Store, src: str, dst: str) -> int:
    """Emulate rename on a store without one: copy every object, then delete the sources.

    This is what S3A's rename does, with its costs: O(data) server-side copying, one copy
    request per object plus one delete per 1000, and **no atomicity** — a reader or a crash in
    between sees both copies (never neither: all copies finish before any delete starts, so an
    interrupted rename loses nothing and can be repeated).  ``src`` is a file if an object with
    that exact name exists, else a directory (every object under ``src/`` moves to ``dst/``).
    Returns the number of objects moved; a missing source is :class:`NotFoundError`.
    """
    if not src.endswith("/") and store.head(src) is not None:
        store.copy(src, dst)
        store.delete(src)
        return 1
    if is_under(dst, src):
        raise StoreError(src, f"cannot rename a directory into itself ({dst})",
                         code="InvalidRequest", status=400)
    src_dir, dst_dir = dir_prefix(src), dir_prefix(dst)
    objects = list(list_all(store, src_dir))
    if not objects:
        raise NotFoundError(src, f"rename source missing (rename to {dst})")
    for obj in objects:
        store.copy(obj.url, dst_dir + obj.url[len(src_dir):])
    store.delete_many([obj.url for obj in objects])
    return len(objects)
