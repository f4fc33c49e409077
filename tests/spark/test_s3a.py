"""Spark's own writers to ``s3a://`` through Hadoop's S3A committers, beside zerorename.

One session for the module, made by :func:`zerorename.spark.s3a.configure` with the S3A jars
from the build's cache.  A JVM only loads the jars it started with, so the module starts its
own JVM (stopping the package's session) and stops it when done: the package's other tests
get a fresh JVM without S3A, as a user's session would be.

The session serves all three committers: the commit protocol is the session's, the S3A
committer is read per job from the job's Hadoop configuration — the session's
(:func:`use_committer`) or the write's options (:func:`committer_options`).

Every store is reached through :class:`S3ATarget` (the ``s3a_target`` fixture, one parameter
per store), so another store (Ceph RGW over TLS) is one more parameter.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest

import zerorename as zr
from zerorename.cli import main as zerorename_cli
from zerorename.spark.s3a import (
    S3AEndpoint,
    committer_options,
    configure,
    require_s3a,
    use_committer,
)
from zerorename.spark.verify import visible_files
from zerorename_bridge.embedded_s3 import EmbeddedS3

from .helpers import stop_jvm

pytestmark = [pytest.mark.spark]

MASTER = "local[2]"


@dataclass(frozen=True)
class S3ATarget:
    """A store the module writes to: S3A's endpoint, and what zerorename's own reader and
    writer need to reach the same buckets."""

    name: str
    endpoint: S3AEndpoint
    new_bucket: Callable[[], str]
    #: writer/reader options for zerorename's data source on this store
    zr_options: dict[str, str]

    def store(self) -> zr.S3Store:
        return zr.S3Store(zr.make_s3_client(self.endpoint.url, self.endpoint.region,
                                            access_key=self.endpoint.access_key,
                                            secret_key=self.endpoint.secret_key))

    def cli_args(self) -> list[str]:
        return ["--endpoint-url", self.endpoint.url, "--region", self.endpoint.region]


def moto_target(s3: EmbeddedS3) -> S3ATarget:
    return S3ATarget(
        name="moto", endpoint=S3AEndpoint(s3.endpoint, access_key="testing",
                                          secret_key="testing"),
        new_bucket=lambda: s3.create_bucket(f"zr-s3a-{uuid.uuid4().hex[:12]}"),
        zr_options={"endpoint_url": s3.endpoint})


@pytest.fixture(scope="module", params=["moto"])
def s3a_target(request: pytest.FixtureRequest, s3: EmbeddedS3) -> S3ATarget:
    """The store under test (add a parameter, and a branch here, for another store)."""
    assert request.param == "moto"
    return moto_target(s3)


@pytest.fixture(scope="module")
def s3a_spark(s3a_target: S3ATarget, _sessions: Any) -> Iterator[Any]:
    """The module's session: S3A's magic committer by default, pointed at the target."""
    from pyspark.sql import SparkSession

    from zerorename.spark import register
    from zerorename.spark.session import DEFAULT_CONF, prepare_environment

    _sessions.stop()
    stop_jvm()
    prepare_environment()
    builder = SparkSession.builder.master(MASTER).appName("zerorename-s3a-tests")
    for key, value in DEFAULT_CONF.items():
        builder = builder.config(key, value)
    spark = configure(builder, s3a_target.endpoint, "magic").getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    require_s3a(spark)
    register(spark)
    yield spark
    stop_jvm()


def frame(spark: Any, rows: int = 300) -> Any:
    return spark.range(0, rows, 1, 3).selectExpr(
        "id", "cast(id % 3 as int) as p", "concat('row-', id) as s", "id * 0.5 as x")


def rows(df: Any) -> list[tuple[Any, ...]]:
    return sorted(tuple(r[c] for c in ("id", "p", "s", "x"))
                  for r in df.select("id", "p", "s", "x").collect())


def data_files(target: S3ATarget, dest: str) -> dict[str, int]:
    """The files a reader sees under ``dest`` (S3A's directory markers are not files)."""
    return {rel: size for rel, size in visible_files(target.store(), dest).items()
            if rel and not rel.endswith("/")}


def check_s3a_success(target: S3ATarget, dest: str, committer: str,
                      capsys: pytest.CaptureFixture[str]) -> None:
    """``_SUCCESS`` is S3A's, names ``committer`` and exactly the files a reader sees, and
    ``zerorename success`` shows it so."""
    files = data_files(target, dest)
    success = zr.read_success(target.store(), dest)
    assert success.committer == committer and success.success
    assert not success.written_by_zerorename
    bucket_path = re.sub(r"^s3a://[^/]+", "", dest)
    assert sorted(success.filenames) == sorted(f"{bucket_path}/{rel}" for rel in files)
    assert success.files_committed == len(files) > 0
    capsys.readouterr()
    assert zerorename_cli(["success", dest, *target.cli_args()]) == 0
    shown = capsys.readouterr().out
    assert f"committer:   {committer} (Hadoop S3A committer)" in shown
    assert f"files:       {len(files)} committed" in shown
    assert "metrics (" in shown


def test_s3a_committers_write_and_read_back(s3a_spark: Any, s3a_target: S3ATarget,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    """Each S3A committer through Spark's writers: magic (the session's default) Parquet,
    directory (a write's options) ORC, partitioned (the session's Hadoop configuration,
    conflict mode ``replace``) Parquet with ``partitionBy``, directory again (switched back the
    same way) JSON; each read back by Spark through S3A and, for Parquet, by zerorename's
    reader."""
    spark = s3a_spark
    root = f"s3a://{s3a_target.new_bucket()}"
    df = frame(spark)
    expected = rows(df)

    def zr_read(dest: str) -> Any:
        return spark.read.format("zerorename").options(**s3a_target.zr_options).load(dest)

    dest = f"{root}/magic"
    df.write.parquet(dest)
    check_s3a_success(s3a_target, dest, "magic", capsys)
    assert rows(spark.read.parquet(dest)) == expected
    assert rows(zr_read(dest)) == expected

    dest = f"{root}/directory-orc"
    df.write.options(**committer_options("directory")).orc(dest)
    check_s3a_success(s3a_target, dest, "directory", capsys)
    assert rows(spark.read.orc(dest)) == expected

    dest = f"{root}/partitioned"
    use_committer(spark, "partitioned", conflict_mode="replace")
    try:
        df.write.partitionBy("p").parquet(dest)
        check_s3a_success(s3a_target, dest, "partitioned", capsys)
        assert {rel.split("/")[0] for rel in data_files(s3a_target, dest)} == {
            "p=0", "p=1", "p=2"}
        assert rows(spark.read.parquet(dest)) == expected
        assert rows(zr_read(dest)) == expected

        dest = f"{root}/directory-json"
        use_committer(spark, "directory")
        df.write.json(dest)
        check_s3a_success(s3a_target, dest, "directory", capsys)
        assert rows(spark.read.schema(df.schema).json(dest)) == expected
    finally:
        use_committer(spark, "magic")


def test_zerorename_output_reads_back_through_s3a(s3a_spark: Any,
                                                  s3a_target: S3ATarget) -> None:
    """zerorename's writer (its Python data source, to an ``s3a://`` URL), read back by
    Spark's own Parquet reader through S3A; its ``_SUCCESS`` is zerorename's, not S3A's."""
    from zerorename.spark import write

    spark = s3a_spark
    dest = f"s3a://{s3a_target.new_bucket()}/zr"
    df = frame(spark)
    summary = write(df, dest, committer="magic", partition_by=("p",),
                    **s3a_target.zr_options)
    assert summary.written_by_zerorename and summary.files_committed > 0
    assert rows(spark.read.parquet(dest)) == rows(df)
