"""A new user's first pass through Spark (issue 43), in one session: signed zeros and
``null``/``""`` in partition columns, Hadoop's endpoint settings, empty DataFrames read back,
``writeStream.format("zerorename")`` on a session nothing registered, and writes from a thread
pool.  One test function, so the session and the server are paid for once."""

from __future__ import annotations

import math
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

import zerorename as zr
import zerorename.spark as zrs
from zerorename.spark.parquet import NULL_PARTITION
from zerorename_bridge.embedded_s3 import EmbeddedS3

from .helpers import read_back, visible_files

pytestmark = [pytest.mark.spark]


def _registered(session: Any) -> bool:
    return bool(session._jsparkSession.sessionState().dataSourceManager()
                .dataSourceExists(zrs.NAME))


def test_a_new_users_pass(spark: Any, s3: EmbeddedS3, bucket: str, tmp_path: Path) -> None:
    from pyspark.sql.types import DoubleType, LongType, StringType, StructField, StructType

    endpoint = s3.endpoint
    base = f"s3://{bucket}"

    # -- 2: -0.0 and 0.0 are two partitions, alternating within one task ----------------------
    rows = [(i, -0.0 if i % 2 else 0.0) for i in range(8)]
    df = spark.createDataFrame(rows, "x long, d double").coalesce(1)
    zrs.write(df, f"{base}/zeros", partition_by=["d"], endpoint_url=endpoint, committer="magic")
    assert {f.split("/")[0] for f in visible_files(s3, bucket, "zeros")} == {"d=-0.0", "d=0.0"}
    back = read_back(spark, f"{base}/zeros", endpoint).collect()
    assert sorted((r.x, math.copysign(1.0, r.d)) for r in back) == \
        [(i, -1.0 if i % 2 else 1.0) for i in range(8)]

    # -- 3: null and "" in one task: both in the default partition, read back as null ---------
    rows3 = [(1, ""), (2, None), (3, "a"), (4, "")]
    df3 = spark.createDataFrame(rows3, "x long, s string").coalesce(1)
    (df3.write.format("zerorename").option("endpoint_url", endpoint)
     .option("partition_by", "s").mode("append").save(f"{base}/nulls"))
    assert {f.split("/")[0] for f in visible_files(s3, bucket, "nulls")} == \
        {f"s={NULL_PARTITION}", "s=a"}
    assert sorted((r.x, r.s) for r in read_back(spark, f"{base}/nulls", endpoint).collect()) \
        == [(1, None), (2, None), (3, "a"), (4, None)]

    # -- 4: Hadoop's endpoint settings are honoured, a misspelt option is refused -------------
    small = spark.range(5).toDF("x")
    (small.write.format("zerorename").option("fs.s3a.endpoint", endpoint)
     .mode("append").save(f"{base}/by-option"))  # the fake credentials would fail on AWS
    assert len(visible_files(s3, bucket, "by-option")) >= 1
    spark.conf.set("spark.hadoop.fs.s3a.endpoint", endpoint)
    try:
        small.write.format("zerorename").mode("append").save(f"{base}/by-conf")
        assert zrs.write(small, f"{base}/by-conf").success
        assert spark.read.format("zerorename").load(f"{base}/by-conf").count() == 10
    finally:
        spark.conf.unset("spark.hadoop.fs.s3a.endpoint")
    with pytest.raises(zr.CommitError, match=r"fs\.s3a\.committer\.threads"):
        zrs.write(small, f"{base}/typo", endpoint_url=endpoint,
                  **{"fs.s3a.comitter.threads": "4"})

    # -- 5: an empty DataFrame's output reads back as an empty frame of its columns ----------
    schema = StructType([StructField("x", LongType()), StructField("s", StringType()),
                         StructField("d", DoubleType())])
    empty = spark.createDataFrame([], schema)
    zrs.write(empty, f"{base}/empty", endpoint_url=endpoint)
    read = read_back(spark, f"{base}/empty", endpoint)
    assert read.count() == 0 and read.schema.fieldNames() == ["x", "s", "d"]
    given = (spark.read.format("zerorename").schema(schema).option("endpoint_url", endpoint)
             .load(f"{base}/never-written"))
    assert given.count() == 0 and given.schema == schema
    with pytest.raises(Exception, match="no visible Parquet files") as no_schema:
        spark.read.format("zerorename").option("endpoint_url", endpoint) \
            .load(f"{base}/never-written").count()
    assert "FileNotFoundError" not in str(no_schema.value)
    full = spark.createDataFrame([(1, "a", 1.0)], schema)
    zrs.write(full, f"{base}/emptied", endpoint_url=endpoint)
    (empty.filter("x > 0").write.format("zerorename").option("endpoint_url", endpoint)
     .mode("overwrite").save(f"{base}/emptied"))
    emptied = read_back(spark, f"{base}/emptied", endpoint)
    assert emptied.count() == 0 and emptied.schema.fieldNames() == ["x", "s", "d"]

    # -- 6: writeStream.format("zerorename") on a session nothing has registered with ---------
    fresh = spark.newSession()
    assert not _registered(fresh)
    source = tmp_path / "in"
    source.mkdir()
    spark.range(6).toDF("id").write.mode("overwrite").parquet(str(source / "a"))
    stream = (fresh.readStream.schema("id long").parquet(str(source / "a"))
              .writeStream.format("zerorename"))
    assert _registered(fresh)
    dest = f"file://{tmp_path}/stream-out"
    query = (stream.option("checkpointLocation", str(tmp_path / "cp"))
             .trigger(availableNow=True).start(dest))
    query.awaitTermination()
    assert query.exception() is None
    assert sorted(r.id for r in fresh.read.format("zerorename").load(dest).collect()) == \
        list(range(6))

    # -- 7: writes from a thread pool -------------------------------------------------------
    other = spark.newSession()

    def write_in_thread(n: int) -> tuple[bool, int]:
        from pyspark.sql import SparkSession

        jvm_session = SparkSession._get_j_spark_session_class(other._jvm)
        target = f"{base}/thread-{n}-{uuid.uuid4().hex[:6]}"
        writer = other.range(3).toDF("x").write.format("zerorename")
        active = jvm_session.getActiveSession()
        is_ours = active.isDefined() and active.get().equals(other._jsparkSession)
        writer.option("endpoint_url", endpoint).mode("append").save(target)
        return is_ours, other.read.format("zerorename").option("endpoint_url", endpoint) \
            .load(target).count()

    with ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(write_in_thread, range(2)))
    assert results == [(True, 3), (True, 3)]
