"""The stream sink's protocol without Spark: tasks and the driver called directly, batch by batch,
with the restarts, re-runs and zombies Spark's micro-batch engine can produce.

Every check reads the store back: the rows a reader of the batch records sees
(``table_files``), what a plain listing reader sees, and pending uploads.  ``NonIdempotentSink``
is a sink that commits every call (no record check): the exactly-once check must catch it.
"""

from __future__ import annotations

import io
import uuid
from collections import Counter
from dataclasses import dataclass, field, replace
from typing import Any

import pytest

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")
pytest.importorskip("pyspark")

import zerorename as zr  # noqa: E402
from tests.probe_standins import CheckThenActStore, IgnoresIfNoneMatchStore  # noqa: E402
from zerorename.spark.core import TaskOutcome, run_task  # noqa: E402
from zerorename.spark.reader import list_data_files, table_data_files  # noqa: E402
from zerorename.spark.spec import WriteSpec  # noqa: E402
from zerorename.spark.streaming import (  # noqa: E402
    BatchOutcome,
    CommitStep,
    StreamRunFencedError,
    StreamSinkUnsupportedError,
    StreamSpec,
    abort_batch,
    batch_spec,
    commit_batch,
    start_writer,
)
from zerorename.store import StoreCapabilities  # noqa: E402
from zerorename.table_fold import LogExpiryError, expire_batch_records  # noqa: E402
from zerorename.table_log import TableLog, table_files  # noqa: E402

from .conftest_helpers import Env  # noqa: E402

ROWS_PER_BATCH = 40


def batch_rows(batch_id: int) -> list[dict[str, Any]]:
    """Batch ``batch_id``'s input: ids unique across batches, two partition values."""
    base = batch_id * ROWS_PER_BATCH
    return [{"id": base + i, "part": i % 2} for i in range(ROWS_PER_BATCH)]


def run_tasks(stream: StreamSpec, batch_id: int, run_id: str,
              tasks: int = 2) -> list[TaskOutcome | None]:
    """Batch ``batch_id``'s tasks, as Spark would run them in query run ``run_id``."""
    spec = batch_spec(stream, batch_id, run_id)
    rows = batch_rows(batch_id)
    out: list[TaskOutcome | None] = []
    for t in range(tasks):
        table = pa.Table.from_pylist(rows[t::tasks])
        out.append(run_task(spec, t, 0, table.to_batches()))
    return out


def _parquet(rows: list[dict[str, Any]]) -> bytes:
    out = io.BytesIO()
    pq.write_table(pa.Table.from_pylist(rows), out)
    return out.getvalue()


def visible_ids(store: zr.Store, dest: str) -> Counter[int]:
    """Row ids as a reader of the batch records sees them (with multiplicity)."""
    ids: Counter[int] = Counter()
    for f in table_files(store, dest):
        ids.update(pq.read_table(io.BytesIO(store.get(f.url))).column("id").to_pylist())
    return ids


def listed_ids(store: zr.Store, dest: str) -> Counter[int]:
    """Row ids as a plain listing reader sees them."""
    ids: Counter[int] = Counter()
    for f in list_data_files(store, dest):
        ids.update(pq.read_table(io.BytesIO(store.get(f.url))).column("id").to_pylist())
    return ids


def exactly_once(ids: Counter[int], batches: range) -> list[str]:
    """What is wrong with ``ids`` against batches ``batches`` (empty: exactly once)."""
    want = {r["id"] for b in batches for r in batch_rows(b)}
    problems = [f"lost {len(want - set(ids))} rows"] if want - set(ids) else []
    dup = sorted(i for i, n in ids.items() if n > 1)
    if dup:
        problems.append(f"duplicated {len(dup)} rows")
    extra = set(ids) - want
    if extra:
        problems.append(f"{len(extra)} rows of no batch")
    return problems


@pytest.fixture(params=["local_env", "moto_env",
                        pytest.param("rgw_env", marks=pytest.mark.rgw, id="rgw")])
def env(request: pytest.FixtureRequest) -> Env:
    return request.getfixturevalue(request.param)  # type: ignore[no-any-return]


def write_spec(env: Env) -> WriteSpec:
    return WriteSpec(dest=env.dest(), partition_by=("part",),
                     part_min_size=64 if env.kind in ("moto", "rgw") else None)


@pytest.fixture
def stores(env: Env, monkeypatch: pytest.MonkeyPatch) -> Env:
    return use_store(env, monkeypatch)


