"""The reference API contract (docs/user/api.md) end to end, for every committer and backend."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import zerorename as zr
from zerorename.formats import SUCCESS_NAME

from .conftest_helpers import (
    ALL,
    S3A,
    Env,
    committer_backends,
    options,
    run_job,
)

pytestmark = pytest.mark.usefixtures("no_leaked_threads")

VISIBLE_AT_TASK_COMMIT = {"v2"}  # FileOutputCommitter v2 publishes at task commit (unsafe)


def _payload(task: int) -> dict[str, bytes]:
    return {
        f"part-m-{task:05d}": f"key{task}\tval{task}\n".encode() * 3,
        f"year=2024/month={task}/part-{task:05d}.parquet": bytes(range(256)) * 2 + b"tail",
    }


@pytest.mark.parametrize("protocol", ["spark", "hadoop"])
@pytest.mark.parametrize(("committer", "backend"), committer_backends())
def test_commit_lifecycle(committer: str, backend: str, protocol: str,
                          backend_env: Env) -> None:
    """Hadoop: AbstractITCommitProtocol.testCommitLifecycle (also
    TestManifestCommitProtocol.testCommitLifecycle, TestFileOutputCommitter.testCommitterV1/V2):
    nothing visible after task commit, everything exact after job commit, JSON _SUCCESS naming
    the job, no uploads or temporary data left."""
    env = backend_env
    dest = env.dest()
    job = zr.JobContext(dest, options=options())
    jc = zr.create_committer(committer, env.store, job)
    jc.setup_job()
    messages = []
    expected: dict[str, bytes] = {}
    for task_id in range(3):
        tc = zr.create_committer(committer, env.store, job, task=job.task(task_id))
        tc.setup_task()
        assert tc.work_path, "a task committer exposes its work path"
        for rel, data in _payload(task_id).items():
            with tc.open(rel) as f:
                f.write(data[:100])
                f.write(data[100:])
            expected[rel] = data
        assert tc.needs_task_commit()
        message = tc.commit_task()
        wire = json.dumps(message.to_json())  # JSON-serialisable, as Spark ships it
        messages.append(zr.TaskCommitMessage.from_json(json.loads(wire)))
    visible = env.output(dest)
    if committer in VISIBLE_AT_TASK_COMMIT:
        assert visible == expected
    else:
        assert visible == {}, f"{committer} published before job commit: {sorted(visible)}"
    if committer in S3A:
        assert env.uploads(dest), "task commit leaves uncompleted uploads for job commit"
    success = jc.commit_job(messages if protocol == "spark" else None)
    assert env.output(dest) == expected
    everything = env.objects(dest)
    assert set(everything) == set(expected) | {"_SUCCESS"}, "temporary data left behind"
    assert env.uploads(dest) == []
    on_disk = zr.read_success(env.store, dest)
    assert on_disk.name == SUCCESS_NAME
    assert on_disk.committer == committer
    assert on_disk.job_id == job.id == success.job_id
    assert on_disk.success is True
    if not (committer == "v2" and protocol == "hadoop"):  # v2's job commit never sees files
        assert sorted(on_disk.filenames) == sorted(f"{dest}/{rel}" for rel in expected)
        assert on_disk.counter("committer_files_committed") == len(expected)
        assert on_disk.counter("committer_bytes_committed") == sum(map(len, expected.values()))
    tasks_counter = "committer_tasks_succeeded" if committer in S3A else \
        "committer_tasks_completed"
    if committer not in ("v1", "v2") or protocol == "spark":  # FOC keeps no task records
        assert on_disk.counter(tasks_counter) == 3, "task statistics reach _SUCCESS"
    assert on_disk.counter("committer_commit_job") == 1
    assert on_disk.hostname and on_disk.timestamp > 0


@pytest.mark.parametrize(("committer", "backend"), committer_backends(moto=("magic", "directory")))
def test_empty_files_and_zero_task_jobs(committer: str, backend: str, backend_env: Env) -> None:
    """Hadoop: TestStagingCommitter.testSingleTaskEmptyFileCommit, ITestCommitOperations.
    testCommitEmptyFile, TestCommitTaskStage.testCommitEmptyDirectory: 0-byte files are
    committed as 0-byte objects; a job with no tasks commits and writes _SUCCESS."""
    env = backend_env
    dest = env.dest("empty")
    run = run_job(committer, env.store, dest, {0: {"empty.bin": b"", "dir/also-empty": b""}})
    assert env.output(dest) == {"empty.bin": b"", "dir/also-empty": b""}
    assert env.uploads(dest) == []
    assert run.success is not None and len(run.success.filenames) == 2
    for protocol in ("spark", "hadoop"):
        zero = env.dest(f"zero-{protocol}")
        nothing = run_job(committer, env.store, zero, {}, protocol=protocol)
        assert nothing.success is not None and nothing.success.filenames == []
        assert env.objects(zero).keys() == {"_SUCCESS"}


@pytest.mark.parametrize(("committer", "backend"), committer_backends(moto=()))
def test_task_with_no_output(committer: str, backend: str, backend_env: Env) -> None:
    """Hadoop: AbstractITCommitProtocol.testCommitterWithNoOutputs: a task that wrote nothing
    commits; the job publishes nothing from it."""
    env = backend_env
    dest = env.dest()
    job = zr.JobContext(dest, options=options())
    jc = zr.create_committer(committer, env.store, job)
    jc.setup_job()
    tc = zr.create_committer(committer, env.store, job, task=job.task(0))
    tc.setup_task()
    message = tc.commit_task()
    jc.commit_job([message])
    assert env.output(dest) == {}
    assert zr.read_success(env.store, dest).filenames == []


@pytest.mark.parametrize(("committer", "backend"), committer_backends(moto=("magic",)))
def test_second_task_commit_and_second_job_commit_fail(committer: str, backend: str,
                                                       backend_env: Env) -> None:
    """Hadoop: AbstractITCommitProtocol.testCommitterWithDuplicatedCommit and
    testCommitterWithFailure (third commit_job): after a successful commit, committing the task
    or the job again is an error, and the output is unchanged."""
    env = backend_env
    dest = env.dest()
    run = run_job(committer, env.store, dest, {0: {"part-0": b"data"}}, protocol="hadoop")
    with pytest.raises(zr.CommitError):
        run.driver.commit_job(None)
    again = zr.create_committer(committer, env.store, run.job)
    with pytest.raises(zr.CommitError, match=r"never set up|already"):
        again.commit_job(None)
    assert env.output(dest) == {"part-0": b"data"}


@pytest.mark.parametrize(("committer", "backend"), committer_backends(moto=("partitioned",)))
def test_nested_directory_output_and_concurrent_tasks_in_subdir(
        committer: str, backend: str, backend_env: Env) -> None:
    """Hadoop: AbstractITCommitProtocol.testMapFileOutputCommitter and
    testConcurrentCommitTaskWithSubDir: directory-shaped output keeps its structure, two tasks
    writing into SUB_DIR never produce SUB_DIR/SUB_DIR."""
    env = backend_env
    dest = env.dest()
    files = {
        0: {"part-m-00000/index": b"idx", "part-m-00000/data": b"data0", "SUB_DIR/a": b"a"},
        1: {"SUB_DIR/b": b"b"},
    }
    run_job(committer, env.store, dest, files)
    out = env.output(dest)
    assert out == {"part-m-00000/index": b"idx", "part-m-00000/data": b"data0",
                   "SUB_DIR/a": b"a", "SUB_DIR/b": b"b"}
    assert not any(k.startswith("SUB_DIR/SUB_DIR") for k in env.objects(dest))


def test_factory_names_and_unknown_committer(local_env: Env) -> None:
    """Hadoop: AbstractITCommitProtocol.testS3ACommitterFactoryBinding: every documented
    name builds its committer; an unknown name is a clear CommitError."""
    job = zr.JobContext(local_env.dest(), options=options())
    for name in ("v1", "v2", "directory", "partitioned", "magic", "manifest"):
        committer = zr.create_committer(name, local_env.store, job)
        assert committer.name == name
        assert not committer.is_recovery_supported() or name == "v1"
    with pytest.raises(zr.CommitError, match="unknown committer"):
        zr.create_committer("direct", local_env.store, job)


@pytest.mark.parametrize("committer", S3A)
def test_task_operations_need_a_task(committer: str, local_env: Env) -> None:
    """A job-side committer refuses task operations with an error that says what to do."""
    job = zr.JobContext(local_env.dest(), options=options())
    jc = zr.create_committer(committer, local_env.store, job)
    with pytest.raises(zr.CommitError, match="task="):
        jc.open("x")
    with pytest.raises(zr.CommitError):
        jc.commit_task()
    other = zr.JobContext(local_env.dest(), options=options())
    with pytest.raises(zr.CommitError, match="belongs to job"):
        zr.create_committer(committer, local_env.store, job, task=other.task(0))



@pytest.mark.parametrize("committer", ALL)
def test_file_uri_destination_is_percent_decoded(committer: str, tmp_path: Path) -> None:
    """``Path.as_uri()`` percent-encodes spaces, ``#`` and ``%`` (RFC 8089): every committer
    used to write into a directory literally named ``out%20dir%231``.  The destination URI
    is decoded once, where it enters; relative paths stay exact, ``%`` included."""
    target = tmp_path / "out dir#1"
    uri = target.as_uri()
    assert "%20" in uri and "%23" in uri
    store = zr.LocalStore(root=tmp_path / "store-root")
    files = {0: {"part-0": b"zero"}, 1: {"100%25 done/part-1": b"one"}}
    opts = options(**{"fs.s3a.buffer.dir": str(tmp_path / "buffer")})
    run = run_job(committer, store, uri, files, opts=opts)
    assert run.job.dest == f"file://{target}"
    assert (target / "part-0").read_bytes() == b"zero"
    assert (target / "100%25 done" / "part-1").read_bytes() == b"one"
    assert zr.read_success(store, run.job.dest).committer == committer
    undecoded = sorted(str(p) for p in tmp_path.rglob("*out%20dir*"))
    assert undecoded == [], f"paths under the undecoded destination: {undecoded}"
