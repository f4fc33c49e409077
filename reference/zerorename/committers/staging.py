"""The staging committers, ``directory`` and ``partitioned`` (Netflix's design, Hadoop's
``DirectoryStagingCommitter`` / ``PartitionedStagingCommitter``).

Tasks write to a private local directory (``work_path``).  Task commit uploads every file
there as an uncompleted multipart upload to its final key and saves a ``.pendingset``; job
commit completes the uploads.  Nothing is visible before job commit, task commit is
all-or-nothing (a failure aborts every upload it started), and job commit is O(files) small
requests, independent of the data size.

Conflict mode (``fs.s3a.committer.staging.conflict-mode``, default ``append`` as in Hadoop
since HADOOP-16357):

========  ==========================================  ==========================================
mode      directory                                   partitioned
========  ==========================================  ==========================================
fail      setup_job fails if the destination has any  commit_task fails if any partition it
          object (HADOOP-15469: not rechecked later)  writes to already has objects
append    no checks; same names are overwritten       same
replace   job commit deletes the destination's        job commit deletes exactly the partitions
          content first (not other jobs' areas)       the job writes to (not the root)
========  ==========================================  ==========================================

``fs.s3a.committer.staging.unique-filenames`` (default **false** here, true in Hadoop) inserts
the job ID into each file name (``part-0000-<job>.parquet``); off by default because this API
promises the destination path the task asked for.
"""

from __future__ import annotations

import contextlib
import shutil
import tempfile
import threading
from pathlib import Path
from typing import ClassVar

from zerorename import options as O
from zerorename import statistics as S
from zerorename.committers.cleanup import abort_quietly
from zerorename.committers.deletes import delete_pages
from zerorename.committers.destinations import check_may_delete_at
from zerorename.committers.layout import STAGING_AREA, JobArea, in_committer_area
from zerorename.committers.output import OutputFile
from zerorename.committers.paths import check_key_length, check_relpath, dest_url
from zerorename.committers.s3a import S3ACommitter
from zerorename.committers.staging_area import (
    BUFFER_DIR_OPTION,
    Area,
    DiskArea,
    StoreArea,
    local_base,
)
from zerorename.context import JobContext, TaskContext
from zerorename.errors import (
    CommitError,
    ConflictError,
    NotFoundError,
)
from zerorename.formats import SinglePendingCommit, UploadIntent, encode_url
from zerorename.messages import TaskCommitMessage
from zerorename.stages import Loaded, StageContext
from zerorename.store import Store, list_dir
from zerorename.urls import dir_prefix, join

__all__ = [
    "CONFLICT_MODE_OPTION",
    "DirectoryStagingCommitter",
    "DiskArea",
    "PartitionedStagingCommitter",
    "StagingCommitter",
    "StoreArea",
    "add_uuid",
]

CONFLICT_MODE_OPTION = O.CONFLICT_MODE.name
UNIQUE_FILENAMES_OPTION = O.UNIQUE_FILENAMES.name
TMP_PATH_OPTION = O.STAGING_TMP_PATH.name
CONFLICT_MODES = ("fail", "append", "replace")
E_DEST_EXISTS = 'Destination path exists and committer conflict resolution mode is "fail"'


def add_uuid(rel: str, uuid: str) -> str:
    """Hadoop's ``Paths.addUUID``: insert ``-<uuid>`` before the first dot of the file name;
    unchanged if the path already contains the uuid."""
    if not uuid:
        raise CommitError(rel, "empty job UUID")
    if uuid in rel:
        return rel
    parent, _, name = rel.rpartition("/")
    if not name:
        raise CommitError(rel, "no file name to add the job UUID to")
    dot = name.find(".")
    name = f"{name}-{uuid}" if dot <= 0 else f"{name[:dot]}-{uuid}{name[dot:]}"
    return f"{parent}/{name}" if parent else name


# -- the committers --------------------------------------------------------------------------


