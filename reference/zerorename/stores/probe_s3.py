"""The S3 side of ``zerorename probe``: a store that sends every condition as asked, and the
S3 capability probe's own fields (If-Match spelling, upload-listing markers…) as extras.

The probe must see what the *server* does: an ordinary :class:`S3Store` emulates If-None-Match
on complete with a HEAD where the capability probe found the server ignores it, which would
measure the emulation instead.  :func:`probing_store` declares every condition supported so
that each request carries its header unchanged, and lists uploads one per page so that the
store's paging is exercised.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import fields
from typing import Any

from zerorename.store import StoreCapabilities
from zerorename.stores.capabilities import ProbeResult, probe_capabilities
from zerorename.stores.s3 import S3Store
from zerorename.urls import parse_url

__all__ = ["capability_extras", "probing_store"]

#: Declared, not measured: so that S3Store sends each condition to the server as asked.
_SEND_AS_ASKED = StoreCapabilities(conditional_put=True, conditional_complete=True,
                                   conditional_complete_if_match=True)


def probing_store(client: Any, *, name: str = "s3") -> S3Store:
    """An S3Store over ``client`` that forwards every condition and pages uploads one by one."""
    return S3Store(client, name=name, capabilities=_SEND_AS_ASKED, list_uploads_page_size=1)


def capability_extras(store: S3Store) -> Callable[[str], dict[str, bool]]:
    """Run the S3 capability probe (fresh, not cached) under the probe's area."""

    def measure(area: str) -> dict[str, bool]:
        url = parse_url(area)
        result = probe_capabilities(store.client, url.bucket, url.key, refresh=True,
                                    retry=store._raw_retry())
        return _booleans(result)

    return measure


def _booleans(result: ProbeResult) -> dict[str, bool]:
    return {f.name: getattr(result, f.name) for f in fields(result)
            if isinstance(getattr(result, f.name), bool)}
