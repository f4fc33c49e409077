"""Data and checks shared by the Spark tests (thin wrappers over zerorename.spark.verify).

Every check is computed from the store and the input, never typed in: expected files come
from which (task, partition directory) pairs the input really has, and "no leftovers" means
the whole bucket holds nothing but visible output and ``_SUCCESS``, and no multipart upload
is pending.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import zerorename as zr
from zerorename.spark.verify import InputSnapshot
from zerorename.spark.verify import leftovers as find_leftovers
from zerorename.spark.verify import visible_files as find_visible
from zerorename_bridge.embedded_s3 import EmbeddedS3

COLUMNS = ("id", "year", "month", "payload", "value")


def events(spark: Any, rows: int = 2_000, partitions: int = 4, *, years: int = 3,
           offset: int = 0, tag: str = "event") -> Any:
    """A deterministic events DataFrame: the same rows land in the same Spark partition on
    every attempt (range partitioning), which is what makes retries comparable.  The payload
    carries a hash so that files do not compress to nothing (multipart tests need bytes)."""
    return spark.range(offset, offset + rows, 1, partitions).selectExpr(
        "id",
        f"cast(2020 + id % {years} as int) as year",
        "cast(1 + id % 4 as int) as month",
        f"concat('{tag}-', id, '-', sha2(cast(id as string), 256)) as payload",
        "cast(id as double) * 0.5 as value",
    )


def snapshot(df: Any, partition_by: Sequence[str] = ()) -> InputSnapshot:
    """The input collected once: ``.rows`` and ``.files(job_id)``."""
    return InputSnapshot(df, COLUMNS, partition_by)


def rows_of(df: Any) -> list[tuple[Any, ...]]:
    """Rows as sorted tuples in the fixed column order (partition columns come back last)."""
    return sorted(tuple(r[c] for c in COLUMNS) for r in df.select(*COLUMNS).collect())


def read_back(spark: Any, dest: str, endpoint: str) -> Any:
    """The destination as a reader sees it (visible Parquet only), through Spark."""
    return spark.read.format("zerorename").option("endpoint_url", endpoint).load(dest)


def _store(s3: EmbeddedS3) -> zr.S3Store:
    return zr.S3Store(s3.client())


def visible_files(s3: EmbeddedS3, bucket: str, prefix: str) -> set[str]:
    """Visible output under ``prefix`` (relative paths), as Hadoop's hidden-name rule sees it."""
    return set(find_visible(_store(s3), f"s3://{bucket}/{prefix}"))


def leftovers(s3: EmbeddedS3, bucket: str, prefix: str) -> tuple[list[str], list[str]]:
    """(objects anywhere in the bucket that are neither visible output under ``prefix`` nor
    its ``_SUCCESS``, pending uploads anywhere in the bucket): both must be empty after a
    commit or an abort."""
    found = find_leftovers(_store(s3), f"s3://{bucket}/{prefix}", scope=f"s3://{bucket}/")
    return found.objects, found.uploads


def stop_jvm() -> None:
    """Stop the running SparkContext and its JVM, so the next session starts a new JVM with
    its own class path (PySpark keeps one JVM per Python process, and a JVM only loads the
    jars it started with; it exits when its stdin closes)."""
    from pyspark import SparkContext

    if SparkContext._active_spark_context is not None:
        SparkContext._active_spark_context.stop()
    gateway = SparkContext._gateway
    if gateway is None:
        return
    gateway.shutdown()
    proc = getattr(gateway, "proc", None)
    if proc is not None:
        proc.stdin.close()
        proc.wait(timeout=120)
    SparkContext._gateway = None
    SparkContext._jvm = None