def use_store(env: Env, monkeypatch: pytest.MonkeyPatch) -> Env:
    """Tasks and driver use ``env.store`` (the Spark path builds its own from the spec); on
    S3 (moto, Ceph RGW), one that probes the bucket's capabilities, as the Spark path's store
    does."""
    if env.kind in ("moto", "rgw"):
        env = replace(env, store=zr.S3Store(env.client, name=env.kind,
                                            retry=zr.RetryPolicy(max_attempts=1),
                                            min_part_size=64,
                                            probe_bucket=env.dest().split("/")[2]))
    monkeypatch.setattr("zerorename.spark.core.make_store", lambda spec: env.store)
    monkeypatch.setattr("zerorename.spark.streaming.make_store", lambda spec: env.store)
    return env


@dataclass
class Run:
    """One run of the query: Spark builds a writer per micro-batch, and the tasks report the
    run's id (a new one at every start of the query)."""

    env: Env
    keep: int = 0
    compact: int = 0
    run_id: str = field(default_factory=lambda: str(uuid.uuid4()))

    def tasks(self, b: int) -> tuple[StreamSpec, list[TaskOutcome | None]]:
        writer = start_writer(write_spec(self.env), keep_batch_records=self.keep,
                              compact_every=self.compact)
        return writer, run_tasks(writer, b, self.run_id)


def commit(run: Run, b: int) -> BatchOutcome:
    """Batch ``b`` of ``run``: its tasks, then its commit, by one writer."""
    writer, outcomes = run.tasks(b)
    return commit_batch(writer, b, outcomes, run.run_id)


def test_batches_visible_whole_and_once(stores: Env) -> None:
    env = stores
    run = Run(env)
    for b in range(3):
        writer, outcomes = run.tasks(b)
        # before the commit point nothing of the batch is visible, even to a listing reader
        assert not listed_ids(env.store, env.dest()).keys() & {r["id"] for r in batch_rows(b)}
        assert commit_batch(writer, b, outcomes, run.run_id) is BatchOutcome.COMMITTED
    assert exactly_once(visible_ids(env.store, env.dest()), range(3)) == []
    assert exactly_once(listed_ids(env.store, env.dest()), range(3)) == []
    assert env.uploads(env.dest()) == []
    assert {len(p.split("/")) for p in env.output(env.dest())} == {2}  # part=<v>/<file>


def test_rerun_after_restart_adds_nothing(stores: Env) -> None:
    """Spark re-runs the last batch with the same id after a driver restart: a new run, new
    tasks, the same batch id — the commit succeeds and discards them."""
    env = stores
    first = Run(env)
    for b in range(2):
        commit(first, b)
    second = Run(env)
    assert commit(second, 1) is BatchOutcome.ALREADY_COMMITTED
    assert commit(second, 2) is BatchOutcome.COMMITTED
    assert exactly_once(visible_ids(env.store, env.dest()), range(3)) == []
    assert exactly_once(listed_ids(env.store, env.dest()), range(3)) == []
    assert env.uploads(env.dest()) == []


class CrashAfterRecord(Exception):
    pass


@pytest.mark.parametrize("step", list(CommitStep))
def test_crash_inside_the_commit_is_rolled_forward(stores: Env, step: CommitStep) -> None:
    """The driver dies after batch 1's record (before or after completing its uploads):
    a reader of the records sees batch 1 whole or not at all; the re-run of batch 1 by the
    next run finishes the recorded commit and discards its own uploads."""
    env = stores
    first = Run(env)
    commit(first, 0)
    writer, outcomes = first.tasks(1)

    def crash(at: CommitStep) -> None:
        if at is step:
            raise CrashAfterRecord()

    with pytest.raises(CrashAfterRecord):
        commit_batch(writer, 1, outcomes, first.run_id, on_step=crash)
    seen = visible_ids(env.store, env.dest())
    assert exactly_once(seen, range(2 if step is CommitStep.COMPLETED else 1)) == []
    second = Run(env)
    assert commit(second, 1) is BatchOutcome.ALREADY_COMMITTED
    assert exactly_once(visible_ids(env.store, env.dest()), range(2)) == []
    assert exactly_once(listed_ids(env.store, env.dest()), range(2)) == []
    assert env.uploads(env.dest()) == []


