"""Behaviours of S3A's committers in hadoop-aws 3.5.0 as model options (issue 45; the
conformance run sets them, the matrix does not: docs/research/s3a-findings.md, findings 6
and 7).

* :data:`CLEANUP_ABORT_FAILS_ON_MISSING`: the job clean-up lists the uploads under the
  destination and aborts each; one answering 404 (completed or aborted since the listing) fails
  ``commitJob`` (after ``_SUCCESS``) and ``abortJob``.  The paper's model passes over it.
* :data:`PER_JOB_DIRECTORY`: magic's work lies under the job's own ``__magic_job-<uuid>/``,
  and a job's clean-up deletes only that, not another job's ``.pending`` files.
* :data:`DELETE_ATTEMPT_AFTER_COMMIT`: magic's ``commitTask`` deletes the task attempt
  directory in a ``finally``, after a killed commit too (its ``abortTask`` then aborts nothing).

Each unit test fails without its option's code; the exploration tests record what turning an
option on does to verdicts of the matrix (which keeps the paper's procedure, without them): on
s3, the clean-up option breaks magic's abortability and liveness and the staging committers'
abortability (ambiguous aborts), which hold without it; the per-job directory changed no verdict
of magic at 600 runs a scope (docs/research/s3a-findings.md, findings 6 and 7).
"""

from __future__ import annotations

import pytest

from tests.model.test_hdfs_directories import _Env
from zerorename.store import UploadInfo
from zerorename_model.check.explore import explore
from zerorename_model.engine.errors import ActorCrashed
from zerorename_model.engine.harness.state import TaskKilled
from zerorename_model.engine.scenario import JobSpec, TaskSpec
from zerorename_model.engine.stores.store import ModelStore
from zerorename_model.experiments.scopes import SCOPES
from zerorename_model.systems.protocols import get
from zerorename_model.systems.protocols.common import (
    CLEANUP_ABORT_FAILS_ON_MISSING,
    PENDING,
    PENDINGSET,
    CommitFailed,
)
from zerorename_model.systems.protocols.magic import (
    DELETE_ATTEMPT_AFTER_COMMIT,
    PER_JOB_DIRECTORY,
    MagicCommitter,
)
from zerorename_model.systems.protocols.staging import DirectoryStagingCommitter

OUT = "s3://bucket/out"
ON = {CLEANUP_ABORT_FAILS_ON_MISSING: "true"}


class _RacedStore(ModelStore):
    """A store where someone else completes the first listed upload right after the clean-up's
    LIST of uploads (the other job's commit, in the long run's schedules)."""

    raced: list[str]

    def list_multipart_uploads(self, prefix: str) -> list[UploadInfo]:
        listed = super().list_multipart_uploads(prefix)
        if listed and not getattr(self, "raced", None):
            first = listed[0]
            self.raced = [first.url]
            self.abort_multipart(first.url, first.upload_id)
        return listed


class _StagingEnv(_Env):
    """One local disk for the whole test (a staging task's files stay where it wrote them)."""

    def __init__(self, store: ModelStore) -> None:
        super().__init__(store)
        self.disk = ModelStore("hdfs")

    def local(self) -> ModelStore:
        return self.disk


def _magic(store: ModelStore, job: JobSpec, task: TaskSpec | None,
           options: dict[str, str]) -> MagicCommitter:
    return MagicCommitter(_Env(store), job, task, options)


def _uploads(store: ModelStore, count: int) -> None:
    for i in range(count):
        store.create_multipart(f"{OUT}/other-{i}")


