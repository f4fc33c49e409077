"""Call order: every committer refuses a call its protocol does not allow at that point, with a
:class:`zerorename.CallOrderError` that changes nothing — not the store, not the local
staging area, not the committer's own state (a refused call can be followed by the right one).

The job side detects "set up" through the store (the job attempt's marker, written by
``setup_job``): a *different* committer object may commit a job another one set up, as
Spark's driver does when it builds a fresh job committer for ``commit_job``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

import zerorename as zr
from zerorename.committers.phases import Phase

from .conftest_helpers import ALL, S3A, Env, FaultyStore, options, run_job

pytestmark = pytest.mark.usefixtures("no_leaked_threads")


def _tree(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` (the store's files, its upload area, the staging buffer)."""
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file()}


def _job(env: Env, tmp_path: Path, **extra: str) -> zr.JobContext:
    """A job whose every byte (store, uploads, staging buffer) lives under ``tmp_path``."""
    return zr.JobContext(env.dest(), options=options(**{
        "fs.s3a.buffer.dir": str(tmp_path / "buffer"), **extra}))


def _refused(tmp_path: Path, call: Callable[[], object], match: str) -> None:
    """``call`` raises CallOrderError matching ``match`` and changes no file anywhere."""
    before = _tree(tmp_path)
    with pytest.raises(zr.CallOrderError, match=match) as info:
        call()
    assert isinstance(info.value, zr.CommitError) and info.value.path
    assert _tree(tmp_path) == before, "a refused call must change nothing"


@pytest.mark.parametrize("committer", ALL)
def test_task_calls_before_setup_task_are_refused(committer: str, local_env: Env,
                                                  tmp_path: Path) -> None:
    """open/write/needs_task_commit/commit_task before setup_task: refused (the magic
    committer used to start a multipart upload, and commit_task returned a message); after
    the refusals the right order still works."""
    job = _job(local_env, tmp_path)
    zr.create_committer(committer, local_env.store, job).setup_job()
    tc = zr.create_committer(committer, local_env.store, job, task=job.task(0))
    _refused(tmp_path, lambda: tc.open("part-0"), "setup_task")
    _refused(tmp_path, lambda: tc.write("part-0", b"x"), "setup_task")
    _refused(tmp_path, tc.needs_task_commit, "setup_task")
    _refused(tmp_path, tc.commit_task, "setup_task")
    assert local_env.uploads(local_env.dest()) == []
    tc.setup_task()
    tc.write("part-0", b"x")
    assert tc.needs_task_commit()
    message = tc.commit_task()
    assert message.attempt_id == job.task(0).attempt_id


@pytest.mark.parametrize("committer", ALL)
def test_task_calls_after_commit_or_abort_are_refused(committer: str, local_env: Env,
                                                      tmp_path: Path) -> None:
    """A committed or aborted attempt is finished: it cannot be set up, written or committed
    again (a retry is a new attempt), and says it needs no commit."""
    job = _job(local_env, tmp_path)
    zr.create_committer(committer, local_env.store, job).setup_job()
    tc = zr.create_committer(committer, local_env.store, job, task=job.task(0))
    tc.setup_task()
    _refused(tmp_path, tc.setup_task, "already set up")
    tc.write("part-0", b"x")
    tc.commit_task()
    _refused(tmp_path, lambda: tc.open("part-1"), "already committed")
    _refused(tmp_path, tc.commit_task, "already committed")
    _refused(tmp_path, tc.setup_task, "already committed")
    assert tc.needs_task_commit() is False
    other = zr.create_committer(committer, local_env.store, job, task=job.task(1))
    other.setup_task()
    other.abort_task()
    _refused(tmp_path, lambda: other.open("part-1"), "aborted")
    _refused(tmp_path, other.commit_task, "aborted")
    other.abort_task()  # abort stays idempotent


@pytest.mark.parametrize("committer", ["directory", "magic"])
def test_a_failed_task_commit_cannot_be_retried_on_the_same_attempt(
        committer: str, local_env: Env, tmp_path: Path) -> None:
    """A task commit that failed has discarded the attempt's data (the staging committers
    delete the local files): committing the same attempt again used to succeed with an empty
    message — the task's output lost, reported as committed.  Now it is refused; abort_task
    still runs."""
    job = _job(local_env, tmp_path, **{"fs.s3a.retry.limit": "0"})
    zr.create_committer(committer, local_env.store, job).setup_job()
    faulty = FaultyStore(local_env.store)
    tc = zr.create_committer(committer, faulty, job, task=job.task(0))
    tc.setup_task()
    tc.write("part-0", b"x" * 700)
    op = "upload_part" if committer == "directory" else "put"
    faulty.fail(op, times=None, status=500)
    with pytest.raises(zr.StoreError, match="injected 500"):
        tc.commit_task()
    faulty.faults.clear()
    _refused(tmp_path, tc.commit_task, "failed")
    _refused(tmp_path, lambda: tc.open("part-1"), "failed")
    tc.abort_task()