def test_a_killed_run_leaves_no_upload_behind(stores: Env) -> None:
    """A driver killed after its tasks wrote (no abort runs): the next run's commit of that
    batch id discards the dead run's uploads as well as committing its own."""
    env = stores
    dead = Run(env)
    dead.tasks(0)
    assert env.uploads(env.dest())
    assert any("__fenced_job-" in k for k in env.objects(env.dest()))  # its task records
    assert commit(Run(env), 0) is BatchOutcome.COMMITTED
    assert env.uploads(env.dest()) == []
    assert not any("__fenced_job-" in k for k in env.objects(env.dest()))
    assert exactly_once(visible_ids(env.store, env.dest()), range(1)) == []


def test_zombie_of_an_older_run_cannot_commit(stores: Env) -> None:
    env = stores
    old = Run(env)
    commit(old, 0)
    new = Run(env)
    assert commit(new, 1) is BatchOutcome.COMMITTED
    zombie_writer, zombie_outcomes = old.tasks(2)  # the old driver carries on to batch 2
    with pytest.raises(StreamRunFencedError, match=r"superseded by epoch 2"):
        commit_batch(zombie_writer, 2, zombie_outcomes, old.run_id)
    assert env.uploads(env.dest()) == []  # the zombie's uploads are aborted
    assert TableLog(env.store, env.dest()).batch(2) is None
    assert exactly_once(visible_ids(env.store, env.dest()), range(2)) == []


def test_abort_discards_the_batch(stores: Env) -> None:
    env = stores
    run = Run(env)
    writer, _ = run.tasks(0)
    abort_batch(writer, 0, run.run_id)
    assert env.uploads(env.dest()) == []
    assert env.output(env.dest()) == {}
    commit(run, 0)
    # Spark may pass no message at all: every run's uploads of the batch go, the recorded stay
    other = Run(env)
    writer, _ = other.tasks(0)
    writer, _ = other.tasks(1)
    abort_batch(writer, 0, None)
    assert {u.url.rsplit("-", 1)[-1] for u in env.uploads(env.dest())} == {"b1.parquet"}
    abort_batch(writer, 1, None)
    assert env.uploads(env.dest()) == []
    assert exactly_once(visible_ids(env.store, env.dest()), range(1)) == []


def test_expiry_folds_records_and_still_fences_reruns(stores: Env) -> None:
    env = stores
    run = Run(env, keep=2)
    for b in range(5):
        commit(run, b)
    log = TableLog(env.store, env.dest())
    assert sorted(log.batches) == [3, 4] and log.folded_through() == 2
    assert exactly_once(visible_ids(env.store, env.dest()), range(5)) == []
    # a re-run of a folded batch id is recognised without its record
    assert commit(Run(env), 1) is BatchOutcome.ALREADY_COMMITTED
    assert exactly_once(visible_ids(env.store, env.dest()), range(5)) == []
    with pytest.raises(LogExpiryError, match="keep=0"):
        expire_batch_records(env.store, env.dest(), keep=0)


def test_fenced_batch_jobs_are_read_from_their_records(stores: Env) -> None:
    """A batch table: every committed fenced job's files, and not a job still completing."""
    from zerorename.spark.core import JobDriver

    env = stores
    for n in range(2):
        spec = replace(write_spec(env), committer="fenced", job_id=f"job-{n}")
        spec = JobDriver(spec, env.store).setup()
        table = pa.Table.from_pylist(batch_rows(n))
        outcome = run_task(spec, 0, 0, table.to_batches())
        JobDriver(spec, env.store).commit([outcome])
    assert exactly_once(visible_ids(env.store, env.dest()), range(2)) == []
    # a third job past its commit point, one upload not completed yet: not visible at all
    spec = JobDriver(replace(write_spec(env), committer="fenced", job_id="job-2"),
                     env.store).setup()
    outcome = run_task(spec, 0, 0, pa.Table.from_pylist(batch_rows(2)).to_batches())
    driver = JobDriver(spec, env.store)
    real = driver.committer._complete_one  # type: ignore[attr-defined]
    calls = []

    def complete_first_only(upload: Any, **condition: Any) -> str:
        calls.append(upload)
        if len(calls) > 1:
            raise CrashAfterRecord()
        return real(upload, **condition)  # type: ignore[no-any-return]

    driver.committer._complete_one = complete_first_only  # type: ignore[attr-defined]
    with pytest.raises(zr.CommitError):
        driver.commit([outcome])
    assert len(calls) == 2
    assert exactly_once(visible_ids(env.store, env.dest()), range(2)) == []
    assert len(listed_ids(env.store, env.dest())) > 2 * ROWS_PER_BATCH  # a listing sees it
    # the Spark reader's view: the same, plus a file no record names (another committer's)
    env.store.put(f"{env.dest()}/part=9/other.parquet", _parquet([{"id": -1, "part": 9}]))
    read = Counter(i for f in table_data_files(env.store, env.dest())
                   for i in pq.read_table(io.BytesIO(env.store.get(f.url))).column("id")
                   .to_pylist())
    assert exactly_once(read - Counter({-1: 1}), range(2)) == [] and read[-1] == 1


