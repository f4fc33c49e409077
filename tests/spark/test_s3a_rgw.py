"""Spark's own writers through Hadoop's S3A committers on Ceph RGW, over HTTPS.

The same writes and reads as ``tests/spark/test_s3a.py`` (moto): its two tests are imported
here and run against the store this module's ``s3a_target`` fixture gives — the throw-away RGW
of ``tests/rgw_plugin.py``, reached at its TLS endpoint.  Why HTTPS: over plain http S3A cannot
write an empty object to RGW 16.2 (``docs/user/stores.md``, "Hadoop's S3A on Ceph RGW").

What the store needs, set here as a user would (``docs/user/stores.md``): the JVM trusts the
server's self-signed certificate (the JKS ``rgw-start.sh`` made, through
:class:`~zerorename.spark.s3a.S3AEndpoint`'s ``truststore``); boto3 — zerorename's reader and
writer in Spark's Python workers, and this module's checks — trusts it through
``AWS_CA_BUNDLE``, set before the session's JVM starts so the workers inherit it; S3A's own
overwrite check is off (``conditional_writes=False``), since RGW 16.2 ignores the condition on
a multipart complete.  Spark's workers sign in with the package's fake key pair, which the RGW
user is given too (:func:`~tests.rgw_plugin.add_s3_key`).
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.rgw_plugin import RGWTLS, RGWServer, add_s3_key, empty_and_delete_bucket
from tests.spark.test_s3a import (  # noqa: F401  (the fixture and the tests run here too)
    S3ATarget,
    s3a_spark,
    test_s3a_committers_write_and_read_back,
    test_zerorename_output_reads_back_through_s3a,
)
from zerorename.spark.s3a import S3AEndpoint

pytestmark = [pytest.mark.spark, pytest.mark.rgw]

#: the key pair of the package's environment (tests/spark/conftest.py): what workers sign with
KEYS = ("testing", "testing")


@pytest.fixture(scope="module")
def s3a_target(rgw_server: RGWServer, rgw_tls: RGWTLS) -> Iterator[S3ATarget]:
    """Ceph RGW over HTTPS, trusted by the JVM (JKS) and by boto3 (``AWS_CA_BUNDLE``)."""
    from zerorename.stores import make_s3_client

    if rgw_tls.truststore is None:
        pytest.skip("the RGW's certificate has no JKS trust store (no keytool at start-up)")
    if not add_s3_key(rgw_server, *KEYS):
        pytest.skip("an external RGW: cannot give its user the Spark workers' key pair")
    buckets: list[str] = []
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("AWS_CA_BUNDLE", rgw_tls.ca_bundle)  # before the JVM (and its workers)

        def new_bucket() -> str:
            bucket = f"zr-s3a-{uuid.uuid4().hex[:12]}"
            make_s3_client(rgw_tls.endpoint, rgw_server.region, access_key=KEYS[0],
                           secret_key=KEYS[1]).create_bucket(Bucket=bucket)
            buckets.append(bucket)
            return bucket

        yield S3ATarget(
            name="rgw-tls",
            endpoint=S3AEndpoint(rgw_tls.endpoint, *KEYS, region=rgw_server.region,
                                 truststore=Path(rgw_tls.truststore),
                                 truststore_password=rgw_tls.truststore_password,
                                 conditional_writes=False),
            new_bucket=new_bucket,
            zr_options={"endpoint_url": rgw_tls.endpoint})
        client = make_s3_client(rgw_tls.endpoint, rgw_server.region, access_key=KEYS[0],
                                secret_key=KEYS[1])
        for bucket in buckets:  # RGW's memstore keeps every byte in RAM
            empty_and_delete_bucket(client, bucket)


def test_the_target_is_rgw_over_https(s3a_target: S3ATarget, rgw_tls: RGWTLS) -> None:
    """What the imported tests run against: this RGW's TLS endpoint, S3A told so."""
    assert s3a_target.endpoint.url == rgw_tls.endpoint.rstrip("/")
    assert s3a_target.endpoint.tls and not s3a_target.endpoint.conditional_writes
    assert os.environ["AWS_CA_BUNDLE"] == rgw_tls.ca_bundle
