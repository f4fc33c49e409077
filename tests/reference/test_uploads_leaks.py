"""No upload a job started outlives the job: not even one whose CreateMultipartUpload answer
was lost.

A lost answer is a request the server applied while the client saw an error (a timeout, a
dropped connection, a 503 from a proxy after the backend succeeded).  The committer's retry
creates a *second* upload; the first one's ID was never seen, so no ``.pending`` or
``.pendingset`` names it.  Only its key is known (the intent written before the upload).  After
the job commits or aborts, every key the job wrote to must be free of the job's uploads, while
uploads of another job writing *other* keys of the same destination are never touched (the
paper's Section XIV.C.1 bug: a destination-wide abort kills concurrent jobs).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable

import pytest

import zerorename as zr
from zerorename.errors import StoreError, ThrottledError
from zerorename.store import Store

from .conftest_helpers import (
    S3A,
    Env,
    FaultyStore,
    committer_backends,
    options,
)

pytestmark = pytest.mark.usefixtures("no_leaked_threads")


class LostAnswerStore(FaultyStore):
    """Applies chosen CreateMultipartUpload requests, then answers with a retryable 503, as if
    the response was lost on the way back.  ``lost`` holds the uploads created that way."""

    def __init__(self, inner: Store, *, match: Callable[[str], bool], times: int = 1) -> None:
        super().__init__(inner)
        self.match = match
        self.times = times
        self.lost: list[tuple[str, str]] = []

    def create_multipart(self, url: str) -> str:
        upload_id = super().create_multipart(url)
        with self._lock:
            lose = self.match(url) and len(self.lost) < self.times
            if lose:
                self.lost.append((url, upload_id))
        if lose:
            raise ThrottledError(url, "injected: the upload was created, the answer lost")
        return upload_id


FILES = {0: {"a/part-0": b"a" * 600, "b/part-0": b"b" * 10},
         1: {"a/part-1": b"c" * 300, "part-1": b""}}


def _run_tasks(committer: str, store: Store, dest: str, files: dict[int, dict[str, bytes]],
               *, job_id: str | None = None
               ) -> tuple[zr.BaseCommitter, list[zr.TaskCommitMessage]]:
    job = zr.JobContext(dest, job_id=job_id, options=options())
    driver = zr.create_committer(committer, store, job)
    driver.setup_job()
    messages = []
    for task_id, task_files in files.items():
        tc = zr.create_committer(committer, store, job, task=job.task(task_id))
        tc.setup_task()
        for rel, data in task_files.items():
            tc.write(rel, data)
        messages.append(tc.commit_task())
    return driver, messages


@pytest.mark.parametrize("ending", ["spark", "hadoop", "abort"])
@pytest.mark.parametrize(("committer", "backend"),
                         committer_backends(S3A, moto=S3A, rgw=S3A))
def test_lost_create_answer_leaves_no_upload(committer: str, backend: str, ending: str,
                                             backend_env: Env) -> None:
    """The first CreateMultipartUpload of ``a/part-0`` is applied but its answer lost; the
    retry's upload is the one recorded.  After job commit (either protocol) or abort, no
    upload remains on any key of the job, and the output is exactly what the tasks wrote."""
    env = backend_env
    dest = env.dest()
    store = LostAnswerStore(env.store, match=lambda u: u.endswith("/a/part-0"))
    driver, messages = _run_tasks(committer, store, dest, FILES)
    assert len(store.lost) == 1, "the fault was not injected"
    lost_url, lost_id = store.lost[0]
    assert lost_id in {u.upload_id for u in env.uploads(dest)}
    if ending == "abort":
        driver.abort_job()
        assert env.output(dest) == {}
    else:
        driver.commit_job(messages if ending == "spark" else None)
        assert env.output(dest) == {rel: data for task in FILES.values()
                                    for rel, data in task.items()}
    leaked = [(u.url, u.upload_id) for u in env.uploads(dest)]
    assert leaked == [], f"uploads left after {ending}: {leaked} (lost: {lost_url} {lost_id})"


@pytest.mark.parametrize("files_per_task", [2, 12])  # per-key listing, destination listing
@pytest.mark.parametrize(("committer", "backend"),
                         committer_backends(S3A, moto=("magic", "directory"), rgw=("magic",)))
def test_sweeping_lost_uploads_spares_a_concurrent_job(committer: str, backend: str,
                                                       files_per_task: int,
                                                       backend_env: Env) -> None:
    """Job B writes other keys of the same destination and has uploads pending while job A
    (with a lost answer) commits and another job C (also with a lost answer) aborts: B's
    uploads survive both, and B then commits its output."""
    env = backend_env
    dest = env.dest()
    suffix = uuid.uuid4().hex[:8]  # the staging committers' local directory is per host
    files_b = {0: {f"b/part-{i}": b"B" * 300 for i in range(files_per_task)}}
    driver_b, messages_b = _run_tasks(committer, env.store, dest, files_b, job_id=f"jobB-{suffix}")
    pending_b = {(u.url, u.upload_id) for u in env.uploads(dest)}
    assert len(pending_b) == files_per_task

    files_a = {0: {f"a/part-{i}": b"A" * 300 for i in range(files_per_task)}}
    store_a = LostAnswerStore(env.store, match=lambda u: "/a/part-" in u, times=2)
    driver_a, messages_a = _run_tasks(committer, store_a, dest, files_a, job_id=f"jobA-{suffix}")
    assert len(store_a.lost) == 2
    driver_a.commit_job(messages_a)

    files_c = {0: {f"c/part-{i}": b"C" * 300 for i in range(files_per_task)}}
    store_c = LostAnswerStore(env.store, match=lambda u: "/c/part-" in u)
    driver_c, _messages_c = _run_tasks(committer, store_c, dest, files_c, job_id=f"jobC-{suffix}")
    assert len(store_c.lost) == 1
    driver_c.abort_job()

    assert {(u.url, u.upload_id) for u in env.uploads(dest)} == pending_b, \
        "job B's uploads were disturbed, or job A's/C's were left"
    driver_b.commit_job(messages_b)
    assert env.uploads(dest) == []
    assert env.output(dest) == {**files_a[0], **files_b[0]}


@pytest.mark.parametrize("in_memory", ["true", "false"])
def test_magic_file_aborted_after_a_lost_create_leaves_no_upload(in_memory: str,
                                                                 local_env: Env) -> None:
    """A magic writer whose create answer was lost is aborted (the task gives the file up):
    the job still finds the first upload through the intent naming the file's key (the
    file's own, or in memory mode the batch's written when the file outgrew one part)."""
    dest = local_env.dest()
    store = LostAnswerStore(local_env.store, match=lambda u: u.endswith("/given-up"))
    opts = options(**{"fs.s3a.committer.magic.track.commits.in.memory.enabled": in_memory})
    job = zr.JobContext(dest, options=opts)
    driver = zr.create_committer("magic", store, job)
    driver.setup_job()
    tc = zr.create_committer("magic", store, job, task=job.task(0))
    tc.setup_task()
    writer = tc.open("given-up")
    writer.write(b"x" * 300)  # over one part: its upload exists before the abort
    writer.abort()
    tc.write("kept", b"k" * 10)
    driver.commit_job([tc.commit_task()])
    assert len(store.lost) == 1
    assert local_env.output(dest) == {"kept": b"k" * 10}
    assert local_env.uploads(dest) == []


@pytest.mark.parametrize("committer", ["directory", "partitioned"])
@pytest.mark.parametrize("ending", ["commit", "abort"])
def test_failed_staging_task_commit_after_a_lost_create_leaves_no_upload(
        committer: str, ending: str, local_env: Env) -> None:
    """A staging task commit meets a lost create answer, then fails for good on a later
    upload: it aborts the uploads it knows of; the job's commit (of a rerun attempt) or abort
    must still find the first one, so the task's intent must not be dropped."""
    dest = local_env.dest()
    lost = LostAnswerStore(local_env.store, match=lambda u: u.endswith("/p/one"))
    store = lost.fail("upload_part", times=None, status=400,
                      match=lambda u: u.endswith("/p/two"))
    job = zr.JobContext(dest, options=options())
    driver = zr.create_committer(committer, local_env.store, job)
    driver.setup_job()
    failing = zr.create_committer(committer, store, job, task=job.task(0, 0))
    failing.setup_task()
    failing.write("p/one", b"1" * 10)
    failing.write("p/two", b"2" * 10)
    with pytest.raises(StoreError):
        failing.commit_task()
    assert len(lost.lost) == 1
    if ending == "abort":
        driver.abort_job()
        assert local_env.output(dest) == {}
    else:
        rerun = zr.create_committer(committer, local_env.store, job, task=job.task(0, 1))
        rerun.setup_task()
        rerun.write("p/one", b"1" * 10)
        driver.commit_job([rerun.commit_task()])
        assert local_env.output(dest) == {"p/one": b"1" * 10}
    assert local_env.uploads(dest) == []


