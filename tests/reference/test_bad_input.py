"""Bad input: corrupt, truncated, wrong-version or foreign records and messages, escaping or
duplicate destinations.  Each fails with a CommitError subclass naming the path and the
reason, before anything is published, and the job's uploads are aborted."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

import zerorename as zr
from zerorename.formats import SinglePendingCommit

from .conftest_helpers import (
    ALL,
    Env,
    FaultyStore,
    options,
    run_job,
)

pytestmark = pytest.mark.usefixtures("no_leaked_threads")

FILES = {0: {"a/part-0": b"A" * 600}, 1: {"b/part-1": b"B" * 100}}

Mutation = Callable[[bytes], bytes]


def _json_edit(edit: Callable[[dict[str, Any]], None]) -> Mutation:
    def mutate(data: bytes) -> bytes:
        doc = json.loads(data)
        edit(doc)
        return json.dumps(doc).encode()
    return mutate


RECORD_DAMAGE: dict[str, tuple[Mutation, type[zr.CommitError], str]] = {
    "corrupt": (lambda d: b"\x00\x01garbage" + d, zr.FormatError, "corrupt|UTF-8"),
    "truncated": (lambda d: d[: len(d) // 2], zr.FormatError, "corrupt or truncated"),
    "empty": (lambda d: b"", zr.FormatError, "empty file"),
    "wrong-version": (_json_edit(lambda doc: doc.update(version=99)), zr.FormatError,
                      "version 99"),
    "wrong-job": (_json_edit(lambda doc: doc.update(jobId="someone-else")), zr.FormatError,
                  "not this job"),
}


def _assert_nothing_published(env: Env, dest: str) -> None:
    assert env.output(dest) == {}, "bad input must not publish anything"
    assert env.uploads(dest) == [], "the failed job must abort the uploads it owns"


@pytest.mark.parametrize("damage", sorted(RECORD_DAMAGE))
@pytest.mark.parametrize("committer", ["magic", "directory", "manifest"])
def test_damaged_stored_record_fails_hadoop_protocol_commit(committer: str, damage: str,
                                                            local_env: Env) -> None:
    """Hadoop: ValidationFailure on load of a .pendingset (S3A) or task manifest (manifest
    committer, TestLoadManifestsStage / Part K: zero-byte, corrupt, wrong version): the job
    commit fails naming the file, and nothing becomes visible."""
    mutate, error, reason = RECORD_DAMAGE[damage]
    dest = local_env.dest()
    run = run_job(committer, local_env.store, dest, FILES, commit=False)
    record = run.messages[1].record
    local_env.store.put(record, mutate(local_env.store.get(record)))
    with pytest.raises(error, match=reason) as info:
        run.driver.commit_job(None)
    assert info.value.path.startswith(record)
    _assert_nothing_published(local_env, dest)


MESSAGE_DAMAGE: dict[str, tuple[Callable[[dict[str, Any]], Any], str]] = {
    "truncated-text": (lambda m: json.dumps(m)[:-40], "corrupt or truncated"),
    "wrong-job": (lambda m: dict(m, jobId="someone-else"), "not this job"),
    "wrong-committer": (lambda m: dict(m, committer="v2"), "v2 committer"),
    "wrong-job-attempt": (lambda m: dict(m, jobAttempt=3), "job attempt 3"),
    "wrong-payload-version": (
        lambda m: _payload_edit(m, lambda p: p.update(version=7)), "version 7"),
    "payload-of-another-job": (
        lambda m: _payload_edit(m, lambda p: p.update(jobId="someone-else")), "not this job"),
    "not-an-object": (lambda m: ["a", "list"], "not a JSON object"),
}


def _payload_edit(message: dict[str, Any], edit: Callable[[dict[str, Any]], None]
                  ) -> dict[str, Any]:
    payload = message["payload"]
    edit(payload.get("pendingset") or payload.get("manifest"))
    return message


@pytest.mark.parametrize("damage", sorted(MESSAGE_DAMAGE))
@pytest.mark.parametrize("committer", ["magic", "manifest"])
def test_damaged_message_fails_spark_protocol_commit(committer: str, damage: str,
                                                     local_env: Env) -> None:
    """A damaged or foreign task commit message fails the job commit with a FormatError that
    names the message, and the job's uploads are aborted."""
    edit, reason = MESSAGE_DAMAGE[damage]
    dest = local_env.dest()
    run = run_job(committer, local_env.store, dest, FILES, commit=False)
    bad = edit(json.loads(run.messages[1].dumps()))
    with pytest.raises(zr.FormatError, match=reason) as info:
        run.driver.commit_job([run.messages[0], bad])
    assert "message" in info.value.path
    _assert_nothing_published(local_env, dest)


