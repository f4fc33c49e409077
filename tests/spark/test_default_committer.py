"""The Spark writer's default committer: ``fenced`` where racing If-None-Match writers get one
winner, ``magic`` otherwise (said once in the log, with the measured reason) — decided where the
job is set up, before any task, and recorded for ``_SUCCESS``."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from moto import mock_aws

from zerorename.spark import core
from zerorename.spark.core import JobDriver, default_committer, spec_from_options
from zerorename.store import StoreCapabilities
from zerorename.stores import LocalStore, S3Store
from zerorename.stores.fencing import CHOICE_OPTION, clear_fencing_cache


@pytest.fixture
def aws_bucket() -> Iterator[str]:
    clear_fencing_cache()
    with mock_aws():
        boto3.client("s3", region_name="us-east-1").create_bucket(Bucket="bucket")
        yield "s3://bucket/events"
    clear_fencing_cache()


def test_the_default_is_auto_and_auto_is_not_a_committer_the_tasks_see(aws_bucket: str) -> None:
    spec = spec_from_options({"path": aws_bucket})
    assert spec.committer == "auto"
    driver = JobDriver(spec)
    decided = driver.setup()
    # moto's racing writers got one winner per round: the probe passes, fenced writes
    assert decided.committer == "fenced" == driver.committer.name
    assert "auto chose fenced" in decided.committer_options[CHOICE_OPTION]
    assert JobDriver(decided).spec.committer == "fenced"  # commit/abort workers rebuild it
    assert JobDriver(decided).spec.committer_options == decided.committer_options


def test_an_explicit_committer_is_kept_and_said_to_be_the_users(aws_bucket: str) -> None:
    spec = JobDriver(spec_from_options({"path": aws_bucket, "committer": "magic"})).spec
    assert spec.committer == "magic"
    assert spec.committer_options[CHOICE_OPTION] == "magic, named by the user"


def test_a_store_without_conditional_put_gets_magic_said_once(
        aws_bucket: str, caplog: pytest.LogCaptureFixture) -> None:
    core._FALLBACK_LOGGED.clear()
    store = S3Store(boto3.client("s3", region_name="us-east-1"), name="old-endpoint",
                    capabilities=StoreCapabilities(conditional_put=False))
    with caplog.at_level(logging.WARNING, logger="zerorename.spark"):
        assert default_committer(store, aws_bucket) == "magic"
        assert default_committer(store, aws_bucket) == "magic"
    warned = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING
              and "auto chose magic" in r.getMessage()]
    assert len(warned) == 1 and "old-endpoint" in warned[0] and "conditional PUT" in warned[0]


def test_hadoops_switch_turns_auto_to_magic(aws_bucket: str) -> None:
    spec = spec_from_options({"path": aws_bucket, "fs.s3a.create.conditional.enabled": "false"})
    decided = JobDriver(spec).spec
    assert decided.committer == "magic"
    assert "fs.s3a.create.conditional.enabled=false" in decided.committer_options[CHOICE_OPTION]


def test_a_local_destination_gets_fenced(tmp_path: object) -> None:
    assert default_committer(LocalStore(), f"file://{tmp_path}/out") == "fenced"


@pytest.mark.spark
@pytest.mark.slow
def test_the_driver_decides_auto_and_success_says_why(
        spark: Any, s3: Any, bucket: str, caplog: pytest.LogCaptureFixture) -> None:
    """Under ``zerorename.spark.write`` the store check runs in the driver, so its answer is
    in the driver's log, and the job's ``_SUCCESS`` says why its committer was chosen."""
    from zerorename.spark import write

    from .helpers import events

    dest = f"s3://{bucket}/auto"
    with caplog.at_level(logging.INFO, logger="zerorename"):
        summary = write(events(spark, rows=200, partitions=2), dest, endpoint_url=s3.endpoint)
    # the tests' moto makes conditional writes atomic (embedded_s3), so racing writers get one
    # winner in every round and auto picks fenced; the driver says so, and why
    said = [r.getMessage() for r in caplog.records if "auto chose" in r.getMessage()]
    assert said and f"auto chose {summary.committer}" in said[0] and "16 writers" in said[0]
    assert summary.committer == "fenced"
    assert summary.diagnostics["committer.choice"] in said[0]
