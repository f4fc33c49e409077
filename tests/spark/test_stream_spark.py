"""Real Structured Streaming through ``format("zerorename")``: a file source read one file per
micro-batch, the query stopped at chosen points and restarted from its checkpoint, and Spark's
re-run of the last batch (its commit-log entry deleted: a driver that died between the sink's
commit and Spark's commit log).  Every input row must be visible exactly once, to a reader of
the batch records and to a plain listing reader; a sink that is not idempotent per batch id
fails the same check.
"""

from __future__ import annotations

import io
import pickle
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

import zerorename as zr
from zerorename.spark.reader import list_data_files
from zerorename.spark.streaming import StreamRunFencedError
from zerorename.table_log import table_files
from zerorename_bridge.embedded_s3 import EmbeddedS3

from . import stream_helpers
from .conftest import PART_MIN_SIZE
from .test_rgw_spark import RGWServer, rgw_spark_bucket  # noqa: F401 - a fixture

pytestmark = [pytest.mark.spark, pytest.mark.slow]

FILES = 4
ROWS = 25


def make_input(directory: Path) -> Counter[int]:
    """``FILES`` Parquet files of ``ROWS`` rows, ids unique: one micro-batch each."""
    import pyarrow as pa  # type: ignore[import-untyped]
    import pyarrow.parquet as pq  # type: ignore[import-untyped]

    directory.mkdir(parents=True)
    for n in range(FILES):
        ids = list(range(n * ROWS, (n + 1) * ROWS))
        pq.write_table(pa.table({"id": ids, "part": [i % 3 for i in ids]}),
                       directory / f"in-{n}.parquet")
    return Counter(range(FILES * ROWS))


def run_query(spark: Any, fmt: str, dest: str, checkpoint: Path, source: Path,
              options: dict[str, str]) -> BaseException | None:
    """One start of the query, until every available file is processed or it fails."""
    from pyspark.errors import StreamingQueryException

    df = (spark.readStream.schema("id long, part long").option("maxFilesPerTrigger", 1)
          .parquet(str(source)))
    writer = (df.writeStream.format(fmt).option("checkpointLocation", str(checkpoint))
              .option("partition_by", "part"))
    for key, value in options.items():
        writer = writer.option(key, value)
    query = writer.trigger(availableNow=True).start(dest)
    try:
        query.awaitTermination()
    except StreamingQueryException as error:
        return error
    return None


def drop_last_commit(checkpoint: Path) -> int:
    """Delete Spark's newest commit-log entry: on restart it re-runs that batch, same id."""
    commits = checkpoint / "commits"
    last = max(int(p.name) for p in commits.iterdir() if p.name.isdigit())
    (commits / str(last)).unlink()
    (commits / f".{last}.crc").unlink(missing_ok=True)
    return last


def ids_in(store: zr.Store, urls: list[str]) -> Counter[int]:
    import pyarrow.parquet as pq

    ids: Counter[int] = Counter()
    for url in urls:
        ids.update(pq.read_table(io.BytesIO(store.get(url))).column("id").to_pylist())
    return ids


def problems(seen: Counter[int], want: Counter[int]) -> dict[str, int]:
    """Rows lost and rows duplicated (zero both: exactly once)."""
    return {"lost": sum((want - seen).values()), "duplicated": sum((seen - want).values())}