def _escape_targets(env: Env, dest: str) -> dict[str, str]:
    other_root = "s3://another-bucket/data/out" if env.kind == "moto" else "file:///elsewhere"
    return {
        "dotdot": f"{dest}/../escaped",
        "sibling-prefix": f"{dest}10/part-0",
        "absolute-elsewhere": f"{env.base}/elsewhere/part-0",
        "another-bucket": f"{other_root}/part-0",
        "reserved-area": f"{dest}/_temporary/part-0",
        "under-success-marker": f"{dest}/_SUCCESS/part-0",
    }


@pytest.mark.parametrize("target", ["dotdot", "sibling-prefix", "absolute-elsewhere",
                                    "another-bucket", "reserved-area", "under-success-marker"])
def test_escaping_destination_rejected_before_any_upload_completes(target: str,
                                                                   env: Env) -> None:
    """A pendingset entry whose destination lies outside the job destination (.., a sibling
    like out10, another path or bucket) is rejected before the first upload is completed."""
    dest = env.dest()
    faulty = FaultyStore(env.store)
    run = run_job("magic", faulty, dest, FILES, commit=False)
    url = _escape_targets(env, dest)[target]
    message = json.loads(run.messages[1].dumps())
    commit = message["payload"]["pendingset"]["commits"][0]
    forged = SinglePendingCommit.create(url, commit["uploadId"], commit["etags"],
                                        commit["length"], job_id=run.job.id,
                                        task_id=commit["taskId"])
    message["payload"]["pendingset"]["commits"][0] = forged.to_json()
    completes_before = faulty.calls["complete_multipart"]
    with pytest.raises(zr.DestinationEscapeError, match=r"outside|'\.\.'|reserved") as info:
        run.driver.commit_job([run.messages[0], message])
    assert "message" in info.value.path
    assert faulty.calls["complete_multipart"] == completes_before
    _assert_nothing_published(env, dest)


def test_manifest_entries_must_stay_inside_their_task_and_destination(local_env: Env) -> None:
    """A manifest may only rename files out of its own task attempt directory, into the job
    destination: anything else is rejected before the first rename."""
    dest = local_env.dest()
    local_env.put(local_env.base, "victim", b"precious")
    run = run_job("manifest", local_env.store, dest, FILES, commit=False)
    message = json.loads(run.messages[0].dumps())
    entry = message["payload"]["manifest"]["files"][0]
    entry["s"] = f"{local_env.base}/victim"
    with pytest.raises(zr.FormatError, match="outside the task attempt directory"):
        run.driver.commit_job([message])
    assert local_env.store.get(f"{local_env.base}/victim") == b"precious"
    run2 = run_job("manifest", local_env.store, local_env.dest("two"), FILES, commit=False)
    message2 = json.loads(run2.messages[0].dumps())
    message2["payload"]["manifest"]["files"][0]["d"] = f"{local_env.base}/victim"
    with pytest.raises(zr.DestinationEscapeError):
        run2.driver.commit_job([message2])
    assert local_env.store.get(f"{local_env.base}/victim") == b"precious"
    assert local_env.output(dest) == {} and local_env.output(local_env.dest("two")) == {}


def test_duplicate_destination_in_one_task_rejected(local_env: Env) -> None:
    """Hadoop: PendingSet/TaskManifest validation — two commits to one destination in a task
    are rejected; the committer also refuses to open one path twice."""
    dest = local_env.dest()
    run = run_job("magic", local_env.store, dest, FILES, commit=False)
    message = json.loads(run.messages[0].dumps())
    commits = message["payload"]["pendingset"]["commits"]
    commits.append(dict(commits[0], uploadId="another-upload"))
    with pytest.raises(zr.DuplicateDestinationError, match="more than one pending commit"):
        run.driver.commit_job([message, run.messages[1]])
    _assert_nothing_published(local_env, dest)
    job = zr.JobContext(local_env.dest("open-twice"), options=options())
    tc = zr.create_committer("magic", local_env.store, job, task=job.task(0))
    tc.setup_task()
    tc.write("same", b"1")
    with pytest.raises(zr.DuplicateDestinationError, match="already opened"):
        tc.open("same")
    tc.abort_task()


