"""The Spark writer's default committer: ``fenced`` where the store passes the conditional-PUT
probe, ``magic`` otherwise (said once in the log) — decided by the driver, before any task."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import boto3
import pytest
from moto import mock_aws

from zerorename.spark import core
from zerorename.spark.core import JobDriver, default_committer, spec_from_options
from zerorename.store import StoreCapabilities
from zerorename.stores import LocalStore, S3Store


@pytest.fixture
def bucket() -> Iterator[str]:
    with mock_aws():
        boto3.client("s3", region_name="us-east-1").create_bucket(Bucket="bucket")
        yield "s3://bucket/events"


def test_the_default_is_auto_and_auto_is_not_a_committer_the_tasks_see(bucket: str) -> None:
    spec = spec_from_options({"path": bucket})
    assert spec.committer == "auto"
    driver = JobDriver(spec)
    decided = driver.setup()
    # moto refuses a second If-None-Match: * PUT: the probe passes, fenced writes
    assert decided.committer == "fenced" == driver.committer.name
    assert JobDriver(decided).spec.committer == "fenced"  # commit/abort workers rebuild it


def test_an_explicit_committer_is_kept(bucket: str) -> None:
    assert JobDriver(spec_from_options({"path": bucket, "committer": "magic"})).spec.committer \
        == "magic"


def test_a_store_without_conditional_put_gets_magic_said_once(
        bucket: str, caplog: pytest.LogCaptureFixture) -> None:
    core._FALLBACK_LOGGED.clear()
    store = S3Store(boto3.client("s3", region_name="us-east-1"), name="old-endpoint",
                    capabilities=StoreCapabilities(conditional_put=False))
    with caplog.at_level(logging.WARNING, logger="zerorename.spark"):
        assert default_committer(store, bucket) == "magic"
        assert default_committer(store, bucket) == "magic"
    said = [r.getMessage() for r in caplog.records if "If-None-Match" in r.getMessage()]
    assert len(said) == 1 and "old-endpoint" in said[0] and "magic" in said[0]


def test_a_local_destination_gets_fenced(tmp_path: object) -> None:
    assert default_committer(LocalStore(), f"file://{tmp_path}/out") == "fenced"
