"""PUT, plain or conditional (If-None-Match ``*``, If-Match), on S3 and on servers that spell
If-Match their own way.

Conditional PUT is what the fenced committer decides commits with, so two things are handled
here rather than left to the caller: a retried conditional PUT that meets its own first attempt
(a 412 resolved by HEAD, :func:`~zerorename.retry.put_landed`), and RGW's refusal of the quoted
If-Match it returned itself — learnt once per endpoint (from the capability probe, or from one
fallback) and shared by every store in the process.
"""

from __future__ import annotations

import threading
from typing import Any

from zerorename.errors import PreconditionFailedError
from zerorename.retry import put_landed
from zerorename.stores.capabilities import cached_probe
from zerorename.stores.common import bare_etag
from zerorename.stores.s3.base import S3Requests

__all__ = ["IF_MATCH_STYLE", "S3ConditionalWrites"]

#: Per endpoint: how If-Match must be spelled ("quoted" like S3 returns it, or "bare"), learnt
#: from a probe or from one fallback.  Shared by all stores in the process, like the probe cache.
IF_MATCH_STYLE: dict[str, str] = {}
_STYLE_LOCK = threading.Lock()


class S3ConditionalWrites(S3Requests):
    """:meth:`put` and the If-Match spelling it learns per endpoint."""

    def _if_match_value(self, etag: str) -> str:
        style, _ = self._if_match_style()
        bare = bare_etag(etag)
        return bare if style == "bare" else f'"{bare}"'

    def _if_match_style(self) -> tuple[str, bool]:
        """("quoted" | "bare", known): learnt per endpoint, from a probe or from experience."""
        with _STYLE_LOCK:
            style = IF_MATCH_STYLE.get(self.endpoint)
        if style is not None:
            return style, True
        probe = cached_probe(self.endpoint)
        if probe is not None and probe.if_match_works:
            return ("quoted" if probe.if_match_quoted else "bare"), True
        return "quoted", False

    def _learn_if_match_style(self, style: str) -> None:
        with _STYLE_LOCK:
            IF_MATCH_STYLE.setdefault(self.endpoint, style)

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
            IF_MATCH_STYLE[self.endpoint] = "bare"
        return True

