"""What the Data Source and the RDD path share: the write spec, the task body, the job driver.

Spark runs our code in three kinds of process, and nothing but pickled values crosses between
them (measured on PySpark 4.3: ``DataSource.writer()`` runs in one Python worker, each task's
``write()`` in another, ``commit()``/``abort()`` in a third — never in the user's driver
process).  So the whole job is described by one small, picklable, secret-free
:class:`~zerorename.spark.spec.WriteSpec` (:mod:`zerorename.spark.spec`, re-exported here),
and each side rebuilds its store and committer from it:

* :func:`run_task` — one task attempt: committer ``setup_task``, stream Parquet through
  ``open()``, ``commit_task``; returns a :class:`TaskOutcome` carrying the
  ``TaskCommitMessage`` JSON.  On an exception it calls ``abort_task`` and re-raises.
* :class:`JobDriver` — ``setup`` (save-mode checks, ``setup_job``), ``commit`` (exactly the
  winning attempts' messages, Spark protocol), ``abort`` (``abort_job`` + ``cleanup_job``,
  which must find leftovers by job-scoped listing: Spark passes ``None`` for the messages of
  tasks that succeeded).

The errors a write raises in the user's driver are in :mod:`.job_errors`, and what the driver
decides about the destination before ``setup_job`` (save modes, ``auto``'s committer) in
:mod:`.job_setup`; both are importable from here too.

Credentials never enter the spec: every process builds its client from boto3's default chain
(environment, profile, instance role), so nothing secret is pickled, logged or written to
``_SUCCESS``.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any

import zerorename as zr
from zerorename.committers.deletes import delete_pages
from zerorename.committers.replaced import record_deleted
from zerorename.errors import ConflictError, StoreError
from zerorename.executor import BoundedExecutor
from zerorename.store import Store, list_dir
from zerorename.stores import DeleteManyError
from zerorename.stores.probe import PROBE_AREA
from zerorename.urls import is_hidden, join, parse_url, relative_to

from . import hooks
from .chunks import ChunkedFileWriter
from .encoding import ParquetSettings
from .job_errors import OverwriteIncompleteError, SparkJobError, spark_job_error
from .job_setup import _FALLBACK_LOGGED as _FALLBACK_LOGGED
from .job_setup import choose_and_say, default_committer, output_exists, resolve_committer
from .parquet import PartitionedParquetWriter, TaskFileWriter, WrittenFile, write_all
from .spec import (
    AUTO,
    CHECKSUMS,
    COMMITTER_THREADS,
    COMPRESSIONS,
    CONFLICT_MODE,
    FORMATS,
    HADOOP_PREFIXES,
    OPTION_NAMES,
    PART_SIZE,
    SAVE_MODES,
    WriteOptionError,
    WriteSpec,
    check_option_names,
    spec_from_options,
)

#: with the names of :mod:`zerorename.spark.spec`, :mod:`.job_errors` and
#: :mod:`.job_setup`, importable from here as before the split
__all__ = [
    "AUTO",
    "CHECKSUMS",
    "COMMITTER_THREADS",
    "COMPRESSIONS",
    "CONFLICT_MODE",
    "FORMATS",
    "HADOOP_PREFIXES",
    "OPTION_NAMES",
    "PART_SIZE",
    "SAVE_MODES",
    "JobDriver",
    "OverwriteIncompleteError",
    "SparkJobError",
    "TaskOutcome",
    "WriteOptionError",
    "WriteSpec",
    "check_option_names",
    "choose_and_say",
    "default_committer",
    "job_context",
    "make_store",
    "output_exists",
    "parquet_settings",
    "resolve_committer",
    "run_task",
    "spark_job_error",
    "spec_from_options",
    "write_schema_only",
]

log = logging.getLogger("zerorename.spark")

#: boto3 clients by (endpoint, region, checksums), per process.  Spark reuses Python workers
#: across tasks, and building a client (loading botocore's service model) costs far more than
#: a small task's requests; clients are thread-safe, so sharing them is safe.
_CLIENTS: dict[tuple[str | None, str | None, str | None], Any] = {}
_CLIENTS_LOCK = threading.Lock()


def make_store(spec: WriteSpec) -> Store:
    """A fresh store for ``spec.dest`` (its own request counters) over a cached client:
    S3Store for s3://, LocalStore for file://."""
    from zerorename.stores import LocalStore, S3Store, make_s3_client

    scheme = parse_url(spec.dest).scheme
    if scheme == "file":
        return LocalStore()
    key = (spec.endpoint_url, spec.region, spec.checksums)
    with _CLIENTS_LOCK:
        client = _CLIENTS.get(key)
        if client is None:
            kwargs: dict[str, Any] = {"checksums": spec.checksums} if spec.checksums else {}
            client = make_s3_client(endpoint_url=spec.endpoint_url, region=spec.region,
                                    **kwargs)
            _CLIENTS[key] = client
    # the capability probe runs in the destination's own hidden area, where the job's role
    # may write (not at the bucket root)
    url = parse_url(spec.dest)
    where: dict[str, Any] = {"probe_bucket": url.bucket,
                             "probe_prefix": f"{url.key.rstrip('/')}/{PROBE_AREA}".lstrip("/")}
    if spec.part_min_size is not None:
        return S3Store(client, min_part_size=spec.part_min_size, **where)
    return S3Store(client, **where)


