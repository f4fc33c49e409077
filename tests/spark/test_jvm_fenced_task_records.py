"""zerorename's JVM ``fenced`` committer's task records and what they cost, on a moto server,
in real PySpark: the requests of a write, counted at the server, by where the task records go
(``fs.zerorename.fenced.task-records``: in the commit messages, in the store, and under
Hadoop's protocol, which refuses ``messages``); S3A's in-memory magic tracking and a session
without it; and the ``messages`` mode's duplicate, dying, stopped and aborted jobs, driven as
Spark drives them.

Its Spark session: ``jvm_spark`` (tests/spark/conftest.py).
"""

from __future__ import annotations

from typing import Any

import pytest

import zerorename as zr
from zerorename.committers.fenced_records import FencedCommitRecord
from zerorename.formats import PendingSet
from zerorename_bridge.embedded_s3 import EmbeddedS3

from .jvm_fenced_helpers import (
    _check_published,
    _frame,
    _JvmJob,
    _keys,
    _rows,
    _spark_env_conf,
    _uploads,
)

pytestmark = pytest.mark.spark


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


def test_tasks_writing_one_partition_keep_their_own_uploads(
        jvm_spark: Any, s3: EmbeddedS3, bucket: str) -> None:
    """S3A's in-memory tracker keys a file by an element of its magic path: two tasks of one
    job writing into the same partition directory must not see each other's files."""
    dest = f"s3a://{bucket}/shared-part"
    job = _JvmJob(jvm_spark, dest, "one-partition")
    job.job.setupJob(job.context(0, 0))
    held = _tracked(jvm_spark)
    first = job.write(0, "p=1/part-0", b"task zero")
    second = job.write(1, "p=1/part-1", b"task one")
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
    committer, ctx = job.write(0, "part-0", b"to be aborted")
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
