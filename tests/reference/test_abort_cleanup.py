"""Abort and cleanup: nothing of an aborted job remains, and nothing of *another* job is
touched — adjacent destinations (dataset1/dataset10), or the same destination."""

from __future__ import annotations

import errno
import os
import threading
from pathlib import Path
from typing import Any

import pytest

import zerorename as zr
from zerorename.committers.deletes import delete_pages
from zerorename.committers.layout import RESERVED_FIRST_ELEMENTS, RESERVED_PREFIXES
from zerorename.executor import BoundedExecutor
from zerorename.stores import DeleteManyError
from zerorename.stores.local import COMMITTER_AREA_NAMES, COMMITTER_AREA_PREFIXES
from zerorename.urls import parse_url

from .conftest_helpers import (
    ALL,
    ON_S3,
    S3A,
    Env,
    FaultyStore,
    SimulatedCrash,
    committer_backends,
    options,
    run_job,
)

pytestmark = pytest.mark.usefixtures("no_leaked_threads")

NOT_V2 = tuple(c for c in ALL if c != "v2")


def _started(committer: str, store: zr.Store, dest: str, *, job_id: str | None = None,
             task_id: int = 0, write: bool = True,
             opts: dict[str, str] | None = None) -> tuple[zr.BaseCommitter, zr.BaseCommitter]:
    job = zr.JobContext(dest, job_id=job_id, options=opts or options())
    jc = zr.create_committer(committer, store, job)
    jc.setup_job()
    tc = zr.create_committer(committer, store, job, task=job.task(task_id))
    tc.setup_task()
    if write:
        with tc.open("part-m-00000") as f:
            f.write(b"data" * 200)
    return jc, tc


@pytest.mark.parametrize(("committer", "backend"),
                         committer_backends(moto=("magic",), rgw=ON_S3))
def test_abort_task_then_job_leaves_nothing(committer: str, backend: str,
                                            backend_env: Env) -> None:
    """Hadoop: AbstractITCommitProtocol.testAbortTaskThenJob and testFailAbort: after
    abort_task and abort_job the destination is empty (no job directories either), no uploads
    are pending, and abort_job again is harmless."""
    env = backend_env
    dest = env.dest()
    jc, tc = _started(committer, env.store, dest)
    if committer == "v2":
        tc.abort_task()
    else:
        tc.commit_task() if committer in S3A else None
        tc.abort_task()
    jc.abort_job()
    assert env.objects(dest) == {}
    assert env.uploads(dest) == []
    jc.abort_job()
    jc.cleanup_job()
    assert env.objects(dest) == {}


@pytest.mark.parametrize("committer", ALL)
def test_abort_job_without_abort_task(committer: str, local_env: Env) -> None:
    """Hadoop: AbstractITCommitProtocol.testAbortJobNotTask: job abort cleans up tasks that
    were never committed or aborted."""
    dest = local_env.dest()
    jc, _task = _started(committer, local_env.store, dest)
    jc.abort_job()
    assert local_env.uploads(dest) == []
    assert local_env.objects(dest) == {}


@pytest.mark.parametrize("committer", ALL)
def test_abort_with_no_work_done(committer: str, local_env: Env) -> None:
    """Hadoop: testAbortTaskNoWorkDone / testAbortJobNoWorkDone."""
    dest = local_env.dest()
    jc, tc = _started(committer, local_env.store, dest, write=False)
    tc.abort_task()
    jc.abort_job()
    assert local_env.objects(dest) == {}


@pytest.mark.parametrize(("committer", "backend"),
                         committer_backends(NOT_V2, moto=("magic",), rgw=("magic", "manifest")))
def test_abort_task_from_another_process(committer: str, backend: str,
                                         backend_env: Env) -> None:
    """Hadoop: AbstractITCommitProtocol.testAMWorkflow: a new committer instance for the same
    attempt (the AM after a container failure) aborts it, finding its records in the store;
    the job then commits without it."""
    env = backend_env
    dest = env.dest()
    jc, tc = _started(committer, env.store, dest)
    if committer in ("magic", "manifest"):
        # committed, but the driver never accepted it (v1's committed directory is per task,
        # not per attempt, so v1 — like Hadoop — leaves it to the job)
        tc.commit_task()
    am = zr.create_committer(committer, env.store, jc.job, task=jc.job.task(0))
    am.abort_task()
    assert env.uploads(dest) == []
    jc.commit_job(None)
    assert env.output(dest) == {}


@pytest.mark.parametrize(("committer", "backend"),
                         committer_backends(S3A, moto=("magic",), rgw=S3A))
