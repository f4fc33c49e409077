"""zerorename's JVM ``fenced`` committer inside Spark's own writers (``df.write.parquet/csv/json
("s3a://…")``), on a moto server, in real PySpark: the formats; duplicate attempts and a
zombie; a task attempt and a driver dying (at each stage of the job commit); two jobs on one
destination; dynamic partition overwrite; ``auto``; a local destination; another writer's
object at a key the job completes.  The output reads back through S3A and
``zr.committed_files``; the records and ``_SUCCESS`` are the Python reference's.

Its Spark session: ``jvm_spark`` (tests/spark/conftest.py).
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import pytest

import zerorename as zr
from zerorename.formats import SuccessData
from zerorename_bridge.embedded_s3 import EmbeddedS3

from .jvm_fenced_helpers import (
    FACTORY,
    _check_published,
    _frame,
    _JvmJob,
    _keys,
    _rows,
    _spark_env_conf,
    _uploads,
)

pytestmark = pytest.mark.spark


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
