"""Spark writes to a real S3: the package's SparkSession, Ceph RGW instead of moto server.

One test, both S3 committers (magic and directory), because each costs a Spark job on a
session the other Spark tests already paid for (~3 s of jobs here, the session is shared).
RGW differs from moto exactly where the committers' job commit leans on the store: it returns
an empty ETag from CompleteMultipartUpload, ignores If-None-Match on it, and pages uploads
with an inclusive KeyMarker — so a write that reads back equal here was committed by a real
S3's multipart machinery, from several Python worker processes.

Spark's workers inherit the credentials the package set before the session started
(``testing``/``testing``, see conftest.py), so the RGW user is given that key pair too
(:func:`add_s3_key`); an external RGW that we cannot administer skips with the reason.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

import zerorename as zr
from zerorename.spark import write
from zerorename.spark.verify import PROBE_PREFIX, visible_files

from .helpers import events, read_back, rows_of, snapshot

try:  # tests/ on sys.path (rootdir layout) or tests as a package
    from rgw_plugin import RGWServer, add_s3_key, empty_and_delete_bucket
except ModuleNotFoundError:  # pragma: no cover
    from tests.rgw_plugin import (  # type: ignore[no-redef]
        RGWServer,
        add_s3_key,
        empty_and_delete_bucket,
    )

pytestmark = [pytest.mark.spark, pytest.mark.rgw, pytest.mark.slow]

PARTITION_BY = ("year", "month")
#: fs.s3a.multipart.size for these writes: the files are a few KiB, so most span several parts
PART_SIZE = 1024


@pytest.fixture
def rgw_spark_bucket(rgw_server: RGWServer, _spark_environment: None) -> Iterator[str]:
    """A fresh RGW bucket that the Spark workers' credentials (this package's environment)
    can write; emptied and removed afterwards."""
    access, secret = os.environ["AWS_ACCESS_KEY_ID"], os.environ["AWS_SECRET_ACCESS_KEY"]
    if not add_s3_key(rgw_server, access, secret):
        pytest.skip("external RGW: cannot give its user the Spark workers' key pair")
    client = zr.make_s3_client(rgw_server.endpoint, rgw_server.region, access_key=access,
                               secret_key=secret)
    bucket = f"zr-spark-rgw-{uuid.uuid4().hex[:8]}"
    client.create_bucket(Bucket=bucket)
    yield bucket
    empty_and_delete_bucket(client, bucket)


def test_magic_and_directory_write_to_rgw_and_read_back(rgw_server: RGWServer,
                                                        rgw_spark_bucket: str,
                                                        spark: Any) -> None:
    """Partitioned writes through the Data Source with 1 KiB parts (so the files are real
    multi-part uploads): exactly the expected files (one per task and partition directory,
    named with the job UUID), ``_SUCCESS`` naming every file, the input read back through the
    zerorename reader, and nothing else in the bucket — no hidden object, no pending upload."""
    store = zr.S3Store(zr.make_s3_client(rgw_server.endpoint, rgw_server.region))
    root = f"s3://{rgw_spark_bucket}"
    df = events(spark, rows=2_000, partitions=4)
    expected = snapshot(df, PARTITION_BY)
    allowed: set[str] = set()
    for committer in ("magic", "directory"):
        dest = f"{root}/{committer}"
        summary = write(df, dest, committer=committer, partition_by=PARTITION_BY,
                        endpoint_url=rgw_server.endpoint, region=rgw_server.region,
                        checksums="when_required", part_size=PART_SIZE, part_min_size=1)
        files = visible_files(store, dest)
        assert set(files) == expected.files(summary.job_id), committer
        assert sorted(summary.filenames) == sorted(f"{dest}/{f}" for f in files), committer
        assert any(size > PART_SIZE for size in files.values()), "no file spanned two parts"
        assert rows_of(read_back(spark, dest, rgw_server.endpoint)) == expected.rows, committer
        allowed |= {f"{dest}/{f}" for f in files} | {f"{dest}/_SUCCESS"}
    in_bucket = {o.url for o in zr.list_all(store, f"{root}/")
                 if not o.url.startswith(f"{root}/{PROBE_PREFIX}")}
    assert in_bucket == allowed, sorted(in_bucket ^ allowed)
    assert store.list_multipart_uploads(f"{root}/") == []
