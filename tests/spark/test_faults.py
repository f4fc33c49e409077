"""Failures Spark really produces, on local[2,3]: a task attempt dies after writing, a job
exhausts its retries, and a duplicate (zombie) attempt of one partition writes concurrently.

Faults are injected with the writer's ``zerorename.fault.*`` hooks, which run inside the real
Spark task: ``exit_after_write`` calls ``os._exit`` after every byte is uploaded and before
``commit_task``, so the attempt's uploads are left exactly as a killed executor leaves them
(no ``abort_task`` runs); only job commit or job abort can clean them up.
"""

from __future__ import annotations

import threading
from typing import Any

import pytest

import zerorename as zr
from zerorename.spark import write
from zerorename.spark.core import make_store, spec_from_options
from zerorename.spark.parquet import PartitionedParquetWriter

from .helpers import events, expected_files, leftovers, read_back, rows_of, visible_files

pytestmark = [pytest.mark.spark, pytest.mark.slow]

COMMITTERS = ["magic", "directory", "partitioned"]
PARTITION_BY = ("year", "month")


@pytest.mark.parametrize("committer", COMMITTERS)
def test_attempt_that_dies_after_writing_is_retried_once(spark: Any, s3: Any, bucket: str,
                                                         committer: str) -> None:
    df = events(spark)
    dest = f"s3://{bucket}/events"
    summary = write(df, dest, committer=committer, partition_by=PARTITION_BY,
                    endpoint_url=s3.endpoint, part_size="64K",
                    **{"zerorename.fault.exit_after_write": "1@0"})
    assert summary is not None and summary.committer == committer
    # each partition exactly once: the files are exactly those the data implies, no more
    assert visible_files(s3, bucket, "events") == expected_files(df, PARTITION_BY,
                                                                 summary.job_id)
    assert rows_of(read_back(spark, dest, s3.endpoint)) == rows_of(df)
    extra, uploads = leftovers(s3, bucket, "events")
    assert extra == [] and uploads == [], (extra, uploads)


def test_attempt_that_raises_after_writing_aborts_its_own_work(spark: Any, s3: Any,
                                                               bucket: str) -> None:
    """The in-process failure path: the exception reaches ``abort_task`` before the retry."""
    df = events(spark)
    dest = f"s3://{bucket}/events"
    summary = write(df, dest, committer="magic", partition_by=PARTITION_BY,
                    endpoint_url=s3.endpoint,
                    **{"zerorename.fault.raise_after_write": "0@0,3@0"})
    assert visible_files(s3, bucket, "events") == expected_files(df, PARTITION_BY,
                                                                 summary.job_id)
    assert rows_of(read_back(spark, dest, s3.endpoint)) == rows_of(df)
    assert leftovers(s3, bucket, "events") == ([], [])


@pytest.mark.parametrize("committer", COMMITTERS)
def test_job_whose_task_exhausts_retries_leaves_nothing(spark: Any, s3: Any, bucket: str,
                                                        committer: str) -> None:
    """Partition 2 dies after writing on all 3 attempts: Spark fails the job and calls
    ``abort()`` with ``None`` for every message, so abort must find the work by listing —
    including the other partitions' committed tasks and the dead attempts' uploads."""
    df = events(spark)
    dest = f"s3://{bucket}/events"
    with pytest.raises(Exception, match="(?i)abort|fail|crash|exit"):
        write(df, dest, committer=committer, partition_by=PARTITION_BY,
              endpoint_url=s3.endpoint, part_size="64K",
              **{"zerorename.fault.exit_after_write": "2@*"})
    assert visible_files(s3, bucket, "events") == set()
    assert leftovers(s3, bucket, "events") == ([], [])


class Zombie:
    """A second attempt of one task, outside Spark's control, against the same server.

    It writes *different* rows (tag ``zombie``) to the very paths the real attempt writes, so
    any mix, extra file or lost file shows up in the read-back.  ``commit_when`` is
    ``"before"`` (it commits its task while the real attempt is still running) or ``"after"``
    (it commits after the job committed: a partitioned executor that wakes up late).
    """

    def __init__(self, spark: Any, options: dict[str, Any], partition_id: int) -> None:
        self.spec = spec_from_options(options)
        self.partition_id = partition_id
        part = events(spark, tag="zombie").where(f"spark_partition_id() = {partition_id}")
        self.batches = part.toArrow().to_batches()
        self.written = threading.Event()
        self.release = threading.Event()
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        try:
            store = make_store(self.spec)
            job = zr.JobContext(dest=self.spec.dest, job_id=self.spec.job_id, attempt=0,
                                options=self.spec.job_options())
            task = job.task(task_id=self.partition_id, attempt=7)
            committer = zr.create_committer(self.spec.committer, store, job, task=task)
            committer.setup_task()
            PartitionedParquetWriter(open_file=committer.open,
                                     file_stem=self.spec.file_stem(self.partition_id),
                                     partition_by=self.spec.partition_by
                                     ).write_all(self.batches)
            self.written.set()
            self.release.wait(60)
            try:
                committer.commit_task()
            except zr.CommitError:
                committer.abort_task()  # refused after job commit: acceptable, must not leak
        except BaseException as error:  # surfaced by the test
            self.error = error
            self.written.set()


@pytest.mark.parametrize("commit_when", ["before", "after"])
@pytest.mark.parametrize("committer", ["magic", "partitioned"])
def test_duplicate_attempt_never_mixes_or_adds(spark: Any, s3: Any, bucket: str,
                                               committer: str, commit_when: str) -> None:
    df = events(spark)
    dest = f"s3://{bucket}/events"
    options = {"path": dest, "committer": committer, "partition_by": "year,month",
               "endpoint_url": s3.endpoint, "job_id": f"dup-{committer}-{commit_when}"}
    zombie = Zombie(spark, options, partition_id=1)
    zombie.thread.start()
    assert zombie.written.wait(60) and zombie.error is None, zombie.error
    if commit_when == "before":
        zombie.release.set()
        zombie.thread.join(60)
    summary = write(df, dest, committer=committer, partition_by=PARTITION_BY,
                    endpoint_url=s3.endpoint, job_id=options["job_id"],
                    **{"zerorename.fault.sleep_before_commit": "1@0:1"})
    zombie.release.set()
    zombie.thread.join(60)
    assert zombie.error is None, zombie.error
    assert visible_files(s3, bucket, "events") == expected_files(df, PARTITION_BY,
                                                                 summary.job_id)
    got = rows_of(read_back(spark, dest, s3.endpoint))
    assert not [r for r in got if r[3].startswith("zombie")]
    assert got == rows_of(df)
    extra, _ = leftovers(s3, bucket, "events")
    assert extra == []
