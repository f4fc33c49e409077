"""DataFrame and RDD writes through the Data Source: layout, save modes, read-back."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import zerorename as zr
from zerorename.spark import write
from zerorename.spark.rdd import write_rdd

from .helpers import events, leftovers, read_back, rows_of, snapshot, visible_files

pytestmark = [pytest.mark.spark, pytest.mark.slow]

PARTITION_BY = ("year", "month")


def test_partitioned_write_via_format_reads_back_equal_with_no_copies(
        spark: Any, s3: Any, bucket: str) -> None:
    """The plain ``df.write.format("zerorename")`` route: job UUID in every file name, the
    input read back exactly, and — measured at the server — not one CopyObject."""
    df = events(spark)
    expected = snapshot(df, PARTITION_BY)
    dest = f"s3://{bucket}/events"
    before, copied_before = s3.snapshot()
    (df.write.format("zerorename").mode("append")
     .option("committer", "magic").option("partition_by", "year,month")
     .option("endpoint_url", s3.endpoint).save(dest))
    after, copied_after = s3.snapshot()
    assert after.get("CopyObject", 0) == before.get("CopyObject", 0)
    assert copied_after == copied_before
    assert after.get("CompleteMultipartUpload", 0) > before.get("CompleteMultipartUpload", 0)
    summary = zr.read_success(zr.S3Store(s3.client()), dest)
    files = visible_files(s3, bucket, "events")
    assert files == expected.files(summary.job_id)
    assert all(summary.job_id in f for f in files)
    assert rows_of(read_back(spark, dest, s3.endpoint)) == expected.rows
    assert leftovers(s3, bucket, "events") == ([], [])


def test_overwrite_in_partitioned_mode_replaces_only_written_partitions(
        spark: Any, s3: Any, bucket: str) -> None:
    dest = f"s3://{bucket}/events"
    first = events(spark, years=3)  # years 2020, 2021, 2022
    write(first, dest, committer="partitioned", partition_by=PARTITION_BY,
          endpoint_url=s3.endpoint)
    second = events(spark, rows=400, offset=10_000, years=1, tag="new")  # year 2020 only
    write(second, dest, committer="partitioned", partition_by=PARTITION_BY, mode="overwrite",
          endpoint_url=s3.endpoint)
    kept = first.where("year <> 2020")
    assert rows_of(read_back(spark, dest, s3.endpoint)) == sorted(rows_of(kept)
                                                                   + rows_of(second))
    assert leftovers(s3, bucket, "events") == ([], [])


@pytest.mark.parametrize("committer", ["directory", "magic"])
def test_overwrite_replaces_everything_outside_partitioned_mode(spark: Any, s3: Any,
                                                                bucket: str,
                                                                committer: str) -> None:
    """``directory`` replaces in its job commit; ``magic`` has no conflict mode, so the
    writer deletes the older files (those without this job's UUID) once the new are live."""
    dest = f"s3://{bucket}/events"
    write(events(spark), dest, committer=committer, partition_by=PARTITION_BY,
          endpoint_url=s3.endpoint)
    second = events(spark, rows=300, offset=50_000, years=1, tag="new")
    summary = write(second, dest, committer=committer, partition_by=PARTITION_BY,
                    mode="overwrite", endpoint_url=s3.endpoint)
    assert rows_of(read_back(spark, dest, s3.endpoint)) == rows_of(second)
    assert all(summary.job_id in f for f in visible_files(s3, bucket, "events"))
    assert leftovers(s3, bucket, "events") == ([], [])


def test_error_and_ignore_modes_leave_existing_output_alone(spark: Any, s3: Any,
                                                            bucket: str) -> None:
    """``error`` fails before any task writes; ``ignore`` writes nothing — both through the
    helper and through ``df.write.format(...).option("mode", ...)`` (Spark itself refuses
    these save modes for Python data sources)."""
    dest = f"s3://{bucket}/events"
    df = events(spark)
    expected = snapshot(df, PARTITION_BY)
    write(df, dest, committer="magic", partition_by=PARTITION_BY, mode="error",
          endpoint_url=s3.endpoint)  # empty destination: error mode writes
    before = visible_files(s3, bucket, "events")
    again = events(spark, tag="again")
    with pytest.raises(Exception, match="already exists"):
        write(again, dest, committer="magic", partition_by=PARTITION_BY, mode="error",
              endpoint_url=s3.endpoint)
    assert write(again, dest, committer="magic", mode="ignore",
                 endpoint_url=s3.endpoint) is None
    (again.write.format("zerorename").mode("append").option("mode", "ignore")
     .option("committer", "magic").option("endpoint_url", s3.endpoint).save(dest))
    assert visible_files(s3, bucket, "events") == before
    assert rows_of(read_back(spark, dest, s3.endpoint)) == expected.rows
    assert leftovers(s3, bucket, "events") == ([], [])


def test_rdd_path_commits_on_the_driver(spark: Any, s3: Any, bucket: str) -> None:
    df = events(spark, rows=1_000)
    expected = snapshot(df, PARTITION_BY)
    dest = f"s3://{bucket}/rdd"
    result = write_rdd(df.rdd, dest, schema=df.schema, committer="magic",
                       partition_by=PARTITION_BY, endpoint_url=s3.endpoint,
                       **{"zerorename.fault.exit_after_write": "1@0"})
    assert [o.attempt for o in sorted(result.outcomes, key=lambda o: o.partition_id)] == \
        [0, 1, 0, 0]
    assert visible_files(s3, bucket, "rdd") == expected.files(result.spec.job_id)
    assert result.files == len(expected.files(result.spec.job_id))
    assert result.driver_requests  # the job commit ran here, in this process
    assert rows_of(read_back(spark, dest, s3.endpoint)) == expected.rows
    assert leftovers(s3, bucket, "rdd") == ([], [])


def test_local_destination_reads_back_with_spark_read_parquet(spark: Any,
                                                              tmp_path: Path) -> None:
    """On a file:// destination Spark's own Parquet reader sees exactly the input."""
    df = events(spark, rows=500)
    dest = f"file://{tmp_path}/out"
    write(df, dest, committer="magic", partition_by=PARTITION_BY)
    assert rows_of(spark.read.parquet(dest)) == snapshot(df).rows
    assert (tmp_path / "out" / "_SUCCESS").exists()
