"""Committers at the protocol's request minimum, counted by the store (never timed).

* ``magic`` keeps its commits in memory (Hadoop's
  ``fs.s3a.committer.magic.track.commits.in.memory.enabled``, our default): per file only the
  upload's create and part at the task and its complete at job commit; per task one intent
  (written *before* the uploads it names, so a task that dies still leaves the keys to sweep)
  and one pendingset.  The file-based mode (a ``.pending`` per file) stays for Hadoop.
* No HEAD per file when the server answers CompleteMultipartUpload with an empty ETag (Ceph
  RGW): the ETag is derived from the parts' ETags (S3's multipart rule).
* ``manifest`` on S3 deletes its copied sources in bulk (DeleteObjects pages of 1,000).
* Two identical jobs send identical requests: a committer never makes the store run its
  capability probe (three uploads created and aborted) in the middle of a job.
"""

from __future__ import annotations

import hashlib
import math
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from types import SimpleNamespace
from typing import Any

import pytest

import zerorename as zr
from zerorename.retry import NO_RETRY, multipart_etag
from zerorename.store import Store, StoreCapabilities
from zerorename.stores.capabilities import clear_probe_cache

from .conftest_helpers import RGW, Env, FaultyStore, SimulatedCrash, options

pytestmark = pytest.mark.usefixtures("no_leaked_threads")

#: Hadoop's option: magic commits tracked in the task's memory (our default) or in .pending files
TRACK_IN_MEMORY_OPTION = "fs.s3a.committer.magic.track.commits.in.memory.enabled"


def delta(after: dict[str, int], before: dict[str, int]) -> dict[str, int]:
    return {op: n - before.get(op, 0) for op, n in sorted(after.items())
            if n - before.get(op, 0)}


class Counted:
    """Runs one job phase by phase and records the store's requests of each phase."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.phases: dict[str, Counter[str]] = {}

    def __call__(self, phase: str, fn: Callable[[], Any]) -> Any:
        before = self.store.request_counts()
        result = fn()
        self.phases.setdefault(phase, Counter()).update(
            delta(self.store.request_counts(), before))
        return result

    def total(self) -> int:
        return sum(sum(c.values()) for c in self.phases.values())


def files_of(tasks: int, per_task: int, size: int = 10) -> dict[int, dict[str, bytes]]:
    return {t: {f"p={t % 2}/part-{t:05d}-{i:04d}": bytes([65 + t]) * size
                for i in range(per_task)} for t in range(tasks)}


def counted_job(committer: str, store: Store, dest: str, files: dict[int, dict[str, bytes]],
                opts: dict[str, Any], protocol: str = "spark") -> Counted:
    """setup_job, every task (setup, write, commit), commit_job — on one driver object, as
    Spark's driver does — counting each phase."""
    count = Counted(store)
    job = zr.JobContext(dest, options=opts)
    driver = count("setup", lambda: _setup(committer, store, job))
    messages = []
    for task_id, task_files in files.items():

        def work(task_id: int = task_id, task_files: dict[str, bytes] = task_files) -> Any:
            tc = zr.create_committer(committer, store, job, task=job.task(task_id))
            tc.setup_task()
            for rel, data in task_files.items():
                tc.write(rel, data)
            return tc

        tc = count("write", work)
        messages.append(count("task_commit", tc.commit_task))
    count("job_commit", lambda: driver.commit_job(messages if protocol == "spark" else None))
    return count


def _setup(committer: str, store: Store, job: zr.JobContext) -> zr.BaseCommitter:
    driver = zr.create_committer(committer, store, job)
    driver.setup_job()
    return driver


# -- 2. magic at the multipart minimum ---------------------------------------------------------


@pytest.mark.parametrize("protocol", ["spark", "hadoop"])
def test_magic_sends_no_request_per_file_beyond_the_upload(moto_env: Env, protocol: str
                                                           ) -> None:
    """Per file: create + one part at the task, one complete at job commit.  Per task: one
    intent (before its uploads), one pendingset, and a HEAD of the job marker before the
    uploads and after the pendingset (a zombie of a finished job starts no upload nobody
    sweeps).  Nothing else grows with the files."""
    tasks, per_task = 4, 25
    files = files_of(tasks, per_task)
    count = counted_job("magic", moto_env.store, moto_env.dest(), files, options(), protocol)
    F = tasks * per_task
    written = count.phases["write"] + count.phases["task_commit"]
    assert dict(written) == {"create_multipart": F, "upload_part": F, "put": 2 * tasks,
                             "head": 2 * tasks}
    job = count.phases["job_commit"]
    assert job["complete_multipart"] == F
    assert sum(job.values()) - F <= 3 * tasks + 10, dict(job)
    assert moto_env.output(moto_env.dest()) == {r: d for fs in files.values()
                                                for r, d in fs.items()}
    assert moto_env.uploads(moto_env.dest()) == []