@pytest.mark.parametrize("committer", S3A)
@pytest.mark.parametrize("committed", [False, True])
def test_task_aborted_after_a_lost_create_leaves_no_upload(committer: str, committed: bool,
                                                           local_env: Env) -> None:
    """A task attempt whose create answer was lost is aborted (before or after its task
    commit); a rerun attempt writes another key and the job commits: the first upload of the
    aborted attempt's key is found although that attempt's records were cleaned up."""
    dest = local_env.dest()
    store = LostAnswerStore(local_env.store, match=lambda u: u.endswith("/lost"))
    job = zr.JobContext(dest, options=options())
    driver = zr.create_committer(committer, local_env.store, job)
    driver.setup_job()
    aborted = zr.create_committer(committer, store, job, task=job.task(0, 0))
    aborted.setup_task()
    aborted.write("lost", b"l" * 300)  # over one part: magic creates its upload at once
    if committed or committer != "magic":  # staging uploads only at task commit
        aborted.commit_task()
    aborted.abort_task()
    assert len(store.lost) == 1
    rerun = zr.create_committer(committer, local_env.store, job, task=job.task(0, 1))
    rerun.setup_task()
    rerun.write("other", b"o" * 10)
    driver.commit_job([rerun.commit_task()])
    assert local_env.output(dest) == {"other": b"o" * 10}
    assert local_env.uploads(dest) == []
