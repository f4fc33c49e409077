"""zerorename's JVM ``fenced`` committer and the Python implementation on one store (moto,
or a local destination), in real PySpark: ``format("zerorename")`` and ``zerorename success``
read what the JVM committed, the Python CLI lists, expires and cleans the JVM's jobs, a task
record is a Python ``PendingSet``, and a job stopped after its commit point by one
implementation is rolled forward by the other.

Its Spark session: ``jvm_spark`` (tests/spark/conftest.py).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest

import zerorename as zr
from zerorename.formats import PendingSet, SuccessData
from zerorename_bridge.embedded_s3 import EmbeddedS3

from .jvm_fenced_helpers import _check_published, _frame, _JvmJob, _keys, _rows, _uploads

pytestmark = pytest.mark.spark


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