@pytest.mark.parametrize("options", [{}, ON])
def test_the_magic_job_commit_fails_after_publishing_when_an_upload_vanished(
        options: dict[str, str]) -> None:
    store = _RacedStore("s3")
    job = JobSpec(OUT, "job0", 0, 0)
    task = TaskSpec(job, 0, 0)
    _magic(store, job, task, options).write("part-0", b"data")
    _magic(store, job, task, options).commit_task()
    _uploads(store, 2)  # e.g. another job's pending uploads under the same destination
    committer = _magic(store, job, None, options)
    if not options:  # the paper's procedure: the vanished upload counts as aborted
        committer.commit_job(None)
    else:
        with pytest.raises(CommitFailed, match="NoSuchUpload"):
            committer.commit_job(None)
    # published either way, and the clean-up went on: every other upload aborted, magic gone
    assert store.get(f"{OUT}/part-0") == b"data"
    assert store.head(f"{OUT}/_SUCCESS") is not None
    assert not store.list_multipart_uploads(f"{OUT}/")
    assert not [k for k in store.snapshot() if "__magic" in k]


@pytest.mark.parametrize("options", [{}, ON])
def test_abort_job_and_the_deprecated_cleanup(options: dict[str, str]) -> None:
    """abortJob is the clean-up in 3.5.0 and fails likewise; cleanupJob suppresses it."""
    job = JobSpec(OUT, "job0", 0, 0)
    for make in (_magic, lambda s, j, t, o: DirectoryStagingCommitter(_Env(s), j, t, o)):
        store = _RacedStore("s3")
        _uploads(store, 2)
        committer = make(store, job, None, options)
        if options:
            with pytest.raises(CommitFailed, match="NoSuchUpload"):
                committer.abort_job()
        else:  # as the harness's driver does
            committer.abort_job()
            committer.cleanup_job()
        assert not store.list_multipart_uploads(f"{OUT}/")
        store = _RacedStore("s3")
        _uploads(store, 2)
        make(store, job, None, options).cleanup_job()  # never fails
        assert not store.list_multipart_uploads(f"{OUT}/")


def test_the_staging_job_commit_fails_after_publishing_when_an_upload_vanished() -> None:
    store = _RacedStore("s3")
    job = JobSpec(OUT, "job0", 0, 0)
    task = TaskSpec(job, 0, 0)
    env = _StagingEnv(store)
    writer = DirectoryStagingCommitter(env, job, task, ON)
    writer.write("part-0", b"data")
    message = writer.commit_task()
    _uploads(store, 1)
    with pytest.raises(CommitFailed, match="NoSuchUpload"):
        DirectoryStagingCommitter(env, job, None, ON).commit_job([message])
    assert store.get(f"{OUT}/part-0") == b"data"
    plain = _RacedStore("s3")
    env = _StagingEnv(plain)
    writer = DirectoryStagingCommitter(env, job, task, {})
    writer.write("part-0", b"data")
    message = writer.commit_task()
    _uploads(plain, 1)
    DirectoryStagingCommitter(env, job, None, {}).commit_job([message])
    assert plain.get(f"{OUT}/part-0") == b"data"
    assert not plain.list_multipart_uploads(f"{OUT}/")


@pytest.mark.parametrize("per_job", [False, True])
def test_a_magic_jobs_clean_up_deletes_another_jobs_pending_files_only_when_shared(
        per_job: bool) -> None:
    store = ModelStore("s3")
    options = {PER_JOB_DIRECTORY: "true"} if per_job else {}
    jobs = [JobSpec(OUT, f"job{i}", 0, i) for i in range(2)]
    writer = _magic(store, jobs[1], TaskSpec(jobs[1], 0, 0), options)
    writer.write("part-1", b"one")
    pending = [k for k in store.snapshot() if k.endswith(PENDING)]
    assert len(pending) == 1
    assert ("/__magic_job-job1/job-job1/00/tasks/" in pending[0]) is per_job
    _magic(store, jobs[0], None, options).cleanup_job()
    if per_job:  # 3.5.0: job 1's task still commits
        assert writer.commit_task()["commits"]
    else:  # the shared __magic went with job 0's clean-up
        assert not [k for k in store.snapshot() if k.endswith(PENDING)]
        assert writer.commit_task()["commits"] == []


