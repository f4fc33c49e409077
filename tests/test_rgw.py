"""Ceph RGW tier: behaviour only a real server shows (moto ignores these parameters).

All tests here are marked ``rgw`` and skip when RGW cannot start (see rgw_plugin.py).
"""

from __future__ import annotations

import time
from typing import Any

import pytest

try:
    from rgw_plugin import RGWServer, rgw_bucket, rgw_client, rgw_server
except ModuleNotFoundError:  # pragma: no cover - tests/ imported as a package
    from tests.rgw_plugin import (  # type: ignore[no-redef]
        RGWServer,
        rgw_bucket,
        rgw_client,
        rgw_server,
    )

from zerorename.errors import PreconditionFailedError
from zerorename.stores import S3Store

__fixtures__ = (rgw_bucket, rgw_client, rgw_server)

pytestmark = pytest.mark.rgw


def test_server_is_local_and_fast_to_start(rgw_server: RGWServer) -> None:
    assert rgw_server.endpoint.startswith("http://127.0.0.1:")
    assert rgw_server.start_seconds < 300


def test_list_uploads_pages_for_real(rgw_client: Any, rgw_bucket: str) -> None:
    """MaxUploads=2 over 5 uploads (two sharing a key): several pages, each upload once."""
    keys = ["out/a", "out/a", "out/b", "out/c", "out/d"]
    created = [rgw_client.create_multipart_upload(Bucket=rgw_bucket, Key=k)["UploadId"]
               for k in keys]
    rgw_client.create_multipart_upload(Bucket=rgw_bucket, Key="out10/x")  # other directory
    first = rgw_client.list_multipart_uploads(Bucket=rgw_bucket, Prefix="out/", MaxUploads=2)
    assert first["IsTruncated"] and len(first["Uploads"]) == 2
    assert first["NextKeyMarker"] and first["NextUploadIdMarker"]

    store = S3Store(rgw_client, list_uploads_page_size=2)
    got = store.list_multipart_uploads(f"s3://{rgw_bucket}/out/")
    assert sorted(u.upload_id for u in got) == sorted(created)
    assert len(got) == 5
    assert store.request_counts()["list_multipart_uploads"] >= 3  # really paged
    # one page per request of 1 upload: still each upload exactly once
    one = S3Store(rgw_client, list_uploads_page_size=1).list_multipart_uploads(
        f"s3://{rgw_bucket}/out/")
    assert sorted(u.upload_id for u in one) == sorted(created)


def test_upload_initiated_is_real_time(rgw_client: Any, rgw_bucket: str) -> None:
    """RGW reports when an upload started (moto: always 2010), so age-based janitors work."""
    store = S3Store(rgw_client)
    url1, url2 = f"s3://{rgw_bucket}/aged/1", f"s3://{rgw_bucket}/aged/2"
    before = time.time()
    store.create_multipart(url1)
    time.sleep(1.1)
    store.create_multipart(url2)
    after = time.time()
    ups = {u.url: u for u in store.list_multipart_uploads(f"s3://{rgw_bucket}/aged/")}
    t1, t2 = ups[url1].initiated, ups[url2].initiated
    assert t1 is not None and t2 is not None
    assert time.gmtime(t1).tm_year != 2010
    assert before - 5 <= t1 <= t2 <= after + 5
    assert t2 - t1 >= 0.9


def test_quirks_are_handled_by_s3store(rgw_client: Any, rgw_bucket: str) -> None:
    """The raw quirks exist, and S3Store's answers are AWS-like anyway."""
    key = "q/obj"
    etag = rgw_client.put_object(Bucket=rgw_bucket, Key=key, Body=b"v1")["ETag"]
    with pytest.raises(rgw_client.exceptions.ClientError):  # quoted current ETag: 412 (quirk)
        rgw_client.put_object(Bucket=rgw_bucket, Key=key, Body=b"v2", IfMatch=etag)
    store = S3Store(rgw_client)
    url = f"s3://{rgw_bucket}/{key}"
    assert store.put(url, b"v2", if_match=etag)  # S3Store resends it bare
    uid = store.create_multipart(url)
    part = store.upload_part(url, uid, 1, b"mp")
    with pytest.raises(PreconditionFailedError):  # RGW would overwrite; HEAD check refuses
        store.complete_multipart(url, uid, [(1, part)], if_none_match=True)
    assert store.get(url) == b"v2"
    etag_mp = store.complete_multipart(url, uid, [(1, part)])  # RGW's response ETag is empty
    assert etag_mp.endswith("-1") and store.head(url).etag == etag_mp  # type: ignore[union-attr]
