"""Real stores (moto, RGW, anything speaking the store protocol) as harness backends.

The harness needs more of a store than committers do: a snapshot of every object, the list of
pending uploads, a digest, and (for model stores) the visibility events it may settle.  A real
store is strongly consistent, so it has no events to settle, and the rest is computed by
listing.  Each backend owns one bucket and empties it before a run, so runs are independent.
"""

from __future__ import annotations

import contextlib
import hashlib
from typing import Any

from zerorename.store import Store, list_all
from zerorename_model.engine.stores.profiles import PROFILES, Profile


class RealBackend:
    """A real store under the harness.  ``bucket_url`` is the scenario's bucket, e.g.
    ``s3://bucket``; the scenario's destinations must lie in it."""

    def __init__(self, store: Store, bucket_url: str, profile: Profile | None = None) -> None:
        self._store = store
        self.bucket_url = bucket_url.rstrip("/")
        self.profile = profile or PROFILES["s3"]
        self.name = getattr(store, "name", "real")
        self.pending: list[Any] = []
        self.inconsistent_answers = 0
        self._base_counts: dict[str, int] = {}
        self.between_steps = lambda _what: None
        self.empty()

    # -- the store protocol, passed through ------------------------------------------------

    def __getattr__(self, op: str) -> Any:
        return getattr(self._store, op)

    def capabilities(self) -> Any:
        return self._store.capabilities()

    def request_counts(self) -> dict[str, int]:
        now = self._store.request_counts()
        return {k: v - self._base_counts.get(k, 0) for k, v in now.items()
                if v - self._base_counts.get(k, 0)}

    # -- what the harness needs ------------------------------------------------------------

    def empty(self) -> None:
        prefix = self.bucket_url + "/"
        for upload in self._store.list_multipart_uploads(prefix):
            self._store.abort_multipart(upload.url, upload.upload_id)
        urls = [o.url for o in list_all(self._store, prefix)]
        if urls:
            self._store.delete_many(urls)
        self.reset_counts()

    def reset_counts(self) -> None:
        self._base_counts = dict(self._store.request_counts())

    def settle(self, index: int) -> Any:
        raise IndexError("a real store has no pending visibility events")

    def settle_all(self) -> None:
        pass

    def snapshot(self) -> dict[str, bytes]:
        return {o.url: self._store.get(o.url)
                for o in sorted(list_all(self._store, self.bucket_url + "/"),
                                key=lambda o: o.url)}

    def upload_urls(self) -> list[str]:
        return [u.url for u in self._store.list_multipart_uploads(self.bucket_url + "/")]

    def digest(self) -> str:
        h = hashlib.sha256()
        for url, data in self.snapshot().items():
            h.update(f"o\0{url}\0{hashlib.md5(data).hexdigest()}\0".encode())
        for url in sorted(self.upload_urls()):
            h.update(f"u\0{url}\0".encode())
        return h.hexdigest()


_MOTO: dict[str, Any] = {}


def moto_backend(bucket: str = "bucket") -> RealBackend:
    """A backend on an in-process moto S3 (one per process, emptied for every run)."""
    if "store" not in _MOTO:
        import os

        os.environ.setdefault("S3_UPLOAD_PART_MIN_SIZE", "1")
        import boto3
        from moto import mock_aws

        from zerorename.stores import S3Store

        mock = mock_aws()
        mock.start()
        client = boto3.client("s3", region_name="us-east-1")
        client.create_bucket(Bucket=bucket)
        _MOTO["mock"], _MOTO["store"] = mock, S3Store(client)
    return RealBackend(_MOTO["store"], f"s3://{bucket}")


def moto_server_backend(bucket: str = "bucket") -> RealBackend:
    """A backend on a ``ThreadedMotoServer`` (127.0.0.1, a free port): the same requests as a
    multi-process deployment would send, over HTTP.  One server per process."""
    if "server_store" not in _MOTO:
        import os

        os.environ.setdefault("S3_UPLOAD_PART_MIN_SIZE", "1")
        os.environ.setdefault("AWS_ACCESS_KEY_ID", "testing")
        os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "testing")
        from moto.server import ThreadedMotoServer

        from zerorename.stores import S3Store, make_s3_client

        server = ThreadedMotoServer(ip_address="127.0.0.1", port=0)
        server.start()
        host, port = server.get_host_and_port()
        client = make_s3_client(endpoint_url=f"http://{host}:{port}", region="us-east-1")
        client.create_bucket(Bucket=bucket)
        _MOTO["server"], _MOTO["server_store"] = server, S3Store(client)
    return RealBackend(_MOTO["server_store"], f"s3://{bucket}")


def release_moto_backends() -> None:
    """Stop the in-process mock and the server that :func:`moto_backend` and
    :func:`moto_server_backend` started, and forget them (the next call starts afresh).

    Why it matters: moto's ``mock_aws`` is process-wide and nests.  While the mock started
    here is active, a later ``with mock_aws():`` block (another test's) neither resets the
    backends on entry nor removes their data on exit, so buckets and objects of one test
    outlive it and turn up in the next (tests/test_recording.py read a previous test's
    committed ``b.csv`` as its own job's leftover).  Test suites call this when their moto
    runs end."""
    mock = _MOTO.pop("mock", None)
    _MOTO.pop("store", None)
    if mock is not None:
        mock.stop()
    server = _MOTO.pop("server", None)
    _MOTO.pop("server_store", None)
    if server is not None:
        server.stop()


_RGW: dict[tuple[str, str, str], Any] = {}


def rgw_backend(endpoint: str, access_key: str, secret_key: str, *, region: str = "us-east-1",
                bucket: str = "bucket") -> RealBackend:
    """A backend on an S3 server that is *already running* — the test session's Ceph RADOS
    Gateway (``tests/rgw_plugin.py``'s ``rgw_server`` gives the endpoint and keys).  Starting
    or stopping the server is the fixture's job, never this function's: a backend is made for
    every hypothesis example, a server once per session.

    The scenario's URLs name the bucket ``bucket``: it is created on every call when missing
    (one request; a fixture may have removed it since the last call) and emptied.  One client
    and store per (endpoint, keys) and process, so the store's capability probe runs once."""
    key = (endpoint, access_key, secret_key)
    if key not in _RGW:
        from zerorename.stores import S3Store, make_s3_client

        client = make_s3_client(endpoint_url=endpoint, region=region, access_key=access_key,
                                secret_key=secret_key)
        _RGW[key] = S3Store(client, name="rgw")
    store = _RGW[key]
    with contextlib.suppress(store.client.exceptions.BucketAlreadyOwnedByYou):
        store.client.create_bucket(Bucket=bucket)
    return RealBackend(store, f"s3://{bucket}")
