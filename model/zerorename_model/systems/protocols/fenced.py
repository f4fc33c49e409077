"""The fenced committer: S3's conditional writes make task commit and job commit one PUT each.

Every other object-store committer publishes whatever record a task attempt PUT *last*, so an
attempt the driver has given up on can replace the accepted one's (the race of Section VIII.C),
and refusing the second PUT with a plain existence check brought back HADOOP-17258's retry
loop.  Here every record is written with ``If-None-Match: *``: the store, not the driver,
decides which attempt's record exists, and every loser learns who won.

Layout (names starting with ``_`` are not output)::

    dest/_fenced/<jobId>/active                 present while the job runs (set up, not cleaned)
    dest/_fenced/<jobId>/tasks/<taskId>.json   task record: the winning attempt and its uploads
    dest/_fenced/<jobId>/commit.json           job commit record: the task records it accepts
    dest/_SUCCESS                              every committed file, its size and ETag

* Task output: a multipart upload to the final key, not completed (as ``magic``); files smaller
  than ``zerorename.fenced.small-file-bytes`` wait on local disk and are uploaded in the task
  commit (as ``directory``).
* Task commit: one conditional PUT of the task record, at a key made of the job ID and the task
  ID only.  The first attempt wins; a 412 means another attempt's record is there: the loser
  aborts its uploads and answers :class:`CommittedByAnother`, naming the winner, so the driver
  knows whose output the job publishes and does not retry.  A winner then reads the job commit
  record: a record that exists and does not name it means the job committed without it, so it
  aborts its uploads and fails (a zombie cannot add output).
* Job commit: a conditional PUT of the job commit record (the accepted task records: Spark's
  messages, or Hadoop's listing of the task records) is the commit point; then every upload it
  names is completed, ``_SUCCESS`` written, the task records and stray uploads removed.
* Cleanup aborts the uploads at a key its records name that no commit names (a losing or
  retried attempt's); an upload no record names (an attempt that died before its task
  commit) is aborted only when no other job is active under the destination: it could be the
  other job's, and aborting it is Section XIV.C.1's bug (``fenced+XIV.C.1`` puts it back).
  "Under the destination" is its whole subtree and the record areas above it: a job on a
  partition of the table, or on the table around this job's partition, is another job too
  (``fenced+top-level-cleanup`` looks at the destination's own record area only: issue 31).
* Recovery: a new job attempt that finds the commit record rolls forward (an upload already
  completed answers NoSuchUpload, and its object has the recorded ETag); one that does not
  commits afresh, keeping the task records, which name no job attempt.
* Readers: :func:`committed_files` reads ``_SUCCESS``, one atomic PUT written after every upload
  was completed: it names exactly the files of the last job that committed.

The variants (``fenced+no-fence``, the production bugs put back, ``fenced+messages`` and its
candidates, ``fenced+<rule>``) are registered in
:mod:`~zerorename_model.systems.protocols.fenced_variants`.

``zerorename.fenced.task-records`` (issue 46): ``store`` (the default) is the above;
``messages`` is for Spark's protocol only, where the driver hands job commit the accepted
attempts' messages: the task commit sends no request (the message is the task record, and job
commit accepts only what the driver accepted: Spark's commit coordinator, not the store, picks
the attempt).  Job commit, its record, recovery and cleanup stay as they are; they know a task's
keys from the job commit record and from the messages the driver accepted, which it keeps
(``on_task_commit``, Spark's ``onTaskCommit``): abort aborts their uploads even while another
job is active (any other upload only when none is).  Under Hadoop's protocol there are no
messages and no records to list: job commit refuses.  ``fenced+messages`` explores it (the JVM
``fenced``'s protocol; docs/research/fenced-spark-messages.md has what exploration found).

``zerorename.fenced.complete`` (:mod:`~zerorename_model.systems.protocols.fenced_complete`):
``check-first`` (the default, the rule both implementations follow): the job commit lists the
destination before its commit point and refuses a key another writer's object holds, then
completes with ``If-None-Match: *``.  ``overwrite`` (the model's ``fenced`` until session 24),
``if-none-match`` and ``check-first-overwrite`` are the variants ``fenced+<rule>`` and
``fenced+messages+<rule>``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import ClassVar, Protocol, TypedDict, cast

from zerorename_model.engine.errors import ModelStoreError
from zerorename_model.engine.scenario import CommittedByAnother, CommitterEnv, JobSpec, TaskSpec
from zerorename_model.systems.protocols import ModelCommitter, register
from zerorename_model.systems.protocols.common import (
    SUCCESS,
    CommitFailed,
    PendingCommit,
    abort_pending,
    commit_url,
    decode_json,
    delete_recursive,
    dir_prefix,
    encode_json,
    join,
    list_files,
    relative,
    task_id,
    upload_pending,
)
from zerorename_model.systems.protocols.fenced_complete import (
    DEFAULT,
    complete_one,
    complete_rule,
)

FENCE_DIR = "_fenced"
SMALL_FILE_BYTES = "zerorename.fenced.small-file-bytes"
TASK_RECORDS = "zerorename.fenced.task-records"
#: where the task record goes: ``store`` (PUT by the task commit, fenced) or ``messages``
#: (only in the task commit message: Spark's protocol)
TASK_RECORD_MODES = ("store", "messages")
RECORD_VERSION = 1
SUCCESS_NAME = "zerorename.fenced.SuccessData/1"


class TaskRecord(TypedDict):
    """``tasks/<taskId>.json``: the attempt that won the task and its pending uploads (also
    the task commit message)."""

    version: int
    jobId: str
    task: str
    attempt: str
    uploads: list[PendingCommit]


class JobRecord(TypedDict):
    """``commit.json``, the commit point: the task records the job commit accepted, by task."""

    version: int
    jobId: str
    tasks: dict[str, TaskRecord]


@register("fenced", supports_recovery=True)
class FencedCommitter(ModelCommitter):
    name = "fenced"
    fenced = True  # every record PUT carries If-None-Match: *
    #: a repeated request that meets its own earlier success is recognised: a task record
    #: that names this attempt is its own (the first PUT landed, its answer was lost), an
    #: upload gone whose object has the recorded ETag was completed by an earlier request
    recognises_own = True
    #: ``zerorename.fenced.task-records`` when the options do not say
    task_records_default: ClassVar[str] = "store"
    #: with ``messages``, the task commit's requests kept all the same (the candidates)
    keeps_record_put: ClassVar[bool] = False
    keeps_fence_get: ClassVar[bool] = False
    #: ... or only when the task commit itself uploaded (staged small files): after Spark's
    #: coordinator let it commit, so possibly after the job ended and cleaned up
    keeps_late_fence_get: ClassVar[bool] = False
    #: with ``messages``, the driver keeps the messages it accepted (``on_task_commit``) and
    #: abort and cleanup abort the uploads at the keys they name
    keeps_accepted: ClassVar[bool] = True
    #: ``zerorename.fenced.complete`` when the options do not say
    complete_default: ClassVar[str] = DEFAULT

    def __init__(self, env: CommitterEnv, job: JobSpec, task: TaskSpec | None,
                 options: dict[str, str]) -> None:
        self.env = env
        self.fs = env.store
        self.dest = job.dest
        self.job = job
        self.task = task
        self.small_file_bytes = int(options.get(SMALL_FILE_BYTES, "0"))
        mode = options.get(TASK_RECORDS, self.task_records_default)
        if mode not in TASK_RECORD_MODES:
            raise CommitFailed(self.dest, f"{TASK_RECORDS}={mode!r}: use one of "
                                          f"{', '.join(TASK_RECORD_MODES)}")
        self.by_message = mode == "messages"
        self.puts_record = not self.by_message or self.keeps_record_put
        self.gets_fence = not self.by_message or self.keeps_fence_get
        self.rule = complete_rule(options, self.complete_default, self.dest)
        self.record_dir = join(self.dest, FENCE_DIR, job.job_id)
        self.commit_record = join(self.record_dir, "commit.json")
        self.marker = join(self.record_dir, "active")
        self.uploads: list[PendingCommit] = []  # this attempt's pending uploads
        #: the driver's: the task commit messages it accepted (with ``messages``)
        self.accepted: list[TaskRecord] = []
        self.won = False  # this attempt's task record is the task's record
        self._cleaned = False
        if task is not None:
            self.task_record = join(self.record_dir, "tasks", task_id(task) + ".json")
            self.staging = f"file:///tmp/fenced/{task.attempt_id}"

    # -- records -------------------------------------------------------------------------------

    def put_record(self, url: str, record: TaskRecord | JobRecord) -> bool:
        """PUT ``record`` if no record is there yet; False when another one is (412)."""
        try:
            self.fs.put(url, encode_json(record), if_none_match=self.fenced)
        except ModelStoreError as error:
            if error.code != "PreconditionFailed":
                raise
            return False
        return True

    def read_record(self, url: str) -> object | None:
        """The parsed record at ``url``, None if there is none."""
        try:
            return decode_json(self.fs.get(url), url)
        except ModelStoreError as error:
            if error.code != "NoSuchKey":
                raise
            return None

    def read_task_record(self, url: str) -> TaskRecord | None:
        """A task record; records are written only by this committer, so they are not
        validated (hence the cast), as the production committers trust their own records."""
        return cast(TaskRecord | None, self.read_record(url))

    def read_job_record(self) -> JobRecord | None:
        """The job commit record, if the job has committed (unvalidated, as above)."""
        return cast(JobRecord | None, self.read_record(self.commit_record))

    # -- job and task set-up -------------------------------------------------------------------

    def setup_job(self) -> None:
        """Refuse a store that cannot fence: without conditional PUT nothing here is safe."""
        capabilities = self.fs.capabilities()
        if not (capabilities.conditional_put and capabilities.multipart):
            raise CommitFailed(self.dest, "the store has no conditional PUT or no multipart "
                                          "upload: the fenced committer cannot run on it")
        self.fs.put(self.marker, b"")  # another job's cleanup leaves our uploads alone

    def setup_task(self) -> None:
        pass

    def write(self, relpath: str, data: bytes) -> None:
        """Start the file's upload to its final key (completed only by the job commit), or
        keep a small file on local disk until the task commit."""
        assert self.task is not None
        if len(data) < self.small_file_bytes:
            self.env.local().put(join(self.staging, relpath), data)
            return
        self.uploads.append(upload_pending(self.fs, join(self.dest, relpath), data,
                                           self.job.job_id, self.task.attempt_id))

    def needs_task_commit(self) -> bool:
        """Always: every task of a job leaves a record, so every task is fenced."""
        return True

    # -- task commit and abort -----------------------------------------------------------------

    def commit_task(self) -> TaskRecord | CommittedByAnother:
        """Upload the staged files, then PUT the task record, ``If-None-Match: *``, and read
        the job commit record (with ``messages``: neither, unless a candidate keeps one)."""
        assert self.task is not None
        local = self.env.local()
        staged = list_files(local, self.staging)
        for obj in staged:
            self.uploads.append(upload_pending(
                self.fs, join(self.dest, relative(obj.url, self.staging)), local.get(obj.url),
                self.job.job_id, self.task.attempt_id))
        delete_recursive(local, self.staging)
        record: TaskRecord = {"version": RECORD_VERSION, "jobId": self.job.job_id,
                  "task": task_id(self.task), "attempt": self.task.attempt_id,
                  "uploads": self.uploads}
        if self.puts_record and not self.put_record(self.task_record, record):
            winner = self.read_task_record(self.task_record)
            if winner is None:  # the job ended and removed the records meanwhile
                self.abort_uploads()
                raise CommitFailed(self.task_record, "the job has ended")
            if winner["attempt"] != self.task.attempt_id or not self.recognises_own:
                # (else: our own PUT, whose answer was lost)
                self.abort_uploads()
                return CommittedByAnother(winner["attempt"], winner)
        self.won = True  # (with messages: the driver decides; cleanup aborts a loser's)
        if not (self.gets_fence or (staged and self.keeps_late_fence_get)):
            return record
        job_record = self.read_job_record()
        accepted = None if job_record is None else job_record["tasks"].get(record["task"])
        if job_record is not None and (
                None if accepted is None else accepted.get("attempt")) != self.task.attempt_id:
            self.won = False
            self.abort_uploads()
            raise CommitFailed(self.task_record, "the job committed without this task")
        return record

    def abort_uploads(self) -> None:
        for upload in self.uploads:
            abort_pending(self.fs, upload)

    def abort_task(self) -> None:
        """Abort the attempt's uploads, unless its record won: then they are the task's."""
        if not self.won:
            self.abort_uploads()
        delete_recursive(self.env.local(), self.staging)

    # -- job commit ----------------------------------------------------------------------------

    def task_records(self) -> list[TaskRecord]:
        """Hadoop's protocol: list the task records (one per task: the winners)."""
        if not self.puts_record:  # none was written
            return []
        records = []
        for obj in list_files(self.fs, join(self.record_dir, "tasks")):
            record = self.read_task_record(obj.url)
            if record is not None:
                records.append(record)
        return records

    def commit_job(self, messages: list[TaskRecord | None] | None) -> None:
        """PUT the job commit record (the commit point), complete its uploads, write
        ``_SUCCESS``, clean up.  A record already there (an earlier attempt of this job
        committed, then its driver died) is rolled forward instead."""
        if messages is None and not self.puts_record:
            raise CommitFailed(self.record_dir, f"{TASK_RECORDS}=messages needs Spark's "
                               "protocol (job commit given the task commit messages): under "
                               "Hadoop's, no task record was written; set it to store")
        job_record = self.read_job_record()
        if job_record is None:
            records = ([m for m in messages if m is not None] if messages is not None
                       else self.task_records())
            job_record = {"version": RECORD_VERSION, "jobId": self.job.job_id,
                          "tasks": {r["task"]: r for r in records}}
            self.rule.check(self.fs, self.dest, _uploads(job_record))  # (check-first only)
            if not self.put_record(self.commit_record, job_record):
                job_record = self.read_job_record()
                assert job_record is not None
        uploads = _uploads(job_record)
        urls = self.rule.complete_all(uploads, self.commit_record, self.complete)
        files = {relative(url, self.dest): {"size": u["length"], "etag": u["etags"][0]}
                 for u, url in zip(uploads, urls, strict=True)}
        self.fs.put(join(self.dest, SUCCESS), encode_json({
            "name": SUCCESS_NAME, "committer": self.name, "jobId": self.job.job_id,
            "files": files, "success": True}))
        self._clean({join(self.dest, f) for f in files})

    def complete(self, upload: PendingCommit) -> str:
        """Complete one upload, as the rule says (:func:`~.fenced_complete.complete_one`)."""
        return complete_one(self.fs, upload, self.recognises_own, self.rule.if_none_match)

    def recover_task(self, task: TaskSpec) -> None:
        """Nothing to move: the task record's key names no job attempt."""

    def on_task_commit(self, message: TaskRecord) -> None:
        """The driver accepted a task's message (Spark's ``onTaskCommit``): with ``messages``
        keep it, so that abort knows the task's keys without a record.  Local: no request."""
        if self.by_message and self.keeps_accepted:
            self.accepted.append(message)

    # -- abort and cleanup ---------------------------------------------------------------------

    def abort_job(self) -> None:
        """Roll back: abort the job's uploads (see :meth:`abort_own_uploads`), delete its
        records.  A job whose commit record exists has committed and cannot be rolled back."""
        if self.read_job_record() is not None:
            raise CommitFailed(self.commit_record, "the job has committed: roll forward")
        self.abort_own_uploads(self.recorded_keys())
        delete_recursive(self.fs, self.record_dir)
        self._cleaned = True

    def cleanup_job(self) -> None:
        """After a commit or an abort that already cleaned, nothing; otherwise as the end of a
        job commit: abort the job's uncommitted uploads, delete the task records."""
        if not self._cleaned:
            self._clean(self.recorded_keys())

    def _clean(self, keys: set[str]) -> None:
        """Abort the job's uncommitted uploads, delete the task records and the marker.  The
        commit record stays: it is what refuses a late task commit."""
        self.abort_own_uploads(keys)
        delete_recursive(self.fs, join(self.record_dir, "tasks"))
        self.fs.delete(self.marker)
        self._cleaned = True

    def recorded_keys(self) -> set[str]:
        """The keys the job's task records name, and those of the messages the driver accepted
        (every attempt of a task writes the same)."""
        return {commit_url(u) for r in [*self.task_records(), *self.accepted]
                for u in r["uploads"]}

    def abort_own_uploads(self, keys: set[str]) -> None:
        """Abort every pending upload at one of ``keys``, and — when no other job is active
        under the destination — every other pending upload under it.  The uploads are listed
        before the other jobs' markers, so a job whose upload the listing saw was set up
        before it and its marker is seen."""
        uploads = self.fs.list_multipart_uploads(dir_prefix(self.dest))
        if any(u.url not in keys for u in uploads) and not self.other_job_active():
            keys = {u.url for u in uploads}
        for upload in uploads:
            if upload.url in keys:
                try:
                    self.fs.abort_multipart(upload.url, upload.upload_id)
                except ModelStoreError as error:
                    if error.code != "NoSuchUpload":
                        raise

    def other_job_active(self) -> bool:
        """Another fenced job whose uploads may lie under the destination has its marker: it
        is running.  That is a job anywhere in the destination's subtree (a job writing one
        partition of this job's table), found by one listing of the subtree, or a job on a
        directory above it (a job writing the whole table, some of its files in this job's
        partition), found by a listing of each ancestor's record area."""
        if any(_is_marker(o.url) and o.url != self.marker
               for o in list_files(self.fs, self.dest)):
            return True
        return any(_is_marker(o.url) for above in _ancestors(self.dest)
                   for o in list_files(self.fs, join(above, FENCE_DIR)))