class Backend:
    """Where the stream writes: the local filesystem, the embedded S3 server or Ceph RGW."""

    def __init__(self, kind: str, tmp_path: Path, s3: EmbeddedS3,
                 rgw: tuple[RGWServer, str] | None = None) -> None:
        self.kind = kind
        if kind == "local":
            self.dest = f"file://{tmp_path}/events"
            self.store: zr.Store = zr.LocalStore()
            self.options: dict[str, str] = {}
        elif rgw is not None:
            server, bucket = rgw
            self.dest = f"s3://{bucket}/events"
            self.store = zr.S3Store(zr.make_s3_client(server.endpoint, server.region))
            self.options = {"endpoint_url": server.endpoint, "region": server.region,
                            "part_min_size": str(PART_MIN_SIZE)}
        else:
            bucket = s3.create_bucket(f"zr-stream-{uuid.uuid4().hex[:12]}")
            self.dest = f"s3://{bucket}/events"
            self.store = zr.S3Store(s3.client())
            self.options = {"endpoint_url": s3.endpoint, "part_min_size": str(PART_MIN_SIZE)}

    def record_reader(self) -> Counter[int]:
        return ids_in(self.store, [f.url for f in table_files(self.store, self.dest)])

    def listing_reader(self) -> Counter[int]:
        return ids_in(self.store, [f.url for f in list_data_files(self.store, self.dest)])

    def pending_uploads(self) -> list[zr.UploadInfo]:
        return self.store.list_multipart_uploads(self.dest.rstrip("/") + "/")


CASES = [(kind, p) for kind in ("moto", "local") for p in stream_helpers.POINTS]


@pytest.mark.parametrize(("kind", "point"), CASES)
def test_every_row_exactly_once_across_crashes_and_reruns(
        spark: Any, s3: EmbeddedS3, tmp_path: Path, kind: str, point: str) -> None:
    exactly_once_across_crashes(spark, Backend(kind, tmp_path, s3), tmp_path, point)


@pytest.mark.rgw
@pytest.mark.parametrize("point", stream_helpers.POINTS)
def test_every_row_exactly_once_on_rgw(
        spark: Any, s3: EmbeddedS3, tmp_path: Path, rgw_server: RGWServer,
        rgw_spark_bucket: str, point: str) -> None:  # noqa: F811 - the fixture imported above
    """The same on Ceph RGW (a real S3's multipart machinery), at every stopping point."""
    backend = Backend("rgw", tmp_path, s3, (rgw_server, rgw_spark_bucket))
    exactly_once_across_crashes(spark, backend, tmp_path, point)


