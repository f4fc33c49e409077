"""The streaming sink's protocol: each micro-batch committed once, whatever restarts do.

Spark's micro-batch engine writes batch N's offsets, runs its tasks, calls the sink's
``commit(messages, N)``, then records N in its own commit log.  A driver that dies between the
sink's commit and that log re-runs batch N *with the same id* after a restart, so the sink must
recognise a batch id it already committed.  Per batch:

* **tasks** write Parquet through the ``fenced`` committer's task side, as job
  ``<run id>-b<N>``: every file is an uploaded but uncompleted multipart upload (invisible to
  any reader), and the task's record is created with ``If-None-Match: *`` so one attempt per
  task wins;
* the **driver** (:func:`commit_batch`) creates the batch record
  ``_zerorename_log/<N>.json`` (:mod:`zerorename.table_log`) with ``If-None-Match: *``,
  naming every upload.  That PUT is the commit point of batch N.  Then it completes the
  uploads and deletes the job's task records;
* a **re-run** of a committed batch id meets the record (412, or it is found first): the
  record's uploads are completed (finishing a commit that crashed after its commit point) and
  the re-run's own uploads are aborted; the commit succeeds, adding nothing;
* a **zombie** — a driver of an older run of the query still committing after a newer run
  started — is fenced: each run of the query (Spark's run id, which tasks report) claims an
  epoch (``_zerorename_log/runs/<epoch>.json``, created with ``If-None-Match: *``) at its
  first commit, and a run whose epoch is not the newest refuses to commit
  (:class:`StreamRunFencedError`) and aborts its uploads.  A
  zombie that checked just before the newer run claimed its epoch can still win one batch
  id's record: it holds the same offsets (Spark's offset log decides them before the batch
  runs), and the newer run's commit of that id then discards its own copy — once either way.

Stores without conditional PUT cannot arbitrate the record, and nothing else makes "create
once" atomic on S3: the sink refuses them (:class:`StreamSinkUnsupportedError`).
"""

from __future__ import annotations

import json
import logging
import re
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from enum import Enum

import zerorename as zr
from zerorename.committers.cleanup import abort_quietly
from zerorename.committers.layout import FENCED_AREA
from zerorename.errors import CommitError, NotFoundError, PreconditionFailedError
from zerorename.formats import PendingSet
from zerorename.store import Store, list_dir
from zerorename.stores import S3Store
from zerorename.stores.fencing import fencing_support
from zerorename.stores.probe import could_not_write
from zerorename.table_fold import DEFAULT_TARGET_SIZE, compact_table, expire_batch_records
from zerorename.table_log import (
    LOG_DIR,
    BatchRecord,
    LoggedFile,
    TableLog,
    batch_record_url,
    complete_upload,
)
from zerorename.urls import dir_prefix, join

from .core import TaskOutcome, make_store
from .spec import WriteOptionError, WriteSpec

__all__ = [
    "BatchOutcome",
    "CommitStep",
    "StreamRunFencedError",
    "StreamSinkUnsupportedError",
    "StreamSpec",
    "abort_batch",
    "batch_spec",
    "claim_epoch",
    "commit_batch",
    "start_writer",
]

log = logging.getLogger("zerorename.spark.streaming")

RUN_FORMAT = "zerorename.StreamRun/1"
#: Spark's local property naming the micro-batch a task belongs to
BATCH_ID_PROPERTY = "streaming.sql.batchId"
#: Spark's local property holding the query's run id (a stream runs its jobs in a job group
#: named by the run id, new at every start of the query)
RUN_ID_PROPERTY = "spark.jobGroup.id"


class StreamSinkUnsupportedError(CommitError):
    """The destination's store does not refuse a second ``If-None-Match: *`` PUT, so no batch
    record can be created exactly once there: the sink would not be exactly-once."""


class StreamRunFencedError(CommitError):
    """A newer run of the query has claimed the destination: this (older) run's commit is
    refused and its uploads aborted.  Stop this query; the newer run carries on."""


class CommitStep(Enum):
    """The points of :func:`commit_batch` a caller may observe (``on_step``): where a driver
    can die with different consequences, so tests stop the query exactly there."""

    RECORDED = "the batch record is created (the commit point)"
    COMPLETED = "the recorded uploads are completed"


