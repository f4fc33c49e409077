"""Persistent formats: Hadoop field names, round trips, and validation on load."""

from __future__ import annotations

import json
from typing import Any

import pytest

import zerorename as zr
from zerorename.formats import (
    MANIFEST_TYPE,
    SUCCESS_FILE_LIMIT,
    DirEntry,
    FileEntry,
    PendingSet,
    SinglePendingCommit,
    SuccessData,
    TaskManifest,
    UploadIntent,
    encode_url,
    parse_json,
)
from zerorename.messages import TaskCommitMessage

from .conftest_helpers import Env, run_job


def _commit(key: str = "out/part-0000", **over: Any) -> SinglePendingCommit:
    commit = SinglePendingCommit.create(f"s3://bucket/{key}", "upload-1", ["e1", "e2"], 300,
                                        job_id="job1", task_id="attempt_job1_00_m_000000_0")
    for name, value in over.items():
        setattr(commit, name, value)
    return commit


def test_pending_commit_has_hadoop_fields_and_round_trips() -> None:
    """Hadoop: SinglePendingCommit (version 2) field names; ITestCommitOperations.
    testCreateAbortEmptyFile checks created > 0, saved > 0, one etag per part."""
    commit = _commit("out/dir with space/file%+é")
    data = json.loads(commit.to_bytes())
    assert {"version", "filename", "uri", "uploadId", "bucket", "destinationKey", "created",
            "saved", "date", "jobId", "taskId", "text", "etags", "extraData", "iostatistics",
            "length"} <= set(data)
    assert data["version"] == 2 and data["created"] > 0 and data["saved"] > 0
    assert " " not in data["uri"], "HADOOP-17112: uri is percent-encoded"
    assert data["destinationKey"] == "out/dir with space/file%+é"
    back = SinglePendingCommit.from_bytes(commit.to_bytes(), "mem://x.pending")
    assert back.url == "s3://bucket/out/dir with space/file%+é"
    assert back.parts == [(1, "e1"), (2, "e2")]
    assert encode_url(back.url) == back.uri


@pytest.mark.parametrize(("change", "reason"), [
    ({"version": 3}, "version 3 is not supported"),
    ({"version": None}, "missing field 'version'"),
    ({"uploadId": ""}, "'uploadId' is empty"),
    ({"destinationKey": None}, "missing field 'destinationKey'"),
    ({"etags": []}, "non-empty list"),
    ({"etags": ["a", ""]}, "etag of part 2"),
    ({"length": -1}, "must be >= 0"),
    ({"bucket": "other"}, "does not match"),
    ({"uri": "no-scheme"}, "not a URL"),
    ({"extraData": {"k": 1}}, "map strings to strings"),
])
def test_pending_commit_validation(change: dict[str, Any], reason: str) -> None:
    """Hadoop: SinglePendingCommit.validate rules (§12 of the S3A research notes)."""
    data = _commit().to_json()
    data.update(change)
    with pytest.raises(zr.FormatError, match=reason) as info:
        SinglePendingCommit.from_json(data, "s3://bucket/x.pending")
    assert info.value.path == "s3://bucket/x.pending"


def test_pendingset_rejects_duplicate_destinations_and_keeps_attempt() -> None:
    """Hadoop: PendingSet.validate — "Destination X is written to by more than one pending
    commit"; HADOOP-17258 records the committing attempt in extraData task.attempt.id."""
    pset = PendingSet("job1", [_commit(), _commit("out/b")],
                      extra_data={"task.attempt.id": "attempt_job1_00_m_000000_0"})
    back = PendingSet.from_bytes(pset.to_bytes(), "p")
    assert back.task_attempt_id == "attempt_job1_00_m_000000_0"
    assert [c.url for c in back.commits] == ["s3://bucket/out/part-0000", "s3://bucket/out/b"]
    dup = PendingSet("job1", [_commit(), _commit(upload_id="upload-2")])
    with pytest.raises(zr.DuplicateDestinationError, match="more than one pending commit"):
        PendingSet.from_bytes(dup.to_bytes(), "dup.pendingset")


@pytest.mark.parametrize("data", [b"", b"{", b'{"version": 2, "commits": [', b"\xff\xfe",
                                  b"[]", b'"text"'])
def test_corrupt_and_truncated_files_are_format_errors(data: bytes) -> None:
    """Corrupt, truncated, empty or non-object content is a FormatError naming the file."""
    with pytest.raises(zr.FormatError) as info:
        PendingSet.from_bytes(data, "s3://b/j/t.pendingset")
    assert info.value.path == "s3://b/j/t.pendingset"
    assert info.value.reason


def _manifest(**over: Any) -> TaskManifest:
    manifest = TaskManifest(
        job_id="job1", job_attempt=0, task_id="task_job1_m_000000",
        task_attempt_id="attempt_job1_00_m_000000_0",
        task_attempt_dir="file:///out/_temporary/job1/00/tasks/  attempt with spaces",
        files=[FileEntry("file:///out/_temporary/job1/00/tasks/  attempt with spaces/subdir/file",
                         "file:///out/subdir/file", 256, "etag")],
        directories=[DirEntry("file:///out/subdir", 0, 1)],
    )
    for name, value in over.items():
        setattr(manifest, name, value)
    return manifest


