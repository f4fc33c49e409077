"""One run on ``local-cluster[2,1,1024]``: two executor JVMs, a Python worker killed mid-write.

``local-cluster`` starts a standalone master and two workers inside the driver JVM, each
worker launching a separate executor JVM through ``bin/spark-class`` of the pip-installed
PySpark (which ships the scripts and jars; measured to start here).  The write task of
partition 1 calls ``os._exit`` on attempt 0 after its first batch, in the middle of a
multipart upload: Spark sees the worker crash and retries the task (``spark.task.maxFailures``
is 4 outside local mode).  The output must still hold every row exactly once, with nothing
pending.  If the cluster cannot start, the test fails with the launcher's own error: a
skip would hide that the multi-JVM path is untested.
"""

from __future__ import annotations

from typing import Any

import pytest

from zerorename.spark import write

from .helpers import events, leftovers, read_back, rows_of, snapshot, visible_files

pytestmark = [pytest.mark.spark, pytest.mark.slow, pytest.mark.local_cluster]


def test_python_worker_killed_mid_write_on_separate_executor_jvms(
        spark_cluster: Any, s3: Any, bucket: str) -> None:
    spark = spark_cluster
    assert spark.sparkContext.master.startswith("local-cluster")
    # 1000-row Arrow batches: task 1 (5000 rows, 3 year files) dies after its 3rd batch,
    # when each of its files has outgrown a 64 KiB part and is mid-way through an upload
    spark.conf.set("spark.sql.execution.arrow.maxRecordsPerBatch", "1000")
    df = events(spark, rows=20_000)
    expected = snapshot(df, ("year",))
    dest = f"s3://{bucket}/events"
    before = s3.counts()
    summary = write(df, dest, committer="magic", partition_by=("year",),
                    endpoint_url=s3.endpoint, part_size="64K", part_min_size="64K",
                    **{"zerorename.fault.exit_mid_write": "1@0:3"})
    after = s3.counts()
    # the killed attempt's open uploads (parts already sent) were found and aborted
    assert after.get("AbortMultipartUpload", 0) > before.get("AbortMultipartUpload", 0)
    assert after.get("UploadPart", 0) - before.get("UploadPart", 0) > len(
        expected.files(summary.job_id))  # more parts than files: the uploads were multipart
    assert visible_files(s3, bucket, "events") == expected.files(summary.job_id)
    assert rows_of(read_back(spark, dest, s3.endpoint)) == expected.rows
    assert leftovers(s3, bucket, "events") == ([], [])
