"""Spark's protocol (commit exactly these messages) versus Hadoop's (discover in the store),
duplicate task attempts, and job recovery."""

from __future__ import annotations

import pytest

import zerorename as zr
from zerorename.store import list_dir

from .conftest_helpers import (
    ALL,
    S3A,
    Env,
    committer_backends,
    options,
    run_job,
)

pytestmark = pytest.mark.usefixtures("no_leaked_threads")

NOT_V2 = tuple(c for c in ALL if c != "v2")  # v2 publishes at task commit


def _task(committer: str, store: zr.Store, job: zr.JobContext, task_id: int,
          files: dict[str, bytes], attempt: int = 0) -> zr.TaskCommitMessage:
    tc = zr.create_committer(committer, store, job, task=job.task(task_id, attempt))
    tc.setup_task()
    for rel, data in files.items():
        tc.write(rel, data)
    return tc.commit_task()


@pytest.mark.parametrize(("committer", "backend"),
                         committer_backends(NOT_V2, moto=("magic", "directory"),
                                            rgw=("magic", "directory", "manifest")))
def test_spark_protocol_commits_exactly_the_given_messages(committer: str, backend: str,
                                                           backend_env: Env) -> None:
    """Spark's FileCommitProtocol: the driver commits the attempts whose messages it holds;
    a committed task whose message it dropped is discarded, uploads and all."""
    env = backend_env
    dest = env.dest()
    job = zr.JobContext(dest, options=options())
    jc = zr.create_committer(committer, env.store, job)
    jc.setup_job()
    messages = [_task(committer, env.store, job, t, {f"part-{t}": bytes([65 + t]) * 300})
                for t in range(3)]
    jc.commit_job([messages[0], messages[2]])
    assert env.output(dest) == {"part-0": b"A" * 300, "part-2": b"C" * 300}
    assert env.uploads(dest) == []
    assert set(env.objects(dest)) == {"part-0", "part-2", "_SUCCESS"}


@pytest.mark.parametrize("committer", NOT_V2)
def test_spark_protocol_reads_messages_not_the_stored_records(committer: str,
                                                              local_env: Env) -> None:
    """With messages, job commit needs no stored pendingset/manifest: deleting them all
    before commit_job changes nothing (no listing of task data is relied on)."""
    dest = local_env.dest()
    run = run_job(committer, local_env.store, dest, {0: {"a": b"1"}, 1: {"b/c": b"2"}},
                  commit=False)
    records = [m.record for m in run.messages if m.record.endswith(("pendingset", ".json"))]
    for url in records:
        local_env.store.delete(url)
    run.driver.commit_job(run.messages)
    assert local_env.output(dest) == {"a": b"1", "b/c": b"2"}


@pytest.mark.parametrize(("committer", "backend"),
                         committer_backends(NOT_V2, moto=("magic",), rgw=("magic", "directory")))
def test_hadoop_protocol_discovers_only_committed_tasks(committer: str, backend: str,
                                                        backend_env: Env) -> None:
    """Hadoop: AbstractITCommitProtocol.testCommitJobButNotTask — output of a task that never
    committed is not published, and its uploads are aborted (a fresh driver commits)."""
    env = backend_env
    dest = env.dest()
    job = zr.JobContext(dest, options=options())
    zr.create_committer(committer, env.store, job).setup_job()
    _task(committer, env.store, job, 0, {"committed": b"yes"})
    uncommitted = zr.create_committer(committer, env.store, job, task=job.task(1))
    uncommitted.setup_task()
    with uncommitted.open("uncommitted") as f:
        f.write(b"no" * 200)
    fresh_driver = zr.create_committer(committer, env.store, job)
    success = fresh_driver.commit_job(None)
    assert env.output(dest) == {"committed": b"yes"}
    assert env.uploads(dest) == []
    assert success.filenames == [f"{dest}/committed"]