def test_manifest_json_round_trip() -> None:
    """Hadoop: TestTaskManifestFileIO.testJsonRoundTrip (task attempt dir with leading spaces)."""
    manifest = _manifest()
    data = json.loads(manifest.to_bytes())
    assert data["type"] == MANIFEST_TYPE and data["version"] == 1
    assert data["files"] == [{"s": manifest.files[0].source, "d": "file:///out/subdir/file",
                              "z": 256, "e": "etag"}]
    assert data["directories"] == [{"d": "file:///out/subdir", "t": 0, "l": 1}]
    back = TaskManifest.from_bytes(manifest.to_bytes(), "m")
    assert back == manifest


@pytest.mark.parametrize(("mutate", "reason"), [
    (lambda d: d["files"].append(dict(d["files"][0], s="other")), "more than one pending"),
    (lambda d: d["files"][0].pop("d"), "missing field 'd'"),
    (lambda d: d["files"][0].update(z=-1), "must be >= 0"),
    (lambda d: d.update(version=5), "version 5 is not supported"),
    (lambda d: d.update(type="org.example.Other/1"), "is not"),
])
def test_manifest_validation(mutate: Any, reason: str) -> None:
    """Hadoop: TestTaskManifestFileIO.testValidateRejectsTwoCommitsToSameDest,
    testValidateRejectsIncompleteFileEntry, testValidateRejectsInvalidFileLength,
    testRejectIncompatibleVersion, testRejectIncompatibleType."""
    data = _manifest().to_json()
    mutate(data)
    with pytest.raises(zr.CommitError, match=reason):
        TaskManifest.from_json(data, "m.json")


def test_success_data_fields_cap_and_validation() -> None:
    """Hadoop: SuccessData — name required ("Incompatible file format"), filenames capped at
    SUCCESS_MARKER_FILE_LIMIT = 100, non-empty JSON."""
    success = SuccessData(committer="magic", job_id="job1",
                          filenames=[f"s3://b/out/f{i}" for i in range(150)],
                          diagnostics={"stage": "committer_commit_job"},
                          iostatistics={"counters": {"committer_files_committed": 150}})
    data = json.loads(success.to_bytes())
    assert data["name"] == "org.apache.hadoop.fs.s3a.commit.files.SuccessData/1"
    assert len(data["filenames"]) == SUCCESS_FILE_LIMIT
    assert {"timestamp", "date", "hostname", "committer", "description", "jobId",
            "jobIdSource", "metrics", "diagnostics", "filenames", "iostatistics"} <= set(data)
    back = SuccessData.from_bytes(success.to_bytes(), "_SUCCESS")
    assert back.counter("committer_files_committed") == 150
    assert "150 committed" in back.describe()
    data["name"] = "org.apache.hadoop.Other/1"
    with pytest.raises(zr.FormatError, match="incompatible file format"):
        SuccessData.from_json(data, "_SUCCESS")


def test_read_success_rejects_missing_and_zero_byte_markers(local_env: Env) -> None:
    """Hadoop: AbstractCommitITest.validateSuccessFile — a 0-byte _SUCCESS means the classic
    committer ran, not a zero-rename one."""
    dest = local_env.dest("classic")
    with pytest.raises(zr.NotFoundError):
        zr.read_success(local_env.store, dest)
    local_env.put(dest, "_SUCCESS", b"")
    with pytest.raises(zr.FormatError, match="0-byte"):
        zr.read_success(local_env.store, dest)


def test_upload_intent_round_trip_and_validation() -> None:
    intent = UploadIntent("job1", "attempt_1", [encode_url("s3://b/out/a b")])
    back = UploadIntent.from_bytes(intent.to_bytes(), "i")
    assert back.urls == ["s3://b/out/a b"]
    with pytest.raises(zr.FormatError, match="uris"):
        UploadIntent.from_json(dict(intent.to_json(), uris=[""]), "i")


def test_task_commit_message_round_trip_and_envelope_validation(local_env: Env) -> None:
    """Messages survive JSON (dict or text) and a damaged envelope is a FormatError that
    names the message."""
    run = run_job("magic", local_env.store, local_env.dest(), {0: {"a": b"1"}}, commit=False)
    message = run.messages[0]
    for wire in (message.to_json(), message.dumps(), message.dumps().encode()):
        back = TaskCommitMessage.from_json(wire)
        assert back == message
    broken = dict(message.to_json(), format="other/1")
    with pytest.raises(zr.FormatError, match="format"):
        TaskCommitMessage.from_json(broken)
    with pytest.raises(zr.FormatError, match=message.attempt_id):
        TaskCommitMessage.from_json(dict(message.to_json(), taskId=-1))
    with pytest.raises(zr.FormatError, match="corrupt or truncated"):
        TaskCommitMessage.from_json(message.dumps()[:-5])
    assert parse_json(b'{"a": 1}', "x") == {"a": 1}
    run.driver.abort_job()
    assert local_env.uploads(local_env.dest()) == []