def test_magic_at_f_1000_is_within_five_hundredths_of_the_minimum(local_env: Env) -> None:
    """1,000 files in 4 tasks (the benchmark's job): at most 3.05 requests per file (the
    minimum is 3 per file plus O(tasks))."""
    files = files_of(4, 250)
    opts = options(**{"fs.s3a.committer.threads": "1", "fs.s3a.multipart.size": str(16 << 20)})
    count = counted_job("magic", local_env.store, local_env.dest(), files, opts)
    assert count.total() / 1000 <= 3.05, {k: dict(v) for k, v in count.phases.items()}


def test_magic_file_mode_keeps_hadoops_records(local_env: Env) -> None:
    """With in-memory tracking off, every file has its intent and ``.pending`` record (what
    Hadoop's magic committer writes), so another committer object — another process — can
    commit the attempt from the store."""
    dest = local_env.dest()
    opts = options(**{TRACK_IN_MEMORY_OPTION: "false"})
    job = zr.JobContext(dest, options=opts)
    driver = zr.create_committer("magic", local_env.store, job)
    driver.setup_job()
    writer = zr.create_committer("magic", local_env.store, job, task=job.task(0))
    writer.setup_task()
    before = local_env.store.request_counts()
    writer.write("a", b"a" * 10)
    writer.write("b/c", b"c" * 600)
    assert delta(local_env.store.request_counts(), before)["put"] == 4  # 2 intents, 2 .pending
    committer = zr.create_committer("magic", local_env.store, job, task=job.task(0))
    committer.setup_task()
    assert committer.needs_task_commit()
    driver.commit_job([committer.commit_task()])
    assert local_env.output(dest) == {"a": b"a" * 10, "b/c": b"c" * 600}
    assert local_env.uploads(dest) == []


def test_magic_in_memory_refuses_to_commit_an_attempt_another_object_wrote(local_env: Env
                                                                          ) -> None:
    """In memory mode only the writer knows the uploads: another committer object for the
    same attempt must not commit an empty pendingset in its place (the files would be lost
    silently); it refuses, naming the attempt's directory."""
    dest = local_env.dest()
    job = zr.JobContext(dest, options=options())
    zr.create_committer("magic", local_env.store, job).setup_job()
    writer = zr.create_committer("magic", local_env.store, job, task=job.task(0))
    writer.setup_task()
    writer.write("big", b"x" * 600)  # an upload (and its intent) exist before task commit
    other = zr.create_committer("magic", local_env.store, job, task=job.task(0))
    other.setup_task()
    assert other.needs_task_commit()
    with pytest.raises(zr.CommitError, match="in memory"):
        other.commit_task()


@pytest.mark.parametrize("ending", ["spark", "hadoop", "abort"])
@pytest.mark.parametrize(("crash_op", "nth"), [
    ("put", 1),               # the batch's intent never written: nothing uploaded
    ("create_multipart", 3),  # intent written, two uploads created, then the task dies
    ("upload_part", 3),       # mid-batch: two uploads with their part, one without
    ("put", 2),               # every upload done, the pendingset never written
])
def test_dead_task_leaves_no_upload_without_per_file_records(crash_op: str, nth: int,
                                                             ending: str, moto_env: Env
                                                             ) -> None:
    """A magic task in memory mode dies (no cleanup runs) while it uploads its batch of small
    files at task commit.  Its intent, written before the batch's first upload, names every
    key: the job sweeps exactly those keys — and a concurrent job writing other keys of the
    same destination keeps its pending uploads."""
    env = moto_env
    dest = env.dest()
    suffix = uuid.uuid4().hex[:8]
    other_job = zr.JobContext(dest, job_id=f"other-{suffix}", options=options())
    other_driver = zr.create_committer("magic", env.store, other_job)
    other_driver.setup_job()
    other = zr.create_committer("magic", env.store, other_job, task=other_job.task(0))
    other.setup_task()
    other.write("other/big", b"O" * 600)  # an upload created, no task commit yet
    pending_other = {(u.url, u.upload_id) for u in env.uploads(dest)}
    assert len(pending_other) == 1

    job = zr.JobContext(dest, job_id=f"job-{suffix}", options=options())
    driver = zr.create_committer("magic", env.store, job)
    driver.setup_job()
    good = zr.create_committer("magic", env.store, job, task=job.task(0))
    good.setup_task()
    good.write("good", b"g" * 10)
    message = good.commit_task()
    dying_store = FaultyStore(env.store).crash(crash_op, nth=nth)
    dying = zr.create_committer("magic", dying_store, job, task=job.task(1))
    dying.setup_task()
    for i in range(4):
        dying.write(f"doomed/{i}", b"d" * 10)
    with pytest.raises(SimulatedCrash):
        dying.commit_task()
    if ending == "abort":
        driver.abort_job()
        assert env.output(dest) == {}
    else:
        driver.commit_job([message] if ending == "spark" else None)
        assert env.output(dest) == {"good": b"g" * 10}
    assert {(u.url, u.upload_id) for u in env.uploads(dest)} == pending_other
    other_driver.commit_job([other.commit_task()])
    assert env.uploads(dest) == []


