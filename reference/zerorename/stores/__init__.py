"""Store adapters: :class:`S3Store` (boto3: AWS, moto, Ceph RGW…) and :class:`LocalStore`
(``file:///``), plus the capability probe and the copy-based rename emulation for S3.

See ``docs/stores.md`` for behaviour, the probe, and the table of known server quirks.
"""

from zerorename.stores.capabilities import (
    ProbeResult,
    clear_probe_cache,
    probe_capabilities,
)
from zerorename.stores.local import DeleteManyError, LocalStore, RequestCounter
from zerorename.stores.s3 import S3Store, make_s3_client, rename_by_copy, translate_client_error

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
    "translate_client_error",
]