class StagingCommitter(S3ACommitter):
    """Shared by ``directory`` and ``partitioned``; see the module docstring."""

    job_area: ClassVar[JobArea] = STAGING_AREA

    def __init__(self, store: Store, job: JobContext, task: TaskContext | None = None, *,
                 local_store: Store | None = None, cluster_store: Store | None = None) -> None:
        if cluster_store is not None and not job.opts.get_str(TMP_PATH_OPTION):
            raise CommitError(TMP_PATH_OPTION, "a cluster store for the staging records needs "
                                               f"{TMP_PATH_OPTION}: a URL on that store")
        super().__init__(store, job, task, records=cluster_store)
        mode = self.opts.get_str(CONFLICT_MODE_OPTION, default="append").lower()
        if mode not in CONFLICT_MODES:
            raise CommitError(CONFLICT_MODE_OPTION, f"unknown conflict mode {mode.upper()!r}: "
                                                    "expected FAIL, APPEND or REPLACE")
        self.conflict_mode = mode
        if mode == "replace":
            check_may_delete_at(self.dest, "conflict mode REPLACE")
        self.unique_filenames = self.opts.get_bool(UNIQUE_FILENAMES_OPTION, default=False)
        self.local_store = local_store
        self._area: Area | None = None
        self._area_lock = threading.Lock()
        #: upload id -> final URL of every upload this attempt's task commit created and has
        #: not aborted: abort_task aborts them (see :meth:`_abort_task`)
        self._started: dict[str, str] = {}
        self._started_lock = threading.Lock()

    def _job_root(self) -> str:
        tmp = self.opts.get_str(TMP_PATH_OPTION)
        if tmp:
            return join(tmp, f"{self.job_id}/staging-uploads")
        return super()._job_root()

    # -- the local area --------------------------------------------------------------------

    def _local_dir(self, task: TaskContext) -> str:
        return f"{self.job_id}/{task.attempt_id}"

    def area(self, task: TaskContext) -> Area:
        with self._area_lock:
            if self._area is None:
                if self.local_store is not None:
                    base = self.opts.get_str(BUFFER_DIR_OPTION) or (
                        "file://" + tempfile.gettempdir() + "/zerorename-staging")
                    self._area = StoreArea(self.local_store,
                                           join(base.split(",")[0].strip(),
                                                self._local_dir(task)))
                else:
                    path = local_base(self.opts.get_str(BUFFER_DIR_OPTION)) / self.job_id
                    self._area = DiskArea(path / task.attempt_id)
            return self._area

    def _work_path(self, task: TaskContext) -> str:
        return self.area(task).url

    @property
    def local_work_dir(self) -> Path | None:
        """The task's local directory as a :class:`~pathlib.Path` (None on an injected store);
        files written there directly (e.g. by pyarrow), named by their relative path, are
        committed too."""
        area = self.area(self._require_task())
        if not isinstance(area, DiskArea):
            return None
        area.create()
        return area.output

    def _setup_task(self) -> None:
        """A new attempt starts with an empty local directory: anything there was left by a
        crashed process that used the same attempt ID and must not be committed by this one."""
        area = self.area(self._require_task())
        area.delete()
        if isinstance(area, DiskArea):
            area.create()

    def _open(self, task: TaskContext, rel: str) -> OutputFile:
        check_key_length(dest_url(self.dest, self.destination_rel(rel)), rel)

        def on_done(aborted: bool) -> None:
            self._file_closed(rel, reopenable=aborted)

        return self.area(task).open(rel, on_done)

    def _needs_task_commit(self, task: TaskContext) -> bool:
        return bool(self.area(task).files())

    def destination_rel(self, rel: str) -> str:
        return add_uuid(rel, self.job_id) if self.unique_filenames else rel

    # -- task commit -----------------------------------------------------------------------

    def check_task_conflicts(self, rels: list[str]) -> None:
        return None

    def _commit_task(self, task: TaskContext) -> TaskCommitMessage:
        area = self.area(task)
        files = area.files()
        entries: list[tuple[str, int, str]] = []
        for rel, size in files:  # every path is checked before anything is uploaded
            check_relpath(rel, where=f"{area.url}/{rel}")
            final = check_key_length(dest_url(self.dest, self.destination_rel(rel)), rel)
            entries.append((rel, size, final))
        self.check_task_conflicts([self.destination_rel(rel) for rel, _s, _u in entries])
        intent_url = self.layout.task_intent(task.attempt_id)
        if entries:
            intent = UploadIntent(job_id=self.job_id, task_attempt_id=task.attempt_id,
                                  uris=[encode_url(u) for _r, _s, u in entries],
                                  created=self.clock.now_millis())
            self.records.put(intent_url, intent.to_bytes())
        def upload(entry: tuple[str, int, str]) -> SinglePendingCommit:
            rel, size, final = entry
            created = self.clock.now_millis()
            upload_id = self.store.create_multipart(final)
            with self._started_lock:
                self._started[upload_id] = final
            etags = [self.store.upload_part(final, upload_id, number, chunk)
                     for number, chunk in enumerate(area.read_parts(rel, self.part_size), 1)]
            self.stats.incr(S.COMMITTER_BYTES_UPLOADED, size)
            return SinglePendingCommit.create(final, upload_id, etags, size, job_id=self.job_id,
                                              task_id=task.attempt_id, created=created,
                                              now=self.clock.now_millis())

        try:
            with self.executor("upload") as pool:
                commits = sorted(pool.run(upload, entries), key=lambda c: c.url)
            self.stats.sample(S.COMMITTER_TASK_FILE_COUNT, len(commits))
            message = self.save_pendingset(task, commits)
        except Exception:  # (a crash — BaseException — must not touch the store)
            self._abort_started()
            area.delete()
            raise
        area.delete()
        return message

    def _abort_started(self) -> None:
        """Abort every upload a failed task commit knows it started.  The task's intent is
        kept: a create whose answer was lost left an upload with an ID never seen here, and
        only the job's sweep of the intent's keys finds it (a task must not sweep: a sibling
        attempt may be uploading to the same keys)."""
        with self._started_lock:
            started = dict(self._started)
        for upload_id, url in started.items():
            with contextlib.suppress(CommitError):  # the job's sweep retries it
                abort_quietly(self.store, url, upload_id)
                with self._started_lock:
                    self._started.pop(upload_id, None)

    def _abort_task(self, task: TaskContext) -> None:
        """Also aborts the uploads the task commit's workers created: a kill (Spark's, when
        the job fails or another attempt won) interrupts the task commit without the cleanup
        of a failure, and the pool's shutdown lets the workers in flight finish their create
        first.  No record names such an upload, and the driver's abort, which does not wait
        for killed tasks, may have listed the intent's keys before it was created: only this
        attempt knows its ID."""
        self.area(task).delete()
        with self._started_lock:
            started = dict(self._started)
        with contextlib.suppress(NotFoundError):
            self.abort_recorded(task, started)

    def _abort_local(self) -> None:
        if self.local_store is None and self.task is None:
            shutil.rmtree(local_base(self.opts.get_str(BUFFER_DIR_OPTION)) / self.job_id,
                          ignore_errors=True)


