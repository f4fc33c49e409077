"""Shared test vectors of the fenced committer's records: the bytes in ``tests/vectors/fenced/``
are what the Python reference writes for the inputs below, and what the JVM committer writes
for the same inputs (``jvm/spark``'s ``TestSharedVectors`` builds them with the Java records and
compares byte for byte).  Both suites also read every file back.

``python -m tests.vectors.test_fenced_vectors`` rewrites the files from the Python side (then
run JUnit)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from zerorename.committers.fenced_records import (
    CommittedFile,
    FencedCommitRecord,
    FencedSuccessData,
    RecordedUpload,
)
from zerorename.committers.records import find_expired
from zerorename.formats import PendingSet, SinglePendingCommit, SuccessData
from zerorename.stores import LocalStore

HERE = Path(__file__).parent / "fenced"
JOB = "vec-job-1"
DEST = "s3a://bucket/out"
ODD = f"{DEST}/year=2026/part-00007 a+b=\u00fc\"q\t.parquet"
PLAIN = f"{DEST}/part-00002.csv"
ETAGS = ["0123456789abcdef0123456789abcdef", "fedcba9876543210fedcba9876543210"]
ETAG2 = ["00112233445566778899aabbccddeeff"]
A7 = "attempt_jt_0001_m_000007_1"
A2 = "attempt_jt_0001_m_000002_0"
STATS: dict[str, Any] = {"counters": {"committer_tasks_succeeded": 1}, "gauges": {},
                         "minimums": {}, "maximums": {}, "meanstatistics": {}}


def task_record() -> bytes:
    commits = [
        SinglePendingCommit.create(ODD, "upload-1", ETAGS, 12345, job_id=JOB, task_id=A7,
                                   created=1767225600000, now=1767225600123),
        SinglePendingCommit.create(PLAIN, "upload-2", ETAG2, 0, job_id=JOB, task_id=A7,
                                   created=1767225600000, now=1767225600123),
    ]
    return PendingSet(job_id=JOB, commits=commits, extra_data={
        "task.attempt.id": A7, "zerorename.task.name": "task_jt_0001_m_000007",
        "zerorename.task.attempt": "1", "zerorename.saved": "1767225600123",
        "zerorename.committer": "fenced"}, iostatistics=STATS).to_bytes()


def commit_record() -> bytes:
    return FencedCommitRecord(
        job_id=JOB, job_attempt=0, destination=DEST, committed=1767225600999,
        tasks={"task_jt_0001_m_000007": A7, "task_jt_0001_m_000002": A2},
        uploads=[RecordedUpload(A7, ODD, "upload-1", tuple(ETAGS), 12345),
                 RecordedUpload(A2, PLAIN, "upload-2", tuple(ETAG2), 0)],
        records=[f"{DEST}/__fenced_job-{JOB}/00/tasks/task_jt_0001_m_000007.pendingset",
                 f"{DEST}/__fenced_job-{JOB}/00/tasks/task_jt_0001_m_000002.pendingset"],
    ).to_bytes()


def success() -> bytes:
    return FencedSuccessData(
        committer="fenced", job_id=JOB, job_id_source="spark.sql.sources.writeJobUUID",
        timestamp=1767225601000, hostname="host-\u00fc",
        description="zerorename fenced committer, job attempt 0", success=True,
        filenames=[PLAIN, ODD], metrics={"files": 2, "bytes": 12345, "tasks": 2},
        diagnostics={"stage": "committer_commit_job", "destination": DEST,
                     "control": "a\u0001b\nc"},
        iostatistics={"counters": {"committer_files_committed": 2}, "gauges": {},
                      "minimums": {"a.min": 1}, "maximums": {"a.max": 3},
                      "meanstatistics": {"a.mean": {"samples": 2, "sum": 4}}},
        state="SUCCEEDED", stage="committer_commit_job",
        # sorted by URL, as a job commit lists them
        files=[CommittedFile(PLAIN, 0, "d41d8cd98f00b204e9800998ecf8427e"),
               CommittedFile(ODD, 12345, "9f1b6a2c0d3e4f5a6b7c8d9e0f1a2b3c-2")],
    ).to_bytes()


def marker() -> bytes:
    return json.dumps({"jobId": JOB, "jobAttempt": 0, "committer": "fenced",
                       "probe": 1}).encode("utf-8")


VECTORS = {"task_record.pendingset": task_record, "commit.json": commit_record,
           "_SUCCESS": success, "_job.json": marker}


def write_vectors() -> None:
    """Rewrite the vector files from the Python records (``python -m
    tests.vectors.test_fenced_vectors``): only when the record format changes on purpose;
    JUnit's TestSharedVectors then holds the Java side to them."""
    HERE.mkdir(exist_ok=True)
    for name, make in VECTORS.items():
        (HERE / name).write_bytes(make())


@pytest.mark.parametrize("name", sorted(VECTORS))
def test_python_writes_the_vector_bytes(name: str) -> None:
    assert VECTORS[name]() == (HERE / name).read_bytes()


def test_python_reads_the_vectors() -> None:
    pset = PendingSet.from_bytes((HERE / "task_record.pendingset").read_bytes(), "t")
    assert pset.task_attempt_id == A7
    assert [c.url for c in pset.commits] == [ODD, PLAIN]
    record = FencedCommitRecord.from_bytes((HERE / "commit.json").read_bytes(), "c",
                                           job_id=JOB, dest=DEST)
    assert record.attempts == {A7, A2}
    assert [u.url for u in record.uploads] == [ODD, PLAIN]
    done = SuccessData.from_bytes((HERE / "_SUCCESS").read_bytes(), "s")
    assert done.committer == "fenced" and done.job_id == JOB


def test_a_changed_byte_is_caught() -> None:
    """The comparison can fail: a record with one field changed is not the vector."""
    data = json.loads(commit_record())
    data["jobAttempt"] = 1
    changed = json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode()
    assert changed != (HERE / "commit.json").read_bytes()


def test_zerorename_records_lists_a_jvm_shaped_root(tmp_path: Path) -> None:
    """A finished job's root (only its commit record) is what ``zerorename records`` finds."""
    root = tmp_path / "out" / f"__fenced_job-{JOB}"
    root.mkdir(parents=True)
    (root / "commit.json").write_bytes((HERE / "commit.json").read_bytes())
    found = find_expired(LocalStore(), f"file://{tmp_path}/out", older_than=0.0,
                         now=1e12)
    assert [r.job_id for r in found] == [JOB]


if __name__ == "__main__":
    write_vectors()
