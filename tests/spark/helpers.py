"""Data, read-back and leftover checks shared by the Spark tests.

Every check is computed from the store and the input, never typed in: "expected files" come
from which (task, partition directory) pairs the input really has, and "clean" means the
bucket holds nothing but visible output and ``_SUCCESS`` and no multipart upload is pending.
"""

from __future__ import annotations

from typing import Any

from zerorename.spark.embedded import EmbeddedS3
from zerorename.spark.parquet import partition_dir
from zerorename.urls import is_hidden

#: Where S3Store's once-per-endpoint capability probe writes (and deletes) its objects.
PROBE_PREFIX = ".zerorename-probe/"

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


def rows_of(df: Any) -> list[tuple[Any, ...]]:
    """Rows as sorted tuples in a fixed column order (partition columns come back last)."""
    return sorted(tuple(r[c] for c in COLUMNS) for r in df.select(*COLUMNS).collect())


def read_back(spark: Any, dest: str, endpoint: str) -> Any:
    """The destination as a reader sees it (visible Parquet only), through Spark."""
    return spark.read.format("zerorename").option("endpoint_url", endpoint).load(dest)


def expected_files(df: Any, partition_by: tuple[str, ...], job_id: str) -> set[str]:
    """The relative paths a committed write of ``df`` must produce: one file per
    (Spark partition, partition directory) pair present in the data."""
    from pyspark.sql.functions import spark_partition_id

    keyed = df.withColumn("_pid", spark_partition_id()).select("_pid", *partition_by).distinct()
    out = set()
    for row in keyed.collect():
        name = f"part-{row['_pid']:05d}-{job_id}.parquet"
        values = [row[c] for c in partition_by]
        out.add(f"{partition_dir(partition_by, values)}/{name}" if partition_by else name)
    return out


def bucket_state(s3: EmbeddedS3, bucket: str) -> tuple[list[str], list[str]]:
    """(every object key except the capability probe's, every pending upload's key)."""
    client = s3.client()
    keys: list[str] = []
    for page in client.get_paginator("list_objects_v2").paginate(Bucket=bucket):
        keys += [o["Key"] for o in page.get("Contents", [])
                 if not o["Key"].startswith(PROBE_PREFIX)]
    uploads = client.list_multipart_uploads(Bucket=bucket).get("Uploads", [])
    return sorted(keys), sorted(u["Key"] for u in uploads)


def visible_files(s3: EmbeddedS3, bucket: str, prefix: str) -> set[str]:
    """Visible output under ``prefix`` (relative paths), as Hadoop's hidden-name rule sees it."""
    keys, _ = bucket_state(s3, bucket)
    rel = [k[len(prefix) + 1:] for k in keys if k.startswith(prefix + "/")]
    return {r for r in rel if not is_hidden(r)}


def leftovers(s3: EmbeddedS3, bucket: str, prefix: str) -> tuple[list[str], list[str]]:
    """Objects that are neither visible output under ``prefix`` nor its ``_SUCCESS``, and
    pending uploads: both must be empty after a commit or an abort."""
    keys, uploads = bucket_state(s3, bucket)
    extra = [k for k in keys
             if not (k.startswith(prefix + "/")
                     and (k == f"{prefix}/_SUCCESS" or not is_hidden(k[len(prefix) + 1:])))]
    return extra, uploads
