"""The throw-away Ceph RGW's HTTPS endpoint (``scripts/rgw-start.sh``; fixture ``rgw_tls``).

Why it exists: Hadoop's S3A cannot write an empty object to this RGW over plain http (see
``tests/rgw_plugin.py``).  What is checked here without a JVM: boto3 reaches the endpoint
through the certificate the script made (an empty object included, the request S3A's http
route fails on), a client that does not trust that certificate is refused (so the endpoint
really is TLS and really is checked), and the JKS trust store a JVM is handed holds that very
certificate.  S3A itself over this endpoint: ``tests/spark/test_s3a_rgw.py``.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import ssl
import subprocess
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from tests.rgw_plugin import RGWTLS, RGWServer, empty_and_delete_bucket

pytestmark = pytest.mark.rgw


def tls_client(server: RGWServer, tls: RGWTLS, ca_bundle: str | None) -> Any:
    """A client made as zerorename makes them, trusting ``ca_bundle`` (None: the default
    trust store, which does not hold the self-signed certificate)."""
    from zerorename.stores import make_s3_client

    saved = os.environ.pop("AWS_CA_BUNDLE", None)
    try:
        if ca_bundle is not None:
            os.environ["AWS_CA_BUNDLE"] = ca_bundle  # botocore reads it when the client is made
        return make_s3_client(tls.endpoint, server.region, access_key=server.access_key,
                              secret_key=server.secret_key)
    finally:
        os.environ.pop("AWS_CA_BUNDLE", None)
        if saved is not None:
            os.environ["AWS_CA_BUNDLE"] = saved


@pytest.fixture
def tls_bucket(rgw_server: RGWServer, rgw_tls: RGWTLS) -> Iterator[tuple[Any, str]]:
    client = tls_client(rgw_server, rgw_tls, rgw_tls.ca_bundle)
    bucket = f"zr-tls-{uuid.uuid4().hex[:10]}"
    client.create_bucket(Bucket=bucket)
    yield client, bucket
    empty_and_delete_bucket(client, bucket)


def test_https_endpoint_takes_empty_and_small_objects(tls_bucket: tuple[Any, str]) -> None:
    client, bucket = tls_bucket
    assert client.meta.endpoint_url.startswith("https://127.0.0.1:")
    client.put_object(Bucket=bucket, Key="dir/", Body=b"")
    client.put_object(Bucket=bucket, Key="dir/part-0", Body=b"abc")
    sizes = {o["Key"]: o["Size"] for o in client.list_objects_v2(Bucket=bucket)["Contents"]}
    assert sizes == {"dir/": 0, "dir/part-0": 3}


def test_a_client_that_does_not_trust_the_certificate_is_refused(
        rgw_server: RGWServer, rgw_tls: RGWTLS) -> None:
    from botocore.exceptions import SSLError

    client = tls_client(rgw_server, rgw_tls, ca_bundle=None)
    with pytest.raises(SSLError, match="CERTIFICATE_VERIFY_FAILED"):
        client.list_buckets()


def test_certificate_names_the_address_clients_dial(rgw_tls: RGWTLS) -> None:
    # Python's own check of the chain and of the SAN, against the PEM the script exported
    host, port = rgw_tls.endpoint[len("https://"):].rsplit(":", 1)
    context = ssl.create_default_context(cafile=rgw_tls.ca_bundle)
    import socket

    with socket.create_connection((host, int(port)), timeout=10) as raw, \
            context.wrap_socket(raw, server_hostname=host) as tls:
        cert = tls.getpeercert()
    assert ("IP Address", "127.0.0.1") in cert["subjectAltName"]


def test_jks_trust_store_holds_the_served_certificate(rgw_tls: RGWTLS) -> None:
    if rgw_tls.truststore is None:
        pytest.skip("no keytool when the server started: no JKS trust store")
    keytool = shutil.which("keytool")
    assert keytool is not None, "the trust store exists, so keytool did when it was made"
    listing = subprocess.run(
        [keytool, "-list", "-v", "-keystore", rgw_tls.truststore, "-storepass",
         rgw_tls.truststore_password], capture_output=True, text=True, check=True).stdout
    host, port = rgw_tls.endpoint[len("https://"):].rsplit(":", 1)
    served = ssl.get_server_certificate((host, int(port)))
    digest = hashlib.sha256(ssl.PEM_cert_to_DER_cert(served)).hexdigest().upper()
    expected = ":".join(digest[i:i + 2] for i in range(0, len(digest), 2))
    assert f"SHA256: {expected}" in listing
    assert "Entry type: trustedCertEntry" in listing
