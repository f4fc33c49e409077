"""Store fixtures for the conformance suite: one ``store_env`` per backend.

Backends: ``moto`` (in-process ``mock_aws``), ``moto-server`` (ThreadedMotoServer on
127.0.0.1, port 0, once per session), ``local`` (LocalStore in ``tmp_path``) and ``rgw``
(Ceph RGW from :mod:`rgw_plugin`, marked ``rgw``, skipped when it cannot start).

Each test gets an empty directory URL (``env.base``) in a fresh bucket (or temp dir), and the
set of known server quirks (``env.quirks``) so that a test asserts the server's real answer
instead of pretending every S3 is AWS.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

try:  # tests/ on sys.path (rootdir layout) or tests as a package
    from rgw_plugin import RGWServer, empty_and_delete_bucket, rgw_server
except ModuleNotFoundError:  # pragma: no cover
    from tests.rgw_plugin import (  # type: ignore[no-redef]
        RGWServer,
        empty_and_delete_bucket,
        rgw_server,
    )

from zerorename.store import Store
from zerorename.stores import LocalStore, S3Store, make_s3_client
from zerorename.urls import join

__all__ = [
    "BACKENDS",
    "MOTO_QUIRKS",
    "RGW_QUIRKS",
    "S3_BACKENDS",
    "StoreEnv",
    "aws_credentials",
    "moto_server",
    "rgw_server",
    "store_env",
]

#: What moto 5.2 does differently from AWS (docs/user/stores.md, "Known server quirks").
MOTO_QUIRKS = frozenset({
    "complete_ignores_if_match",      # CompleteMultipartUpload If-Match not checked
    "list_uploads_unpaginated",       # MaxUploads / markers ignored: one page
    "initiated_fixed_2010",           # upload Initiated is always 2010-11-10T20:48:33Z
    "key_marker_inclusive",           # (markers ignored altogether)
    "bug_raises_keyerror",            # in-process: KeyError for upload_part to an aborted id
})
#: What Ceph RGW 16.2 (Pacific) does differently from AWS (docs/user/stores.md, "Known server
#: quirks").
RGW_QUIRKS = frozenset({
    "complete_ignores_if_none_match",  # overwrites; S3Store emulates with HEAD (not atomic)
    "complete_empty_etag",            # <ETag></ETag>; S3Store reads it back with HEAD
    "if_match_quoted_refused",        # wants the bare hex; S3Store learns and resends
    "key_marker_inclusive",           # KeyMarker without UploadIdMarker includes the key
    "complete_unknown_upload_500",    # 500 InternalError instead of 404 NoSuchUpload
})

S3_BACKENDS = ["moto", "moto-server", pytest.param("rgw", marks=pytest.mark.rgw)]
BACKENDS = ["moto", "moto-server", "local", pytest.param("rgw", marks=pytest.mark.rgw)]


@dataclass
class StoreEnv:
    """One backend, ready for a test: the store, an empty base URL, and what is known of it."""

    backend: str
    store: Store
    base: str
    client: Any = None
    bucket: str | None = None
    quirks: frozenset[str] = field(default_factory=frozenset)

    def url(self, relative: str) -> str:
        return join(self.base, relative)

    @property
    def is_s3(self) -> bool:
        return self.backend != "local"


@pytest.fixture
def aws_credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fake credentials so no test can ever reach a real AWS account."""
    for name, value in {
        "AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_SESSION_TOKEN": "testing", "AWS_DEFAULT_REGION": "us-east-1",
    }.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("AWS_PROFILE", raising=False)


@pytest.fixture(scope="session")
def moto_server() -> Iterator[str]:
    """A ThreadedMotoServer on 127.0.0.1 (random port) for the whole session; its URL."""
    from moto.server import ThreadedMotoServer

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    yield f"http://{host}:{port}"
    server.stop()


def _fresh_bucket() -> str:
    return f"zr-{uuid.uuid4().hex[:12]}"


@pytest.fixture(params=BACKENDS)
def store_env(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[StoreEnv]:
    backend: str = request.param
    if backend == "local":
        data = tmp_path / "data"
        data.mkdir()
        store = LocalStore(root=tmp_path / "uploads-root")
        yield StoreEnv("local", store, f"file://{data}/t")
        return
    request.getfixturevalue("aws_credentials")
    if backend == "moto":
        from moto import mock_aws

        with mock_aws():
            client = make_s3_client(region="us-east-1")
            bucket = _fresh_bucket()
            client.create_bucket(Bucket=bucket)
            yield StoreEnv("moto", S3Store(client, name="moto"), f"s3://{bucket}/t", client,
                           bucket, MOTO_QUIRKS)
        return
    if backend == "moto-server":
        endpoint = request.getfixturevalue("moto_server")
        client = make_s3_client(endpoint, "us-east-1")
        bucket = _fresh_bucket()
        client.create_bucket(Bucket=bucket)
        yield StoreEnv("moto-server", S3Store(client, name="moto-server"), f"s3://{bucket}/t",
                       client, bucket, MOTO_QUIRKS - {"bug_raises_keyerror"})
        empty_and_delete_bucket(client, bucket)
        return
    assert backend == "rgw", backend
    server: RGWServer = request.getfixturevalue("rgw_server")
    client = make_s3_client(server.endpoint, server.region, access_key=server.access_key,
                            secret_key=server.secret_key)
    bucket = _fresh_bucket()
    client.create_bucket(Bucket=bucket)
    yield StoreEnv("rgw", S3Store(client, name="rgw"), f"s3://{bucket}/t", client, bucket,
                   RGW_QUIRKS)
    empty_and_delete_bucket(client, bucket)

