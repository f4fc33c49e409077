"""Probe what an S3 endpoint really does, once per endpoint, instead of trusting the docs.

S3-compatible servers disagree on exactly the features a rename-free committer leans on
(the quirks table of ``docs/user/stores.md`` lists what was measured):

* moto honours If-None-Match on PUT and on CompleteMultipartUpload, but ignores If-Match on
  complete and ignores every pagination parameter of ListMultipartUploads (one page, always);
  its upload ``Initiated`` time is a constant from 2010.
* Ceph RGW (Pacific) ignores If-None-Match on complete (it overwrites), rejects If-Match with the
  *quoted* ETag it returned itself (it wants the bare hex), returns an empty ETag from complete,
  and treats ``KeyMarker`` as inclusive.

:func:`probe_capabilities` measures each of these with a handful of requests under a throw-away
prefix, cleans up everything it created, and caches the :class:`ProbeResult` per endpoint URL so
a process pays for it once.  :meth:`ProbeResult.capabilities` turns it into the
:class:`~zerorename.store.StoreCapabilities` committers check.

Each probe request goes through the caller's :class:`~zerorename.retry.RetryPolicy` (the
one retry loop; S3Store passes its own): botocore's retries are off on S3Store's clients, and
a transient 503 must not be measured, and cached for the process, as "not supported".
"""

from __future__ import annotations

import contextlib
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from botocore.exceptions import BotoCoreError, ClientError

from zerorename.errors import AccessDeniedError, StoreError
from zerorename.retry import NO_RETRY, RetryPolicy
from zerorename.store import StoreCapabilities

if TYPE_CHECKING:
    from mypy_boto3_s3 import S3Client

__all__ = [
    "DEFAULT_PROBE_PREFIX",
    "ProbeResult",
    "cached_probe",
    "clear_probe_cache",
    "endpoint_of",
    "probe_capabilities",
]

#: Where probes write when the caller gives no prefix; hidden by Hadoop's ``.``/``_`` rule.
DEFAULT_PROBE_PREFIX = ".zerorename-probe/"

#: An ETag no object has: 32 zero hex digits (quoted, as S3 returns ETags).
_STALE_ETAG = '"00000000000000000000000000000000"'

_PROBE_BODY = b"zerorename capability probe\n"


@dataclass(frozen=True)
class ProbeResult:
    """What one endpoint was observed to do.  Every field is a measurement, not a claim.

    ``conditional_put``: PUT with If-None-Match ``*`` on an existing key gave 412.
    ``if_match_honoured``: PUT with a stale If-Match gave 412.
    ``if_match_quoted`` / ``if_match_unquoted``: PUT with the current ETag, quoted as S3 returns
    it / bare hex, succeeded (RGW accepts only the bare form).
    ``conditional_complete``: CompleteMultipartUpload with If-None-Match ``*`` over an existing
    key gave 412 (RGW: ignored, the key is overwritten).
    ``complete_if_match``: CompleteMultipartUpload with a stale If-Match gave 412 (moto: ignored).
    ``complete_returns_etag``: the complete response carried a non-empty ETag (RGW: empty).
    ``list_uploads_paginated``: ListMultipartUploads with MaxUploads=1 over 3 uploads was
    truncated and its Next*Marker led to a different upload (moto: one page, markers ignored).
    ``key_marker_exclusive``: KeyMarker alone lists only keys strictly after it (AWS; RGW and
    moto include the marker key).
    ``upload_initiated_real``: an upload's ``Initiated`` is within a day of now (moto: 2010).
    """

    endpoint: str
    conditional_put: bool
    if_match_honoured: bool
    if_match_quoted: bool
    if_match_unquoted: bool
    conditional_complete: bool
    complete_if_match: bool
    complete_returns_etag: bool
    list_uploads_paginated: bool
    key_marker_exclusive: bool
    upload_initiated_real: bool
    requests: int = 0
    seconds: float = 0.0
    notes: tuple[str, ...] = field(default=())

    @property
    def if_match_works(self) -> bool:
        """If-Match on PUT is usable in at least one ETag spelling."""
        return self.if_match_honoured and (self.if_match_quoted or self.if_match_unquoted)

    def capabilities(self) -> StoreCapabilities:
        """The committer-facing summary.  S3 never renames, has consistent listing, and gives
        a completed upload S3's multipart ETag (``-N``: AWS documents it; moto and Ceph RGW
        were measured, ``tests/reference/test_fenced_existing_key.py``)."""
        return StoreCapabilities(
            rename=False,
            atomic_dir_rename=False,
            conditional_put=self.conditional_put and self.if_match_works,
            conditional_complete=self.conditional_complete,
            conditional_complete_if_match=self.complete_if_match,
            consistent_listing=True,
            multipart=True,
            multipart_etags=True,
        )


