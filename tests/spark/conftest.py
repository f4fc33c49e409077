"""Fixtures for the Spark tier: one embedded S3 server and one SparkSession per test package.

Every Spark test here needs real multi-process access to S3: the writer runs in Python workers
(and, for ``local-cluster``, in other JVMs' workers), so the store is a ThreadedMotoServer on
127.0.0.1 (any free port), not an in-process ``mock_aws`` whose state is per process.  Worker
processes inherit the environment of the JVM, which inherits ours when the session starts,
so credentials and ``PYSPARK_PYTHON`` are set here, before any session exists.

Sessions cost ~7 s (more on a busy 2-core box), so one ``local[2,3]`` session (2 cores, 3
attempts per task: Spark only retries tasks in local mode with ``local[N,F]``) serves every
module; the ``local-cluster`` test is moved to the end of the run so the switch happens once.
The JVM ``fenced`` committer's modules (``test_jvm_fenced_*``) each start a session of their
own instead (``jvm_spark``), with S3A's jars and zerorename's.
"""

from __future__ import annotations

import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from zerorename_bridge.embedded_s3 import EmbeddedS3

from .helpers import stop_jvm
from .jvm_fenced_helpers import s3a_conf

#: moto's minimum size for non-final multipart parts during this package (default 5 MiB), so
#: that small test files still span several parts.  Applied by EmbeddedS3 to the in-process
#: moto module (whatever the import order) and restored when the package's tests end.
PART_MIN_SIZE = 64 * 1024

LOCAL_MASTER = "local[2,3]"
CLUSTER_MASTER = "local-cluster[2,1,1024]"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Run ``local_cluster`` tests last *within this package* (so the session switches master
    once and the package's fixtures are set up once); other tests keep their places."""
    here = Path(__file__).parent
    slots = [i for i, item in enumerate(items) if here in Path(str(item.path)).parents]
    ours = sorted((items[i] for i in slots),
                  key=lambda item: item.get_closest_marker("local_cluster") is not None)
    for slot, item in zip(slots, ours, strict=True):
        items[slot] = item


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "local_cluster: runs on local-cluster (separate JVMs)")


@pytest.fixture(scope="package", autouse=True)
def _spark_environment() -> Iterator[None]:
    """Environment the JVM and its Python workers inherit; restored after this package.

    Fake credentials, so no test can reach a real account (every request goes to moto).
    """
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PYSPARK_PYTHON", sys.executable)
        patch.setenv("PYSPARK_DRIVER_PYTHON", sys.executable)
        patch.setenv("SPARK_LOCAL_IP", "127.0.0.1")
        for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
            patch.setenv(name, "testing")
        patch.setenv("AWS_DEFAULT_REGION", "us-east-1")
        patch.delenv("AWS_PROFILE", raising=False)
        patch.delenv("AWS_SESSION_TOKEN", raising=False)
        yield


@pytest.fixture(scope="package")
def s3(_spark_environment: None) -> Iterator[EmbeddedS3]:
    """The package's embedded S3 server (counts requests by operation)."""
    server = EmbeddedS3(part_min_size=PART_MIN_SIZE).start()
    yield server
    server.stop()


@pytest.fixture
def bucket(s3: EmbeddedS3) -> str:
    """A fresh bucket per test: tests never see each other's objects or uploads."""
    return s3.create_bucket(f"zr-spark-{uuid.uuid4().hex[:12]}")


class _Sessions:
    """Hands out the session for a master, replacing the running one if it differs."""

    def __init__(self) -> None:
        self.current = None

    def get(self, master: str):  # type: ignore[no-untyped-def]
        from zerorename.spark.session import local_session

        if self.current is None or self.current.sparkContext.master != master:
            # no background warm-up: a test's job must be the only one in its session
            self.current = local_session(master, app_name="zerorename-tests", warm=False)
        return self.current

    def stop(self) -> None:
        if self.current is not None:
            self.current.stop()
            self.current = None


@pytest.fixture(scope="package")
def _sessions(_spark_environment: None) -> Iterator[_Sessions]:
    sessions = _Sessions()
    yield sessions
    sessions.stop()


@pytest.fixture
def spark(_sessions: _Sessions, s3: EmbeddedS3):  # type: ignore[no-untyped-def]
    """A ``local[2,3]`` SparkSession (created once, reused)."""
    return _sessions.get(LOCAL_MASTER)


@pytest.fixture
def spark_cluster(_sessions: _Sessions, s3: EmbeddedS3):  # type: ignore[no-untyped-def]
    """A ``local-cluster[2,1,1024]`` session: two executor JVMs with one core each."""
    return _sessions.get(CLUSTER_MASTER)


@pytest.fixture(scope="module")
def jvm_spark(s3: EmbeddedS3, _sessions: Any) -> Iterator[Any]:
    """A ``local[2]`` session bound to the JVM fenced committer (S3A's jars, zerorename's jar,
    the factory bound to ``s3a``): one per module, which replaces the package's session while
    the module runs and stops when it ends."""
    from pyspark.sql import SparkSession

    _sessions.stop()
    stop_jvm()  # a JVM started by an earlier test has neither S3A's jars nor zerorename's
    builder = SparkSession.builder.master("local[2]").appName("zerorename-jvm-fenced")
    for key, value in s3a_conf(s3.endpoint).items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("WARN")
    yield spark
    stop_jvm()
