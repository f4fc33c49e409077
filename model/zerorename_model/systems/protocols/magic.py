"""The S3A magic committer (paper Section VI.A, seed 000), as fixed in Hadoop 3.3.

A write under ``dest/__magic/<jobAttemptId>/<taskAttemptId>/__base/<relpath>`` starts a
multipart upload to ``dest/<relpath>`` and saves a ``.pending`` description of it under the magic
path; task commit lists its attempt directory for ``.pending`` files and PUTs them as one
``<taskId>.pendingset`` into the job attempt directory; job commit lists the job attempt
directory for pendingsets (Hadoop protocol) and completes the uploads.  Every step that finds
work does so by LIST in the destination store, so the committer is only correct with consistent
listings (VIII.C): under ``s3-2018`` a lagging LIST silently drops a task's output.

Hadoop 3.5.0's magic differs in four ways the model has as options, set for the conformance
replay against hadoop-aws 3.5.0 and not in the paper's matrix: :data:`NEEDS_TASK_COMMIT_ALWAYS`,
:data:`PER_JOB_DIRECTORY`, :data:`DELETE_ATTEMPT_AFTER_COMMIT` and
:data:`~zerorename_model.systems.protocols.common.CLEANUP_ABORT_FAILS_ON_MISSING`.

Pendingsets are named by *task* ID and overwritten (the HADOOP-17258 fix): the last attempt to
commit wins, so a partitioned attempt that commits late can replace the accepted attempt's
pendingset when the job committer discovers work by listing (VIII.C's race, XIV.A.1).

Variants with production bugs reintroduced: ``magic+HADOOP-17258`` (a second attempt's task
commit fails "pendingset already exists"), ``magic+prefix-cleanup`` (cleanup lists uploads by
the bare string prefix, aborting ``dest10``'s uploads), ``magic+HADOOP-17112`` (the pending
commit's URI is not decoded, so paths with spaces fail in job commit).  ``magic+take-back`` is
zerorename's magic committer: a job that fails before ``_SUCCESS`` takes back its completed files
(:mod:`~zerorename_model.systems.protocols.takeback`).
"""

from __future__ import annotations

import contextlib

from zerorename_model.engine.errors import ActorCrashed, ModelStoreError, RunAborted
from zerorename_model.engine.scenario import CommitterEnv, JobSpec, TaskSpec
from zerorename_model.systems.protocols import ModelCommitter, register
from zerorename_model.systems.protocols.common import (
    BASE,
    MAGIC,
    MAGIC_JOB_PREFIX,
    PENDING,
    PENDINGSET,
    CommitFailed,
    PendingCommit,
    PendingSet,
    abort_pending,
    abort_uploads_under,
    cleanup_abort_fails,
    complete_all,
    delete_recursive,
    dir_prefix,
    encode_json,
    exists_dir,
    join,
    list_children,
    list_files,
    load_pending_set,
    pending_set,
    raise_if_gone,
    relative,
    success_data,
    task_id,
    upload_pending,
)
from zerorename_model.systems.protocols.takeback import Publishes

#: Hadoop 3.5.0's ``needsTaskCommit`` (set to "true"): every task attempt commits, without a
#: LIST of its attempt directory ("a dir was created here in setup").  Absent: the paper's
#: procedure, ``exists(fs, taskAttemptPath)``.  A model option (Hadoop has no such key); the
#: conformance run against hadoop-aws 3.5.0 sets it (issue 45)
NEEDS_TASK_COMMIT_ALWAYS = "zerorename.model.magic.needs-task-commit-always"
#: Hadoop 3.5.0's magic directory is the job's own: a job's work lies under
#: ``dest/__magic_job-<jobUUID>/job-<jobUUID>/<appAttempt>/`` (task attempts in its ``tasks/``),
#: and its clean-up deletes that directory only, not another job's.  Absent: the paper's (and
#: Hadoop 3.3's) shared ``dest/__magic/<jobAttempt>/``, deleted whole by any job's clean-up.
#: The job's UUID is its job ID here (the model's magic names a job by it).  A model option;
#: the conformance run against hadoop-aws 3.5.0 sets it (issue 45, s3a-findings.md finding 7)
PER_JOB_DIRECTORY = "zerorename.model.magic.per-job-directory"
#: Hadoop 3.5.0's ``commitTask`` deletes the task attempt directory when it ends, in a
#: ``finally`` ("so there's no possibility of a second attempt"): after a successful commit, and
#: after a failed or killed one too (an interruption runs the ``finally``; a crashed process
#: does not), quietly (a failed delete is ignored).  A killed attempt's ``abortTask`` then finds
#: no ``.pending`` file and aborts nothing: its uploads are left to the job's clean-up.  Absent:
#: the paper's procedure, which keeps the attempt directory.  A model option; the conformance
#: run against hadoop-aws 3.5.0 sets it (issue 45, s3a-findings.md)
DELETE_ATTEMPT_AFTER_COMMIT = "zerorename.model.magic.delete-attempt-after-commit"