def job_context(spec: WriteSpec) -> zr.JobContext:
    """The committer's JobContext for ``spec`` (job attempt 0: Spark does not recover jobs)."""
    return zr.JobContext(dest=spec.dest, job_id=spec.job_id, attempt=0,
                         options=spec.job_options())


# ---------------------------------------------------------------------------------------
# task side


@dataclass(frozen=True)
class TaskOutcome:
    """What one successful task attempt reports to the driver (pickled by Spark)."""

    partition_id: int
    attempt: int
    #: the task commit message, zlib-compressed (``TaskCommitMessage.compressed``): the
    #: driver holds every outcome until the job commit, and the message's own payload shares
    #: these bytes (``from_compressed``) rather than holding a decoded copy
    message: bytes | None
    files: int
    rows: int
    bytes: int
    requests: Mapping[str, int]
    seconds: float


def run_task(spec: WriteSpec, partition_id: int, attempt: int,
             batches: Iterable[Any]) -> TaskOutcome:
    """One task attempt: write ``batches`` (pyarrow RecordBatches) and commit the task.

    The committer sees the attempt number, so two attempts of one task stage separately and
    only the committed one can ever become visible.
    """
    started = time.monotonic()
    if spec.skip:  # save mode "ignore" and the destination exists: drain, write nothing
        for _ in batches:
            pass
        return TaskOutcome(partition_id, attempt, None, 0, 0, 0, {}, 0.0)
    store = make_store(spec)
    job = job_context(spec)
    task = job.task(task_id=partition_id, attempt=attempt)
    committer = zr.create_committer(spec.committer, store, job, task=task)
    committer.setup_task()

    task_faults = hooks.for_task(spec.faults, partition_id, attempt)
    writer: TaskFileWriter
    if spec.encoder == "spark":  # the batches are chunks of files Spark's encoder made
        writer = ChunkedFileWriter(open_file=committer.open,
                                   file_stem=spec.file_stem(partition_id),
                                   on_batch=task_faults.batch_hook())
    else:
        writer = PartitionedParquetWriter(
            open_file=committer.open, file_stem=spec.file_stem(partition_id),
            partition_by=spec.partition_by, settings=parquet_settings(spec),
            max_open_files=spec.max_open_files, on_batch=task_faults.batch_hook())
    try:
        written = write_all(writer, batches)
        task_faults.after_write(spec.job_id)
        message = committer.commit_task() if committer.needs_task_commit() else None
    except BaseException:
        try:
            committer.abort_task()
        except Exception as cleanup_error:  # keep the original error; say what leaked
            log.warning("abort_task of task %s attempt %s failed: %s",
                        partition_id, attempt, cleanup_error)
        raise
    return _outcome(partition_id, attempt, message, written, store, started)


