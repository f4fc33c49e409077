"""Stand-ins for servers whose conditional writes cannot fence, at the store protocol.

Each wraps a real store (LocalStore, or S3Store on moto) and changes only conditional PUTs and
completes, the way such servers were reported to behave (docs/user/stores.md cites them):

* :class:`CheckThenActStore`: the condition is checked with a HEAD, then the object is written
  unconditionally — two steps, with the gap a server's request handling puts between them
  (``gap`` seconds).  One writer at a time sees a perfect If-None-Match; racing writers can
  all pass the check.
* :class:`IgnoresIfNoneMatchStore`: If-None-Match is accepted and dropped; every PUT writes.

Both implement ``race_probe_key``, so the committers' fencing check measures them as it
measures a remote S3 endpoint.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from zerorename.errors import PreconditionFailedError
from zerorename.store import Store, StoreCapabilities


class _Wrapper:
    """Delegates everything to ``inner``; subclasses override the conditional writes."""

    def __init__(self, inner: Store, name: str) -> None:
        self.inner = inner
        self.name = name

    def __getattr__(self, attr: str) -> Any:
        return getattr(self.inner, attr)

    def capabilities(self) -> StoreCapabilities:
        return self.inner.capabilities()

    def race_probe_key(self) -> str:
        return f"{self.name}:{id(self)}"

    def races_documented(self) -> bool:
        return False  # nobody documents these: race them

    def prober(self) -> Store:
        return self  # type: ignore[return-value]


class CheckThenActStore(_Wrapper):
    """If-None-Match / If-Match checked by HEAD, then an unconditional write."""

    def __init__(self, inner: Store, gap: float = 0.005) -> None:
        super().__init__(inner, "check-then-act")
        self.gap = gap

    def _check(self, url: str, if_none_match: bool, if_match: str | None) -> None:
        current = self.inner.head(url)
        if if_none_match and current is not None:
            raise PreconditionFailedError(url, "exists (checked, then written)")
        if if_match is not None and (current is None or current.etag != if_match.strip('"')):
            raise PreconditionFailedError(url, "changed (checked, then written)")
        time.sleep(self.gap)

    def put(self, url: str, data: bytes, *, if_none_match: bool = False,
            if_match: str | None = None) -> str:
        if if_none_match or if_match is not None:
            self._check(url, if_none_match, if_match)
        return self.inner.put(url, data)

    def complete_multipart(self, url: str, upload_id: str, parts: Sequence[tuple[int, str]], *,
                           if_none_match: bool = False, if_match: str | None = None) -> str:
        if if_none_match or if_match is not None:
            self._check(url, if_none_match, if_match)
        return self.inner.complete_multipart(url, upload_id, parts)


class IgnoresIfNoneMatchStore(_Wrapper):
    """Accepts If-None-Match and writes anyway (If-Match is passed on)."""

    def __init__(self, inner: Store) -> None:
        super().__init__(inner, "ignores-if-none-match")

    def put(self, url: str, data: bytes, *, if_none_match: bool = False,
            if_match: str | None = None) -> str:
        return self.inner.put(url, data, if_match=if_match)

    def complete_multipart(self, url: str, upload_id: str, parts: Sequence[tuple[int, str]], *,
                           if_none_match: bool = False, if_match: str | None = None) -> str:
        return self.inner.complete_multipart(url, upload_id, parts, if_match=if_match)