def test_adjacent_destinations_are_not_disturbed(committer: str, backend: str,
                                                 backend_env: Env) -> None:
    """Hadoop: AbstractITCommitProtocol.testParallelJobsToAdjacentPaths (the "dataset1 vs
    dataset10" prefix bug): committing or aborting dataset1 never aborts dataset10's uploads,
    even with fs.s3a.committer.abort.pending.uploads=true."""
    env = backend_env
    d1, d10 = env.dest("dataset1"), env.dest("dataset10")
    opts = options(**{"fs.s3a.committer.abort.pending.uploads": "true"})
    j1 = run_job(committer, env.store, d1, {0: {"p": b"one" * 100}}, opts=opts, commit=False)
    j10 = run_job(committer, env.store, d10, {0: {"p": b"ten" * 100}}, opts=opts,
                  commit=False)
    pending10 = {u.upload_id for u in env.uploads(d10)}
    assert pending10
    j1.driver.commit_job(j1.messages)
    assert env.uploads(d1) == []
    assert {u.upload_id for u in env.uploads(d10)} == pending10, "dataset10 was disturbed"
    j1b = run_job(committer, env.store, env.dest("dataset"), {0: {"q": b"x"}}, opts=opts,
                  commit=False)
    j1b.driver.abort_job()
    assert {u.upload_id for u in env.uploads(d10)} == pending10
    j10.driver.commit_job(j10.messages)
    assert env.output(d1) == {"p": b"one" * 100}
    assert env.output(d10) == {"p": b"ten" * 100}
    assert env.uploads(d10) == []


@pytest.mark.parametrize(("committer", "backend"),
                         committer_backends(NOT_V2, moto=("magic",), rgw=("magic", "directory")))
def test_two_jobs_to_the_same_destination(committer: str, backend: str,
                                          backend_env: Env) -> None:
    """Hadoop: AbstractITCommitProtocol.testParallelJobsToSameDestination (HADOOP-17318,
    SPARK-33402): job 2 has an open writer while job 1 commits, and job 1 is committed while
    job 2's task uploads are pending; both outputs land and no uploads remain.  A third job
    aborted meanwhile does not disturb job 2 either."""
    env = backend_env
    dest = env.dest()
    job1 = zr.JobContext(dest, options=options(**{"spark.sql.sources.writeJobUUID": "s1"}))
    job2 = zr.JobContext(dest, options=options(**{"spark.sql.sources.writeJobUUID": "s2"}))
    d1 = zr.create_committer(committer, env.store, job1)
    d2 = zr.create_committer(committer, env.store, job2)
    d1.setup_job()
    d2.setup_job()
    t2 = zr.create_committer(committer, env.store, job2, task=job2.task(0))
    t2.setup_task()
    writer2 = t2.open("task2-part")
    writer2.write(b"2" * 300)
    t1 = zr.create_committer(committer, env.store, job1, task=job1.task(0))
    t1.setup_task()
    t1.write("task1-part", b"1" * 300)
    m1 = t1.commit_task()
    d1.commit_job([m1])
    writer2.write(b"2")
    writer2.close()
    m2 = t2.commit_task()
    job3 = run_job(committer, env.store, dest, {0: {"task3-part": b"3"}}, commit=False)
    job3.driver.abort_job()
    d2.commit_job(None)
    assert env.output(dest) == {"task1-part": b"1" * 300, "task2-part": b"2" * 301}
    assert env.uploads(dest) == []
    assert m1.job_id != m2.job_id


@pytest.mark.parametrize("protocol", ["spark", "hadoop", "abort"])
@pytest.mark.parametrize(("committer", "crash_op", "nth"), [
    ("magic", "create_multipart", 1),   # intent written, upload never created
    ("magic", "upload_part", 2),        # upload created, writer dies mid-file
    ("magic", "put", 2),                # data uploaded, .pending never written
    ("directory", "upload_part", 2),    # task commit dies while uploading
    ("directory", "put", 2),            # uploads done, pendingset never written
    ("manifest", "upload_part", 2),     # a large task file dies mid-upload (temp upload)
    ("manifest", "put", 1),             # files written, manifest never saved
])
def test_crashed_task_attempt_leaves_no_orphan_upload(committer: str, crash_op: str, nth: int,
                                                      protocol: str, local_env: Env) -> None:
    """A task attempt dies between store requests (no cleanup runs in a dead process).  The
    job still commits the other tasks — or aborts — and no upload of the dead attempt
    survives: upload intents written before each upload let the job find them by exact key.
    (The paper's abortability property; Hadoop relied on aborting *every* upload under the
    destination, which kills concurrent jobs.)"""
    dest = local_env.dest()
    job = zr.JobContext(dest, options=options())
    driver = zr.create_committer(committer, local_env.store, job)
    driver.setup_job()
    good = zr.create_committer(committer, local_env.store, job, task=job.task(0))
    good.setup_task()
    good.write("good", b"g" * 600)
    message = good.commit_task()
    dying_store = FaultyStore(local_env.store).crash(crash_op, nth=nth)
    dying = zr.create_committer(committer, dying_store, job, task=job.task(1))
    dying.setup_task()
    with pytest.raises(SimulatedCrash):
        dying.write("doomed", b"d" * 900)
        dying.commit_task()
    if protocol == "abort":
        driver.abort_job()
        assert local_env.objects(dest) == {}
    else:
        driver.commit_job([message] if protocol == "spark" else None)
        assert local_env.output(dest) == {"good": b"g" * 600}
        assert set(local_env.objects(dest)) == {"good", "_SUCCESS"}
    assert local_env.uploads(dest) == []