def write_schema_only(spec: WriteSpec, partition_id: int, schema: Any) -> TaskOutcome:
    """A task of the driver's writing one Parquet file of ``schema`` (an Arrow schema) and no
    rows, committed like any task's: what a write of no rows leaves, so that the output can be
    read back as an empty frame of the right columns (Spark's writer leaves such a file too).
    ``partition_id`` is one no Spark task of the job had."""
    import io

    import pyarrow.parquet as pq  # type: ignore[import-untyped]

    from .parquet import WrittenFile, file_relpath

    started = time.monotonic()
    store = make_store(spec)
    job = job_context(spec)
    committer = zr.create_committer(spec.committer, store, job,
                                    task=job.task(task_id=partition_id, attempt=0))
    committer.setup_task()
    relpath = file_relpath(spec.file_stem(partition_id), "", 0)
    table = schema.empty_table()
    buffer = io.BytesIO()
    pq.write_table(table, buffer, **parquet_settings(spec).writer_options(table))
    try:
        with committer.open(relpath) as file:
            file.write(buffer.getvalue())
        message = committer.commit_task() if committer.needs_task_commit() else None
    except BaseException:
        committer.abort_task()
        raise
    log.info("zerorename: no rows written to %s: committing %s, a file of the schema only",
             spec.dest, relpath)
    return _outcome(partition_id, 0, message, [WrittenFile(relpath, buffer.tell(), 0)], store,
                    started)


def parquet_settings(spec: WriteSpec) -> ParquetSettings:
    """The Parquet encoding options of ``spec`` (codec, row-group size, rows per file)."""
    return ParquetSettings(compression=spec.compression, row_group_bytes=spec.row_group_bytes,
                           max_records_per_file=spec.max_records_per_file)


def _outcome(partition_id: int, attempt: int, message: Any, written: list[WrittenFile],
             store: Store, started: float) -> TaskOutcome:
    return TaskOutcome(
        partition_id=partition_id, attempt=attempt,
        message=message.compressed() if message is not None else None,
        files=len(written), rows=sum(f.rows for f in written),
        bytes=sum(f.size for f in written), requests=dict(store.request_counts()),
        seconds=time.monotonic() - started)


# ---------------------------------------------------------------------------------------
# driver side