def exactly_once_across_crashes(spark: Any, backend: Backend, tmp_path: Path,
                                point: str) -> None:
    """Stop the query at ``point`` of batch 1, restart it, make Spark re-run its last batch:
    every row exactly once to both readers, no upload left, the zerorename reader agrees."""
    want = make_input(tmp_path / "in")
    checkpoint, arm = tmp_path / "checkpoint", tmp_path / "armed"
    options = {**backend.options, "arm": str(arm), "point": point, "batch": "1"}

    arm.touch()
    failure = run_query(spark, "zerorename_crashing", backend.dest, checkpoint,
                        tmp_path / "in", options)
    assert failure is not None and "InjectedCrash" in str(failure)
    # stopped in batch 1: a reader of the records sees batch 0, and batch 1 whole or not
    # (which input file a batch reads is Spark's choice: files are whole, not in order)
    seen = backend.record_reader()
    assert problems(seen, want)["duplicated"] == 0
    assert sum(seen.values()) in (ROWS, 2 * ROWS)
    assert all(seen[f * ROWS + r] for f in {i // ROWS for i in seen} for r in range(ROWS))

    arm.unlink()
    assert run_query(spark, "zerorename_crashing", backend.dest, checkpoint, tmp_path / "in",
                     options) is None
    rerun = drop_last_commit(checkpoint)
    assert rerun == FILES - 1
    assert run_query(spark, "zerorename_crashing", backend.dest, checkpoint, tmp_path / "in",
                     options) is None

    assert problems(backend.record_reader(), want) == {"lost": 0, "duplicated": 0}
    assert problems(backend.listing_reader(), want) == {"lost": 0, "duplicated": 0}
    assert backend.pending_uploads() == []
    read = spark.read.format("zerorename").options(**backend.options).load(backend.dest)
    assert read.count() == FILES * ROWS


def test_a_sink_that_is_not_idempotent_duplicates_the_rerun(
        spark: Any, s3: EmbeddedS3, tmp_path: Path) -> None:
    """The same re-run with a sink that commits every call: the check above catches it."""
    backend = Backend("local", tmp_path, s3)
    want = make_input(tmp_path / "in")
    checkpoint = tmp_path / "checkpoint"
    assert run_query(spark, "zerorename_broken", backend.dest, checkpoint, tmp_path / "in",
                     {}) is None
    drop_last_commit(checkpoint)
    assert run_query(spark, "zerorename_broken", backend.dest, checkpoint, tmp_path / "in",
                     {}) is None
    assert problems(backend.listing_reader(), want) == {"lost": 0, "duplicated": ROWS}


def test_a_zombie_run_of_the_query_cannot_commit(
        spark: Any, s3: EmbeddedS3, tmp_path: Path) -> None:
    """Run 1's driver stalls in batch 1's commit (its tasks' uploads pending, nothing
    aborted); run 2 starts from the checkpoint, re-runs batch 1 and finishes the stream; then
    run 1's driver wakes and makes the commit it held, with its real tasks' messages.  It is
    refused (``StreamRunFencedError``), its uploads are aborted, every row is there once."""
    backend = Backend("local", tmp_path, s3)
    want = make_input(tmp_path / "in")
    checkpoint, arm, hold = tmp_path / "checkpoint", tmp_path / "armed", tmp_path / "held"
    options = {**backend.options, "arm": str(arm), "hold": str(hold), "batch": "1"}
    arm.touch()
    failure = run_query(spark, "zerorename_zombie", backend.dest, checkpoint, tmp_path / "in",
                        options)
    assert failure is not None and "InjectedCrash" in str(failure)
    zombie, messages, batch_id = pickle.loads(hold.read_bytes())
    held = backend.pending_uploads()
    assert batch_id == 1 and held  # the stalled run's tasks wrote
    arm.unlink()
    assert run_query(spark, "zerorename_zombie", backend.dest, checkpoint, tmp_path / "in",
                     options) is None
    assert problems(backend.record_reader(), want) == {"lost": 0, "duplicated": 0}

    with pytest.raises(StreamRunFencedError, match="superseded by epoch 2"):
        zombie.commit(messages, batch_id)
    assert backend.pending_uploads() == []
    assert problems(backend.record_reader(), want) == {"lost": 0, "duplicated": 0}
    assert problems(backend.listing_reader(), want) == {"lost": 0, "duplicated": 0}


def test_a_stream_that_compacts_keeps_every_row_once(
        spark: Any, s3: EmbeddedS3, tmp_path: Path) -> None:
    """``compact_every=2`` in a real query: the driver's commit of every second batch folds the
    older batches and rewrites their files, one per partition directory; then Spark re-runs
    the last batch.  Every row once, to both readers, and the table holds fewer files."""
    backend = Backend("local", tmp_path, s3)
    want = make_input(tmp_path / "in")
    checkpoint = tmp_path / "checkpoint"
    options = {**backend.options, "compact_every": "2"}
    assert run_query(spark, "zerorename", backend.dest, checkpoint, tmp_path / "in",
                     options) is None
    drop_last_commit(checkpoint)
    assert run_query(spark, "zerorename", backend.dest, checkpoint, tmp_path / "in",
                     options) is None
    assert problems(backend.record_reader(), want) == {"lost": 0, "duplicated": 0}
    assert problems(backend.listing_reader(), want) == {"lost": 0, "duplicated": 0}
    assert backend.pending_uploads() == []
    files = [f.url for f in list_data_files(backend.store, backend.dest)]
    by_dir = Counter(u.rsplit("/", 1)[0] for u in files)
    assert any("part-compact-" in u for u in files)
    # per partition directory: the batches folded so far in one file, the newest as written
    assert set(by_dir.values()) == {2}, by_dir


@pytest.fixture(autouse=True)
def _register_test_sinks(spark: Any) -> None:
    spark.dataSource.register(stream_helpers.CrashingSource)
    spark.dataSource.register(stream_helpers.BrokenSource)
    spark.dataSource.register(stream_helpers.ZombieSource)
