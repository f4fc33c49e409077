"""Job/task identities and options, the bounded executor, and IOStatistics."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

import zerorename as zr
from zerorename.context import Options
from zerorename.executor import THREAD_PREFIX, BoundedExecutor, thread_count
from zerorename.stats import IOStatistics

pytestmark = pytest.mark.usefixtures("no_leaked_threads")


def test_job_ids_unique_even_in_the_same_second() -> None:
    """HADOOP-17318 / SPARK-33402: two jobs started in the same second got the same ID."""
    ids = {zr.JobContext("s3://bucket/out").id for _ in range(2000)}
    assert len(ids) == 2000


@pytest.mark.parametrize(("options", "expected", "source"), [
    ({"spark.sql.sources.writeJobUUID": "spark-1"}, "spark-1", "SparkWriteUUID"),
    ({"fs.s3a.committer.uuid": "mine", "spark.sql.sources.writeJobUUID": "spark-1"}, "mine",
     "CommitterUUIDProperty"),
    ({}, None, "GeneratedLocally"),
])
def test_job_uuid_precedence(options: dict[str, Any], expected: str | None,
                             source: str) -> None:
    """Hadoop: TestStagingCommitter.testUUIDPropagation / testUUIDLoadOrdering /
    testSelfGeneratedUUID."""
    job = zr.JobContext("s3://bucket/out", options=options)
    assert job.job_id_source == source
    if expected is not None:
        assert job.id == expected


def test_require_uuid_and_bad_ids() -> None:
    """Hadoop: TestStagingCommitter.testUUIDValidation (E_NO_SPARK_UUID); a job ID names paths,
    so one with a slash is refused."""
    with pytest.raises(zr.CommitError, match="no job UUID"):
        zr.JobContext("s3://bucket/out", options={"fs.s3a.committer.require.uuid": "true"})
    with pytest.raises(zr.CommitError, match="job ID"):
        zr.JobContext("s3://bucket/out", job_id="a/b")
    with pytest.raises(zr.BadURLError):
        zr.JobContext("bucket/out")
    with pytest.raises(zr.BadURLError, match="root"):
        zr.JobContext("file:///")


def test_task_attempt_ids_differ_by_attempt_and_job_attempt() -> None:
    """Hadoop: TestStagingCommitter.testAttemptPathsDifferentByTaskAttempt; a new job attempt
    never reuses an attempt's ID (AbstractITCommitProtocol.testRecoveryAndCleanup)."""
    job0 = zr.JobContext("s3://bucket/out/", job_id="j1")
    job1 = zr.JobContext("s3://bucket/out", job_id="j1", attempt=1)
    assert job0.dest == "s3://bucket/out"
    ids = {job0.task(3, 0).attempt_id, job0.task(3, 1).attempt_id, job1.task(3, 0).attempt_id}
    assert len(ids) == 3
    assert job0.task(3, 0).task_name == job0.task(3, 1).task_name == "task_j1_m_000003"
    with pytest.raises(zr.CommitError):
        job0.task(-1)


def test_options_parsing() -> None:
    opts = Options({"size": "64M", "k": "100K", "n": 7, "b": "TRUE", "d": "500ms", "bad": "x"})
    assert opts.get_size("size") == 64 << 20 and opts.get_size("k") == 100 << 10
    assert opts.get_int("n") == 7 and opts.get_bool("b") is True
    assert opts.get_seconds("d") == pytest.approx(0.5)
    assert opts.get_int("missing", default=3) == 3
    for getter in (opts.get_size, opts.get_int, opts.get_bool, opts.get_seconds):
        with pytest.raises(zr.CommitError, match="bad"):
            getter("bad")
    assert thread_count(Options({"t": "-2"}), "t", default=1) >= 2


def test_inline_executor_runs_in_the_caller_thread() -> None:
    """threads <= 1 must not create threads: the simulation harness runs committers on
    greenlets, which cannot be switched from another thread."""
    before = threading.active_count()
    me = threading.get_ident()
    with BoundedExecutor(1, "inline") as pool:
        idents = pool.run(lambda _: threading.get_ident(), range(5))
        assert threading.active_count() == before
    assert set(idents) == {me}


def test_bounded_executor_limits_in_flight_and_shuts_down() -> None:
    """At most ``capacity`` items are pulled ahead of completion (bounded memory), and the
    pool's threads are gone when the operation ends."""
    pulled = 0
    running = 0
    peak = 0
    lock = threading.Lock()

    def items():  # type: ignore[no-untyped-def]
        nonlocal pulled
        for i in range(40):
            with lock:
                pulled += 1
            yield i

    def work(i: int) -> int:
        nonlocal running, peak
        with lock:
            running += 1
            peak = max(peak, running)
            in_flight = pulled - done
        assert in_flight <= 4
        time.sleep(0.002)
        with lock:
            running -= 1
        return i

    done = 0
    with BoundedExecutor(3, "bounded", capacity=4) as pool:
        for _ in pool.imap(work, items()):
            done += 1
        names = [t.name for t in threading.enumerate() if t.name.startswith(THREAD_PREFIX)]
        assert names, "a multi-threaded pool uses named threads"
    assert done == 40 and 1 <= peak <= 3
    assert not [t for t in threading.enumerate() if t.name.startswith(THREAD_PREFIX)]


def test_executor_stops_at_first_failure() -> None:
    """Hadoop manifest committer: the first failure stops further submissions, in-flight work
    finishes, the original error propagates."""
    started: list[int] = []
    lock = threading.Lock()

    def work(i: int) -> int:
        with lock:
            started.append(i)
        if i == 3:
            raise ValueError("boom at 3")
        return i

    for threads in (1, 4):
        started.clear()
        with BoundedExecutor(threads, "fail", capacity=2) as pool, \
                pytest.raises(ValueError, match="boom at 3"):
            pool.run(work, range(100))
        assert len(started) < 20
    with BoundedExecutor(2, "all") as pool:
        results, errors = pool.run_all(work, range(6))
    assert sorted(results) == [0, 1, 2, 4, 5] and [i for i, _ in errors] == [3]


def test_iostatistics_thread_safe_aggregation_and_shape() -> None:
    stats = IOStatistics()

    def hammer(_: int) -> None:
        for _i in range(500):
            stats.incr("c")
            stats.sample("s", 3)

    threads = [threading.Thread(target=hammer, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    with stats.duration("op"):
        pass
    with pytest.raises(RuntimeError), stats.duration("op"):
        raise RuntimeError
    snap = stats.snapshot()
    assert set(snap) == {"counters", "gauges", "minimums", "maximums", "meanstatistics"}
    assert snap["counters"]["c"] == 2000
    assert snap["counters"]["op"] == 1 and snap["counters"]["op.failures"] == 1
    assert snap["meanstatistics"]["s.mean"] == {"samples": 2000, "sum": 6000}
    total = IOStatistics.from_json(snap)
    total.aggregate(snap)
    assert total.counter("c") == 4000
    assert total.snapshot()["minimums"]["s.min"] == 3
    assert IOStatistics.from_json({"counters": "garbage"}).snapshot()["counters"] == {}