def test_magic_batches_are_bounded_by_the_part_size(local_env: Env) -> None:
    """Small files wait in memory for one intent per batch; a batch is flushed once it holds a
    part's worth of bytes, so memory stays bounded whatever the number of files."""
    dest = local_env.dest()
    job = zr.JobContext(dest, options=options())  # 256-byte parts
    driver = zr.create_committer("magic", local_env.store, job)
    driver.setup_job()
    tc = zr.create_committer("magic", local_env.store, job, task=job.task(0))
    tc.setup_task()
    before = local_env.store.request_counts()
    for i in range(10):
        tc.write(f"f{i}", b"x" * 100)  # 1,000 bytes: the batch fills every 3 files
    during = delta(local_env.store.request_counts(), before)
    assert during["create_multipart"] == 9 and during["put"] == 3
    driver.commit_job([tc.commit_task()])
    assert local_env.output(dest) == {f"f{i}": b"x" * 100 for i in range(10)}


# -- 3. no HEAD per file when complete answers without an ETag ---------------------------------


def blank_complete_etags(client: Any) -> None:
    """Make ``client`` see CompleteMultipartUpload answers as Ceph RGW sends them: an empty
    ``<ETag>`` (the object is complete; only the header is missing)."""
    def blank(parsed: dict[str, Any], **_: Any) -> None:
        parsed["ETag"] = ""

    client.meta.events.register("after-call.s3.CompleteMultipartUpload", blank)


def test_complete_derives_the_etag_rgw_leaves_out(moto_env: Env) -> None:
    """S3's multipart ETag is the MD5 of the parts' binary MD5s, then ``-<parts>``: derived,
    not fetched, and equal to what HEAD would say."""
    blank_complete_etags(moto_env.client)
    store = moto_env.store
    url = f"{moto_env.dest()}/object"
    upload_id = store.create_multipart(url)
    parts = [(1, store.upload_part(url, upload_id, 1, b"a" * 300)),
             (2, store.upload_part(url, upload_id, 2, b"b" * 7))]
    before = store.request_counts()
    etag = store.complete_multipart(url, upload_id, parts)
    assert delta(store.request_counts(), before) == {"complete_multipart": 1}
    info = store.head(url)
    assert info is not None and etag == info.etag == multipart_etag(e for _n, e in parts)


def test_complete_reads_back_an_etag_it_cannot_derive() -> None:
    """Part ETags that are not MD5s (SSE-KMS, some S3-compatible servers) give no multipart
    ETag to derive: then, and only then, the empty answer is filled in with a HEAD."""
    calls: list[str] = []

    class Client:
        meta = SimpleNamespace(endpoint_url="http://fake.invalid")

        def complete_multipart_upload(self, **kwargs: Any) -> dict[str, Any]:
            calls.append("complete")
            return {"ETag": ""}

        def head_object(self, **kwargs: Any) -> dict[str, Any]:
            calls.append("head")
            return {"ContentLength": 3, "ETag": '"opaque-2"',
                    "LastModified": datetime.now(UTC)}

    store = zr.S3Store(Client(), retry=NO_RETRY,  # type: ignore[arg-type]
                       capabilities=StoreCapabilities(conditional_complete=True))
    assert store.complete_multipart("s3://b/k", "u", [(1, "kms-1"), (2, "kms-2")]) \
        == "opaque-2"
    assert calls == ["complete", "head"]