def _uploads(job_record: JobRecord) -> list[PendingCommit]:
    return [u for record in job_record["tasks"].values() for u in record["uploads"]]


def _is_marker(url: str) -> bool:
    """``<dir>/_fenced/<jobId>/active``: a running fenced job's marker."""
    parts = url.split("/")
    return len(parts) >= 3 and parts[-1] == "active" and parts[-3] == FENCE_DIR


def _ancestors(url: str) -> list[str]:
    """The directories above ``url`` in its bucket, nearest first, the bucket itself last."""
    scheme, _, rest = url.rstrip("/").partition("://")
    parts = rest.split("/")
    return [f"{scheme}://{'/'.join(parts[:n])}" for n in range(len(parts) - 1, 0, -1)]


@dataclass(frozen=True)
class CommittedFile:
    size: int
    etag: str


class ReadableStore(Protocol):
    """All a reader of the record needs: GET (a store, or a snapshot of one)."""

    def get(self, url: str) -> bytes: ...


def committed_files(store: ReadableStore, dest: str) -> dict[str, CommittedFile]:
    """What a reader of the record sees: the files ``_SUCCESS`` names (none before a job
    committed).  Each PUT of ``_SUCCESS`` replaces the whole set at once."""
    try:
        data = store.get(join(dest, SUCCESS))
    except ModelStoreError as error:
        if error.code != "NoSuchKey":
            raise
        return {}
    files = json.loads(data).get("files", {})
    return {rel: CommittedFile(int(f["size"]), str(f["etag"])) for rel, f in files.items()}
