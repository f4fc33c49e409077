"""Transient and permanent store failures, progress reporting and threading."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

import zerorename as zr

from .conftest_helpers import (
    Env,
    FaultyStore,
    options,
    run_job,
)

pytestmark = pytest.mark.usefixtures("no_leaked_threads")

FILES = {0: {"p=0/a": b"a" * 700, "b": b""}, 1: {"p=1/c": b"c" * 300}}

OPS_BY_COMMITTER = {
    "magic": ["put", "create_multipart", "upload_part", "list_page", "get", "head",
              "complete_multipart", "delete_many"],
    "directory": ["put", "create_multipart", "upload_part", "list_page", "get",
                  "complete_multipart", "delete_many"],
    "manifest": ["put", "rename", "list_page", "get", "head", "delete_many", "create_multipart",
                 "upload_part", "complete_multipart"],
    "v1": ["rename", "list_page", "put"],
}


@pytest.mark.parametrize("status", [503, 500])
@pytest.mark.parametrize(("committer", "op"),
                         [(c, op) for c, ops in OPS_BY_COMMITTER.items() for op in ops])
def test_one_shot_failure_on_any_request_is_retried(committer: str, op: str, status: int,
                                                    local_env: Env) -> None:
    """A single 503 SlowDown or 500 InternalError on any request is retried (zerorename.retry)
    and the job's output is exactly right (Hadoop's inconsistent-client "throttle N calls")."""
    dest = local_env.dest()
    faulty = FaultyStore(local_env.store).fail(op, nth=2 if op == "put" else 1, status=status)
    run = run_job(committer, faulty, dest, FILES, protocol="hadoop")
    assert faulty.faults[0].fired == 1, f"the flow never issued a {op}"
    assert local_env.output(dest) == {rel: data for t in FILES.values() for rel, data in t.items()}
    assert local_env.uploads(dest) == []
    assert run.success is not None


@pytest.mark.parametrize("op", ["put", "upload_part", "complete_multipart", "list_page"])
def test_one_shot_503_on_s3(op: str, moto_env: Env) -> None:
    """The same on S3 (moto), for the magic committer's main request types."""
    dest = moto_env.dest()
    faulty = FaultyStore(moto_env.store).fail(op, nth=2)
    run_job("magic", faulty, dest, FILES)
    assert faulty.faults[0].fired == 1
    assert moto_env.output(dest) == {"p=0/a": b"a" * 700, "b": b"", "p=1/c": b"c" * 300}
    assert moto_env.uploads(dest) == []


@pytest.mark.parametrize("committer", ["magic", "directory"])
def test_permanent_complete_failure_reverts_and_abort_leaves_no_uploads(committer: str,
                                                                        env: Env) -> None:
    """Hadoop: TestStagingCommitter.testJobCommitFailure (12 uploads, the 6th complete fails):
    the 5 completed objects are deleted (reverted), the other 7 uploads aborted, the error is
    a CommitError naming the file; a later abort_job leaves no pending uploads."""
    dest = env.dest()
    files = {t: {f"t{t}/f{i}": bytes([48 + t]) * 300 for i in range(3)} for t in range(4)}
    opts = options(**{"fs.s3a.committer.threads": "1", "fs.s3a.retry.limit": "1"})
    faulty = FaultyStore(env.store).fail("complete_multipart", nth=6, times=None, status=500)
    run = run_job(committer, faulty, dest, files, opts=opts, commit=False)
    with pytest.raises(zr.JobFailedError, match="reverted") as info:
        run.driver.commit_job(run.messages)
    assert info.value.path.startswith(dest)
    assert run.driver.stats.counter("committer_commits_reverted") == 5
    assert run.driver.stats.counter("committer_commits_completed") == 5
    assert env.output(dest) == {}
    run.driver.abort_job()
    assert env.uploads(dest) == []
    assert env.objects(dest) == {}


def test_staging_task_upload_failure_aborts_every_started_upload(local_env: Env) -> None:
    """Hadoop: TestStagingCommitter.testTaskMultiFileUploadFailure: two 3-part files, the
    fifth part fails permanently: commit_task raises, both uploads are aborted and the local
    attempt directory is deleted."""
    dest = local_env.dest()
    opts = options(**{"fs.s3a.committer.threads": "1", "fs.s3a.retry.limit": "0"})
    faulty = FaultyStore(local_env.store).fail("upload_part", nth=5, times=None, status=500)
    job = zr.JobContext(dest, options=opts)
    zr.create_committer("directory", faulty, job).setup_job()
    tc = zr.create_committer("directory", faulty, job, task=job.task(0))
    tc.setup_task()
    tc.write("f1", b"1" * 700)
    tc.write("f2", b"2" * 700)
    local_dir = tc.local_work_dir  # type: ignore[attr-defined]
    assert isinstance(local_dir, Path) and local_dir.is_dir()
    with pytest.raises(zr.StoreError, match="injected 500 on upload_part"):
        tc.commit_task()
    assert faulty.calls["create_multipart"] == 2
    assert faulty.calls["abort_multipart"] == 2
    assert local_env.uploads(dest) == []
    assert not local_dir.exists()