class BatchOutcome(Enum):
    """What :func:`commit_batch` did."""

    COMMITTED = "committed"
    ALREADY_COMMITTED = "already committed"


@dataclass(frozen=True)
class StreamSpec:
    """One stream writer of a query into one destination (picklable, secret-free)."""

    write: WriteSpec
    #: fold batch records older than this many into a checkpoint after each commit (0: never)
    keep_batch_records: int = 0
    #: compact the files of committed batches after every this many batches (0: never)
    compact_every: int = 0
    #: compaction's output file size (and the size under which a file is rewritten)
    compact_target_size: int = DEFAULT_TARGET_SIZE

    @property
    def dest(self) -> str:
        return self.write.dest


def batch_spec(stream: StreamSpec, batch_id: int, run_id: str) -> WriteSpec:
    """The write spec of batch ``batch_id`` in query run ``run_id``: a fenced job of its own,
    named by both (Spark builds separate writer objects for a batch's tasks and its commit,
    so nothing but the batch id and the run id is shared by both sides)."""
    return replace(stream.write, committer="fenced", job_id=f"{run_id}-b{batch_id}")


def runs_dir(dest: str) -> str:
    return join(dest.rstrip("/"), f"{LOG_DIR}/runs")


def _epochs(store: Store, dest: str) -> list[int]:
    found = []
    for obj in list_dir(store, runs_dir(dest)):
        stem = obj.url.rsplit("/", 1)[-1].removesuffix(".json")
        if stem.isdigit():
            found.append(int(stem))
    return sorted(found)


def start_writer(write: WriteSpec, *, keep_batch_records: int = 0, compact_every: int = 0,
                 compact_target_size: int = DEFAULT_TARGET_SIZE,
                 store: Store | None = None) -> StreamSpec:
    """Check the options and the store for a stream writer (Spark builds them per micro-batch,
    on the driver)."""
    if write.mode != "append":
        raise WriteOptionError(write.dest, f"mode={write.mode!r}: a stream appends batches; "
                                           "use the append output mode")
    store = store if store is not None else make_store(write)
    if not store.capabilities().conditional_put:
        unmeasured = store.capability_probe_error() if isinstance(store, S3Store) else None
        if unmeasured is not None:  # not "no": the probe could not ask (a denied request…)
            raise could_not_write(batch_record_url(write.dest, 0), unmeasured,
                                  "nothing is known about the store's conditional writes, so "
                                  "the stream was not started") from unmeasured
        why = f"{store.name} does not declare conditional PUT"
    else:  # declared: measured as for ``fenced`` (a racy or header-dropping server is refused)
        decision = fencing_support(store, write.dest, write.committer_options)
        why = "" if decision.can_fence else decision.describe()
    if why:
        raise StreamSinkUnsupportedError(
            batch_record_url(write.dest, 0), f"store {why}, so a batch "
            "cannot be committed exactly once there (Spark re-runs a batch after a driver "
            "restart, and a batch record is one If-None-Match: * PUT); write this stream to "
            "a store whose conditional writes have one winner")
    return StreamSpec(write, keep_batch_records, compact_every, compact_target_size)


def _run_claim(store: Store, dest: str, epoch: int) -> str | None:
    """The run id that claimed ``epoch`` (None: the claim is gone or unreadable)."""
    url = join(runs_dir(dest), f"{epoch:010d}.json")
    try:
        data = json.loads(store.get(url))
    except (NotFoundError, ValueError):
        return None
    run = data.get("runId") if isinstance(data, dict) else None
    return run if isinstance(run, str) else None