_CACHE: dict[str, ProbeResult] = {}
_CACHE_LOCK = threading.Lock()


def endpoint_of(client: S3Client | Any) -> str:
    """The cache key for a client: its endpoint URL (AWS clients share the regional one)."""
    meta = getattr(client, "meta", None)
    url = getattr(meta, "endpoint_url", None)
    return str(url) if url else f"client:{id(client)}"


def cached_probe(endpoint: str) -> ProbeResult | None:
    """The cached result for ``endpoint``, if one was measured in this process."""
    with _CACHE_LOCK:
        return _CACHE.get(endpoint)


def clear_probe_cache() -> None:
    """Forget every measured endpoint (tests that reuse an endpoint URL for another server)."""
    with _CACHE_LOCK:
        _CACHE.clear()


def probe_capabilities(
    client: S3Client,
    bucket: str,
    prefix: str = DEFAULT_PROBE_PREFIX,
    *,
    refresh: bool = False,
    retry: RetryPolicy = NO_RETRY,
) -> ProbeResult:
    """Measure ``client``'s endpoint with objects under ``s3://bucket/prefix<uuid>/``.

    Cached per endpoint URL (``refresh=True`` measures again).  Creates at most two objects and
    three multipart uploads and removes all of them, even when a step fails.  A step that errors
    in an unexpected way counts as "not supported" and is explained in ``notes``; if the probe
    cannot even write or create an upload (no permission, missing bucket), it raises
    :class:`StoreError` and caches nothing.  ``retry`` repeats each request that fails
    transiently; its ``retryable`` predicate sees botocore's exceptions as raised.
    """
    endpoint = endpoint_of(client)
    with _CACHE_LOCK:
        if not refresh and endpoint in _CACHE:
            return _CACHE[endpoint]
        probe = _Probe(client, bucket, prefix, endpoint, retry)
        try:
            result = probe.run()
        except ClientError as exc:
            from zerorename.stores.s3.errors import translate_client_error  # (imports this)

            url = f"s3://{bucket}/{probe.base}"
            # a request the role may not send: say which IAM action it needs, as the store does
            denied = translate_client_error(exc, url, _STORE_OPS.get(probe.last_call, "probe"))
            if isinstance(denied, AccessDeniedError):
                raise AccessDeniedError(url, f"capability probe failed: {denied.reason}",
                                        denied.actions, code=denied.code) from exc
            raise StoreError(
                url, f"capability probe failed: {_describe(exc)}",
                code=str(exc.response.get("Error", {}).get("Code", "")), status=_status(exc),
            ) from exc
        except BotoCoreError as exc:  # refused before sending (bad bucket name), no network
            detail = " ".join(str(exc).split())
            raise StoreError(f"s3://{bucket}/{probe.base}",
                             f"capability probe failed: {type(exc).__name__}: {detail}",
                             code=type(exc).__name__) from exc
        _CACHE[endpoint] = result
        return result