class DirectoryStagingCommitter(StagingCommitter):
    """Conflicts are resolved for the whole destination directory."""

    name: ClassVar[str] = "directory"
    hadoop_class: ClassVar[str] = \
        "org.apache.hadoop.fs.s3a.commit.staging.DirectoryStagingCommitter"

    def check_conflicts_at_setup(self) -> None:
        if self.conflict_mode != "fail":
            return
        own = dir_prefix(self.layout.root)
        page = self.store.list_page(dir_prefix(self.dest), delimiter="/", max_keys=2)
        others = [o.url for o in page.objects] + [p for p in page.prefixes if p != own]
        if others:
            raise ConflictError(self.dest, f"{E_DEST_EXISTS} (found {others[0]})")

    def prepare_destination(self, ctx: StageContext, loaded: Loaded) -> None:
        if self.conflict_mode != "replace":
            return
        doomed = [o.url for o in list_dir(self.store, self.dest)
                  if not in_committer_area(o.url[len(self.dest) + 1:])]
        self.replaced = _delete_all(ctx, doomed)


class PartitionedStagingCommitter(StagingCommitter):
    """Conflicts are resolved per partition (the parent directories of the files written);
    files at the root of the destination are always appended."""

    name: ClassVar[str] = "partitioned"
    hadoop_class: ClassVar[str] = \
        "org.apache.hadoop.fs.s3a.commit.staging.PartitionedStagingCommitter"

    def check_task_conflicts(self, rels: list[str]) -> None:
        if self.conflict_mode != "fail":
            return
        for partition in sorted({r.rsplit("/", 1)[0] for r in rels if "/" in r}):
            directory = join(self.dest, partition)
            if self.store.list_page(dir_prefix(directory), max_keys=1).objects:
                raise ConflictError(directory, E_DEST_EXISTS)

    def prepare_destination(self, ctx: StageContext, loaded: Loaded) -> None:
        if self.conflict_mode != "replace":
            return
        doomed: list[str] = []
        for partition in sorted(loaded.directories):
            doomed.extend(o.url for o in list_dir(self.store, join(self.dest, partition))
                          if not in_committer_area(o.url[len(self.dest) + 1:]))
        self.replaced = _delete_all(ctx, doomed)


def _delete_all(ctx: StageContext, urls: list[str]) -> list[str]:
    """Delete ``urls`` (the older output a ``replace`` job commit replaces); returns them,
    for ``_SUCCESS`` to name."""
    delete_pages(ctx.store, urls)
    ctx.stats.incr(S.COMMITTER_FILES_REPLACED, len(urls))
    return urls
