"""Failures Spark really produces, on local[2,3]: a task attempt dies after writing, a job
exhausts its retries, and a duplicate (zombie) attempt of one partition writes concurrently.

Faults are injected with the writer's ``zerorename.fault.*`` hooks, which run inside the real
Spark task: ``exit_after_write`` calls ``os._exit`` after every byte is uploaded and before
``commit_task``, so the attempt's uploads are left exactly as a killed executor leaves them
(no ``abort_task`` runs); only job commit or job abort can clean them up.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from zerorename.spark import write
from zerorename.spark.core import spec_from_options
from zerorename_bridge.spark_faults import DuplicateAttempt

from .helpers import events, leftovers, read_back, rows_of, snapshot, visible_files

pytestmark = [pytest.mark.spark, pytest.mark.slow]

COMMITTERS = ["magic", "directory", "partitioned"]
PARTITION_BY = ("year", "month")


def local_files(directory: Path) -> list[str]:
    """Files left in a staging committer's local directory (``fs.s3a.buffer.dir``)."""
    return sorted(str(p.relative_to(directory)) for p in directory.rglob("*") if p.is_file())


@pytest.mark.parametrize("committer", COMMITTERS)
def test_attempt_that_dies_after_writing_is_retried_once(spark: Any, s3: Any, bucket: str,
                                                         committer: str, tmp_path: Path) -> None:
    df = events(spark)
    expected = snapshot(df, PARTITION_BY)
    dest = f"s3://{bucket}/events"
    summary = write(df, dest, committer=committer, partition_by=PARTITION_BY,
                    endpoint_url=s3.endpoint, part_size="64K", part_min_size="64K",
                    **{"fs.s3a.buffer.dir": str(tmp_path),
                       "zerorename.fault.exit_after_write": "1@0"})
    assert summary is not None and summary.committer == committer
    # each partition exactly once: the files are exactly those the data implies, no more
    assert visible_files(s3, bucket, "events") == expected.files(summary.job_id)
    assert rows_of(read_back(spark, dest, s3.endpoint)) == expected.rows
    assert leftovers(s3, bucket, "events") == ([], [])
    # the dead attempt's local staging files (staging committers), on this same host
    assert local_files(tmp_path) == []


def test_attempt_that_raises_after_writing_aborts_its_own_work(spark: Any, s3: Any,
                                                               bucket: str) -> None:
    """The in-process failure path: the exception reaches ``abort_task`` before the retry."""
    df = events(spark)
    expected = snapshot(df, PARTITION_BY)
    dest = f"s3://{bucket}/events"
    summary = write(df, dest, committer="magic", partition_by=PARTITION_BY,
                    endpoint_url=s3.endpoint,
                    **{"zerorename.fault.raise_after_write": "0@0,3@0"})
    assert visible_files(s3, bucket, "events") == expected.files(summary.job_id)
    assert rows_of(read_back(spark, dest, s3.endpoint)) == expected.rows
    assert leftovers(s3, bucket, "events") == ([], [])


@pytest.mark.parametrize("committer", COMMITTERS)
def test_job_whose_task_exhausts_retries_leaves_nothing(spark: Any, s3: Any, bucket: str,
                                                        committer: str, tmp_path: Path) -> None:
    """Partition 2 dies after writing on all 3 attempts: Spark fails the job and calls
    ``abort()`` with ``None`` for every message, so abort must find the work by listing —
    including the other partitions' committed tasks and the dead attempts' uploads."""
    dest = f"s3://{bucket}/events"
    with pytest.raises(Exception, match=r"(?i)abort|fail|crash|exit"):
        write(events(spark), dest, committer=committer, partition_by=PARTITION_BY,
              endpoint_url=s3.endpoint, part_size="64K", part_min_size="64K",
              **{"fs.s3a.buffer.dir": str(tmp_path),
                 "zerorename.fault.exit_after_write": "2@*"})
    assert visible_files(s3, bucket, "events") == set()
    assert leftovers(s3, bucket, "events") == ([], [])
    assert local_files(tmp_path) == []


@pytest.mark.parametrize(("committer", "commit_when"),
                         [("magic", "before"), ("magic", "after"), ("partitioned", "before")])
def test_duplicate_attempt_never_mixes_or_adds(spark: Any, s3: Any, bucket: str,
                                               committer: str, commit_when: str) -> None:
    """A second attempt of task 1 (outside Spark, same server, same paths) writes rows tagged
    ``zombie`` and commits its task either while the real attempt is still running
    (``before``) or after the job committed (``after``, a partitioned executor).  The
    driver commits only Spark's winning attempts, so no zombie row and no extra file may
    ever be visible."""
    df = events(spark)
    expected = snapshot(df, PARTITION_BY)
    dest = f"s3://{bucket}/events"
    job_id = f"dup-{committer}-{commit_when}"
    spec = spec_from_options({"path": dest, "committer": committer, "job_id": job_id,
                              "partition_by": "year,month", "endpoint_url": s3.endpoint})
    zombie_rows = events(spark, tag="zombie").where("spark_partition_id() = 1")
    zombie = DuplicateAttempt(spec, 1, zombie_rows.toArrow().to_batches()).start()
    if commit_when == "before":
        zombie.release()
    summary = write(df, dest, committer=committer, partition_by=PARTITION_BY,
                    endpoint_url=s3.endpoint, job_id=job_id,
                    **{"zerorename.fault.sleep_before_commit": "1@0:1"})
    zombie.release()
    assert visible_files(s3, bucket, "events") == expected.files(summary.job_id)
    got = rows_of(read_back(spark, dest, s3.endpoint))
    assert [r for r in got if r[3].startswith("zombie")] == []
    assert got == expected.rows
    extra, uploads = leftovers(s3, bucket, "events")
    assert uploads == []  # job commit aborted the zombie's uploads, whenever it commits
    if commit_when == "before":  # a zombie that outlives the job may leave hidden records
        assert extra == []
