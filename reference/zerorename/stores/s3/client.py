"""Making and taming boto3 S3 clients: one HTTP request per API call, a connection pool sized
for the committers' thread pools, checksums only where the API requires them, and a shared
botocore data loader so that a client costs milliseconds.

Apart from the store because S3Store works on *any* client it is handed
(:func:`disable_botocore_retries` is what makes that safe) while :func:`make_s3_client` is only
the recommended way to build one.
"""

from __future__ import annotations

import os
import threading
from typing import TYPE_CHECKING, Any, Literal

import boto3
import botocore.session
from botocore.config import Config
from botocore.loaders import Loader, create_loader

if TYPE_CHECKING:
    from mypy_boto3_s3 import S3Client

__all__ = ["disable_botocore_retries", "make_s3_client"]


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
