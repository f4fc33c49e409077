"""What the JVM ``fenced`` committer's Spark tests share (``test_jvm_fenced_scenarios``,
``test_jvm_fenced_python``, ``test_jvm_fenced_task_records``, and on Ceph RGW
``test_jvm_fenced_rgw``): the session's configuration (the ``jvm_spark`` fixture itself is
in ``conftest.py``), the test frame, the checks every fenced job must pass, and the JVM
committer driven call by call through py4j.
"""

from __future__ import annotations

from typing import Any

import zerorename as zr
from zerorename.committers.fenced_records import FencedCommitRecord
from zerorename.formats import SuccessData
from zerorename_bridge.embedded_s3 import EmbeddedS3

FACTORY = "io.zerorename.committer.FencedCommitterFactory"
FACTORY_KEY = "mapreduce.outputcommitter.factory.scheme.s3a"


def s3a_conf(endpoint: str) -> dict[str, str]:
    """The Spark configuration of the JVM fenced route on a local S3 endpoint: what
    ``zerorename.spark.s3a.configure(builder, endpoint, "fenced")`` sets."""
    from zerorename.spark.s3a import S3AEndpoint
    from zerorename.spark.s3a import s3a_conf as helper_conf

    conf = helper_conf(S3AEndpoint(endpoint, access_key="testing", secret_key="testing"),
                       "fenced")
    assert conf[f"spark.hadoop.{FACTORY_KEY}"] == FACTORY
    return {**conf, "spark.hadoop.pathoutputcommit.reject.fileoutput": "true",
            "spark.sql.shuffle.partitions": "2", "spark.ui.enabled": "false"}


def _frame(spark: Any, rows: int = 400) -> Any:
    return spark.range(rows).selectExpr(
        "id", "cast(id % 3 as int) as part", "concat('row-', id) as name",
        "cast(id as double) * 0.5 as value")


def _rows(df: Any) -> list[tuple[Any, ...]]:
    return sorted((r["id"], r["part"], r["name"], r["value"])
                  for r in df.select("id", "part", "name", "value").collect())


def _keys(s3: EmbeddedS3, bucket: str, prefix: str) -> list[str]:
    pages = s3.client().get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix)
    return sorted(o["Key"] for page in pages for o in page.get("Contents", []))


def _uploads(s3: EmbeddedS3, bucket: str) -> list[str]:
    return sorted(u["Key"] for u in s3.client().list_multipart_uploads(Bucket=bucket)
                  .get("Uploads", []))


def _check_published(s3: EmbeddedS3, bucket: str, prefix: str) -> SuccessData:
    """What every fenced job leaves: its files, _SUCCESS naming exactly them, the commit
    record alone under its job root, no work area, no upload."""
    store = zr.S3Store(s3.client())
    dest = f"s3a://{bucket}/{prefix}"
    keys = _keys(s3, bucket, prefix + "/")
    data = [k for k in keys if "/_" not in k and "/__" not in k and "/." not in k]
    committed = zr.committed_files(store, dest)
    assert sorted(f.url for f in committed) == sorted(f"s3a://{bucket}/{k}" for k in data)
    assert data, "the job committed no file"
    success = SuccessData.from_bytes(store.get(f"{dest}/_SUCCESS"), dest)
    assert success.committer == "fenced" and success.success
    assert success.counter("committer_files_committed") == len(data)
    roots = [k for k in keys if "/__" in k]
    assert len(roots) == 1 and roots[0].endswith("/commit.json"), roots
    record = FencedCommitRecord.from_bytes(store.get(f"s3a://{bucket}/{roots[0]}"), roots[0],
                                           job_id=success.job_id, dest=dest)
    assert sorted(u.url for u in record.uploads) == sorted(f.url for f in committed)
    assert _uploads(s3, bucket) == []
    return success


class _JvmJob:
    """One job of the JVM committer on ``dest``, driven call by call."""

    def __init__(self, spark: Any, dest: str, job_id: str, *, attempt: int = 0,
                 options: dict[str, str] | None = None, spark_protocol: bool = False) -> None:
        """``spark_protocol``: each committer is told it runs under zerorename's Spark
        protocol with Spark's commit coordination, as ``FencedCommitProtocol`` tells the ones
        it makes (``fs.zerorename.fenced.task-records`` then defaults to ``messages``)."""
        sc = spark.sparkContext
        self.spark_protocol = spark_protocol
        self.jvm = sc._jvm
        self.conf = self.jvm.org.apache.hadoop.conf.Configuration(
            sc._jsc.hadoopConfiguration())
        self.conf.set("fs.s3a.committer.uuid", job_id)
        self.conf.set("mapreduce.job.application.attempt.id", str(attempt))
        for key, value in (options or {}).items():
            self.conf.set(key, value)
        self.path = self.jvm.org.apache.hadoop.fs.Path(dest)
        self.job = self.committer(0, 0)

    def context(self, task: int, attempt: int) -> Any:
        tid = self.jvm.org.apache.hadoop.mapreduce.TaskAttemptID("jt", 1, True, task, attempt)
        return self.jvm.org.apache.hadoop.mapreduce.task.TaskAttemptContextImpl(self.conf, tid)

    def committer(self, task: int, attempt: int) -> Any:
        committer = self.jvm.io.zerorename.committer.FencedCommitter(
            self.path, self.context(task, attempt))
        if self.spark_protocol:
            committer.runUnderSparkProtocol(True)
        return committer

    def write(self, task: int, name: str, data: bytes, attempt: int = 0) -> tuple[Any, Any]:
        """An attempt of ``task`` that wrote one file and is not committed: (committer,
        context)."""
        ctx = self.context(task, attempt)
        committer = self.committer(task, attempt)
        committer.setupTask(ctx)
        out = self.jvm.org.apache.hadoop.fs.Path(committer.getTaskAttemptPath(ctx), name)
        stream = out.getFileSystem(self.conf).create(out, False)
        stream.write(bytearray(data))
        stream.close()
        return committer, ctx

    def commit_job(self, records: list[Any]) -> None:
        """The driver's job commit under Spark's protocol: the accepted tasks' records."""
        carried = self.jvm.java.util.ArrayList()
        for record in records:
            carried.add(record)
        self.job.commitJob(self.context(0, 0), carried)

    def task(self, task: int, name: str, data: bytes, attempt: int = 0) -> Any:
        """Write one file in a task attempt and commit it; returns the committer."""
        committer, ctx = self.write(task, name, data, attempt)
        assert committer.needsTaskCommit(ctx)
        committer.commitTask(ctx)
        return committer


def _spark_env_conf(spark: Any) -> Any:
    """The driver's ``SparkConf`` itself (not ``getConf``'s copy): the one ``SparkEnv`` holds,
    from which Spark's task commit (in ``local`` mode, in this JVM) reads its commit
    coordination switch, and ``FencedCommitProtocol`` with it."""
    return spark.sparkContext._jsc.sc().conf()