@register("magic")
class MagicCommitter(Publishes, ModelCommitter):
    name = "magic"
    decode_uri = True

    def __init__(self, env: CommitterEnv, job: JobSpec, task: TaskSpec | None,
                 options: dict[str, str]) -> None:
        self.fs = env.store
        self.dest = job.dest
        self.job = job
        self.task = task
        if options.get(PER_JOB_DIRECTORY, "false").lower() == "true":
            # CommitUtilsWithMR (3.5.0): __magic_job-<uuid>/job-<uuid>/<attempt>/tasks/<ta>
            self.magic_path = join(self.dest, MAGIC_JOB_PREFIX + job.job_id)
            self.job_attempt_path = join(self.magic_path, f"job-{job.job_id}",
                                         f"{job.attempt:02d}")
            tasks_path = join(self.job_attempt_path, "tasks")
        else:
            self.magic_path = join(self.dest, MAGIC)
            self.job_attempt_path = join(self.magic_path, f"{job.job_id}_{job.attempt:02d}")
            tasks_path = self.job_attempt_path
        if task is not None:
            self.task_attempt_path = join(tasks_path, task.attempt_id)
        self._cleaned = False
        self._listed: list[str] | None = None  # the attempt directory, as the commit listed it
        self.always_commit = options.get(NEEDS_TASK_COMMIT_ALWAYS, "false").lower() == "true"
        self.abort_fails_on_missing = cleanup_abort_fails(options)
        self.delete_attempt_after_commit = options.get(
            DELETE_ATTEMPT_AFTER_COMMIT, "false").lower() == "true"

    # -- job and task set-up -------------------------------------------------------------------

    def setup_job(self) -> None:
        """Procedure MagicCommitter.setupJob: ``makedirs(fs, jobAttemptPath)``, a no-op on
        implicit directories."""

    def setup_task(self) -> None:
        """Procedure MagicCommitter.setupTask: ``makedirs(fs, taskAttemptPath)``, likewise."""

    def write(self, relpath: str, data: bytes) -> None:
        """A file created under ``__magic/.../__base/relpath`` becomes a delayed-completion
        upload to ``dest/relpath`` plus a ``.pending`` file (the 0-byte marker is skipped)."""
        assert self.task is not None
        commit = upload_pending(self.fs, join(self.dest, relpath), data, self.job.job_id,
                                self.task.attempt_id)
        self.fs.put(join(self.task_attempt_path, BASE, relpath) + PENDING, encode_json(commit))

    def needs_task_commit(self) -> bool:
        """Function MagicCommitter.needsTaskCommit: ``exists(fs, taskAttemptPath)``; with
        :data:`NEEDS_TASK_COMMIT_ALWAYS`, true without a request (Hadoop 3.5.0)."""
        if self.always_commit:
            return True
        return exists_dir(self.fs, self.task_attempt_path)

    # -- task commit and abort -----------------------------------------------------------------

    def pending_files(self) -> list[PendingCommit]:
        """``for f in listFiles(fs, taskAttemptPath, recursive): loadPendingFile(fs, f)``."""
        commits: list[PendingCommit] = []
        listed = list_files(self.fs, self.task_attempt_path)
        self._listed = [obj.url for obj in listed]
        for obj in listed:
            if obj.url.endswith(PENDING):
                commits += load_pending_set(self.fs.get(obj.url), obj.url)["commits"]
        return commits

    def pendingset_path(self) -> str:
        assert self.task is not None
        return join(self.job_attempt_path, task_id(self.task) + PENDINGSET)

    def commit_task(self) -> PendingSet:
        """Procedure MagicCommitter.commitTask: merge the attempt's ``.pending`` files into
        one PendingSet and PUT it as ``jobAttemptPath/taskId.pendingset`` (one atomic PUT)."""
        assert self.task is not None
        if not self.delete_attempt_after_commit:
            pendingset = pending_set(self.job.job_id, self.task.attempt_id,
                                     self.pending_files())
            self.save_pending_set(self.pendingset_path(), pendingset)
            return pendingset
        try:
            pendingset = pending_set(self.job.job_id, self.task.attempt_id,
                                     self.pending_files())
            self.save_pending_set(self.pendingset_path(), pendingset)
        except (ActorCrashed, RunAborted):
            raise  # the process is gone (or the run abandoned): no finally runs
        except BaseException:
            self.delete_attempt_quietly()  # a failure or a kill: S3A's finally runs
            raise
        self.delete_attempt_quietly()
        return pendingset

    def delete_attempt_quietly(self) -> None:
        """``deleteTaskAttemptPathQuietly``: a recursive delete of the task attempt directory,
        a store failure ignored (:data:`DELETE_ATTEMPT_AFTER_COMMIT`).  Only the attempt
        writes there, so once the commit has listed it the delete is one bulk DELETE of what
        that listing showed (S3A lists again; the replay lets those reads run); before that, a
        LIST and the DELETE."""
        with contextlib.suppress(ModelStoreError):
            if self._listed is None:
                delete_recursive(self.fs, self.task_attempt_path)
            else:
                self.fs.delete_many([self.task_attempt_path.rstrip("/"), *self._listed])

    def save_pending_set(self, path: str, pendingset: PendingSet) -> None:
        """Overwrite any pendingset of an earlier attempt (HADOOP-17258 fix)."""
        self.fs.put(path, encode_json(pendingset))

    def abort_task(self) -> None:
        """Procedure MagicCommitter.abortTask: abort the upload of every ``.pending`` file."""
        for commit in self.pending_files():
            abort_pending(self.fs, commit)

    # -- job commit and abort ------------------------------------------------------------------

    def load_pending_sets(self) -> list[PendingSet]:
        """``for f in listFiles(fs, jobAttemptPath): loadPendingSet(fs, f)``."""
        files, _dirs = list_children(self.fs, self.job_attempt_path)
        return [load_pending_set(self.fs.get(f.url), f.url) for f in files
                if f.url.endswith(PENDINGSET)]

    def commit_job(self, messages: list[PendingSet | None] | None) -> None:
        """Procedure MagicCommitter.commitJob: complete every upload of every pendingset (the
        listed ones, or exactly the accepted tasks' messages under the Spark protocol), write
        ``_SUCCESS``, clean up.  A failed completion reverts the completed ones."""
        sets = ([m for m in messages if m is not None] if messages is not None
                else self.load_pending_sets())
        commits = [c for s in sets for c in s["commits"]]
        done = complete_all(self.fs, commits, decode=self.decode_uri)
        names = [relative(url, self.dest) for url in done]
        self.publish(done, success_data(self.name, self.job.job_id, names))

    def uploads_prefix(self) -> str:
        return dir_prefix(self.dest)

    def abort_job(self) -> None:
        """Procedure MagicCommitter.abortJob: ``for f in listPendingUploads(destPath):
        abortUpload(f)``; ``.pending`` files cannot be trusted to name every upload.  With
        :data:`~zerorename_model.systems.protocols.common.CLEANUP_ABORT_FAILS_ON_MISSING`,
        Hadoop 3.5.0's: abortJob is the job clean-up, an upload gone before its abort fails
        it (after the magic directory is deleted)."""
        if self.abort_fails_on_missing:
            self.clean_up(strict=True)
            return
        abort_uploads_under(self.fs, self.uploads_prefix())

    def clean_up(self, *, strict: bool) -> None:
        """The job cleanup (``cleanup_job`` and ``commit_cleanup``, once: :class:`Publishes`):
        abort every outstanding upload under the destination, delete ``__magic`` (with
        :data:`PER_JOB_DIRECTORY`, the job's own magic directory); ``strict``: then fail if an
        upload was gone before its abort (Hadoop 3.5.0)."""
        gone = abort_uploads_under(self.fs, self.uploads_prefix())
        delete_recursive(self.fs, self.magic_path)
        self._cleaned = True
        if strict:
            raise_if_gone(gone)


