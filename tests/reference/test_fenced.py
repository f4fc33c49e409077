"""The fenced committer: conditional PUTs decide task and job commits (docs/user/committers.md).

Covered here: both protocols publish exactly the accepted output on moto, LocalStore and Ceph
RGW; the first attempt to commit a task wins and a later one is refused, names the winner and
aborts its uploads; a task commit after the job's commit point is refused; the capability
probe refuses a store that ignores If-None-Match; ``zr.committed_files``; request counts on moto.
Crash points and real processes: ``test_fenced_crash.py``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import pytest

import zerorename as zr
from zerorename.committers.fenced import FencedCommitter
from zerorename.committers.fenced_records import (
    CommittedFile,
    ConditionalWriteUnsupportedError,
    FencedCommitRecord,
    FencedSuccessData,
    RecordedUpload,
    TaskCommittedByOtherAttemptError,
    TaskFencedError,
    expected_multipart_etag,
)
from zerorename.errors import FormatError, NotFoundError, UnsupportedOperationError
from zerorename.store import Store

from .conftest_helpers import PART, Env, options, run_job

FILES = {0: {"year=2024/part-00000.csv": b"a" * (PART * 2 + 7), "empty.csv": b""},
         1: {"year=2025/part-00001.csv": b"b" * 9}}


def written_files(env: Env, dest: str, files: dict[int, dict[str, bytes]]) -> dict[str, bytes]:
    return {rel: data for task in files.values() for rel, data in task.items()}


def hidden_objects(env: Env, dest: str) -> list[str]:
    return sorted(k for k in env.objects(dest) if k not in env.output(dest))


@pytest.mark.parametrize("protocol", ["spark", "hadoop"])
def test_publishes_exactly_the_committed_output(env_with_rgw: Env, protocol: str) -> None:
    env = env_with_rgw
    dest = env.dest()
    run = run_job("fenced", env.store, dest, FILES, protocol=protocol)
    assert env.output(dest) == written_files(env, dest, FILES)
    assert env.uploads(dest) == []
    # what stays: _SUCCESS and the commit record that fences late task commits
    root = f"__fenced_job-{run.job.id}"
    assert hidden_objects(env, dest) == ["_SUCCESS", f"{root}/commit.json"]
    listed = zr.committed_files(env.store, dest)
    assert [f.url for f in listed] == sorted(f"{dest}/{rel}" for rel in env.output(dest))
    for f in listed:
        info = env.store.head(f.url)
        assert info is not None and (info.size, info.etag) == (f.size, f.etag)
    assert run.success is not None and run.success.committer == "fenced"


def test_second_attempt_of_a_task_is_refused_names_the_winner_and_aborts(
        env_with_rgw: Env) -> None:
    """On a real S3 too (Ceph RGW): its 412 to a second If-None-Match PUT is the arbiter."""
    env = env_with_rgw
    dest = env.dest()
    job = zr.JobContext(dest, options=options())
    driver = zr.create_committer("fenced", env.store, job)
    driver.setup_job()
    first = zr.create_committer("fenced", env.store, job, task=job.task(0, 0))
    second = zr.create_committer("fenced", env.store, job, task=job.task(0, 1))
    for attempt, data in ((first, b"first"), (second, b"second")):
        attempt.setup_task()
        attempt.write("part-0", data)
    message = first.commit_task()
    with pytest.raises(TaskCommittedByOtherAttemptError) as refused:
        second.commit_task()
    assert refused.value.winner == job.task(0, 0).attempt_id
    assert job.task(0, 0).attempt_id in str(refused.value)
    assert len(env.uploads(dest)) == 1  # the loser's upload is gone, the winner's is not
    driver.commit_job([message])
    assert env.output(dest) == {"part-0": b"first"}
    assert env.uploads(dest) == []


def test_task_commit_after_the_commit_point_is_refused_and_aborted(env: Env) -> None:
    """A partitioned attempt of a task the job committed without: its record PUT finds the key
    free, but the commit record does not name it — it aborts its uploads and fails."""
    dest = env.dest()
    job = zr.JobContext(dest, options=options())
    driver = zr.create_committer("fenced", env.store, job)
    driver.setup_job()
    zombie = zr.create_committer("fenced", env.store, job, task=job.task(1))
    zombie.setup_task()
    zombie.write("zombie.csv", b"late")
    kept = zr.create_committer("fenced", env.store, job, task=job.task(0))
    kept.setup_task()
    kept.write("kept.csv", b"kept")
    driver.commit_job([kept.commit_task()])
    with pytest.raises(TaskFencedError, match="without attempt"):
        zombie.commit_task()
    assert env.output(dest) == {"kept.csv": b"kept"}
    assert env.uploads(dest) == []
    assert hidden_objects(env, dest) == ["_SUCCESS", f"__fenced_job-{job.id}/commit.json"]


def test_spark_messages_decide_which_tasks_are_published(env: Env) -> None:
    """Spark's protocol commits exactly the messages: a committed task record whose message
    the driver did not accept is not published, and its uploads are aborted by cleanup."""
    dest = env.dest()
    run = run_job("fenced", env.store, dest, FILES, commit=False)
    run.driver.commit_job(run.messages[:1])
    assert env.output(dest) == FILES[0]
    assert env.uploads(dest) == []


class IgnoresIfNoneMatch:
    """A store that drops ``If-None-Match`` (as some S3-compatible servers do)."""

    def __init__(self, inner: Store) -> None:
        self.inner = inner
        self.name = f"ignoring:{inner.name}"

    def put(self, url: str, data: bytes, *, if_none_match: bool = False,
            if_match: str | None = None) -> str:
        return self.inner.put(url, data, if_match=if_match)

    def __getattr__(self, op: str) -> Any:
        return getattr(self.inner, op)


class RejectsIfNoneMatch(IgnoresIfNoneMatch):
    """A store that answers 501 to a conditional PUT."""

    def put(self, url: str, data: bytes, *, if_none_match: bool = False,
            if_match: str | None = None) -> str:
        if if_none_match:
            raise UnsupportedOperationError(url, "conditional writes are not implemented")
        return self.inner.put(url, data, if_match=if_match)


@pytest.mark.parametrize("wrapper", [IgnoresIfNoneMatch, RejectsIfNoneMatch])
def test_probe_refuses_a_store_without_conditional_put(env: Env, wrapper: Any) -> None:
    dest = env.dest()
    store = wrapper(env.store)
    job = zr.JobContext(dest, options=options())
    driver = zr.create_committer("fenced", store, job)
    with pytest.raises(ConditionalWriteUnsupportedError) as refused:
        driver.setup_job()
    message = str(refused.value)
    assert store.name in message and "magic" in message
    assert env.objects(dest) == {}  # nothing written, the probe's marker removed
    assert env.uploads(dest) == []


def test_probe_is_two_puts_on_a_fresh_job_attempt(env: Env) -> None:
    puts: list[tuple[str, bool]] = []

    class Recording(IgnoresIfNoneMatch):
        def put(self, url: str, data: bytes, *, if_none_match: bool = False,
                if_match: str | None = None) -> str:
            puts.append((url, if_none_match))
            return self.inner.put(url, data, if_none_match=if_none_match, if_match=if_match)

    job = zr.JobContext(env.dest(), options=options())
    zr.create_committer("fenced", Recording(env.store), job).setup_job()
    marker = f"{env.dest()}/__fenced_job-{job.id}/00/_job.json"
    assert puts == [(marker, True), (marker, True)]


def test_committed_files_needs_a_fenced_success(env: Env) -> None:
    dest = env.dest()
    with pytest.raises(NotFoundError, match="_SUCCESS"):
        zr.committed_files(env.store, dest)
    run_job("magic", env.store, dest, {0: {"m": b"m"}}) if env.kind == "moto" else \
        run_job("v1", env.store, dest, {0: {"m": b"m"}})
    with pytest.raises(FormatError, match="only the fenced committer"):
        zr.committed_files(env.store, dest)
    run_job("fenced", env.store, dest, {0: {"f": b"f"}})
    assert [f.url for f in zr.committed_files(env.store, dest)] == [f"{dest}/f"]


def test_abort_job_discards_committed_and_uncommitted_task_output(env: Env) -> None:
    dest = env.dest()
    run = run_job("fenced", env.store, dest, FILES, commit=False)
    crashed = zr.create_committer("fenced", env.store, run.job, task=run.job.task(7))
    crashed.setup_task()
    crashed.write("never-committed.csv", b"x")  # only this process knew its upload
    run.driver.abort_job()
    assert env.objects(dest) == {}
    assert env.uploads(dest) == []


def test_abort_spares_another_active_jobs_uploads(env: Env) -> None:
    """Uploads no record names are swept only when no other job is active under the
    destination; a concurrent job's are left alone."""
    dest = env.dest()
    ours = run_job("fenced", env.store, dest, {0: {"ours": b"o"}}, commit=False)
    other = run_job("fenced", env.store, dest, {}, commit=False)
    other_task = zr.create_committer("fenced", env.store, other.job, task=other.job.task(0))
    other_task.setup_task()
    other_task.write("theirs", b"t")
    ours.driver.abort_job()
    assert [u.url for u in env.uploads(dest)] == [f"{dest}/theirs"]
    other.driver.commit_job([other_task.commit_task()])
    assert env.output(dest) == {"theirs": b"t"}
    assert env.uploads(dest) == []


