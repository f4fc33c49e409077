"""Compaction and expiry of a stream's table (``zerorename.table_fold``), without Spark.

A compaction rewrites the small files of committed batches into fewer files and commits the
replacement with a conditional checkpoint record.  Every check reads the store back: a reader
of the records must see every row exactly once before, at each point where a compaction can
die, and after; a listing reader once it is done; no pending upload may be left; a batch the
sink commits while a compaction runs is kept.  ``ReplaceFirst`` is a compaction that deletes
the old files before its record exists: the exactly-once check must catch it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from zerorename.spark.streaming import BatchOutcome
from zerorename.store import Store
from zerorename.table_fold import (
    FoldStep,
    LogExpiryError,
    Rewrite,
    compact_table,
    expire_batch_records,
    fold_log,
)
from zerorename.table_log import LoggedFile, TableLog, complete_upload

from .conftest_helpers import Env
from .test_stream_sink import (
    ROWS_PER_BATCH,
    Run,
    commit,
    exactly_once,
    listed_ids,
    use_store,
    visible_ids,
)

BATCHES = 4
#: each batch: 2 tasks, each writing one partition value's rows = 2 small files
FILES_PER_BATCH = 2


@pytest.fixture
def stores(env_with_rgw: Env, monkeypatch: pytest.MonkeyPatch) -> Env:
    """moto, the local filesystem and Ceph RGW (marked ``rgw``), used by the tasks and the
    driver alike."""
    return use_store(env_with_rgw, monkeypatch)


class Stop(Exception):
    """The compacting process died here."""


def data_files(env: Env) -> list[str]:
    return sorted(u for u in env.output(env.dest()) if u.endswith(".parquet"))


def write_batches(env: Env, n: int = BATCHES, run: Run | None = None) -> Run:
    run = run or Run(env)
    for b in range(n):
        assert commit(run, b) is BatchOutcome.COMMITTED
    return run


def test_compaction_rewrites_small_files_and_keeps_every_row(stores: Env) -> None:
    env = stores
    write_batches(env)
    assert len(data_files(env)) == BATCHES * FILES_PER_BATCH
    assert compact_table(env.store, env.dest(), keep=1) == BATCHES - 2
    log = TableLog(env.store, env.dest())
    assert sorted(log.batches) == [BATCHES - 1] and len(log.checkpoints) == 1
    # batches 0..2: one file per partition directory; batch 3 untouched
    assert len(data_files(env)) == 2 + FILES_PER_BATCH
    assert exactly_once(visible_ids(env.store, env.dest()), range(BATCHES)) == []
    assert exactly_once(listed_ids(env.store, env.dest()), range(BATCHES)) == []
    assert env.uploads(env.dest()) == []
    # again, after more batches: the compacted files and the new small ones become one each
    run = Run(env)
    for b in range(BATCHES, BATCHES + 2):
        commit(run, b)
    assert compact_table(env.store, env.dest(), keep=1) == BATCHES
    assert len(data_files(env)) == 2 + FILES_PER_BATCH
    assert exactly_once(visible_ids(env.store, env.dest()), range(BATCHES + 2)) == []
    assert exactly_once(listed_ids(env.store, env.dest()), range(BATCHES + 2)) == []
    assert len(TableLog(env.store, env.dest()).checkpoints) == 1


def test_a_target_size_leaves_large_files_alone(stores: Env) -> None:
    env = stores
    write_batches(env)
    before = data_files(env)
    assert compact_table(env.store, env.dest(), keep=1, target_size=1) == BATCHES - 2
    assert data_files(env) == before  # every file is "large": records folded, files kept
    assert exactly_once(visible_ids(env.store, env.dest()), range(BATCHES)) == []


@pytest.mark.parametrize("step", list(FoldStep))
def test_a_compaction_dying_at_any_point_loses_and_duplicates_nothing(
        stores: Env, step: FoldStep) -> None:
    """Stopped at each point: a reader of the records sees every row once there; the next
    fold (here the sink's, configured to compact) finishes or discards it."""
    env = stores
    write_batches(env)

    def die(at: FoldStep) -> None:
        if at is step:
            raise Stop()

    with pytest.raises(Stop):
        compact_table(env.store, env.dest(), keep=1, on_step=die)
    assert exactly_once(visible_ids(env.store, env.dest()), range(BATCHES)) == []
    run = Run(env, compact=BATCHES + 1)  # the restarted query compacts after batch BATCHES
    if step is not FoldStep.REWRITTEN:  # past the commit point: a re-run of a folded batch
        assert commit(run, 0) is BatchOutcome.ALREADY_COMMITTED
    assert commit(run, BATCHES) is BatchOutcome.COMMITTED
    assert exactly_once(visible_ids(env.store, env.dest()), range(BATCHES + 1)) == []
    assert exactly_once(listed_ids(env.store, env.dest()), range(BATCHES + 1)) == []
    assert env.uploads(env.dest()) == []
    assert len(data_files(env)) == 2 + FILES_PER_BATCH
    log = TableLog(env.store, env.dest())
    assert len(log.checkpoints) == 1 and sorted(log.batches) == [BATCHES]


def test_a_batch_committed_during_a_compaction_is_kept(stores: Env) -> None:
    env = stores
    run = write_batches(env)

    def sink_commits(at: FoldStep) -> None:
        if at is FoldStep.REWRITTEN:
            assert commit(run, BATCHES) is BatchOutcome.COMMITTED

    assert compact_table(env.store, env.dest(), keep=1, on_step=sink_commits) == BATCHES - 2
    assert exactly_once(visible_ids(env.store, env.dest()), range(BATCHES + 1)) == []
    assert exactly_once(listed_ids(env.store, env.dest()), range(BATCHES + 1)) == []
    assert sorted(TableLog(env.store, env.dest()).batches) == [BATCHES - 1, BATCHES]


def test_two_folds_at_once_one_wins_the_other_changes_nothing(stores: Env) -> None:
    """The sink's expiry takes the checkpoint number first: the compaction is refused by the
    store, aborts its uploads and leaves the table as the expiry made it."""
    env = stores
    write_batches(env)

    def expiry_runs(at: FoldStep) -> None:
        if at is FoldStep.REWRITTEN:
            assert expire_batch_records(env.store, env.dest(), keep=2) == BATCHES - 3

    with pytest.raises(LogExpiryError, match="another process created checkpoint 0"):
        compact_table(env.store, env.dest(), keep=1, on_step=expiry_runs)
    assert env.uploads(env.dest()) == []
    assert len(data_files(env)) == BATCHES * FILES_PER_BATCH
    assert exactly_once(visible_ids(env.store, env.dest()), range(BATCHES)) == []
    assert compact_table(env.store, env.dest(), keep=1) == BATCHES - 2
    assert exactly_once(visible_ids(env.store, env.dest()), range(BATCHES)) == []
    assert exactly_once(listed_ids(env.store, env.dest()), range(BATCHES)) == []


def test_the_sink_compacts_every_n_batches(stores: Env) -> None:
    env = stores
    run = Run(env, compact=3)
    for b in range(6):
        commit(run, b)
    log = TableLog(env.store, env.dest())
    assert log.folded_through() == 4 and sorted(log.batches) == [5]
    # batches 0..4 compacted to one file per partition directory, batch 5 as written
    assert len(data_files(env)) == 2 + FILES_PER_BATCH
    assert exactly_once(visible_ids(env.store, env.dest()), range(6)) == []
    assert exactly_once(listed_ids(env.store, env.dest()), range(6)) == []
    assert env.uploads(env.dest()) == []


def replace_first(store: Store, dest: str, seq: int, files: Sequence[LoggedFile]) -> Rewrite:
    """Broken on purpose: publishes the merged file and deletes the originals before the
    checkpoint (its commit point) exists — what compacting in place does."""
    from zerorename.table_fold import _rewrite_parquet

    made = _rewrite_parquet(store, dest, seq, files, 1 << 30)
    for f in made.files:
        complete_upload(store, f)
    store.delete_many(sorted(made.replaced))
    return Rewrite(tuple(LoggedFile(f.url, f.size) for f in made.files), made.replaced)


def test_the_check_catches_a_compaction_that_replaces_before_its_record(stores: Env) -> None:
    env = stores
    write_batches(env)

    def die(at: FoldStep) -> None:
        if at is FoldStep.REWRITTEN:
            raise Stop()

    with pytest.raises(Stop):
        fold_log(env.store, env.dest(), keep=1, rewrite=replace_first, on_step=die)
    assert exactly_once(visible_ids(env.store, env.dest()), range(BATCHES)) == [
        f"lost {(BATCHES - 1) * ROWS_PER_BATCH} rows"]


def test_bad_arguments_are_refused_before_any_request(stores: Env) -> None:
    env = stores
    write_batches(env, 2)
    before = env.objects(env.dest())
    with pytest.raises(LogExpiryError, match="keep=0"):
        compact_table(env.store, env.dest(), keep=0)
    with pytest.raises(LogExpiryError, match="target_size=0"):
        compact_table(env.store, env.dest(), target_size=0)
    assert env.objects(env.dest()) == before


def test_a_checkpoint_whose_file_was_deleted_stops_every_fold(stores: Env) -> None:
    """Someone deleted a file a checkpoint names, by hand: no fold deletes a record or a file
    after that (they are all a reader has left), and the error names the checkpoint."""
    env = stores
    write_batches(env)
    expire_batch_records(env.store, env.dest(), keep=1)
    env.store.delete(f"{env.dest()}/{data_files(env)[0]}")
    commit(Run(env), BATCHES)
    before = env.objects(env.dest())
    with pytest.raises(LogExpiryError, match=r"checkpoint 0 names 1 file\(s\) not in the"):
        compact_table(env.store, env.dest(), keep=1)
    with pytest.raises(LogExpiryError, match="nothing deleted, nothing folded"):
        expire_batch_records(env.store, env.dest(), keep=1)
    assert env.objects(env.dest()) == before


@pytest.mark.parametrize(("options", "message"), [
    ({"compact_every": "often"}, "compact_every.*expected an integer"),
    ({"compact_every": "-1"}, "compact_every='-1' must be >= 0"),
    ({"keep_batch_records": "-2"}, "keep_batch_records='-2' must be >= 0"),
    ({"compact_target_size": "big"}, "compact_target_size.*expected a size"),
    ({"compact_target_size": "0"}, "compact_target_size='0' must be at least 1"),
])
def test_the_stream_options_are_checked(stores: Env, options: dict[str, str],
                                        message: str) -> None:
    from pyspark.sql.types import LongType, StructField, StructType

    from zerorename.spark.spec import WriteOptionError
    from zerorename.spark.streaming_writer import stream_writer

    schema = StructType([StructField("id", LongType()), StructField("part", LongType())])
    base = {"path": stores.dest(), "partition_by": "part"}
    with pytest.raises(WriteOptionError, match=message):
        stream_writer({**base, **options}, schema, False)
    writer = stream_writer({**base, "compact_every": "5", "compact_target_size": "64M",
                            "keep_batch_records": "3"}, schema, False)
    assert (writer.stream.compact_every, writer.stream.compact_target_size,
            writer.stream.keep_batch_records) == (5, 64 << 20, 3)


def _logged_upload(env: Env, name: str, data: bytes) -> LoggedFile:
    """An upload of ``data`` at ``name`` under the env's destination, as the sink logs it."""
    url = env.dest().rstrip("/") + "/" + name
    upload_id = env.store.create_multipart(url)
    etag = env.store.upload_part(url, upload_id, 1, data)
    return LoggedFile(url, len(data), upload_id, (etag,))


def test_an_upload_already_completed_is_done(moto_env: Env) -> None:
    """Completing a logged upload a second time (a rerun after a crash) finds the upload gone
    and the object its own: done, nothing raised."""
    f = _logged_upload(moto_env, "part-00000", b"the batch's")
    complete_upload(moto_env.store, f)
    complete_upload(moto_env.store, f)
    assert moto_env.store.get(f.url) == b"the batch's"


class UploadGone:
    """A store whose completes all answer "no such upload" (the upload aborted, or completed
    by an earlier attempt): what ``complete_upload`` decides then is read from the object."""

    def __init__(self, inner: Store) -> None:
        self.inner = inner

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def complete_multipart(self, url: str, upload_id: str,
                           parts: Sequence[tuple[int, str]]) -> str:
        from zerorename.errors import NotFoundError

        raise NotFoundError(url, f"no such upload {upload_id}")


def test_another_writers_object_of_the_same_size_is_not_a_completed_upload(
        moto_env: Env) -> None:
    """The upload gone and another writer's single PUT of exactly its size at the key: on S3
    a completed upload's ETag is a multipart one, so the object is not the batch's and the
    complete fails (before, a same-size object passed as the batch's file)."""
    from zerorename.errors import NotFoundError

    env = moto_env
    f = _logged_upload(env, "part-00000", b"the batch's")
    env.store.put(f.url, b"not theirs!")
    assert len(b"not theirs!") == f.size
    with pytest.raises(NotFoundError):
        complete_upload(UploadGone(env.store), f)  # type: ignore[arg-type]
    assert env.store.get(f.url) == b"not theirs!"
    env.store.complete_multipart(f.url, f.upload_id, [(1, f.etags[0])])
    complete_upload(UploadGone(env.store), f)  # type: ignore[arg-type]  # its own: done