class JobDriver:
    """The job-side committer for one :class:`WriteSpec`, rebuilt in whichever process needs it.

    Spark creates the writer, commits and aborts in different Python workers, so this object
    holds nothing that is not derivable from the spec: the committer must find its state in
    the store from the job ID.
    """

    def __init__(self, spec: WriteSpec, store: Store | None = None) -> None:
        self.store = store if store is not None else make_store(spec)
        spec = resolve_committer(spec, self.store)
        self.spec = spec
        self.job = job_context(spec)
        self.committer = zr.create_committer(spec.committer, self.store, self.job)

    def setup(self) -> WriteSpec:
        """Check the save mode against the destination, then ``setup_job``.

        Returns the spec the tasks must use: with ``skip`` set when the mode is ``ignore``
        and output exists.  ``error`` fails here, before any task writes a byte.
        """
        if self.spec.mode in ("error", "ignore") and output_exists(self.store, self.spec.dest):
            if self.spec.mode == "ignore":
                log.info("zerorename: %s exists, mode=ignore: nothing written", self.spec.dest)
                return replace(self.spec, skip=True)
            raise ConflictError(self.spec.dest, "output already exists and mode is 'error' "
                                "(use mode='append' or 'overwrite')")
        self.committer.setup_job()
        return self.spec

    def commit(self, outcomes: Iterable[TaskOutcome | None]) -> Any:
        """Commit exactly the winning attempts' tasks; return the committer's ``_SUCCESS``.

        On failure the committer has already aborted the job (it discards what it owns).
        """
        if self.spec.skip:
            return None
        messages = [zr.TaskCommitMessage.from_compressed(o.message)
                    for o in outcomes if o is not None and o.message is not None]
        success = self.committer.commit_job(messages)
        if self.spec.mode == "overwrite" and not self._committer_replaces():
            deleted = self._replace_older_output()
            if deleted:
                self._record_deleted(success, deleted)
        return success

    def _record_deleted(self, success: Any, deleted: list[str]) -> None:
        """Name what the overwrite deleted in ``_SUCCESS`` (rewritten) and the log.  The job
        is published: a failure here is logged, never raised."""
        if not isinstance(success, zr.SuccessData):
            return
        record_deleted(success.diagnostics, self.spec.dest, deleted, job_id=self.spec.job_id)
        if not self.committer.mark_success:
            return
        try:
            self.committer.store.put(join(self.spec.dest, "_SUCCESS"), success.to_bytes())
        except StoreError as error:
            log.warning("zerorename: the overwrite of %s deleted %d older file(s), but "
                        "_SUCCESS could not be updated to say so: %s", self.spec.dest,
                        len(deleted), error)

    def _committer_replaces(self) -> bool:
        """The staging committers resolve ``replace`` themselves (before completing uploads:
        whole destination for ``directory``, written partitions for ``partitioned``)."""
        return getattr(self.committer, "conflict_mode", None) == "replace"

    def _replace_older_output(self) -> list[str]:
        """Overwrite for committers without a conflict mode (magic, manifest, v1, v2): delete
        every visible file not written by this job — identified by the job UUID in its name.

        Done *after* the new output is published, so a failed job never costs the old data;
        the price is a window in which a reader sees both (S3 has no atomic multi-object
        replace; Spark's own overwrite has the opposite window, seeing neither).  The pages of
        1,000 keys go out in parallel on the committer's threads.  If some deletes fail, the
        write raises :class:`OverwriteIncompleteError`, which says the new output *is*
        published and which older files are still beside it: a pipeline must not read both as
        if the overwrite had happened, and a rerun with ``mode="overwrite"`` finishes it.
        """
        marker = f"-{self.spec.job_id}"
        doomed = []
        for obj in list_dir(self.store, self.spec.dest):
            rel = relative_to(obj.url, self.spec.dest)
            if not is_hidden(rel) and marker not in rel.rsplit("/", 1)[-1]:
                doomed.append(obj.url)
        if not doomed:
            return doomed
        try:
            with BoundedExecutor(self.committer.threads, "overwrite") as pool:
                delete_pages(self.committer.store, doomed, pool)
        except StoreError as error:
            left = sorted(error.failures) if isinstance(error, DeleteManyError) else doomed
            raise OverwriteIncompleteError(self.spec.dest, self.spec.job_id, left,
                                           error) from error
        return doomed

    def abort(self) -> None:
        """``abort_job`` then ``cleanup_job`` — twice, the second time after a grace period.

        Work is found by job-scoped listing, never from the messages (Spark passes ``None``
        for tasks that succeeded).  Why twice: when a task exhausts its attempts, Spark asks
        the other running tasks to stop and calls ``abort()`` *without waiting* for them; a
        Python worker keeps running (writing files, committing its task) for up to
        ``spark.python.task.killTimeout`` (2 s) before it is killed.  Measured here: a task
        that finished after the first pass left its manifest and four data files behind.
        The second pass, ``abort_grace_seconds`` (default 3) later, removes what such
        stragglers wrote.
        """
        if self.spec.skip:
            return
        self._abort_once()
        if self.spec.abort_grace_seconds > 0:
            time.sleep(self.spec.abort_grace_seconds)
            self._abort_once()

    def _abort_once(self) -> None:
        try:
            self.committer.abort_job()
        finally:
            self.committer.cleanup_job()