@register("magic+HADOOP-17258")
class PendingsetExistsMagicCommitter(MagicCommitter):
    """Before HADOOP-17258: the pendingset was created without overwrite (S3A: a HEAD, then the
    PUT), so a second attempt of a task whose first attempt had committed failed, and so did
    every further attempt (XIV.A.1)."""

    def save_pending_set(self, path: str, pendingset: PendingSet) -> None:
        if self.fs.head(path) is not None:
            raise CommitFailed(path, "pendingset already exists")
        self.fs.put(path, encode_json(pendingset))


@register("magic+prefix-cleanup")
class PrefixCleanupMagicCommitter(MagicCommitter):
    """Cleanup lists uploads by the string prefix ``dest``: cleaning up ``/output/dataset1``
    also aborts the pending work of ``/output/dataset10`` (VIII, "over-aggressive cleanup")."""

    def uploads_prefix(self) -> str:
        return self.dest.rstrip("/")


@register("magic+HADOOP-17112")
class UndecodedUriMagicCommitter(MagicCommitter):
    """HADOOP-17112: the pending commit's URI was not decoded when read back, so a path with a
    space names a key (``%20``) that has no upload, and job commit fails (XIV.C.4)."""

    decode_uri = False


@register("magic+take-back")
class TakeBackMagicCommitter(MagicCommitter):
    """zerorename's fix: a failed job takes back its completed files; a published job stays
    committed when its cleanup fails (:mod:`~zerorename_model.systems.protocols.takeback`)."""

    take_back = True