class _Probe:
    """One measurement run; the methods are the steps, ``run`` orders them and cleans up."""

    def __init__(self, client: S3Client, bucket: str, prefix: str, endpoint: str,
                 retry: RetryPolicy = NO_RETRY) -> None:
        self.client = client
        self.retry = retry
        self.bucket = bucket
        base = prefix if prefix else DEFAULT_PROBE_PREFIX
        if not base.endswith("/"):
            base += "/"
        self.base = f"{base}{uuid.uuid4().hex}/"
        self.endpoint = endpoint
        self.requests = 0
        self.notes: list[str] = []
        self.uploads: list[tuple[str, str]] = []
        self.created = False
        self.last_call = ""  # boto3's name of the request sent last (put_object…)

    # -- plumbing -------------------------------------------------------------------------

    def _req(self, fn: Callable[..., Any], **kwargs: Any) -> Any:
        """One request, repeated by the retry loop while it fails transiently; every
        attempt is counted in ``requests``."""

        def once() -> Any:
            self.requests += 1
            self.last_call = getattr(fn, "__name__", "")
            return fn(Bucket=self.bucket, **kwargs)

        return self.retry.call(once)

    def _expect_412(self, what: str, fn: Callable[..., Any], **kwargs: Any) -> tuple[bool, Any]:
        """(True, None) on 412; (False, response) on success; (False, None) on other errors."""
        try:
            return False, self._req(fn, **kwargs)
        except ClientError as exc:
            if _status(exc) == 412:
                return True, None
            self.notes.append(f"{what}: {_describe(exc)}")
            return False, None

    def _succeeds(self, what: str, fn: Callable[..., Any], **kwargs: Any) -> bool:
        try:
            self._req(fn, **kwargs)
            return True
        except ClientError as exc:
            if _status(exc) != 412:
                self.notes.append(f"{what}: {_describe(exc)}")
            return False

    def _create_upload(self, key: str) -> tuple[str, str]:
        upload_id = str(self._req(self.client.create_multipart_upload, Key=key)["UploadId"])
        self.uploads.append((key, upload_id))
        part = self._req(
            self.client.upload_part, Key=key, UploadId=upload_id, PartNumber=1, Body=_PROBE_BODY
        )
        return upload_id, str(part["ETag"])

    # -- the run --------------------------------------------------------------------------

    def run(self) -> ProbeResult:
        started = time.monotonic()
        try:
            return self._measure(started)
        finally:
            self._cleanup()

    def _measure(self, started: float) -> ProbeResult:
        c = self.client
        obj = f"{self.base}obj"
        new = f"{self.base}new"
        etag = str(self._req(c.put_object, Key=obj, Body=_PROBE_BODY)["ETag"])
        self.created = True  # from here on, cleanup has something to look for
        bare = etag.strip('"')

        conditional_put, _ = self._expect_412(
            "put If-None-Match", c.put_object, Key=obj, Body=_PROBE_BODY, IfNoneMatch="*"
        )
        # Same body every time, so a server that ignores If-Match cannot change the ETag.
        if_match_honoured, _ = self._expect_412(
            "put If-Match stale", c.put_object, Key=obj, Body=_PROBE_BODY, IfMatch=_STALE_ETAG
        )
        if_match_quoted = self._succeeds(
            "put If-Match quoted", c.put_object, Key=obj, Body=_PROBE_BODY, IfMatch=f'"{bare}"'
        )
        if_match_unquoted = self._succeeds(
            "put If-Match bare", c.put_object, Key=obj, Body=_PROBE_BODY, IfMatch=bare
        )

        # Three uploads: two on the existing key, one on a new key that sorts before it.
        u1, p1 = self._create_upload(obj)
        u2, p2 = self._create_upload(obj)
        u3, p3 = self._create_upload(new)
        paginated, initiated_real = self._probe_upload_listing()
        key_marker_exclusive = self._probe_key_marker(new, u3)

        conditional_complete, resp1 = self._expect_412(
            "complete If-None-Match", c.complete_multipart_upload, Key=obj, UploadId=u1,
            MultipartUpload={"Parts": [{"PartNumber": 1, "ETag": p1}]}, IfNoneMatch="*",
        )
        complete_if_match, resp2 = self._expect_412(
            "complete If-Match stale", c.complete_multipart_upload, Key=obj, UploadId=u2,
            MultipartUpload={"Parts": [{"PartNumber": 1, "ETag": p2}]}, IfMatch=_STALE_ETAG,
        )
        resp3 = None
        with contextlib.suppress(ClientError):
            resp3 = self._req(
                c.complete_multipart_upload, Key=new, UploadId=u3,
                MultipartUpload={"Parts": [{"PartNumber": 1, "ETag": p3}]},
            )
        etags = [str(r.get("ETag") or "").strip('"') for r in (resp1, resp2, resp3) if r]
        complete_returns_etag = bool(etags) and all(etags)
        if not etags:
            self.notes.append("no complete succeeded; complete_returns_etag unknown (False)")

        return ProbeResult(
            endpoint=self.endpoint,
            conditional_put=conditional_put,
            if_match_honoured=if_match_honoured,
            if_match_quoted=if_match_honoured and if_match_quoted,
            if_match_unquoted=if_match_honoured and if_match_unquoted,
            conditional_complete=conditional_complete,
            complete_if_match=complete_if_match,
            complete_returns_etag=complete_returns_etag,
            list_uploads_paginated=paginated,
            key_marker_exclusive=key_marker_exclusive,
            upload_initiated_real=initiated_real,
            requests=self.requests,
            seconds=time.monotonic() - started,
            notes=tuple(self.notes),
        )

    def _probe_upload_listing(self) -> tuple[bool, bool]:
        """MaxUploads=1 over our 3 uploads: truncated, and do the markers make progress?"""
        c = self.client
        first = self._req(c.list_multipart_uploads, Prefix=self.base, MaxUploads=1)
        uploads = first.get("Uploads", [])
        now = time.time()
        initiated = [u["Initiated"].timestamp() for u in uploads if "Initiated" in u]
        initiated_real = bool(initiated) and all(abs(now - t) < 86400 for t in initiated)
        key_m, id_m = first.get("NextKeyMarker"), first.get("NextUploadIdMarker")
        if not (first.get("IsTruncated") and len(uploads) == 1 and key_m and id_m):
            return False, initiated_real
        second = self._req(
            c.list_multipart_uploads, Prefix=self.base, MaxUploads=1, KeyMarker=key_m,
            UploadIdMarker=id_m,
        )
        seen = {(u["Key"], u["UploadId"]) for u in uploads}
        nxt = {(u["Key"], u["UploadId"]) for u in second.get("Uploads", [])}
        return bool(nxt) and not (nxt & seen), initiated_real

    def _probe_key_marker(self, new_key: str, new_upload: str) -> bool:
        """KeyMarker=<new key> without UploadIdMarker must not list the new key's upload."""
        listed = self._req(self.client.list_multipart_uploads, Prefix=self.base, KeyMarker=new_key)
        ids = {u["UploadId"] for u in listed.get("Uploads", [])}
        return new_upload not in ids and len(ids) > 0

    def _cleanup(self) -> None:
        """Abort our uploads and delete our objects; never raises (a probe must not fail a job)."""
        c = self.client
        if not self.created:
            return
        for key, upload_id in self.uploads:
            with contextlib.suppress(ClientError):
                self._req(c.abort_multipart_upload, Key=key, UploadId=upload_id)
        try:
            listed = self._req(c.list_multipart_uploads, Prefix=self.base)
            for u in listed.get("Uploads", []):
                with contextlib.suppress(ClientError):
                    self._req(c.abort_multipart_upload, Key=u["Key"], UploadId=u["UploadId"])
            objects = self._req(c.list_objects_v2, Prefix=self.base).get("Contents", [])
            for o in objects:
                with contextlib.suppress(ClientError):
                    self._req(c.delete_object, Key=o["Key"])
        except ClientError as exc:
            self.notes.append(f"cleanup: {_describe(exc)}")


def _status(exc: ClientError) -> int:
    meta = exc.response.get("ResponseMetadata", {})
    return int(meta.get("HTTPStatusCode", 0) or 0)


#: boto3's names of the probe's requests → the store's operation names (the keys of
#: :data:`~zerorename.stores.s3.errors.IAM_ACTIONS`)
_STORE_OPS = {"put_object": "put", "create_multipart_upload": "create_multipart",
              "upload_part": "upload_part", "complete_multipart_upload": "complete_multipart",
              "list_multipart_uploads": "list_multipart_uploads",
              "abort_multipart_upload": "abort_multipart", "delete_object": "delete"}


def _describe(exc: ClientError) -> str:
    err = exc.response.get("Error", {})
    return f"{_status(exc)} {err.get('Code', '?')} {err.get('Message', '')}".strip()
