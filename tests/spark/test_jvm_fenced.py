"""zerorename's JVM ``fenced`` committer inside Spark's own writers (``df.write.parquet/csv/json
("s3a://…")``), on a moto server, in real PySpark: the output reads back through S3A, through
``zr.committed_files`` and ``format("zerorename")``; ``zerorename success`` shows the job; the
records and ``_SUCCESS`` are the Python reference's.

One session for the module (S3A's jars, zerorename's jar, the factory bound to ``s3a``); it
replaces the package's session while it runs and stops when the module ends.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import zerorename as zr
from zerorename.committers.fenced_records import FencedCommitRecord
from zerorename.formats import PendingSet, SuccessData
from zerorename_bridge.embedded_s3 import EmbeddedS3

from .helpers import stop_jvm

pytestmark = pytest.mark.spark

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


@pytest.fixture(scope="module")
def jvm_spark(s3: EmbeddedS3, _sessions: Any) -> Iterator[Any]:
    """A ``local[2]`` session bound to the JVM fenced committer (replaces the package's)."""
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


@pytest.mark.parametrize("partitioned", [False, True], ids=["flat", "partitioned"])
def test_parquet_through_the_jvm_fenced_committer(jvm_spark: Any, s3: EmbeddedS3,
                                                  bucket: str, partitioned: bool) -> None:
    df = _frame(jvm_spark).repartition(3)
    writer = df.write.mode("overwrite")
    if partitioned:
        writer = writer.partitionBy("part")
    writer.parquet(f"s3a://{bucket}/out")
    back = jvm_spark.read.parquet(f"s3a://{bucket}/out")
    assert _rows(back) == _rows(df)
    success = _check_published(s3, bucket, "out")
    assert success.diagnostics["committer.class"] == "io.zerorename.committer.FencedCommitter"
    assert "one winner in every round" in success.diagnostics["store.fencing"]
    if partitioned:
        assert {f.url.split("/")[-2] for f in
                zr.committed_files(zr.S3Store(s3.client()), f"s3a://{bucket}/out")} \
            == {"part=0", "part=1", "part=2"}


@pytest.mark.parametrize("fmt", ["csv", "json"])
def test_text_formats_partitioned(jvm_spark: Any, s3: EmbeddedS3, bucket: str,
                                  fmt: str) -> None:
    df = _frame(jvm_spark, 120).repartition(2)
    dest = f"s3a://{bucket}/{fmt}"
    writer = df.write.mode("overwrite").partitionBy("part")
    if fmt == "csv":
        writer.option("header", "true").csv(dest)
        back = jvm_spark.read.option("header", "true").schema(df.schema).csv(dest)
    else:
        writer.json(dest)
        back = jvm_spark.read.schema(df.schema).json(dest)
    assert _rows(back) == _rows(df)
    _check_published(s3, bucket, fmt)


def test_python_tools_read_the_jvm_job(jvm_spark: Any, s3: EmbeddedS3, bucket: str) -> None:
    """``format("zerorename")`` reads what the JVM committed; ``zerorename success`` shows it;
    each task record is a Python ``PendingSet`` naming its attempt."""
    from zerorename.spark import register

    df = _frame(jvm_spark, 200).repartition(2)
    df.write.parquet(f"s3a://{bucket}/t")
    success = _check_published(s3, bucket, "t")
    register(jvm_spark)
    back = jvm_spark.read.format("zerorename").option("endpoint_url", s3.endpoint) \
        .load(f"s3a://{bucket}/t")
    assert _rows(back) == _rows(df)
    printed = json.loads(_cli(s3, "success", f"s3a://{bucket}/t", "--json").stdout)
    assert printed["committer"] == "fenced" and printed["jobId"] == success.job_id
    assert printed["metrics"]["files"] == len(success.filenames)


def test_a_task_record_is_a_python_pendingset(jvm_spark: Any, s3: EmbeddedS3,
                                              bucket: str) -> None:
    """The records are the Python reference's: keep the task records (a job that is not
    committed) by writing through a committer whose job commit is never called."""
    sc = jvm_spark.sparkContext
    jvm = sc._jvm
    conf = sc._jsc.hadoopConfiguration()
    job_id = uuid.uuid4().hex
    dest = f"s3a://{bucket}/records"
    jconf = jvm.org.apache.hadoop.conf.Configuration(conf)
    jconf.set("fs.s3a.committer.uuid", job_id)
    attempt = jvm.org.apache.hadoop.mapreduce.TaskAttemptID("jt", 1, True, 3, 0)
    ctx = jvm.org.apache.hadoop.mapreduce.task.TaskAttemptContextImpl(jconf, attempt)
    path = jvm.org.apache.hadoop.fs.Path(dest)
    committer = jvm.io.zerorename.committer.FencedCommitter(path, ctx)
    committer.setupJob(ctx)
    committer.setupTask(ctx)
    work = committer.getTaskAttemptPath(ctx)
    out = jvm.org.apache.hadoop.fs.Path(work, "part-00003.txt")
    stream = out.getFileSystem(jconf).create(out, False)
    stream.write(bytearray(b"hello fenced\n"))
    stream.close()
    assert committer.needsTaskCommit(ctx)
    committer.commitTask(ctx)
    store = zr.S3Store(s3.client())
    key = f"{dest}/__fenced_job-{job_id}/00/tasks/task_jt_0001_m_000003.pendingset"
    pset = PendingSet.from_bytes(store.get(key), key)
    assert pset.task_attempt_id == "attempt_jt_0001_m_000003_0"
    assert [c.url for c in pset.commits] == [f"{dest}/part-00003.txt"]
    assert pset.commits[0].length == len(b"hello fenced\n")
    for commit in pset.commits:
        commit.filename = ""  # the reader fills in where it read the record from
    assert pset.to_bytes() == store.get(key), "not written as the Python reference writes it"
    assert _uploads(s3, bucket) == ["records/part-00003.txt"]
    committer.commitJob(ctx)
    assert store.get(f"{dest}/part-00003.txt") == b"hello fenced\n"
    _check_published(s3, bucket, "records")


# -- the JVM committer driven directly (py4j): a job left mid-way for the Python tools ------


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
        ctx = self.context(task, attempt)
        committer = self.committer(task, attempt)
        committer.setupTask(ctx)
        out = self.jvm.org.apache.hadoop.fs.Path(committer.getTaskAttemptPath(ctx), name)
        stream = out.getFileSystem(self.conf).create(out, False)
        stream.write(bytearray(data))
        stream.close()
        assert committer.needsTaskCommit(ctx)
        committer.commitTask(ctx)
        return committer


def _cli(s3: EmbeddedS3, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing"}
    return subprocess.run(
        [str(Path(sys.executable).with_name("zerorename")), *args, "--endpoint-url",
         s3.endpoint, "--region", "us-east-1"],
        capture_output=True, text=True, check=True, env=env, timeout=120)


def test_python_cli_lists_expires_and_cleans_jvm_jobs(jvm_spark: Any, s3: EmbeddedS3,
                                                      bucket: str) -> None:
    done = f"s3a://{bucket}/done"
    job = _JvmJob(jvm_spark, done, "jvm-done")
    job.job.setupJob(job.context(0, 0))
    job.task(1, "part-1", b"one")
    job.job.commitJob(job.context(0, 0))
    listed = _cli(s3, "records", "list", done)
    assert "job=jvm-done" in listed.stdout
    _cli(s3, "records", "expire", done, "--older-than", "0s")
    assert _keys(s3, bucket, "done/__") == []

    open_job = f"s3a://{bucket}/crashed"
    crashed = _JvmJob(jvm_spark, open_job, "jvm-crashed")
    crashed.job.setupJob(crashed.context(0, 0))
    crashed.task(2, "part-2", b"two")  # committed; the driver then died
    assert _uploads(s3, bucket) == ["crashed/part-2"]
    _cli(s3, "uploads", "abort", open_job, "--job", "jvm-crashed")
    assert _uploads(s3, bucket) == []
    assert _keys(s3, bucket, "crashed/") == []


def test_a_jvm_commit_stopped_after_its_commit_point_is_rolled_forward_by_python(
        jvm_spark: Any, s3: EmbeddedS3, bucket: str) -> None:
    from zerorename.committers.fenced_records import JobAlreadyCommittedError

    dest = f"s3a://{bucket}/jvm2py"
    job = _JvmJob(jvm_spark, dest, "jvm-to-py",
                  options={"fs.zerorename.fenced.test.stop-after":
                           "job_stage_save_commit_record"})
    job.job.setupJob(job.context(0, 0))
    job.task(0, "part-0", b"from the jvm")
    with pytest.raises(Exception, match="stopped after job_stage_save_commit_record"):
        job.job.commitJob(job.context(0, 0))
    assert _keys(s3, bucket, "jvm2py/part") == []
    store = zr.S3Store(s3.client())
    python_job = zr.JobContext(dest, job_id="jvm-to-py", attempt=1)
    with pytest.raises(JobAlreadyCommittedError):
        zr.create_committer("fenced", store, python_job).setup_job()
    assert store.get(f"{dest}/part-0") == b"from the jvm"
    assert [f.url for f in zr.committed_files(store, dest)] == [f"{dest}/part-0"]
    assert _uploads(s3, bucket) == []


def _python_job_stopped_after_its_commit_point(store: zr.Store, dest: str, job_id: str,
                                               data: bytes,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """A Python fenced job of one file whose driver dies right after the commit point."""
    from zerorename.committers.fenced import FencedCommitter

    job = zr.JobContext(dest, job_id=job_id)
    driver = zr.create_committer("fenced", store, job)
    driver.setup_job()
    task = zr.create_committer("fenced", store, job, task=job.task(0, 0))
    task.setup_task()
    task.write("part-0", data)
    message = task.commit_task()

    def crash(*args: Any, **kwargs: Any) -> Any:
        raise KeyboardInterrupt("the driver dies after the commit point")

    monkeypatch.setattr(FencedCommitter, "_publish", crash)
    with pytest.raises(KeyboardInterrupt):
        driver.commit_job([message])
    monkeypatch.undo()


def test_a_python_commit_stopped_after_its_commit_point_is_rolled_forward_by_the_jvm(
        jvm_spark: Any, s3: EmbeddedS3, bucket: str, monkeypatch: pytest.MonkeyPatch) -> None:

    dest = f"s3a://{bucket}/py2jvm"
    store = zr.S3Store(s3.client())
    _python_job_stopped_after_its_commit_point(store, dest, "py-to-jvm", b"from python",
                                               monkeypatch)
    assert _uploads(s3, bucket) == ["py2jvm/part-0"]
    rerun = _JvmJob(jvm_spark, dest, "py-to-jvm", attempt=1)
    with pytest.raises(Exception, match="JobAlreadyCommittedException"):
        rerun.job.setupJob(rerun.context(0, 0))
    assert store.get(f"{dest}/part-0") == b"from python"
    success = SuccessData.from_bytes(store.get(f"{dest}/_SUCCESS"), dest)
    assert success.diagnostics["committer.class"] == "io.zerorename.committer.FencedCommitter"
    assert _uploads(s3, bucket) == []


# -- scenarios in Spark's own writer ---------------------------------------------------------

# zerorename's protocol hands the job commit its task records: it lists none (Hadoop's
# protocol, which does, is driven stage by stage in tests/conformance)
COMMIT_STAGES = ["job_stage_load_pendingsets", "job_stage_check_keys",
                 "job_stage_save_commit_record", "job_stage_complete_uploads",
                 "job_stage_save_success_marker", "job_stage_cleanup"]


@pytest.mark.parametrize("stage", COMMIT_STAGES)
def test_a_driver_dying_at_each_stage_of_job_commit_then_a_rerun(
        jvm_spark: Any, s3: EmbeddedS3, bucket: str, stage: str) -> None:
    """Before the commit point a rerun writes the job again; after it, the rerun finishes the
    job (rolls forward) and says so; either way the output is the job's, exactly once."""
    df = _frame(jvm_spark, 60).repartition(2)
    dest = f"s3a://{bucket}/crash"
    job_id = f"crash-{uuid.uuid4().hex[:8]}"
    with pytest.raises(Exception, match=f"stopped after {stage}"):
        df.write.mode("append").option("fs.s3a.committer.uuid", job_id) \
            .option("fs.zerorename.fenced.test.stop-after", stage).parquet(dest)
    after_point = COMMIT_STAGES.index(stage) >= COMMIT_STAGES.index(
        "job_stage_save_commit_record")
    rerun = df.write.mode("append").option("fs.s3a.committer.uuid", job_id)
    if after_point:
        with pytest.raises(Exception, match="JobAlreadyCommittedException"):
            rerun.parquet(dest)
    else:
        rerun.parquet(dest)
    assert _rows(jvm_spark.read.parquet(dest)) == _rows(df)
    _check_published(s3, bucket, "crash")


def test_duplicate_attempts_of_one_task_and_a_zombie_after_the_job(
        jvm_spark: Any, s3: EmbeddedS3, bucket: str) -> None:
    dest = f"s3a://{bucket}/dup"
    job = _JvmJob(jvm_spark, dest, "dup-job")
    job.job.setupJob(job.context(0, 0))
    first = job.task(0, "part-0", b"first attempt")
    # the second attempt finds the first's record: it aborts its upload and returns, the task
    # being committed by the first (a retry must not fail where the first attempt won)
    second = job.task(0, "part-0", b"second attempt", attempt=1)
    assert second.taskCommittedBy() == first.taskCommittedBy() == str(
        job.context(0, 0).getTaskAttemptID())
    ctx = job.context(1, 0)
    zombie = job.committer(1, 0)
    zombie.setupTask(ctx)
    out = job.jvm.org.apache.hadoop.fs.Path(zombie.getTaskAttemptPath(ctx), "part-1")
    stream = out.getFileSystem(job.conf).create(out, False)
    stream.write(bytearray(b"late"))
    stream.close()
    job.job.commitJob(job.context(0, 0))
    with pytest.raises(Exception, match="TaskFencedException"):
        zombie.commitTask(ctx)
    store = zr.S3Store(s3.client())
    assert store.get(f"{dest}/part-0") == b"first attempt"
    assert [f.url for f in zr.committed_files(store, dest)] == [f"{dest}/part-0"]
    assert _uploads(s3, bucket) == []


def test_dynamic_partition_overwrite_replaces_only_the_partitions_written(
        jvm_spark: Any, s3: EmbeddedS3, bucket: str) -> None:
    dest = f"s3a://{bucket}/dyn"
    first = _frame(jvm_spark, 90)
    first.write.partitionBy("part").parquet(dest)
    second = _frame(jvm_spark, 90).where("part = 1").selectExpr(
        "id + 1000 as id", "part", "name", "value")
    third = _frame(jvm_spark, 30).selectExpr("id + 5000 as id", "part", "name", "value")
    jvm_spark.conf.set("spark.sql.sources.partitionOverwriteMode", "dynamic")
    try:
        second.write.mode("overwrite").partitionBy("part").parquet(dest)
        back = _rows(jvm_spark.read.parquet(dest))
        expected = sorted([r for r in _rows(first) if r[1] != 1] + _rows(second))
        assert back == expected
        third.write.mode("append").partitionBy("part").parquet(dest)  # appends: replaces none
    finally:
        jvm_spark.conf.unset("spark.sql.sources.partitionOverwriteMode")
    assert _rows(jvm_spark.read.parquet(dest)) == sorted(expected + _rows(third))
    assert _uploads(s3, bucket) == []


def test_a_task_attempt_that_died_after_writing_leaves_nothing(
        jvm_spark: Any, s3: EmbeddedS3, bucket: str) -> None:
    dest = f"s3a://{bucket}/died"
    job = _JvmJob(jvm_spark, dest, "died-job")
    job.job.setupJob(job.context(0, 0))
    ctx = job.context(0, 0)
    dead = job.committer(0, 0)
    dead.setupTask(ctx)
    out = job.jvm.org.apache.hadoop.fs.Path(dead.getTaskAttemptPath(ctx), "part-0")
    stream = out.getFileSystem(job.conf).create(out, False)
    stream.write(bytearray(b"never committed"))
    stream.close()  # ... and the attempt's process dies here
    job.task(0, "part-0", b"the retry", attempt=1)
    job.job.commitJob(job.context(0, 0))
    store = zr.S3Store(s3.client())
    assert store.get(f"{dest}/part-0") == b"the retry"
    assert _uploads(s3, bucket) == []
    _check_published(s3, bucket, "died")


def test_two_jobs_on_one_destination(jvm_spark: Any, s3: EmbeddedS3, bucket: str) -> None:
    """Job A commits while job B is running: A aborts none of B's uploads; both publish."""
    dest = f"s3a://{bucket}/shared"
    a = _JvmJob(jvm_spark, dest, "job-a")
    b = _JvmJob(jvm_spark, dest, "job-b")
    a.job.setupJob(a.context(0, 0))
    b.job.setupJob(b.context(0, 0))
    a.task(0, "a-0", b"from a")
    b_ctx = b.context(1, 0)
    b_task = b.committer(1, 0)
    b_task.setupTask(b_ctx)
    out = b.jvm.org.apache.hadoop.fs.Path(b_task.getTaskAttemptPath(b_ctx), "b-1")
    stream = out.getFileSystem(b.conf).create(out, False)
    stream.write(bytearray(b"from b"))
    stream.close()  # written, not yet committed when A commits
    a.job.commitJob(a.context(0, 0))
    assert _uploads(s3, bucket) == ["shared/b-1"]
    b_task.commitTask(b_ctx)
    b.job.commitJob(b.context(0, 0))
    store = zr.S3Store(s3.client())
    assert store.get(f"{dest}/a-0") == b"from a"
    assert store.get(f"{dest}/b-1") == b"from b"
    assert _uploads(s3, bucket) == []


def test_auto_picks_fenced_where_the_store_fences(jvm_spark: Any, s3: EmbeddedS3,
                                                  bucket: str) -> None:
    df = _frame(jvm_spark, 50).repartition(2)
    df.write.option("fs.zerorename.committer", "auto").parquet(f"s3a://{bucket}/auto")
    success = _check_published(s3, bucket, "auto")
    assert success.diagnostics["committer.choice"].startswith("auto chose fenced: ")


def test_conditional_writes_disabled_fenced_refuses_auto_picks_magic(
        jvm_spark: Any, s3: EmbeddedS3, bucket: str) -> None:
    """``fs.s3a.create.conditional.enabled=false``: fenced refuses before writing; auto takes
    S3A's magic committer, set not to abort another client's upload under the destination."""
    df = _frame(jvm_spark, 50).repartition(2)
    dest = f"s3a://{bucket}/nocond"
    off = {"fs.s3a.create.conditional.enabled": "false"}
    with pytest.raises(Exception, match="ConditionalWriteUnsupportedException"):
        df.write.options(**off).parquet(dest)
    assert _keys(s3, bucket, "nocond/") == []
    other = s3.client().create_multipart_upload(Bucket=bucket, Key="nocond/other-tool.bin")
    df.write.mode("append").options(**off, **{"fs.zerorename.committer": "auto"}) \
        .parquet(dest)
    assert _rows(jvm_spark.read.parquet(dest)) == _rows(df)
    success = json.loads(zr.S3Store(s3.client()).get(f"{dest}/_SUCCESS"))
    assert success["committer"] == "magic"
    assert success["diagnostics"]["committer.choice"].startswith(
        "auto chose magic, not fenced: ")
    assert _uploads(s3, bucket) == ["nocond/other-tool.bin"], "magic aborted another's upload"
    s3.client().abort_multipart_upload(Bucket=bucket, Key="nocond/other-tool.bin",
                                       UploadId=other["UploadId"])


def test_a_local_destination(jvm_spark: Any, tmp_path: Path) -> None:
    """``file://``: the same protocol on the local store's layout (uploads emulated as the
    Python ``LocalStore`` does), so ``zr.committed_files`` reads the job."""
    df = _frame(jvm_spark, 90).repartition(2)
    dest = f"file://{tmp_path}/local"
    df.write.option("mapreduce.outputcommitter.factory.scheme.file", FACTORY) \
        .partitionBy("part").parquet(dest)
    assert _rows(jvm_spark.read.parquet(dest)) == _rows(df)
    store = zr.LocalStore()
    files = zr.committed_files(store, dest)
    on_disk = sorted(str(p) for p in (tmp_path / "local").rglob("*.parquet"))
    assert sorted(f.url[len("file://"):] for f in files) == on_disk
    assert store.list_multipart_uploads(dest + "/") == []
    roots = sorted(p.name for p in (tmp_path / "local").iterdir() if p.name.startswith("__"))
    assert roots == [f"__fenced_job-{_job_of(store, dest)}"]


def _job_of(store: Any, dest: str) -> str:
    return str(SuccessData.from_bytes(store.get(f"{dest}/_SUCCESS"), dest).job_id)


def test_local_jobs_are_finished_by_the_other_implementation(
        jvm_spark: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """On ``file://`` too: a JVM commit stopped after its commit point is rolled forward by
    the Python committer (which completes the JVM's emulated uploads), and the other way."""
    from zerorename.committers.fenced_records import JobAlreadyCommittedError

    store = zr.LocalStore()
    jvm_dest = f"file://{tmp_path}/jvm2py"
    job = _JvmJob(jvm_spark, jvm_dest, "local-jvm",
                  options={"fs.zerorename.fenced.test.stop-after":
                           "job_stage_save_commit_record"})
    job.job.setupJob(job.context(0, 0))
    job.task(0, "part-0", b"jvm on disk")
    with pytest.raises(Exception, match="stopped after job_stage_save_commit_record"):
        job.job.commitJob(job.context(0, 0))
    assert not (tmp_path / "jvm2py" / "part-0").exists()
    with pytest.raises(JobAlreadyCommittedError):
        zr.create_committer("fenced", store,
                            zr.JobContext(jvm_dest, job_id="local-jvm", attempt=1)).setup_job()
    assert (tmp_path / "jvm2py" / "part-0").read_bytes() == b"jvm on disk"

    py_dest = f"file://{tmp_path}/py2jvm"
    _python_job_stopped_after_its_commit_point(store, py_dest, "local-py", b"python on disk",
                                               monkeypatch)
    rerun = _JvmJob(jvm_spark, py_dest, "local-py", attempt=1)
    with pytest.raises(Exception, match="JobAlreadyCommittedException"):
        rerun.job.setupJob(rerun.context(0, 0))
    assert (tmp_path / "py2jvm" / "part-0").read_bytes() == b"python on disk"
    assert [f.url for f in zr.committed_files(store, py_dest)] == [f"{py_dest}/part-0"]
    assert store.list_multipart_uploads(py_dest + "/") == []
    assert store.list_multipart_uploads(jvm_dest + "/") == []


# -- requests: S3A's in-memory magic tracker (the committer's fast path) and without it -----

TRACKER = "org.apache.hadoop.fs.s3a.commit.magic.InMemoryMagicCommitTracker"


def _tracked(spark: Any) -> dict[str, int]:
    """How many files S3A's in-memory magic tracker holds in this JVM, in each of its three
    maps (two keyed by task attempt ID, whose lists are counted; one by path)."""
    tracker = spark.sparkContext._jvm
    for part in TRACKER.split("."):
        tracker = getattr(tracker, part)
    return {"commits": sum(v.size() for v in tracker.getTaskAttemptIdToMpuMetadata().values()),
            "paths": sum(v.size() for v in tracker.getTaskAttemptIdToPath().values()),
            "sizes": tracker.getPathToBytesWritten().size()}


def _counted(s3: EmbeddedS3, write: Any) -> dict[str, int]:
    before = s3.counts()
    write()
    after = s3.counts()
    return {op: n - before.get(op, 0) for op, n in sorted(after.items()) if n - before.get(op, 0)}


def _fixed_requests(files: int) -> dict[str, int]:
    """The requests of a fenced write of ``files`` files under zerorename's commit protocol
    with ``fs.zerorename.fenced.task-records=messages`` (its default there): per file its
    multipart upload (create, one part) and its completion, nothing per task, a fixed number
    per job."""
    return {
        "CreateMultipartUpload": files, "UploadPart": files, "CompleteMultipartUpload": files,
        # the marker (its second, refused PUT is not sent: the JVM's store check already saw
        # one refused on this bucket), the commit record, _SUCCESS; no task record
        "PutObject": 1 + 2,
        # Spark's (its output check, its staging directory's delete), the job commit's check of
        # the keys it completes, before its commit point (one page for a small job), cleanup
        # (every job root: its own records and the expiry's candidates in one; not the work
        # area, where S3A's in-memory tracking writes nothing); setup lists nothing, for the
        # same reason
        "ListObjectsV2": 4,
        # Spark's (2: the output check, the staging directory), setup's "is the destination a
        # file" check
        "HeadObject": 3,
        # cleanup's: uploads of the job (or of dead jobs) it did not commit
        "ListMultipartUploads": 1, "DeleteObjects": 1,
    }


def test_requests_of_a_fenced_write(jvm_spark: Any, s3: EmbeddedS3, bucket: str) -> None:
    """What a fenced write of 4 files (4 tasks) asks the store, by operation, with S3A's
    in-memory magic tracking and zerorename's commit protocol (what ``s3a_conf`` sets): a task
    commit sends no request (its record travels in its commit message; no fence check), and
    the job commit neither lists nor reads task records.  Counted at the server."""
    df = _frame(jvm_spark, 400).repartition(4)
    df.write.parquet(f"s3a://{bucket}/warm")  # the store's fencing probe: once per JVM
    held = _tracked(jvm_spark)
    counts = _counted(s3, lambda: df.write.parquet(f"s3a://{bucket}/counted"))
    _check_published(s3, bucket, "counted")
    assert counts == _fixed_requests(4), counts
    assert sum(counts.values()) == 24
    assert _tracked(jvm_spark) == held, "task commit left S3A's in-memory entries behind"


def test_requests_of_a_partitioned_fenced_write(jvm_spark: Any, s3: EmbeddedS3,
                                                bucket: str) -> None:
    """4 tasks writing 3 partitions each (12 files): still nothing per task."""
    df = _frame(jvm_spark, 400).repartition(4)
    df.write.partitionBy("part").parquet(f"s3a://{bucket}/pwarm")
    counts = _counted(s3, lambda: df.write.partitionBy("part").parquet(
        f"s3a://{bucket}/pcounted"))
    _check_published(s3, bucket, "pcounted")
    assert counts == _fixed_requests(12), counts
    assert sum(counts.values()) == 48


def _spark_env_conf(spark: Any) -> Any:
    """The driver's ``SparkConf`` itself (not ``getConf``'s copy): the one ``SparkEnv`` holds,
    from which Spark's task commit (in ``local`` mode, in this JVM) reads its commit
    coordination switch, and ``FencedCommitProtocol`` with it."""
    return spark.sparkContext._jsc.sc().conf()


@pytest.mark.parametrize("how", ["option", "coordination-off"])
def test_task_records_in_the_store(jvm_spark: Any, s3: EmbeddedS3, bucket: str,
                                   how: str) -> None:
    """``fs.zerorename.fenced.task-records=store`` (or Spark's commit coordination off, where
    ``messages`` would not be sound): each task commit PUTs its record and GETs the commit
    record, 2 requests per task more (the counts before issue 46)."""
    df = _frame(jvm_spark, 400).repartition(4)
    df.write.parquet(f"s3a://{bucket}/swarm")
    options = {"fs.zerorename.fenced.task-records": "store"} if how == "option" else {}
    env_conf = _spark_env_conf(jvm_spark)
    key = "spark.hadoop.outputCommitCoordination.enabled"
    if how == "coordination-off":
        env_conf.set(key, "false")
    try:
        counts = _counted(s3, lambda: df.write.options(**options).parquet(
            f"s3a://{bucket}/stored"))
    finally:
        env_conf.remove(key)
    _check_published(s3, bucket, "stored")
    tasks = 4
    expected = _fixed_requests(4)
    expected["PutObject"] += tasks
    expected["GetObject"] = tasks
    assert counts == expected, counts
    assert sum(counts.values()) == 32


def test_hadoops_protocol_refuses_task_records_in_messages(jvm_spark: Any, s3: EmbeddedS3,
                                                           bucket: str) -> None:
    """Under Spark's plain ``PathOutputCommitProtocol`` (Hadoop's protocol: the job commit
    finds the tasks by their stored records) ``messages`` is refused at job setup, before
    anything is written, naming the option and the fix."""
    from zerorename.spark.s3a import PROTOCOL_CLASS

    key = "spark.sql.sources.commitProtocolClass"
    before = jvm_spark.conf.get(key)
    jvm_spark.conf.set(key, PROTOCOL_CLASS)
    try:
        with pytest.raises(Exception, match="TaskRecordsOptionException") as refused:
            _frame(jvm_spark, 20).write.option("fs.zerorename.fenced.task-records",
                                               "messages").parquet(f"s3a://{bucket}/refused")
    finally:
        jvm_spark.conf.set(key, before)
    assert "fs.zerorename.fenced.task-records=store" in str(refused.value)
    assert "FencedCommitProtocol" in str(refused.value)
    assert _keys(s3, bucket, "refused/") == []


def test_under_sparks_plain_cloud_protocol_the_job_commit_lists_and_reads_the_records(
        jvm_spark: Any, s3: EmbeddedS3, bucket: str) -> None:
    """The same write under Spark's ``PathOutputCommitProtocol`` (Hadoop's protocol: the job
    commit receives nothing from its tasks): the committer lists the job's task records and
    reads each, one LIST and a GET per task more, and publishes the same."""
    from zerorename.spark.s3a import PROTOCOL_CLASS

    key = "spark.sql.sources.commitProtocolClass"
    df = _frame(jvm_spark, 400).repartition(4)
    df.write.parquet(f"s3a://{bucket}/warm")
    before = jvm_spark.conf.get(key)
    assert before == "io.zerorename.spark.FencedCommitProtocol"
    jvm_spark.conf.set(key, PROTOCOL_CLASS)
    try:
        counts = _counted(s3, lambda: df.write.parquet(f"s3a://{bucket}/plain"))
    finally:
        jvm_spark.conf.set(key, before)
    _check_published(s3, bucket, "plain")
    assert _rows(jvm_spark.read.parquet(f"s3a://{bucket}/plain")) == _rows(df)
    tasks = 4
    assert counts["GetObject"] == tasks + tasks, counts
    assert counts["ListObjectsV2"] == _fixed_requests(tasks)["ListObjectsV2"] + 1, counts


def test_without_in_memory_tracking_fenced_reads_the_pending_objects(
        jvm_spark: Any, s3: EmbeddedS3, bucket: str) -> None:
    """A session without S3A's in-memory tracking (here: off for this bucket, before its
    filesystem is made): S3A puts a marker and a ``.pending`` per file, which the committer
    lists, reads and deletes; the job publishes the same."""
    hadoop = jvm_spark.sparkContext._jsc.hadoopConfiguration()
    hadoop.set(f"fs.s3a.bucket.{bucket}.committer.magic.track.commits.in.memory.enabled",
               "false")
    df = _frame(jvm_spark, 400).repartition(4)
    df.write.parquet(f"s3a://{bucket}/warm")
    held = _tracked(jvm_spark)
    counts = _counted(s3, lambda: df.write.parquet(f"s3a://{bucket}/counted"))
    assert _rows(jvm_spark.read.parquet(f"s3a://{bucket}/counted")) == _rows(df)
    _check_published(s3, bucket, "counted")
    assert _tracked(jvm_spark) == held
    files, tasks = 4, 4
    # a marker and a .pending per file besides the job's 3 (no task record: messages); each
    # .pending read once, no fence check
    assert counts["PutObject"] == 1 + 2 + 2 * files, counts
    assert counts["GetObject"] == files, counts
    assert counts["DeleteObjects"] == 1 + tasks, counts  # each task's work objects
    # each task commit lists its work directory, and the job's cleanup the work area (with
    # in-memory tracking it does not: nothing is written there)
    assert counts["ListObjectsV2"] == _fixed_requests(files)["ListObjectsV2"] + tasks + 1, counts
    assert _keys(s3, bucket, "counted/__magic") == []


def _write_in(job: _JvmJob, task: int, name: str, data: bytes) -> tuple[Any, Any]:
    """An attempt of ``task`` that wrote one file and is not committed: (committer, context)."""
    ctx = job.context(task, 0)
    committer = job.committer(task, 0)
    committer.setupTask(ctx)
    out = job.jvm.org.apache.hadoop.fs.Path(committer.getTaskAttemptPath(ctx), name)
    stream = out.getFileSystem(job.conf).create(out, False)
    stream.write(bytearray(data))
    stream.close()
    return committer, ctx


def test_tasks_writing_one_partition_keep_their_own_uploads(
        jvm_spark: Any, s3: EmbeddedS3, bucket: str) -> None:
    """S3A's in-memory tracker keys a file by an element of its magic path: two tasks of one
    job writing into the same partition directory must not see each other's files."""
    dest = f"s3a://{bucket}/shared-part"
    job = _JvmJob(jvm_spark, dest, "one-partition")
    job.job.setupJob(job.context(0, 0))
    held = _tracked(jvm_spark)
    first = _write_in(job, 0, "p=1/part-0", b"task zero")
    second = _write_in(job, 1, "p=1/part-1", b"task one")
    assert _tracked(jvm_spark) == {k: v + 2 for k, v in held.items()}
    for committer, ctx in (first, second):
        assert committer.needsTaskCommit(ctx)
        committer.commitTask(ctx)
    store = zr.S3Store(s3.client())
    for task, name in ((0, "part-0"), (1, "part-1")):
        key = f"{dest}/__fenced_job-one-partition/00/tasks/task_jt_0001_m_00000{task}.pendingset"
        pset = PendingSet.from_bytes(store.get(key), key)
        assert [c.url for c in pset.commits] == [f"{dest}/p=1/{name}"], task
    assert _tracked(jvm_spark) == held
    assert _keys(s3, bucket, "shared-part/__magic") == [], "S3A put work objects"
    job.job.commitJob(job.context(0, 0))
    assert store.get(f"{dest}/p=1/part-0") == b"task zero"
    assert store.get(f"{dest}/p=1/part-1") == b"task one"
    _check_published(s3, bucket, "shared-part")


def test_task_abort_aborts_and_forgets_the_in_memory_uploads(
        jvm_spark: Any, s3: EmbeddedS3, bucket: str) -> None:
    dest = f"s3a://{bucket}/aborted"
    job = _JvmJob(jvm_spark, dest, "abort-in-memory")
    job.job.setupJob(job.context(0, 0))
    held = _tracked(jvm_spark)
    committer, ctx = _write_in(job, 0, "part-0", b"to be aborted")
    assert _tracked(jvm_spark) == {k: v + 1 for k, v in held.items()}
    assert _uploads(s3, bucket) == ["aborted/part-0"]
    counts = _counted(s3, lambda: committer.abortTask(ctx))
    assert _uploads(s3, bucket) == []
    assert _tracked(jvm_spark) == held, "abortTask left S3A's in-memory entries behind"
    # the task record (none) looked for, the upload aborted: no listing of the work area
    assert counts == {"GetObject": 1, "AbortMultipartUpload": 1}, counts
    job.job.abortJob(job.context(0, 0), job.jvm.org.apache.hadoop.mapreduce.JobStatus.State
                     .FAILED)
    assert _keys(s3, bucket, "aborted/") == []


# -- fs.zerorename.fenced.task-records=messages: each task's record only in its commit message -
# The committers are driven as Spark drives them under FencedCommitProtocol, with its commit
# coordinator: an attempt the coordinator refuses is aborted (abortTask), never committed.


def _messages_job(spark: Any, dest: str, job_id: str, **kwargs: Any) -> _JvmJob:
    job = _JvmJob(spark, dest, job_id, spark_protocol=True, **kwargs)
    job.job.setupJob(job.context(0, 0))
    return job


def _commit(committer: Any, ctx: Any) -> Any:
    """Spark's task commit of an attempt the coordinator let commit: the record returned."""
    assert committer.needsTaskCommit(ctx)
    committer.commitTask(ctx)
    return committer.taskRecord()


def test_messages_duplicate_attempts_and_a_zombie_after_the_job(
        jvm_spark: Any, s3: EmbeddedS3, bucket: str) -> None:
    """Two attempts of task 0: the coordinator lets the first commit and refuses the second,
    which Spark aborts.  Task 1's first attempt is lost; its retry commits; the job commits
    the accepted records.  The lost attempt (a zombie) is still writing after the job: its
    upload is pending until Spark aborts it (its commit refused), and no task commit stored
    anything."""
    dest = f"s3a://{bucket}/mdup"
    job = _messages_job(jvm_spark, dest, "mdup-job")
    first, first_ctx = job.write(0, "part-0", b"first attempt")
    second, second_ctx = job.write(0, "part-0", b"second attempt", attempt=1)
    r0 = _commit(first, first_ctx)
    second.abortTask(second_ctx)  # refused by the coordinator
    assert _uploads(s3, bucket) == ["mdup/part-0"]
    retry, retry_ctx = job.write(1, "part-1", b"the retry", attempt=1)
    r1 = _commit(retry, retry_ctx)
    assert _keys(s3, bucket, "mdup/__fenced_job-mdup-job/") == [
        "mdup/__fenced_job-mdup-job/00/_job.json"], "a task commit stored something"
    job.commit_job([r0, r1])
    zombie, zombie_ctx = job.write(1, "part-1", b"the zombie")  # after the job's cleanup
    assert _uploads(s3, bucket) == ["mdup/part-1"]
    zombie.abortTask(zombie_ctx)  # Spark: its commit is refused (the stage is over)
    store = zr.S3Store(s3.client())
    assert store.get(f"{dest}/part-0") == b"first attempt"
    assert store.get(f"{dest}/part-1") == b"the retry"
    assert _uploads(s3, bucket) == []
    _check_published(s3, bucket, "mdup")


def test_messages_a_task_attempt_that_died_leaves_nothing(
        jvm_spark: Any, s3: EmbeddedS3, bucket: str) -> None:
    """An attempt dies after writing (no abort runs); the retry commits: the job's cleanup
    aborts the dead attempt's upload (at a key the committed records name)."""
    dest = f"s3a://{bucket}/mdied"
    job = _messages_job(jvm_spark, dest, "mdied-job")
    job.write(0, "part-0", b"never committed")  # ... and its process dies here
    assert _uploads(s3, bucket) == ["mdied/part-0"]
    retry, ctx = job.write(0, "part-0", b"the retry", attempt=1)
    job.commit_job([_commit(retry, ctx)])
    assert zr.S3Store(s3.client()).get(f"{dest}/part-0") == b"the retry"
    assert _uploads(s3, bucket) == []
    _check_published(s3, bucket, "mdied")


def test_messages_a_driver_stopping_after_the_commit_point_is_rolled_forward_by_python(
        jvm_spark: Any, s3: EmbeddedS3, bucket: str) -> None:
    """The commit record is the same whichever way the task records came: it names each
    task's record (never stored here) and every upload, so Python rolls the job forward."""
    from zerorename.committers.fenced_records import JobAlreadyCommittedError

    dest = f"s3a://{bucket}/mjvm2py"
    job = _messages_job(jvm_spark, dest, "m-jvm-to-py",
                        options={"fs.zerorename.fenced.test.stop-after":
                                 "job_stage_save_commit_record"})
    committer, ctx = job.write(0, "part-0", b"from the jvm")
    record = _commit(committer, ctx)
    with pytest.raises(Exception, match="stopped after job_stage_save_commit_record"):
        job.commit_job([record])
    store = zr.S3Store(s3.client())
    root = f"{dest}/__fenced_job-m-jvm-to-py"
    commit = FencedCommitRecord.from_bytes(store.get(f"{root}/commit.json"), root,
                                           job_id="m-jvm-to-py", dest=dest)
    assert commit.records == [f"{root}/00/tasks/task_jt_0001_m_000000.pendingset"]
    assert [u.url for u in commit.uploads] == [f"{dest}/part-0"]
    assert _keys(s3, bucket, "mjvm2py/part") == []
    with pytest.raises(JobAlreadyCommittedError):
        zr.create_committer("fenced", store, zr.JobContext(dest, job_id="m-jvm-to-py",
                                                           attempt=1)).setup_job()
    assert store.get(f"{dest}/part-0") == b"from the jvm"
    assert [f.url for f in zr.committed_files(store, dest)] == [f"{dest}/part-0"]
    assert _uploads(s3, bucket) == []


def test_messages_abort_aborts_the_accepted_tasks_uploads_beside_another_job(
        jvm_spark: Any, s3: EmbeddedS3, bucket: str) -> None:
    """The model's witness (docs/research/fenced-spark-messages.md): task 0 commits (its
    record only in its message), then the driver aborts the job while another job's marker
    is under the destination.  No stored record names task 0's upload and another job may
    own it, so the store alone cannot attribute it; ``FencedCommitProtocol`` kept the records
    the driver accepted (``onTaskCommit``) and its ``abortJob`` has them aborted."""
    jvm = jvm_spark.sparkContext._jvm
    dest = f"s3a://{bucket}/mabort"
    other = _JvmJob(jvm_spark, dest, "other-job")
    other.job.setupJob(other.context(0, 0))  # active: its marker is under the destination

    def aborted_job(job_id: str, accepted: bool) -> None:
        job = _JvmJob(jvm_spark, dest, job_id, spark_protocol=True)
        job_ctx = jvm.org.apache.hadoop.mapreduce.task.JobContextImpl(
            job.conf, jvm.org.apache.hadoop.mapreduce.JobID("jt", 1))
        protocol = jvm.io.zerorename.spark.FencedCommitProtocol(job_id, dest, False)
        protocol.setupJob(job_ctx)
        committer, ctx = job.write(0, f"{job_id}-0", b"committed task")
        record = _commit(committer, ctx)
        if accepted:
            protocol.onTaskCommit(jvm.io.zerorename.spark.FencedCommitProtocol
                                  .FencedTaskCommitMessage(None, record.toBytes()))
        protocol.abortJob(job_ctx)

    # without the accepted records (what the store alone says) the upload is left pending
    aborted_job("unattributed", accepted=False)
    left = s3.client().list_multipart_uploads(Bucket=bucket).get("Uploads", [])
    assert [u["Key"] for u in left] == ["mabort/unattributed-0"]
    s3.client().abort_multipart_upload(Bucket=bucket, Key=left[0]["Key"],
                                       UploadId=left[0]["UploadId"])

    aborted_job("attributed", accepted=True)
    assert _uploads(s3, bucket) == []
    assert [k for k in _keys(s3, bucket, "mabort/") if "other-job" not in k] == []
    other.job.abortJob(other.context(0, 0),
                       jvm.org.apache.hadoop.mapreduce.JobStatus.State.FAILED)
    assert _keys(s3, bucket, "mabort/") == []


def _save_fixed_names(spark: Any, dest: str) -> None:
    """Write 2 files with fixed names, ``part-r-00000`` and ``part-r-00001``, through Hadoop's
    commit protocol: an RDD saved with the new Hadoop API's ``TextOutputFormat``, whose
    committer comes from the factory bound to ``s3a``.  Unlike a DataFrame writer's, these
    names carry no job UUID, so another writer's object can sit at a key the job completes.
    Spark's check that the output directory does not exist is off (an append, as a table's)."""
    rows = spark.sparkContext.parallelize([(f"k{i}", f"v{i}") for i in range(20)], 2)
    conf = _spark_env_conf(spark)
    conf.set("spark.hadoop.validateOutputSpecs", "false")
    try:
        rows.saveAsNewAPIHadoopFile(
            dest, "org.apache.hadoop.mapreduce.lib.output.TextOutputFormat",
            keyClass="org.apache.hadoop.io.Text", valueClass="org.apache.hadoop.io.Text")
    finally:
        conf.remove("spark.hadoop.validateOutputSpecs")


def test_another_writers_object_at_a_key_refuses_the_job_before_its_commit_point(
        jvm_spark: Any, s3: EmbeddedS3, bucket: str) -> None:
    """An object another writer left at a key the job completes: the job commit is refused
    before its commit point (JobCommitRefusedException): nothing is published, Spark's abort
    aborts every upload, the object is kept byte for byte.  Moved away, a rerun commits."""
    theirs = b"another writer's object\n"
    client = s3.client()
    client.put_object(Bucket=bucket, Key="fixed/part-r-00001", Body=theirs)
    with pytest.raises(Exception, match="JobCommitRefusedException") as refused:
        _save_fixed_names(jvm_spark, f"s3a://{bucket}/fixed")
    assert f"s3a://{bucket}/fixed/part-r-00001" in str(refused.value)
    assert "nothing is committed" in str(refused.value)
    assert _keys(s3, bucket, "fixed/") == ["fixed/part-r-00001"]
    assert _uploads(s3, bucket) == []
    assert client.get_object(Bucket=bucket, Key="fixed/part-r-00001")["Body"].read() == theirs
    client.delete_object(Bucket=bucket, Key="fixed/part-r-00001")
    _save_fixed_names(jvm_spark, f"s3a://{bucket}/fixed")
    _check_published(s3, bucket, "fixed")
    lines = sorted(line for key in ("fixed/part-r-00000", "fixed/part-r-00001")
                   for line in client.get_object(Bucket=bucket, Key=key)["Body"].read()
                   .decode().splitlines())
    assert lines == sorted(f"k{i}\tv{i}" for i in range(20))