def test_staging_abort_failures_keep_the_original_error(local_env: Env) -> None:
    """Hadoop: TestStagingCommitter.testTaskUploadAndAbortFailure: when the aborts fail too,
    the upload failure is what the caller sees; the job's abort later finds the uploads
    through the task's upload intent."""
    dest = local_env.dest()
    opts = options(**{"fs.s3a.committer.threads": "1", "fs.s3a.retry.limit": "0"})
    faulty = FaultyStore(local_env.store)
    faulty.fail("upload_part", nth=5, times=None, status=500)
    faulty.fail("abort_multipart", times=None, status=500)
    job = zr.JobContext(dest, options=opts)
    driver = zr.create_committer("directory", local_env.store, job)
    driver.setup_job()
    tc = zr.create_committer("directory", faulty, job, task=job.task(0))
    tc.setup_task()
    tc.write("f1", b"1" * 700)
    tc.write("f2", b"2" * 700)
    with pytest.raises(zr.StoreError, match="upload_part"):
        tc.commit_task()
    assert len(local_env.uploads(dest)) == 2
    driver.abort_job()
    assert local_env.uploads(dest) == []
    assert local_env.objects(dest) == {}


def test_magic_writer_failure_then_abort_job(env: Env) -> None:
    """A magic writer whose part upload fails permanently raises a StoreError naming the
    file; its upload is aborted, and abort_job leaves nothing."""
    dest = env.dest()
    opts = options(**{"fs.s3a.retry.limit": "2"})
    faulty = FaultyStore(env.store).fail("upload_part", nth=2, times=None, status=500)
    job = zr.JobContext(dest, options=opts)
    driver = zr.create_committer("magic", env.store, job)
    driver.setup_job()
    tc = zr.create_committer("magic", faulty, job, task=job.task(0))
    tc.setup_task()
    with pytest.raises(zr.StoreError, match="part-0") as info, tc.open("part-0") as f:
        f.write(b"x" * 1000)
    assert info.value.status == 500
    assert faulty.calls["upload_part"] == 1, "3 attempts, the 2nd..4th calls all failed"
    driver.abort_job()
    assert env.uploads(dest) == []
    assert env.objects(dest) == {}


@pytest.mark.parametrize("committer", ["magic", "manifest"])
def test_progress_callback_reports_stages_and_files(committer: str, local_env: Env) -> None:
    """Hadoop: TestFileOutputCommitter.testProgressDuringMerge, TestRenameStageFailure
    (progress > 0): long commits heart-beat per file and per stage."""
    events: list[zr.ProgressEvent] = []
    lock = threading.Lock()

    def progress(event: zr.ProgressEvent) -> None:
        with lock:
            events.append(event)

    dest = local_env.dest()
    files = {t: {f"f{t}-{i}": b"x" for i in range(4)} for t in range(3)}
    job = zr.JobContext(dest, options=options(), progress=progress)
    driver = zr.create_committer(committer, local_env.store, job)
    driver.setup_job()
    messages = []
    for t, task_files in files.items():
        tc = zr.create_committer(committer, local_env.store, job, task=job.task(t))
        tc.setup_task()
        for rel, data in task_files.items():
            tc.write(rel, data)
        messages.append(tc.commit_task())
    driver.commit_job(messages)
    stages = {e.stage for e in events}
    publish = "job_stage_complete_uploads" if committer == "magic" else "job_stage_rename_files"
    assert publish in stages
    per_file = [e for e in events if e.stage == publish and e.path]
    assert len(per_file) == 12
    assert max(e.done for e in per_file) == 12 and per_file[0].total == 12


def test_broken_progress_callback_never_fails_a_commit(local_env: Env) -> None:
    def progress(event: zr.ProgressEvent) -> None:
        raise RuntimeError("callback bug")

    dest = local_env.dest()
    job = zr.JobContext(dest, options=options(), progress=progress)
    driver = zr.create_committer("magic", local_env.store, job)
    driver.setup_job()
    tc = zr.create_committer("magic", local_env.store, job, task=job.task(0))
    tc.setup_task()
    tc.write("x", b"1")
    driver.commit_job([tc.commit_task()])
    assert local_env.output(dest) == {"x": b"1"}


@pytest.mark.parametrize("committer", ["magic", "directory", "manifest", "v1"])
def test_single_thread_mode_makes_every_request_from_the_caller(committer: str,
                                                                local_env: Env) -> None:
    """With threads = 1 the committer never leaves the calling thread: the simulation harness
    runs committers on greenlets, which cannot be resumed from another thread."""
    dest = local_env.dest()
    faulty = FaultyStore(local_env.store)
    opts = options(**{"fs.s3a.committer.threads": "1",
                      "mapreduce.manifest.committer.io.threads": "1"})
    before = threading.active_count()
    run_job(committer, faulty, dest, {t: {f"f{t}/{i}": b"x" * 300 for i in range(3)}
                                      for t in range(3)}, opts=opts, protocol="hadoop")
    assert faulty.threads == {threading.get_ident()}
    assert threading.active_count() == before