@pytest.mark.parametrize("committer", ALL)
@pytest.mark.parametrize("protocol", ["spark", "hadoop"])
def test_commit_job_of_a_job_never_set_up_is_refused(committer: str, protocol: str,
                                                     local_env: Env, tmp_path: Path) -> None:
    """commit_job([]) without setup_job used to write an empty _SUCCESS (Spark protocol);
    now neither protocol touches the store — no _SUCCESS, no failure report, no cleanup."""
    job = _job(local_env, tmp_path, **{
        "fs.s3a.committer.summary.report.directory": f"{local_env.base}/reports"})
    jc = zr.create_committer(committer, local_env.store, job)
    _refused(tmp_path, lambda: jc.commit_job([] if protocol == "spark" else None),
             "never set up")
    assert local_env.objects(local_env.base) == {}
    jc.setup_job()  # the refusal left the committer usable
    assert jc.commit_job([] if protocol == "spark" else None).success


@pytest.mark.parametrize("committer", ALL)
@pytest.mark.parametrize("protocol", ["spark", "hadoop"])
def test_a_fresh_job_committer_commits_a_job_set_up_elsewhere(committer: str, protocol: str,
                                                              local_env: Env) -> None:
    """Spark's driver may build a new job committer for commit_job: the job's marker in the
    store says the job was set up, so the commit proceeds."""
    dest = local_env.dest()
    run = run_job(committer, local_env.store, dest, {0: {"part-0": b"zero"},
                                                     1: {"d/part-1": b"one"}}, commit=False)
    fresh = zr.create_committer(committer, local_env.store, run.job)
    success = fresh.commit_job(run.messages if protocol == "spark" else None)
    assert success.success
    assert local_env.output(dest) == {"part-0": b"zero", "d/part-1": b"one"}


@pytest.mark.parametrize("committer", ALL)
def test_job_calls_after_commit_abort_or_a_failed_commit_are_refused(
        committer: str, local_env: Env, tmp_path: Path) -> None:
    """setup_job twice, commit_job after commit_job, after abort_job, or after a commit_job
    that failed (and so aborted the job): refused without touching the store."""
    dest = local_env.dest()
    run = run_job(committer, local_env.store, dest, {0: {"part-0": b"zero"}})
    _refused(tmp_path, lambda: run.driver.commit_job(run.messages), "already committed")
    _refused(tmp_path, run.driver.setup_job, "already committed")

    job = _job(local_env, tmp_path)
    jc = zr.create_committer(committer, local_env.store, job)
    jc.setup_job()
    _refused(tmp_path, jc.setup_job, "already set up")
    jc.abort_job()
    _refused(tmp_path, lambda: jc.commit_job([]), "aborted")

    failing = run_job(committer, local_env.store, local_env.dest("failing"),
                      {0: {"part-0": b"zero"}}, commit=False)
    with pytest.raises(zr.FormatError):
        failing.driver.commit_job(["not a message"])
    if committer in S3A:  # their failed commit aborted the job: nothing is left to commit
        _refused(tmp_path, lambda: failing.driver.commit_job(failing.messages), "failed")
    else:  # the rename committers keep the job whole for a rerun of commit_job
        assert failing.driver.job_phase is Phase.SET_UP
        failing.driver.commit_job(failing.messages)
        assert failing.driver.job_phase is Phase.COMMITTED


@pytest.mark.parametrize("committer", S3A)
def test_job_side_committer_still_refuses_task_calls_first(committer: str,
                                                           local_env: Env) -> None:
    """A job committer has no task: that error (how to get a task committer) comes before
    any call-order error."""
    job = zr.JobContext(local_env.dest(), options=options())
    jc = zr.create_committer(committer, local_env.store, job)
    with pytest.raises(zr.CommitError, match="task=") as info:
        jc.setup_task()
    assert not isinstance(info.value, zr.CallOrderError)