def claim_epoch(store: Store, dest: str, run_id: str) -> int:
    """This query run's epoch: the one it claimed, or the next one, claimed now with
    ``If-None-Match: *`` (a 412 means another run took it: try the next).  Raises
    :class:`StreamRunFencedError` when a newer run has claimed one since: this run is a
    zombie.  One LIST and one GET when the run holds the newest epoch (every batch but a
    run's first)."""
    epochs = _epochs(store, dest)
    if epochs and _run_claim(store, dest, epochs[-1]) == run_id:
        return epochs[-1]
    for older in reversed(epochs[:-1]):
        if _run_claim(store, dest, older) == run_id:
            raise StreamRunFencedError(
                join(runs_dir(dest), f"{epochs[-1]:010d}.json"),
                f"query run {run_id} (epoch {older}) was superseded by epoch {epochs[-1]}: "
                "its batches are not committed and their uploads were aborted")
    epoch = (epochs or [0])[-1] + 1
    while True:
        body = json.dumps({"format": RUN_FORMAT, "epoch": epoch, "runId": run_id,
                           "started": int(time.time() * 1000)}).encode()
        try:
            store.put(join(runs_dir(dest), f"{epoch:010d}.json"), body, if_none_match=True)
        except PreconditionFailedError:
            epoch += 1
            continue
        log.info("zerorename: stream run %s claimed epoch %d of %s", run_id, epoch, dest)
        return epoch


def _uploads(outcomes: Iterable[TaskOutcome | None]) -> list[LoggedFile]:
    files: list[LoggedFile] = []
    for o in outcomes:
        if o is None or o.message is None:
            continue
        message = zr.TaskCommitMessage.from_compressed(o.message)
        pset = PendingSet.from_json(message.payload["pendingset"], message.record or "<task>")
        files.extend(LoggedFile(c.url, c.length, c.upload_id, tuple(c.etags))
                     for c in pset.commits)
    return sorted(files, key=lambda f: f.url)


def _clean_job(store: Store, dest: str, job_id: str, keep: set[str]) -> int:
    """Abort every pending upload of job ``job_id`` (its file names carry the job id) not in
    ``keep``, and delete its task records.  Scoped by name, so a concurrent run's uploads are
    never touched.  Returns the number of uploads aborted."""
    aborted = 0
    marker = f"-{job_id}"
    for u in store.list_multipart_uploads(dir_prefix(dest)):
        if u.upload_id not in keep and marker in u.url.rsplit("/", 1)[-1]:
            aborted += int(abort_quietly(store, u.url, u.upload_id))
    root = FENCED_AREA.root(dest, job_id)
    for obj in list_dir(store, root):
        store.delete(obj.url)
    return aborted


def commit_batch(stream: StreamSpec, batch_id: int,
                 outcomes: Sequence[TaskOutcome | None], run_id: str,
                 store: Store | None = None,
                 on_step: Callable[[CommitStep], None] | None = None) -> BatchOutcome:
    """Commit micro-batch ``batch_id`` (see the module docstring); idempotent per batch id.
    ``on_step`` is called after each :class:`CommitStep` (tests stop the driver there)."""
    step = on_step if on_step is not None else (lambda _: None)
    spec = batch_spec(stream, batch_id, run_id)
    store = store if store is not None else make_store(spec)
    dest = stream.dest
    try:  # no task reported a run id (a batch of no task): nothing to fence on
        epoch = claim_epoch(store, dest, run_id) if run_id else 0
    except StreamRunFencedError:
        _clean_job(store, dest, spec.job_id, set())
        raise
    table = TableLog(store, dest, records_only=True)
    if batch_id <= table.folded_through():
        _clean_after_commit(batch_id, dest, lambda: _clean_job(store, dest, spec.job_id, set()))
        return BatchOutcome.ALREADY_COMMITTED
    existing = table.batch(batch_id)
    if existing is None:
        record = BatchRecord(batch_id, epoch, run_id, spec.job_id,
                             int(time.time() * 1000), tuple(_uploads(outcomes)))
        url = batch_record_url(dest, batch_id)
        try:
            store.put(url, record.to_bytes(), if_none_match=True)  # the commit point
            existing = record
        except PreconditionFailedError:
            existing = BatchRecord.from_bytes(store.get(url), url)
    step(CommitStep.RECORDED)
    for f in existing.files:  # roll forward: ours, or a commit that crashed after its record
        complete_upload(store, f)
    step(CommitStep.COMPLETED)
    ours = existing.job_id == spec.job_id
    # every other upload of this batch id is garbage now: ours if the record is another's,
    # and those of runs that died before recording (no abort ran for them)
    keep = {f.upload_id for f in existing.files}
    _clean_after_commit(batch_id, dest, lambda: _clean_batch(store, dest, batch_id, keep))
    _maintain(stream, store, batch_id)
    return BatchOutcome.COMMITTED if ours else BatchOutcome.ALREADY_COMMITTED