class NoConditionalPut:
    """A store that accepts every If-None-Match PUT (as S3 did before 2024)."""

    def __init__(self, store: zr.Store) -> None:
        self._store = store

    def capabilities(self) -> StoreCapabilities:
        return replace(self._store.capabilities(), conditional_put=False)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)


def test_refuses_a_store_without_conditional_put(stores: Env) -> None:
    env = stores
    with pytest.raises(StreamSinkUnsupportedError, match=r"_zerorename_log.*If-None-Match"):
        start_writer(write_spec(env), store=NoConditionalPut(env.store))
    assert env.objects(env.dest()) == {}


@pytest.mark.parametrize("standin", [CheckThenActStore, IgnoresIfNoneMatchStore])
def test_refuses_a_store_whose_conditional_put_has_two_winners(local_env: Env,
                                                              standin: Any) -> None:
    """The batch record is one If-None-Match PUT: a store that declares conditional PUT but
    lets racing writers both win (or drops the header) is measured, as ``fenced`` measures it,
    and refused before anything of the stream is written.  (The stand-ins wrap any store;
    the local one, because in-process moto is not safe for the probe's racing threads.)"""
    env = local_env
    store = standin(env.store)
    with pytest.raises(StreamSinkUnsupportedError, match=r"_zerorename_log.*(racing|second)"):
        start_writer(write_spec(env), store=store)
    assert env.objects(env.dest()) == {}


def non_idempotent_commit(stream: StreamSpec, batch_id: int,
                          outcomes: list[TaskOutcome | None], run_id: str) -> None:
    """The broken sink: records and completes every commit, whether or not the batch id was
    committed before (a plain PUT of a record per writer)."""
    from zerorename.spark import core
    from zerorename.spark import streaming as s
    from zerorename.table_log import BatchRecord, batch_record_url, complete_upload

    store = core.make_store(stream.write)
    files = tuple(s._uploads(outcomes))
    job_id = batch_spec(stream, batch_id, run_id).job_id
    record = BatchRecord(batch_id, 0, run_id, job_id, 0, files)
    store.put(batch_record_url(stream.dest, batch_id) + f".{job_id}", record.to_bytes())
    for f in files:
        complete_upload(store, f)


def test_the_check_catches_a_sink_that_is_not_idempotent(stores: Env) -> None:
    env = stores
    first, second = Run(env), Run(env)
    for run, b in ((first, 0), (first, 1), (second, 1)):  # second: the re-run of batch 1
        writer, outcomes = run.tasks(b)
        non_idempotent_commit(writer, b, outcomes, run.run_id)
    assert exactly_once(listed_ids(env.store, env.dest()), range(2)) == [
        f"duplicated {ROWS_PER_BATCH} rows"]


class ListingSpy:
    """A store that remembers every object and prefix its listings returned."""

    def __init__(self, store: zr.Store) -> None:
        self._store = store
        self.listed: list[str] = []

    def list_page(self, prefix: str, **kwargs: Any) -> Any:
        page = self._store.list_page(prefix, **kwargs)
        self.listed += [o.url for o in page.objects] + list(page.prefixes)
        return page

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)


def test_a_commit_does_not_list_the_tables_files(stores: Env) -> None:
    """What the driver lists per batch is the log, the runs and the pending uploads — never
    the table's data files or partition directories, so a batch costs the same on a table of
    ten files and of a million."""
    env = stores
    run = Run(env)
    for b in range(3):
        commit(run, b)
    writer, outcomes = run.tasks(3)
    spy = ListingSpy(env.store)
    store: zr.Store = spy
    assert commit_batch(writer, 3, outcomes, run.run_id, store=store) is BatchOutcome.COMMITTED
    assert spy.listed and not [u for u in spy.listed if "part=" in u]
    abort_batch(writer, 4, run.run_id, store=store)
    assert not [u for u in spy.listed if "part=" in u]
    assert exactly_once(visible_ids(env.store, env.dest()), range(4)) == []