@pytest.mark.parametrize("committer", NOT_V2)
@pytest.mark.parametrize("protocol", ["spark", "hadoop"])
def test_speculative_attempt_not_committed_leaves_no_trace(committer: str, protocol: str,
                                                           local_env: Env) -> None:
    """Speculation: two attempts of one task write the same file; only one commits; the
    output holds exactly its bytes and the loser's upload/data is gone."""
    dest = local_env.dest()
    job = zr.JobContext(dest, options=options())
    jc = zr.create_committer(committer, local_env.store, job)
    jc.setup_job()
    loser = zr.create_committer(committer, local_env.store, job, task=job.task(0, 0))
    loser.setup_task()
    loser.write("part-00000", b"L" * 700)
    winner = _task(committer, local_env.store, job, 0, {"part-00000": b"W" * 500}, attempt=1)
    jc.commit_job([winner] if protocol == "spark" else None)
    assert local_env.output(dest) == {"part-00000": b"W" * 500}
    assert local_env.uploads(dest) == []
    loser.abort_task()  # Spark kills and aborts the loser afterwards: harmless
    assert local_env.output(dest) == {"part-00000": b"W" * 500}


@pytest.mark.parametrize(("committer", "backend"),
                         committer_backends(("magic", "directory", "manifest"), moto=("magic",),
                                            rgw=("magic", "directory", "manifest")))
def test_two_task_attempts_commit_last_wins_with_hadoop_protocol(
        committer: str, backend: str, backend_env: Env) -> None:
    """Hadoop: AbstractITCommitProtocol.testTwoTaskAttemptsCommit (HADOOP-17258) and
    TestManifestCommitProtocol.testTwoTaskAttemptsCommit: both attempts of task 0 commit
    (attempt 0 then attempt 1, different file names); job commit keeps only the last one,
    _SUCCESS lists 1 file, no uploads remain.  zerorename names pendingsets per attempt, so
    neither overwrote the other; discovery picks the last committed."""
    env = backend_env
    dest = env.dest()
    job = zr.JobContext(dest, options=options())
    jc = zr.create_committer(committer, env.store, job)
    jc.setup_job()
    _task(committer, env.store, job, 0, {"part-m-00000": b"first"}, attempt=0)
    _task(committer, env.store, job, 0, {"attempt2-m-00000": b"second"}, attempt=1)
    success = jc.commit_job(None)
    assert env.output(dest) == {"attempt2-m-00000": b"second"}
    assert len(success.filenames) == 1
    assert env.uploads(dest) == []
    assert "duplicate.task.commits" in success.diagnostics


def test_spark_protocol_refuses_two_messages_for_one_task(local_env: Env) -> None:
    """Two messages for one task: which output wins would be undefined, so the job fails
    (and aborts what it owns) rather than guess."""
    dest = local_env.dest()
    job = zr.JobContext(dest, options=options())
    jc = zr.create_committer("magic", local_env.store, job)
    jc.setup_job()
    m0 = _task("magic", local_env.store, job, 0, {"a": b"1"}, attempt=0)
    m1 = _task("magic", local_env.store, job, 0, {"b": b"2"}, attempt=1)
    with pytest.raises(zr.CommitError, match="committed twice"):
        jc.commit_job([m0, m1])
    assert local_env.output(dest) == {}
    assert local_env.uploads(dest) == []


@pytest.mark.parametrize(("committer", "backend"),
                         committer_backends(("magic", "directory", "manifest"), moto=("magic",),
                                            rgw=("magic", "directory")))
def test_recovery_unsupported_and_next_attempt_abort_cleans_up(
        committer: str, backend: str, backend_env: Env) -> None:
    """Hadoop: AbstractITCommitProtocol.testRecoveryAndCleanup / TestManifestCommitProtocol.
    testRecoveryAndCleanup: attempt 1's committed task; attempt 2 cannot recover it (error
    mentions "recover"), uses different paths, and its abort_job leaves no uploads."""
    env = backend_env
    dest = env.dest()
    job1 = zr.JobContext(dest, job_id="job-recovery", attempt=1, options=options())
    zr.create_committer(committer, env.store, job1).setup_job()
    _task(committer, env.store, job1, 0, {"part-0": b"x" * 600})
    job2 = zr.JobContext(dest, job_id="job-recovery", attempt=2, options=options())
    driver2 = zr.create_committer(committer, env.store, job2)
    driver2.setup_job()
    tc2 = zr.create_committer(committer, env.store, job2, task=job2.task(0))
    assert not driver2.is_recovery_supported()
    with pytest.raises(zr.CommitError, match="recover"):
        tc2.recover_task(job2.task(0))
    assert tc2.work_path != zr.create_committer(committer, env.store, job1,
                                                task=job1.task(0)).work_path
    tc2.abort_task()
    driver2.abort_job()
    assert env.uploads(dest) == []
    assert env.objects(dest) == {}