def _clean_after_commit(batch_id: int, dest: str, clean: Callable[[], object]) -> None:
    """Run ``clean`` (removing task records and stray uploads) after batch ``batch_id``'s
    commit point.  The batch is committed, whole: a failure (a role without
    ``s3:DeleteObject``) is logged with what it lacked, never the batch's failure — failing
    would stop the query on a committed batch, and its re-run would fail the same way."""
    try:
        clean()
    except CommitError as error:
        log.warning("zerorename: batch %d of %s is committed; removing its task records and "
                    "stray uploads failed, what is left is hidden from readers: %s",
                    batch_id, dest, error)


def _maintain(stream: StreamSpec, store: Store, batch_id: int) -> None:
    """Compaction every ``compact_every`` batches, expiry after every batch, as configured.
    The batch is committed already: a fold that fails (another process folding at the same
    time, a store error) is logged, never the batch's failure, and the next one retries."""
    keep = max(stream.keep_batch_records, 1)
    try:
        if stream.compact_every and (batch_id + 1) % stream.compact_every == 0:
            compact_table(store, stream.dest, keep=keep, target_size=stream.compact_target_size)
        elif stream.keep_batch_records:
            expire_batch_records(store, stream.dest, keep=keep)
    except CommitError as error:
        log.warning("zerorename: batch %d of %s is committed; folding its log failed and is "
                    "retried after a later batch: %s", batch_id, stream.dest, error)


def abort_batch(stream: StreamSpec, batch_id: int, run_id: str | None,
                store: Store | None = None) -> None:
    """Discard what batch ``batch_id``'s tasks uploaded, found by name, never from the
    messages alone (Spark may pass ``None`` for tasks that succeeded): the uploads of run
    ``run_id``'s job, or — when no message named the run — of every run's job for this batch
    id, except those a batch record names."""
    store = store if store is not None else make_store(stream.write)
    table = TableLog(store, stream.dest, records_only=True)
    record = table.batch(batch_id)
    keep = {f.upload_id for f in record.files} if record is not None else set()
    if run_id:
        _clean_job(store, stream.dest, batch_spec(stream, batch_id, run_id).job_id, keep)
    else:
        _clean_batch(store, stream.dest, batch_id, keep)


def _clean_batch(store: Store, dest: str, batch_id: int, keep: set[str]) -> None:
    """Abort every upload of batch ``batch_id`` by any run (file names end in
    ``-b<id>[-c<roll>].parquet``) not in ``keep``, and delete every run's task records of it:
    after the batch's commit point, that is every upload a crashed run left."""
    suffix = f"-b{batch_id}"
    jobs = {name[len(FENCED_AREA.prefix):] for name in _fenced_roots(store, dest)
            if name.endswith(suffix)}
    of_batch = re.compile(rf"{suffix}(-c[0-9]+)?\.parquet$")  # part-<task>-<job>[-c<roll>]
    for u in store.list_multipart_uploads(dir_prefix(dest)):
        if of_batch.search(u.url.rsplit("/", 1)[-1]) and u.upload_id not in keep:
            abort_quietly(store, u.url, u.upload_id)
    for job_id in jobs:
        _clean_job(store, dest, job_id, keep)


def _fenced_roots(store: Store, dest: str) -> list[str]:
    """Names of the fenced job roots directly under ``dest`` (one delimited listing of that
    prefix only: its cost does not grow with the table's partitions or files)."""
    names: list[str] = []
    token: str | None = None
    while True:
        page = store.list_page(dir_prefix(dest) + FENCED_AREA.prefix, delimiter="/",
                               token=token)
        names.extend(p.rstrip("/").rsplit("/", 1)[-1] for p in page.prefixes)
        if page.token is None:
            return names
        token = page.token
