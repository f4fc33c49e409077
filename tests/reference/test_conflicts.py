"""Staging committers' conflict modes (fs.s3a.committer.staging.conflict-mode)."""

from __future__ import annotations

import pytest

import zerorename as zr

from .conftest_helpers import Env, options, run_job

pytestmark = pytest.mark.usefixtures("no_leaked_threads")

MODE = "fs.s3a.committer.staging.conflict-mode"


def _opts(mode: str | None) -> dict[str, str]:
    return options() if mode is None else options(**{MODE: mode})


@pytest.mark.parametrize("committer", ["directory", "partitioned"])
def test_bad_conflict_mode_rejected_at_construction(committer: str, local_env: Env) -> None:
    """Hadoop: TestStagingDirectoryOutputCommitter / TestStagingPartitionedTaskCommit
    .testBadConflictMode: "merge" is rejected with a message naming MERGE."""
    job = zr.JobContext(local_env.dest(), options=_opts("merge"))
    with pytest.raises(zr.CommitError, match="MERGE"):
        zr.create_committer(committer, local_env.store, job)


def test_directory_fail_mode_checks_only_at_setup(env_with_rgw: Env) -> None:
    """Hadoop: TestStagingDirectoryOutputCommitter.testFailConflictResolution (HADOOP-15469):
    setup_job fails if the destination has data; an empty destination is fine, and nothing
    is re-checked at commit_job."""
    env = env_with_rgw
    dest = env.dest()
    env.put(dest, "existing/part-0", b"old")
    job = zr.JobContext(dest, options=_opts("fail"))
    with pytest.raises(zr.ConflictError, match='conflict resolution mode is "fail"'):
        zr.create_committer("directory", env.store, job).setup_job()
    fresh = env.dest("fresh")
    run = run_job("directory", env.store, fresh, {0: {"a": b"1"}}, opts=_opts("fail"),
                  commit=False)
    env.put(fresh, "appeared-meanwhile", b"x")
    run.driver.commit_job(run.messages)
    assert env.output(fresh) == {"a": b"1", "appeared-meanwhile": b"x"}


@pytest.mark.parametrize("committer", ["directory", "partitioned"])
def test_append_is_the_default(committer: str, local_env: Env) -> None:
    """HADOOP-16357: the default conflict mode is append; same names are overwritten, other
    files are kept."""
    dest = local_env.dest()
    local_env.put(dest, "p=1/old", b"old")
    local_env.put(dest, "p=1/same", b"old")
    run_job(committer, local_env.store, dest, {0: {"p=1/same": b"new", "p=2/x": b"x"}},
            opts=_opts(None))
    assert local_env.output(dest) == {"p=1/old": b"old", "p=1/same": b"new", "p=2/x": b"x"}


def test_directory_replace_deletes_the_destination_but_not_other_jobs(
        env_with_rgw: Env) -> None:
    """Hadoop: TestStagingDirectoryOutputCommitter.testReplaceConflictResolution: job commit
    deletes the whole destination first — but another job's pending area survives."""
    env = env_with_rgw
    dest = env.dest()
    env.put(dest, "old/part-0", b"old")
    env.put(dest, "_SUCCESS", b"stale")
    other = run_job("magic", env.store, dest, {0: {"other/part": b"o"}}, commit=False)
    run_job("directory", env.store, dest, {0: {"new/part": b"n"}}, opts=_opts("replace"))
    assert env.output(dest) == {"new/part": b"n"}
    other.driver.commit_job(other.messages)
    assert env.output(dest) == {"new/part": b"n", "other/part": b"o"}


def test_partitioned_fail_checks_only_the_task_partitions(local_env: Env) -> None:
    """Hadoop: TestStagingPartitionedTaskCommit.testFail / testDefault: commit_task fails if a
    partition it writes to exists; peer partitions and root files do not matter."""
    dest = local_env.dest()
    local_env.put(dest, "dateint=20161115/hour=13/old", b"peer")
    local_env.put(dest, "root-file", b"root")
    run = run_job("partitioned", local_env.store, dest,
                  {0: {"dateint=20161115/hour=14/a.parquet": b"a", "top.parquet": b"t"}},
                  opts=_opts("fail"))
    assert run.success is not None
    job = zr.JobContext(dest, options=_opts("fail"))
    zr.create_committer("partitioned", local_env.store, job).setup_job()
    tc = zr.create_committer("partitioned", local_env.store, job, task=job.task(0))
    tc.setup_task()
    tc.write("dateint=20161115/hour=13/b.parquet", b"b")
    with pytest.raises(zr.ConflictError, match="hour=13"):
        tc.commit_task()
    assert local_env.uploads(dest) == [], "a refused task commit uploads nothing"


def test_partitioned_replace_deletes_exactly_the_partitions_written(env_with_rgw: Env) -> None:
    """Hadoop: TestStagingPartitionedJobCommit.testReplace: delete every partition the job's
    commits write to; leave peer partitions and parents alone."""
    env = env_with_rgw
    dest = env.dest()
    env.put(dest, "dateint=20161115/hour=12/peer", b"peer")
    env.put(dest, "dateint=20161115/hour=13/old", b"old")
    env.put(dest, "dateint=20161115/parent-file", b"parent")
    files = {0: {"dateint=20161115/hour=13/new": b"n13"},
             1: {"dateint=20161116/hour=14/new": b"n14"}}
    run_job("partitioned", env.store, dest, files, opts=_opts("replace"))
    assert env.output(dest) == {
        "dateint=20161115/hour=12/peer": b"peer",
        "dateint=20161115/parent-file": b"parent",
        "dateint=20161115/hour=13/new": b"n13",
        "dateint=20161116/hour=14/new": b"n14",
    }


def test_destination_that_is_a_file_is_refused(local_env: Env) -> None:
    """HADOOP-16357: fail fast if the destination path is a file, not a directory."""
    dest = local_env.dest("a-file")
    local_env.store.put(dest, b"i am a file")
    job = zr.JobContext(dest, options=options())
    for committer in ("directory", "magic", "manifest"):
        with pytest.raises(zr.CommitError, match="is a file"):
            zr.create_committer(committer, local_env.store, job).setup_job()


def test_unique_filenames_option(local_env: Env) -> None:
    """Hadoop: TestPaths.addUUID via fs.s3a.committer.staging.unique-filenames: the job UUID
    goes before the first dot of the file name."""
    dest = local_env.dest()
    run = run_job("directory", local_env.store, dest,
                  {0: {"p=1/part-0000.gz.csv": b"x", "part-0001": b"y"}},
                  opts=options(**{"fs.s3a.committer.staging.unique-filenames": "true"}))
    uid = run.job.id
    assert local_env.output(dest) == {f"p=1/part-0000-{uid}.gz.csv": b"x",
                                      f"part-0001-{uid}": b"y"}