#: (committer, scope, property, what the violation says): a verdict of the matrix (s3, where
#: each holds) that exploring with the clean-up option turns to violated, and how
OPTION_BREAKS = [
    # the job abort races its own killed task's abort of an upload (the long run's
    # ``magic abort-spark`` difference): abortJob fails
    ("magic", "abort-hadoop", "abortability", "abort failed"),
    # a duplicate attempt's abort of its upload races the job commit's clean-up: commitJob
    # fails after publishing, so a job with bounded faults is reported failed
    ("magic", "duplicate-hadoop", "liveness", "ended aborted"),
    # an abort whose answer was lost took effect; the clean-up's abort of it answers 404
    ("directory", "ambiguous-abort-hadoop", "abortability", "abort failed"),
]


@pytest.mark.parametrize(("committer", "scope_name", "prop", "says"), OPTION_BREAKS)
def test_exploring_the_clean_up_option_breaks_a_verdict(committer: str, scope_name: str,
                                                        prop: str, says: str) -> None:
    """The same budget finds nothing without the option (the matrix: holds)."""
    scope = next(s for s in SCOPES if s.name == scope_name)
    base = scope.make(committer, "s3")
    plain = explore(base, get(committer), [prop], max_runs=300)
    assert not plain.violations
    report = explore(base.with_(options=(*base.options, (CLEANUP_ABORT_FAILS_ON_MISSING,
                                                         "true"))),
                     get(committer), [prop], max_runs=300)
    violation = str(report.violations[prop][0][0])
    assert says in violation and "NoSuchUpload" in violation, violation


class _KilledAtPendingset(ModelStore):
    """A store whose PUT of a ``.pendingset`` is where the task attempt is interrupted: a kill
    (Spark cancels the attempt; S3A's ``finally`` runs) or a crash (the process is gone)."""

    def __init__(self, kind: str, fault: type[BaseException]) -> None:
        super().__init__(kind)
        self.fault = fault

    def put(self, url: str, data: bytes, *, if_none_match: bool = False,
            if_match: str | None = None) -> str:
        if url.endswith(PENDINGSET):
            raise self.fault("j0.t0.a0")
        return super().put(url, data, if_none_match=if_none_match, if_match=if_match)


@pytest.mark.parametrize("options", [{}, {DELETE_ATTEMPT_AFTER_COMMIT: "true"}])
def test_magic_commit_task_deletes_its_attempt_directory_at_its_end(
        options: dict[str, str]) -> None:
    """Hadoop 3.5.0's commitTask deletes the task attempt directory in a ``finally``: after a
    commit, and after a killed one, whose abortTask then finds no ``.pending`` file and leaves
    the upload to the job's clean-up (``magic abort-hadoop seed 606575069720475``)."""
    job = JobSpec(OUT, "job0", 0, 0)
    task = TaskSpec(job, 0, 0)
    deletes = bool(options)

    def pending(store: ModelStore) -> list[str]:
        return [k for k in store.snapshot() if k.endswith(PENDING)]

    store = ModelStore("s3")
    _magic(store, job, task, options).write("part-0", b"data")
    _magic(store, job, task, options).commit_task()
    assert (pending(store) == []) is deletes
    assert [k for k in store.snapshot() if k.endswith(PENDINGSET)]  # the commit itself

    killed = _KilledAtPendingset("s3", TaskKilled)
    _magic(killed, job, task, options).write("part-0", b"data")
    with pytest.raises(TaskKilled):
        _magic(killed, job, task, options).commit_task()
    assert (pending(killed) == []) is deletes
    _magic(killed, job, task, options).abort_task()  # Spark's writer aborts a killed task
    assert (len(killed.list_multipart_uploads(f"{OUT}/")) == 1) is deletes

    crashed = _KilledAtPendingset("s3", ActorCrashed)  # no finally in a dead process
    _magic(crashed, job, task, options).write("part-0", b"data")
    with pytest.raises(ActorCrashed):
        _magic(crashed, job, task, options).commit_task()
    assert len(pending(crashed)) == 1
