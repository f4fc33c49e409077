"""Store adapters: :class:`S3Store` (boto3: AWS, moto, Ceph RGW…) and :class:`LocalStore`
(``file:///``), plus the capability probe and the copy-based rename emulation for S3.

See ``docs/user/stores.md`` for behaviour, the probe, and the table of known server quirks.
"""

from zerorename.errors import BadURLError
from zerorename.store import Store
from zerorename.stores.capabilities import (
    ProbeResult,
    clear_probe_cache,
    probe_capabilities,
)
from zerorename.stores.common import DeleteManyError, RequestCounter
from zerorename.stores.local import LocalStore
from zerorename.stores.s3 import S3Store, make_s3_client, rename_by_copy, translate_client_error
from zerorename.urls import parse_url

__all__ = [
    "DeleteManyError",
    "LocalStore",
    "ProbeResult",
    "RequestCounter",
    "S3Store",
    "clear_probe_cache",
    "make_s3_client",
    "probe_capabilities",
    "rename_by_copy",
    "store_for_url",
    "translate_client_error",
]


def store_for_url(url: str) -> Store:
    """A new store, with default settings, for the scheme of ``url``: a :class:`LocalStore`
    for ``file:///``, an :class:`S3Store` over :func:`make_s3_client` (boto3's default
    credentials, region and endpoint) for ``s3://`` and ``s3a://``.

    For a side file on another store than the job's — the summary report directory beside an
    S3 destination, say.  Any other scheme is a :class:`BadURLError` naming the URL."""
    scheme = parse_url(url).scheme
    if scheme == "file":
        return LocalStore()
    if scheme in ("s3", "s3a"):
        return S3Store(make_s3_client())
    raise BadURLError(url, f"no store for {scheme}:// URLs here (file:///, s3://, s3a:// are "
                           "served)")