def test_open_speculative_writer_of_the_same_key_is_swept_not_the_winner(
        env_with_rgw: Env) -> None:
    """Two attempts of one task write the same key; the loser is still writing (an upload
    with no .pending) when the winner's job commits: the loser's upload is aborted by exact
    key, the winner's (same key) is completed.  On RGW the two uploads of one key are listed
    in upload-id order, not creation order, so nothing may depend on which comes first."""
    env = env_with_rgw
    dest = env.dest()
    job = zr.JobContext(dest, options=options())
    driver = zr.create_committer("magic", env.store, job)
    driver.setup_job()
    loser = zr.create_committer("magic", env.store, job, task=job.task(0, 0))
    loser.setup_task()
    stream = loser.open("part-00000")
    stream.write(b"L" * 600)
    winner = zr.create_committer("magic", env.store, job, task=job.task(0, 1))
    winner.setup_task()
    winner.write("part-00000", b"W" * 300)
    driver.commit_job([winner.commit_task()])
    assert env.output(dest) == {"part-00000": b"W" * 300}
    assert env.uploads(dest) == []


def _directories(root: Path) -> list[str]:
    """Every directory under ``root`` (relative), the hidden ones included."""
    return sorted(Path(top).relative_to(root).as_posix()
                  for top, _dirs, _files in os.walk(root) if Path(top) != root)


@pytest.mark.parametrize("ending", ["commit-spark", "commit-hadoop", "abort"])
@pytest.mark.parametrize("committer", ALL)
def test_local_store_keeps_no_committer_directories(committer: str, ending: str,
                                                    local_env: Env) -> None:
    """On a local file system a directory is not an object, but a job must not leave its
    working directories behind (``__magic_job-…``, ``__staging_job-…``, ``_temporary/…``)
    after it commits or aborts; the output's own directories stay."""
    dest = local_env.dest()
    files = {0: {"year=2024/part-0": b"0" * 300, "top": b"t"},
             1: {"year=2024/month=01/part-1": b"1" * 10}}
    run = run_job(committer, local_env.store, dest, files, commit=False)
    spare = zr.create_committer(committer, local_env.store, run.job, task=run.job.task(2))
    spare.setup_task()
    spare.write("year=2023/aborted", b"a")
    spare.abort_task()
    output_dirs = ["year=2024", "year=2024/month=01"]
    if ending == "abort":
        run.driver.abort_job()
        # v2 publishes at task commit (its known weakness): that output stays
        expected = output_dirs if committer == "v2" else []
    else:
        run.driver.commit_job(run.messages if ending == "commit-spark" else None)
        expected = output_dirs
    root = Path(parse_url(dest).key and "/" + parse_url(dest).key)
    assert _directories(root) == expected


def test_local_store_knows_every_committer_area() -> None:
    """LocalStore prunes empty directories only inside the areas the committers reserve; the
    two lists must not drift apart (a new committer's area would keep its directories)."""
    assert set(COMMITTER_AREA_PREFIXES) == set(RESERVED_PREFIXES)
    assert set(COMMITTER_AREA_NAMES) <= set(RESERVED_FIRST_ELEMENTS)


@pytest.mark.parametrize("operation", ["put", "rename"])
def test_local_write_survives_its_directory_being_pruned(operation: str, local_env: Env,
                                                         monkeypatch: pytest.MonkeyPatch
                                                         ) -> None:
    """Another job's cleanup prunes an empty directory of ``_temporary`` at the moment a
    write has created it and not yet put its file there: the write creates it again."""
    dest = local_env.dest()
    target = f"{dest}/_temporary/job-2/00/tasks/attempt/part-0"
    directory = os.path.dirname("/" + parse_url(target).key)
    source = f"{dest}/_temporary/job-2/00/source"
    if operation == "rename":
        local_env.store.put(source, b"data")
    pruned: list[str] = []
    real_makedirs = os.makedirs

    def makedirs(name: str, *args: object, **kwargs: object) -> None:
        real_makedirs(name, *args, **kwargs)  # type: ignore[arg-type]
        if not pruned and os.fsdecode(name) == directory:
            pruned.append(directory)
            os.rmdir(directory)  # the concurrent prune: it was empty

    monkeypatch.setattr(os, "makedirs", makedirs)
    if operation == "put":
        local_env.store.put(target, b"data")
    else:
        local_env.store.rename(source, target)
    monkeypatch.undo()
    assert pruned, "the interleaving was not reached"
    assert local_env.store.get(target) == b"data"