def test_is_recovery_supported_and_recovers_a_committed_task(env: Env) -> None:
    dest = env.dest()
    first = run_job("fenced", env.store, dest, FILES, protocol="hadoop", commit=False,
                    job_id="job-r")
    assert first.driver.is_recovery_supported()
    job1 = zr.JobContext(dest, job_id="job-r", attempt=1, options=options())
    driver = zr.create_committer("fenced", env.store, job1)
    for task_id in FILES:
        driver.recover_task(first.job.task(task_id))
    driver.setup_job()
    driver.commit_job()
    assert env.output(dest) == written_files(env, dest, FILES)
    assert env.uploads(dest) == []


def test_expected_multipart_etag_is_s3s() -> None:
    # S3: md5 of the concatenated binary part MD5s, then "-<parts>"
    assert expected_multipart_etag(["d41d8cd98f00b204e9800998ecf8427e"]) == \
        "59adb24ef3cdbe0297f05b395827453f-1"
    assert expected_multipart_etag(["not-md5"]) is None


def test_registered() -> None:
    assert zr.COMMITTERS["fenced"] is FencedCommitter


# -- cost -------------------------------------------------------------------------------------


def requests(store: Store) -> int:
    return sum(n for op, n in store.request_counts().items() if op != "capability_probe")