def test_v1_recovers_committed_tasks_after_a_driver_restart(local_env: Env) -> None:
    """Hadoop: TestFileOutputCommitter.testRecoveryV1: attempt 1 commits a task; attempt 2's
    recover_task moves it into its own job attempt; job commit publishes it.  Recovery in
    attempt 0 is refused ("cannot recover task output for first attempt")."""
    dest = local_env.dest()
    job0 = zr.JobContext(dest, job_id="job-v1", attempt=0, options=options())
    zr.create_committer("v1", local_env.store, job0).setup_job()
    _task("v1", local_env.store, job0, 0, {"part-m-00000": b"recovered"})
    with pytest.raises(zr.CommitError, match="first attempt"):
        zr.create_committer("v1", local_env.store, job0, task=job0.task(0)).recover_task()
    job1 = zr.JobContext(dest, job_id="job-v1", attempt=1, options=options())
    driver = zr.create_committer("v1", local_env.store, job1)
    driver.setup_job()
    tc = zr.create_committer("v1", local_env.store, job1, task=job1.task(0))
    assert tc.is_recovery_supported()
    tc.recover_task(job1.task(0))
    driver.commit_job(None)
    assert local_env.output(dest) == {"part-m-00000": b"recovered"}


def test_v2_publishes_at_task_commit(local_env: Env) -> None:
    """Hadoop: TestFileOutputCommitter.testCommitterV2 and MAPREDUCE-7282: v2's task commit
    makes output visible before the job commits, and an aborted job cannot take it back —
    kept visible here so the hazard stays documented."""
    dest = local_env.dest()
    run = run_job("v2", local_env.store, dest, {0: {"part-0": b"early"}}, commit=False)
    assert local_env.output(dest) == {"part-0": b"early"}
    run.driver.abort_job()
    assert local_env.output(dest) == {"part-0": b"early"}


def test_v1_and_v2_refuse_stores_without_rename(moto_env: Env) -> None:
    """On S3, FileOutputCommitter would rename by copying (O(data), not atomic): refused with
    advice, unless zerorename.fileoutput.rename-by-copy=true."""
    job = zr.JobContext(moto_env.dest(), options=options())
    for name in ("v1", "v2"):
        with pytest.raises(zr.CommitError, match="magic, directory or partitioned"):
            zr.create_committer(name, moto_env.store, job)
    allowed = zr.JobContext(moto_env.dest("copy"), options=options(
        **{"zerorename.fileoutput.rename-by-copy": "true"}))
    run_job("v1", moto_env.store, allowed.dest, {0: {"a/b": b"copied"}}, opts=dict(
        allowed.options))
    assert moto_env.output(allowed.dest) == {"a/b": b"copied"}


@pytest.mark.parametrize("committer", S3A)
def test_job_root_is_per_job_and_cleaned(committer: str, local_env: Env) -> None:
    """HADOOP-18797: per-job magic/staging directories; after commit nothing of the job's
    records remains under the destination."""
    dest = local_env.dest()
    run = run_job(committer, local_env.store, dest, {0: {"x": b"1"}}, commit=False)
    roots = {o.url[len(dest) + 1:].split("/")[0] for o in list_dir(local_env.store, dest)}
    assert any(run.job.id in r for r in roots), roots
    run.driver.commit_job(run.messages)
    assert set(local_env.objects(dest)) == {"x", "_SUCCESS"}
