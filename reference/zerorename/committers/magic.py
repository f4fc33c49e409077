"""The magic committer: tasks stream straight to the final keys as multipart uploads that
only job commit completes (Hadoop's ``MagicS3GuardCommitter``, per-job ``__magic_job-<id>``).

**In-memory tracking** (``fs.s3a.committer.magic.track.commits.in.memory.enabled``, Hadoop's
option; **our default is true**, Hadoop's false).  The task keeps its commits in memory and
writes no record per file, so a file costs what the protocol needs — its upload's create and
part(s) at the task, its complete at job commit — and the task's pendingset carries every
upload:

1. a file that outgrows one part (``fs.s3a.multipart.size``) starts its upload at once and
   streams fixed-size parts (every part but the last has exactly that size, which S3 requires
   and Cloudflare R2 insists on); its pending commit stays in memory;
2. a smaller file is held in memory when closed, and uploaded (create + one part) with the
   other small files of its *batch*: when the batch holds a part's worth of bytes or 1,000
   files, or at task commit — so memory stays bounded by about a part per task plus a part
   per open file;
3. before any upload is created, one **upload intent** names its key: one intent per batch
   (the batch's keys, plus the key of a large file starting its upload at that moment), as
   ``<task dir>/__base/batch-<n>.intent``.  Never a record per file, yet every upload a task
   creates has its key on record first.

Why the intents: a task process can die between creating an upload and its task commit, and
a CreateMultipartUpload can be applied while its answer is lost (the retry makes a second
upload, whose sibling's ID nobody saw).  Job commit and abort read the job's intents and
abort every upload on those *exact keys* that no committed pendingset names
(:func:`~zerorename.committers.cleanup.abort_owned`).  So a dead task's uploads are found
without any per-file record, and without the alternative — aborting every upload under the
destination that no record of this job names — which would also abort a concurrent job's
uploads, still only in its tasks' memory (HADOOP-17318).  The cost is O(tasks + bytes/part)
PUTs at the tasks and one GET per intent at job commit.

Only the object that wrote an attempt's files can commit it: another committer object for the
same attempt (another process) finds the attempt's intents and refuses, rather than commit
an empty pendingset in its place.

**File-based tracking** (the option false: Hadoop's behaviour, for processes that commit a
task they did not write): per file, an intent ``<task dir>/__base/<sha256 of path>.intent``
before its upload is created (at open, even for a 0-byte file), and on close the ``.pending``
record (Hadoop's SinglePendingCommit) beside it; task commit gathers the ``.pending`` files
into the pendingset.

Task commit saves ``pendingsets/<attempt id>.pendingset``; job commit completes the uploads of
the committed attempts (see :mod:`zerorename.stages`).

Differences from Hadoop, on purpose: no 0-byte "marker" object at the magic path (readers of
this API never open magic paths); records are named by a digest of the path, not the path
itself (Hadoop's ``__base/<path>.pending`` is ~150 bytes longer than the user's key, so a
valid key near S3's 1,024-byte limit would fail); the pendingset is named by task *attempt*,
never overwritten; intents precede every upload and are kept until the job ends.
"""

from __future__ import annotations

import contextlib
import hashlib
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from typing import ClassVar

from zerorename import options as O
from zerorename import statistics as S
from zerorename.committers.cleanup import abort_quietly
from zerorename.committers.layout import INTENT, MAGIC_AREA, PENDING, JobArea
from zerorename.committers.output import OutputFile
from zerorename.committers.paths import check_destination, check_key_length, dest_url
from zerorename.committers.s3a import S3ACommitter
from zerorename.committers.uploads import PendingUploadFile
from zerorename.context import JobContext, TaskContext
from zerorename.errors import CommitError, NotFoundError
from zerorename.formats import (
    SinglePendingCommit,
    UploadIntent,
    check_unique_destinations,
    encode_url,
)
from zerorename.messages import TaskCommitMessage
from zerorename.store import Store, list_dir
from zerorename.urls import join