@pytest.mark.parametrize("committer", ["magic", "directory", "manifest"])
def test_two_tasks_writing_one_destination_rejected(committer: str, local_env: Env) -> None:
    """Across the whole job each destination is committed once: two tasks writing the same
    file fail the job commit instead of silently keeping one of them."""
    dest = local_env.dest()
    run = run_job(committer, local_env.store, dest,
                  {0: {"same": b"zero"}, 1: {"same": b"one"}}, commit=False)
    with pytest.raises(zr.DuplicateDestinationError, match="two tasks"):
        run.driver.commit_job(run.messages)
    _assert_nothing_published(local_env, dest)


@pytest.mark.parametrize("relpath", ["../x", "/abs/x", "a//b", "./a", "a/./b", "a/../b", "",
                                     "dir/", "_temporary/x", "__magic_job-1/x",
                                     "__staging_job-1/x", "_SUCCESS", "_SUCCESS/part-0",
                                     "s3://bucket/x"])
def test_task_paths_that_escape_or_hit_committer_areas_are_refused(relpath: str,
                                                                   local_env: Env) -> None:
    job = zr.JobContext(local_env.dest(), options=options())
    for committer in ("magic", "directory", "manifest"):
        tc = zr.create_committer(committer, local_env.store, job, task=job.task(0))
        with pytest.raises(zr.DestinationEscapeError):
            tc.open(relpath)
    assert local_env.objects(local_env.dest()) == {}


@pytest.mark.parametrize("committer", ALL)
def test_output_under_the_success_marker_is_refused_before_anything_is_written(
        committer: str, local_env: Env) -> None:
    """``_SUCCESS/part-0`` used to be accepted: on a file system the data was published, and
    then writing ``_SUCCESS`` failed with a raw IsADirectoryError.  It is refused at open,
    with the other reserved names, and the store is left as it was."""
    dest = local_env.dest()
    job = zr.JobContext(dest, options=options())
    zr.create_committer(committer, local_env.store, job).setup_job()
    tc = zr.create_committer(committer, local_env.store, job, task=job.task(0))
    tc.setup_task()
    before = local_env.objects(local_env.base)
    with pytest.raises(zr.DestinationEscapeError, match="_SUCCESS") as info:
        tc.open("_SUCCESS/part-0")
    assert info.value.path == "_SUCCESS/part-0"
    assert local_env.objects(local_env.base) == before
    assert local_env.uploads(dest) == []


def test_commit_job_refuses_a_non_list_of_messages(local_env: Env) -> None:
    run = run_job("magic", local_env.store, local_env.dest(), FILES, commit=False)
    with pytest.raises(zr.FormatError, match="list"):
        run.driver.commit_job(run.messages[0].dumps())  # type: ignore[arg-type]
    _assert_nothing_published(local_env, local_env.dest())


@pytest.mark.parametrize(("size", "reason"), [("1M", "below the minimum"),
                                              ("5242879", "below the minimum"),
                                              ("6G", "above the maximum")])
@pytest.mark.parametrize("committer", ["magic", "directory", "manifest"])
def test_part_size_outside_the_store_limits_is_refused_when_the_committer_is_built(
        committer: str, size: str, reason: str, moto_env: Env) -> None:
    """``fs.s3a.multipart.size=1M`` used to be accepted and fail only at job commit
    (EntityTooSmall, S3's 5 MiB minimum for every part but the last).  Both sides of the
    job refuse it when built, naming the option and its value, before any request."""
    store = FaultyStore(zr.S3Store(moto_env.client, retry=zr.RetryPolicy(max_attempts=1)))
    job = zr.JobContext(moto_env.dest(), options=options(**{"fs.s3a.multipart.size": size}))
    for task in (None, job.task(0)):
        with pytest.raises(zr.OptionValueError, match=reason) as info:
            zr.create_committer(committer, store, job, task=task)
        assert info.value.path == "fs.s3a.multipart.size" and size in str(info.value)
    changing = {"put", "delete", "create_multipart", "upload_part", "complete_multipart"}
    assert [call for call in store.log if call[0] in changing] == []
    ok = zr.JobContext(moto_env.dest(), options=options(**{"fs.s3a.multipart.size": "5M"}))
    assert zr.create_committer(committer, store, ok).part_size == 5 << 20


def test_local_store_has_no_part_size_limit(local_env: Env) -> None:
    """LocalStore declares no multipart limit: tiny parts are fine there."""
    job = zr.JobContext(local_env.dest(), options=options(**{"fs.s3a.multipart.size": "1"}))
    assert zr.create_committer("magic", local_env.store, job).part_size == 1
    caps = local_env.store.capabilities()
    assert (caps.min_part_size, caps.max_part_size, caps.max_parts) == (1, None, None)