@pytest.mark.parametrize("tasks,per_task", [(2, 4), (4, 8)])
def test_requests_per_file_on_moto(moto_env: Env, tasks: int, per_task: int) -> None:
    """Counted requests, not time: single-part files cost create + part at the task and one
    complete at job commit; per task one record PUT and one GET; per job O(1).  Job commit
    under Spark's protocol is F + O(1)."""
    env = moto_env
    dest = env.dest()
    files = {t: {f"p={t}/f{i}.csv": b"x" * 10 for i in range(per_task)} for t in range(tasks)}
    total = tasks * per_task
    start = requests(env.store)
    run = run_job("fenced", env.store, dest, files, commit=False)
    before_commit = requests(env.store)
    run.driver.commit_job(run.messages)
    after = requests(env.store)
    job_commit = after - before_commit
    assert total <= job_commit <= total + 6, env.store.request_counts()
    whole = after - start
    setup_cost = 8  # HEAD dest, probe (2 PUTs), GET commit record, rollback listings
    assert whole <= 3 * total + 2 * tasks + setup_cost + 6, env.store.request_counts()
    assert env.output(dest) == {r: d for t in files.values() for r, d in t.items()}


def counts_of(ops: Sequence[str], store: Store) -> dict[str, int]:
    counts = store.request_counts()
    return {op: counts.get(op, 0) for op in ops}


def test_streamed_records_are_the_json_they_always_were() -> None:
    """The commit record and ``_SUCCESS`` are written entry by entry (a 100,000-file job holds
    no dict per file); their bytes must stay what ``json.dumps`` of the whole object gives —
    another job attempt (maybe another version) compares the commit record byte for byte, and
    readers parse ``_SUCCESS``."""
    files = [CommittedFile(f"s3://b/out/p=é/\"{i}\"", i, f"{i:032x}-1") for i in range(3)]
    success = FencedSuccessData(committer="fenced", job_id="j", files=files)
    assert success.to_bytes() == json.dumps(success.to_json(), indent=2,
                                            ensure_ascii=False).encode("utf-8")
    empty = FencedSuccessData(committer="fenced", job_id="j")
    assert empty.to_bytes() == json.dumps(empty.to_json(), indent=2,
                                          ensure_ascii=False).encode("utf-8")
    uploads = [RecordedUpload("a", f"s3://b/out/é{i}", f"id{i}", ("e1", "e2"), i)
               for i in range(3)]
    record = FencedCommitRecord("j", 1, "s3://b/out", 5, {"t": "a"}, uploads, ["r"])
    whole = {"format": "zerorename.FencedJobCommit/1", "jobId": "j", "jobAttempt": 1,
             "destination": "s3://b/out", "committed": 5, "tasks": {"t": "a"},
             "records": ["r"], "uploads": [{"a": u.attempt_id, "u": u.url, "i": u.upload_id,
                                            "e": list(u.etags), "z": u.size} for u in uploads]}
    expected = json.dumps(whole, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    assert record.to_bytes() == expected
    assert record.encode(iter(uploads)) == expected
    parsed = FencedCommitRecord.from_bytes(expected, "commit.json", job_id="j",
                                           dest="s3://b/out")
    assert parsed.uploads == uploads