def test_local_write_survives_a_directory_created_and_pruned_by_another(
        local_env: Env, monkeypatch: pytest.MonkeyPatch) -> None:
    """The other order: another writer creates the directory first (so ours finds the name
    taken) and a prune removes it before ours can see a directory there."""
    dest = local_env.dest()
    target = f"{dest}/__magic_job-2/00/tasks/attempt/__base/x.pending"
    directory = os.path.dirname("/" + parse_url(target).key)
    raced: list[str] = []
    real_mkdir = os.mkdir

    def mkdir(path: Any, *args: Any, **kwargs: Any) -> None:
        if not raced and os.fsdecode(path) == directory:
            raced.append(directory)
            real_mkdir(path, *args, **kwargs)  # the other writer
            os.rmdir(path)  # the prune
            raise FileExistsError(errno.EEXIST, "File exists", path)
        real_mkdir(path, *args, **kwargs)

    monkeypatch.setattr(os, "mkdir", mkdir)
    local_env.store.put(target, b"data")
    monkeypatch.undo()
    assert raced, "the interleaving was not reached"
    assert local_env.store.get(target) == b"data"


class _PageStore:
    """Records each DeleteObjects page; every page waits until ``together`` are in flight at
    once (or 5 s pass), so pages sent one after another are seen as such."""

    def __init__(self, together: int, failing: str | None = None) -> None:
        self.pages: list[list[str]] = []
        self.failing = failing
        self._lock = threading.Lock()
        self._barrier = threading.Barrier(together, timeout=5.0)
        self.all_at_once = True

    def delete_many(self, urls: list[str]) -> None:
        with self._lock:
            self.pages.append(list(urls))
        try:
            self._barrier.wait()
        except threading.BrokenBarrierError:
            self.all_at_once = False
        if self.failing in urls:
            raise zr.StoreError(self.failing, "injected", code="AccessDenied")


def test_delete_pages_sends_pages_of_1000_in_parallel_with_a_pool() -> None:
    """The manifest committer's cleanup on S3 deletes F copied sources: ⌈F/1000⌉ pages that
    go out together (one round trip), not one after another."""
    urls = [f"s3://b/t/f{i:05d}" for i in range(2500)]
    store = _PageStore(together=3)
    with BoundedExecutor(4, "cleanup") as pool:
        delete_pages(store, urls, pool)  # type: ignore[arg-type]
    assert store.all_at_once
    assert sorted(len(p) for p in store.pages) == [500, 1000, 1000]
    assert sorted(u for p in store.pages for u in p) == urls


def test_delete_pages_tries_every_page_and_raises_the_failure() -> None:
    """A failed page does not stop the others (what it kept stays for a later pass)."""
    urls = [f"s3://b/t/f{i:05d}" for i in range(2000)]
    store = _PageStore(together=2, failing=urls[0])
    with BoundedExecutor(2, "cleanup") as pool, pytest.raises(zr.StoreError, match="injected"):
        delete_pages(store, urls, pool)  # type: ignore[arg-type]
    assert len(store.pages) == 2  # the other page was still sent


class _RefusingStore:
    """Refuses to delete the URLs in ``refused`` (a DeleteObjects answer naming them), deletes
    the rest; records each page."""

    def __init__(self, refused: set[str]) -> None:
        self.refused = refused
        self.pages: list[list[str]] = []

    def delete_many(self, urls: list[str]) -> None:
        self.pages.append(list(urls))
        failed = {u: zr.StoreError(u, "Access Denied", code="AccessDenied", status=403)
                  for u in urls if u in self.refused}
        if failed:
            raise DeleteManyError(failed, len(urls))


@pytest.mark.parametrize("threads", [0, 1, 4])
def test_delete_pages_names_every_url_left_across_failed_pages(threads: int) -> None:
    """Two pages fail, with a pool or without: every page is still sent, and the one error
    raised names the URLs left by both (the overwrite's OverwriteIncompleteError lists them)."""
    urls = [f"s3://b/t/f{i:05d}" for i in range(3000)]
    refused = {urls[5], urls[6], urls[2500]}
    store = _RefusingStore(refused)
    with BoundedExecutor(max(threads, 1), "cleanup") as pool, \
            pytest.raises(DeleteManyError) as raised:
        delete_pages(store, urls, pool if threads else None)  # type: ignore[arg-type]
    assert len(store.pages) == 3
    assert set(raised.value.failures) == refused