@pytest.mark.parametrize("backend", ["moto", RGW])
@pytest.mark.parametrize("committer", ["magic", "directory", "partitioned"])
def test_job_commit_sends_no_head_when_complete_answers_without_etag(
        committer: str, backend: str, backend_env: Env) -> None:
    """On a server that answers complete with an empty ETag — Ceph RGW, or moto made to
    answer as RGW does — job commit is still one complete per file and no HEAD at all (the
    driver set the job up itself)."""
    env = backend_env
    if backend == "moto":
        blank_complete_etags(env.client)
    files = files_of(3, 6, size=300)  # two parts per file
    count = counted_job(committer, env.store, env.dest(), files, options())
    job = count.phases["job_commit"]
    assert job["complete_multipart"] == 18
    assert "head" not in job, dict(job)
    assert env.output(env.dest()) == {r: d for fs in files.values() for r, d in fs.items()}
    info = env.store.head(f"{env.dest()}/p=0/part-00000-0000")
    assert info is not None and info.etag.endswith("-2")  # S3's multipart form, two parts


# -- 4. manifest on S3 deletes its sources in bulk --------------------------------------------


@pytest.mark.parametrize("protocol", ["spark", "hadoop"])
def test_manifest_job_commit_on_s3_copies_once_and_deletes_in_pages(moto_env: Env,
                                                                    protocol: str) -> None:
    """S3 has no rename: job commit copies each file once; the sources (and the manifests,
    the marker) go with the job's temporary tree, in DeleteObjects pages of 1,000 — never one
    DeleteObject per file.  Job commit: F copies + O(tasks) + ⌈objects / 1000⌉ deletes."""
    tasks, per_task = 3, 20
    files = files_of(tasks, per_task)
    F = tasks * per_task
    count = counted_job("manifest", moto_env.store, moto_env.dest(), files, options(),
                        protocol)
    job = count.phases["job_commit"]
    assert job["copy"] == F
    assert "delete" not in job and "rename" not in job, dict(job)
    assert job["delete_many"] == math.ceil((F + tasks + 1) / 1000), dict(job)
    assert sum(job.values()) <= F + 3 * tasks + 10, dict(job)
    assert moto_env.objects(moto_env.dest()).keys() == \
        {r for fs in files.values() for r in fs} | {"_SUCCESS"}


# -- 5. identical jobs, identical requests ----------------------------------------------------


@pytest.fixture
def unprobed_store(moto_env: Env) -> Iterator[Env]:
    """moto's S3Store with the capability cache empty, as in a fresh process."""
    clear_probe_cache()
    yield moto_env
    clear_probe_cache()


@pytest.mark.parametrize("committer", ["magic", "directory"])
def test_two_identical_jobs_send_identical_requests(committer: str,
                                                    unprobed_store: Env) -> None:
    """The same job twice, one commit thread, into two destinations of one bucket: the same
    requests, phase by phase.  (The store's capability probe — three uploads created and
    aborted — used to run inside the first job, from whichever committer was built first
    after the store had touched the bucket; these committers need nothing it measures.)"""
    env = unprobed_store
    opts = options(**{"fs.s3a.committer.threads": "1"})
    files = files_of(2, 3)
    runs = [counted_job(committer, env.store, env.dest(f"out{i}"), files, opts).phases
            for i in range(2)]
    assert runs[0] == runs[1]
    assert all("capability_probe" not in phase for phase in runs[0].values())


def test_multipart_etag_is_s3s_rule() -> None:
    parts = [b"a" * 300, b"b" * 7]
    digests = b"".join(hashlib.md5(p, usedforsecurity=False).digest() for p in parts)
    expected = f"{hashlib.md5(digests, usedforsecurity=False).hexdigest()}-2"
    assert multipart_etag(hashlib.md5(p, usedforsecurity=False).hexdigest() for p in parts) \
        == expected


@pytest.mark.parametrize("protocol", ["spark", "hadoop"])
@pytest.mark.parametrize("committer", ["magic", "directory", "partitioned"])
def test_job_commit_lists_the_destinations_uploads_only_after_its_completes(
        committer: str, protocol: str, local_env: Env) -> None:
    """Nothing but the completes' own work stands between loading the task records and the
    first complete: listing the destination's uploads (a request per 1,000 uploads, each
    parsed by the client) to find strays is done once the completes are, when only the
    leftovers are still listed — and the strays are still found (they stay uncompleted)."""
    store = FaultyStore(local_env.store)
    dest = local_env.dest()
    run = counted_job(committer, store, dest, files_of(3, 4), options(), protocol)
    assert run.phases["job_commit"]["complete_multipart"] == 12
    ops = [op for op, _ in store.log]
    commit_ops = ops[len(ops) - sum(run.phases["job_commit"].values()):]
    last_complete = max(i for i, op in enumerate(commit_ops) if op == "complete_multipart")
    listings = [i for i, op in enumerate(commit_ops) if op == "list_multipart_uploads"]
    assert listings, "the job commit looks for uploads it owns besides the committed ones"
    assert min(listings) > last_complete, commit_ops
    assert local_env.uploads(dest) == []