__all__ = ["MagicCommitter", "MagicFile"]

MAGIC_ENABLED_OPTION = O.MAGIC_ENABLED.name
TRACK_IN_MEMORY_OPTION = O.MAGIC_IN_MEMORY.name
#: In-memory mode: the intents' names (``batch-<n>.intent``), unlike a file-based record's
#: digest name, say that only the writing object knows the attempt's commits.
BATCH_PREFIX = "batch-"
#: Keys named by one intent at most: a batch of small files is flushed at this many, so an
#: intent stays a small record whatever the file count.
BATCH_FILES_LIMIT = 1000


def record_name(rel: str) -> str:
    """The name of ``rel``'s intent and ``.pending`` records (before the suffix): the SHA-256
    of the path.  Fixed-length, so a record's key does not grow with the user's key — a key
    of S3's maximum length stays valid, and its records fit too.  The records hold the real
    destination URL, which is all anyone reads them for."""
    return hashlib.sha256(rel.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class DeferredFile:
    """A closed file under one part, held in memory until its batch is uploaded."""

    rel: str
    url: str
    data: bytes


class MagicFile(PendingUploadFile):
    """One file of a magic task attempt: an upload to its final key, never completed here.

    ``upload_id`` is given when the upload was created at open (file-based tracking); in
    memory mode it is created when the file outgrows one part, and a file that never does is
    handed to the committer's batch on close.  ``record`` (file-based tracking only) is where
    the ``.pending`` goes."""

    def __init__(self, committer: MagicCommitter, task: TaskContext, rel: str, final: str,
                 record: str | None, upload_id: str | None) -> None:
        super().__init__(committer, rel, final, task.attempt_id, upload_id)
        self.committer = committer
        self.task = task
        self.record = record

    def _start_upload(self) -> str:
        return self.committer.start_upload(self.task, self.url)

    def _close_without_upload(self) -> None:
        """In memory, under one part: the file waits for its batch."""
        data, self._buf = bytes(self._buf), bytearray()
        self.committer.defer(self.task, DeferredFile(self.rel, self.url, data))

    def _record(self, commit: SinglePendingCommit) -> None:
        if self.record is not None:
            self.store.put(self.record + PENDING, commit.to_bytes())


class MagicCommitter(S3ACommitter):
    """See the module docstring.  ``work_path`` is ``<dest>/__magic_job-<id>/<NN>/tasks/
    <attempt id>/__base``: records only, the data goes to the final keys."""

    name: ClassVar[str] = "magic"
    hadoop_class: ClassVar[str] = "org.apache.hadoop.fs.s3a.commit.magic.MagicS3GuardCommitter"
    job_area: ClassVar[JobArea] = MAGIC_AREA

    def __init__(self, store: Store, job: JobContext, task: TaskContext | None = None) -> None:
        super().__init__(store, job, task)
        if not self.opts.get_bool(MAGIC_ENABLED_OPTION, default=True):
            raise CommitError(self.dest, f"the magic committer is disabled "
                                         f"({MAGIC_ENABLED_OPTION}=false)")
        self.in_memory = self.opts.get_bool(TRACK_IN_MEMORY_OPTION, default=True)
        self._commits: dict[str, SinglePendingCommit] = {}
        self._commits_lock = threading.Lock()
        #: in memory mode: closed small files waiting for their batch, and its bytes
        self._batch: list[DeferredFile] = []
        self._batch_bytes = 0
        self._intents = 0  # intents written by this attempt (names them)
        self._wrote = False  # this object opened a file (in memory mode: it alone knows them)
        #: a batch that could not be uploaded: its files are lost, so the task cannot commit
        self._lost: CommitError | None = None

    def _work_path(self, task: TaskContext) -> str:
        return join(self.layout.task_dir(task.attempt_id), "__base")

    def _open(self, task: TaskContext, rel: str) -> OutputFile:
        final = check_key_length(dest_url(self.dest, rel), rel)
        self.stats.incr(S.COMMITTER_MAGIC_FILES_CREATED)
        if self.in_memory:
            with self._commits_lock:
                self._wrote = True
            return MagicFile(self, task, rel, final, None, None)
        record = f"{self._work_path(task)}/{record_name(rel)}"
        intent = UploadIntent(job_id=self.job_id, task_attempt_id=task.attempt_id,
                              uris=[encode_url(final)], created=self.clock.now_millis())
        self.store.put(record + INTENT, intent.to_bytes())
        upload_id = self.store.create_multipart(final)
        return MagicFile(self, task, rel, final, record, upload_id)

    def file_done(self, rel: str, commit: SinglePendingCommit | None) -> None:
        """Called by a :class:`MagicFile` when it is closed (``commit``) or aborted (None)."""
        self._file_closed(rel, reopenable=commit is None)
        if commit is not None:
            with self._commits_lock:
                self._commits[rel] = commit

    # -- in memory: batches of small files, an intent before every upload --------------------

    def start_upload(self, task: TaskContext, url: str) -> str:
        """Create the upload of a file that outgrew one part, its key named by an intent first
        (with the waiting batch's keys, whose uploads go now too)."""
        self.flush(task, also=[url])
        return self.store.create_multipart(url)

    def defer(self, task: TaskContext, file: DeferredFile) -> None:
        """Take a closed small file into the batch; upload the batch once it is full."""
        with self._commits_lock:
            self._batch.append(file)
            self._batch_bytes += len(file.data)
            full = (self._batch_bytes >= self.part_size
                    or len(self._batch) >= BATCH_FILES_LIMIT)
        self._file_closed(file.rel)
        if full:
            self.flush(task)

    def flush(self, task: TaskContext, also: Iterable[str] = ()) -> None:
        """Write one intent naming the batch's keys and ``also``, then upload the batch (in
        parallel).  A failure loses the batch's files: the task can no longer commit."""
        with self._commits_lock:
            batch, self._batch, self._batch_bytes = self._batch, [], 0
            keys = [f.url for f in batch] + list(also)
            if not keys:
                return
            number, self._intents = self._intents, self._intents + 1
        try:
            intent = UploadIntent(job_id=self.job_id, task_attempt_id=task.attempt_id,
                                  uris=[encode_url(u) for u in keys],
                                  created=self.clock.now_millis())
            self.store.put(f"{self._work_path(task)}/{BATCH_PREFIX}{number:06d}{INTENT}",
                           intent.to_bytes())
            if batch:
                self._upload_batch(task, batch)
        except Exception as exc:
            if batch:
                lost = CommitError(batch[0].url, f"{len(batch)} closed file(s) of task attempt "
                                   f"{task.attempt_id} could not be uploaded: {exc}")
                with self._commits_lock:
                    self._lost = self._lost or lost
            raise

    def _upload_batch(self, task: TaskContext, batch: list[DeferredFile]) -> None:
        started: dict[str, str] = {}  # upload id -> url, for uploads not yet in _commits
        lock = threading.Lock()

        def upload(file: DeferredFile) -> None:
            created = self.clock.now_millis()
            upload_id = self.store.create_multipart(file.url)
            with lock:
                started[upload_id] = file.url
            etag = self.store.upload_part(file.url, upload_id, 1, file.data)
            self.stats.incr(S.STREAM_WRITE_BLOCK_UPLOADS)
            commit = SinglePendingCommit.create(
                file.url, upload_id, [etag], len(file.data), job_id=self.job_id,
                task_id=task.attempt_id, created=created, now=self.clock.now_millis())
            with self._commits_lock:
                self._commits[file.rel] = commit
            with lock:
                del started[upload_id]

        try:
            with self.executor("upload") as pool:
                pool.run(upload, batch)
        except Exception:  # (a crash — BaseException — must not touch the store)
            for upload_id, url in started.items():
                with contextlib.suppress(CommitError):  # the job sweeps the intent's keys
                    abort_quietly(self.store, url, upload_id)
            raise

    # -- task ------------------------------------------------------------------------------

    def _needs_task_commit(self, task: TaskContext) -> bool:
        with self._commits_lock:
            if self._commits or self._batch:
                return True
            if self.in_memory and self._wrote:
                return False  # every file it opened was aborted
        return any(o.url.endswith(PENDING) or _is_batch_intent(o.url)
                   for o in list_dir(self.records, self.layout.task_dir(task.attempt_id)))

    def _task_commits(self, task: TaskContext) -> list[SinglePendingCommit]:
        """This attempt's commits: from memory if this object wrote them, else from the
        ``.pending`` files in the store (file-based tracking in another process).  The files
        of a writer that tracked them in memory are known to that object only: refused."""
        with self._commits_lock:
            if self._commits or (self.in_memory and self._wrote):
                return [self._commits[rel] for rel in sorted(self._commits)]
        self.require_marker()
        task_dir = self.layout.task_dir(task.attempt_id)
        listed = [o.url for o in list_dir(self.records, task_dir)]
        if any(_is_batch_intent(u) for u in listed):
            raise CommitError(task_dir, f"task attempt {task.attempt_id} was written by a "
                              "committer object that tracks its commits in memory "
                              f"({TRACK_IN_MEMORY_OPTION}=true): only that object can commit "
                              "it; abort it and run a new attempt (or set the option to false "
                              "to commit tasks from another process)")
        urls = [u for u in listed if u.endswith(PENDING)]
        with self.executor("load-pending") as pool:
            commits = pool.run(lambda u: SinglePendingCommit.from_bytes(self.store.get(u), u),
                               urls)
        return sorted(commits, key=lambda c: c.url)

    def _commit_task(self, task: TaskContext) -> TaskCommitMessage:
        commits: list[SinglePendingCommit] = []
        try:
            if self.in_memory:
                # small files are uploaded only now: a zombie attempt whose job has already
                # committed or aborted (its marker gone) must not start uploads nobody would
                # complete or sweep — it fails instead, and aborts what it had started
                self.require_marker()
                self.flush(task)
                with self._commits_lock:
                    lost = self._lost
                if lost is not None:
                    raise lost
            commits = self._task_commits(task)
            for commit in commits:
                where = commit.filename or self.layout.task_dir(task.attempt_id)
                check_destination(commit.url, self.dest, where)
                if commit.job_id and commit.job_id != self.job_id:
                    raise CommitError(where, f"written by job {commit.job_id}, not "
                                             f"{self.job_id}")
            check_unique_destinations((c.url for c in commits),
                                      self.layout.task_dir(task.attempt_id))
            self.stats.sample(S.COMMITTER_TASK_FILE_COUNT, len(commits))
            message = self.save_pendingset(task, commits)
            if self.in_memory:
                # the job ended while this attempt uploaded: it will never complete them
                self.require_marker()
            return message
        except Exception:
            with self._commits_lock:
                known = commits or list(self._commits.values())
            self._abort_commits(known)
            raise

    def _abort_commits(self, commits: list[SinglePendingCommit]) -> None:
        for commit in commits:
            try:
                abort_quietly(self.store, commit.url, commit.upload_id)
            except CommitError:
                continue  # the job's abort finds it through the records

    def _abort_task(self, task: TaskContext) -> None:
        with self._commits_lock:
            known = {c.upload_id: c.url for c in self._commits.values()}
            self._commits.clear()
            self._batch, self._batch_bytes = [], 0  # never uploaded: nothing to abort
        with contextlib.suppress(NotFoundError):
            self.abort_recorded(task, known)


def _is_batch_intent(url: str) -> bool:
    """An intent of an in-memory writer (``…/__base/batch-<n>.intent``)."""
    name = url.rsplit("/", 1)[-1]
    return name.startswith(BATCH_PREFIX) and name.endswith(INTENT)
