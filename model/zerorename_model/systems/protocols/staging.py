"""The S3A staging committers, "directory" and "partitioned" (paper Section VI.1, seed 002).

Tasks write to their private local disk; task commit uploads every file as an *uncompleted*
multipart upload to its final key and saves the list (a PendingSet) on the consistent cluster
filesystem through a wrapped v1 committer; job commit loads the pendingsets and completes the
uploads.  Nothing about the destination's listings matters, which is why the paper (VIII.B)
argues staging is correct even on the eventually consistent S3 of 2018.

Cluster layout: ``<tmp>/<user>/<jobUUID>/staging-uploads`` is the wrapped committer's output, so
a committed task is ``.../staging-uploads/_temporary/<jobAttempt>/<taskId>`` (a file).  The job
UUID must be unique per job: SPARK-33402 gave two jobs launched in the same second one job ID,
and a staging path built from the job ID alone made them share this directory
(``directory+SPARK-33402``).  ``directory+take-back`` and ``partitioned+take-back`` are
zerorename's: a job that fails before ``_SUCCESS`` takes back its completed files
(:mod:`~zerorename_model.systems.protocols.takeback`).
"""

from __future__ import annotations

import hashlib

from zerorename.store import ObjectInfo, Store
from zerorename_model.engine.scenario import CommitterEnv, JobSpec, TaskSpec
from zerorename_model.systems.protocols import ModelCommitter, register
from zerorename_model.systems.protocols.common import (
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
    hidden,
    join,
    list_files,
    load_pending_set,
    pending_set,
    raise_if_gone,
    relative,
    split_url,
    success_data,
    upload_pending,
)
from zerorename_model.systems.protocols.takeback import Publishes
from zerorename_model.systems.protocols.v1 import V1Committer

CONFLICT_MODE = "fs.s3a.committer.staging.conflict-mode"
CONFLICT_MODES = ("fail", "append", "replace")
CLUSTER_TMP = "hdfs://cluster/tmp/staging/user"


def staging_job_uuid(job: JobSpec) -> str:
    """A per-job unique ID (Spark's ``spark.sql.sources.writeJobUUID`` after SPARK-33402):
    the job ID alone is not unique, so the destination and job number are mixed in."""
    digest = hashlib.sha1(f"{job.dest}|{job.index}".encode()).hexdigest()[:8]
    return f"{job.job_id}-{digest}"


@register("directory")
class DirectoryStagingCommitter(Publishes, ModelCommitter):
    name = "directory"

    def __init__(self, env: CommitterEnv, job: JobSpec, task: TaskSpec | None,
                 options: dict[str, str]) -> None:
        self.mode = options.get(CONFLICT_MODE, "append").lower()
        if self.mode not in CONFLICT_MODES:  # rejected at construction, as Hadoop does
            raise ValueError(f"unknown {CONFLICT_MODE}: {self.mode.upper()}")
        self.env = env
        self.fs = env.store
        self.dest = job.dest
        self.job = job
        self.task = task
        self.uuid = options.get("fs.s3a.committer.uuid") or self.job_uuid()
        self.cluster_job_dir = join(CLUSTER_TMP, self.uuid)
        wrapped_job = JobSpec(join(self.cluster_job_dir, "staging-uploads"), job.job_id,
                              job.attempt, job.index)
        wrapped_task = None if task is None else TaskSpec(wrapped_job, task.task_id, task.attempt)
        self.wrapped = V1Committer(env, wrapped_job, wrapped_task, options, fs=env.cluster,
                                   output_is_file=True)
        if task is not None:
            self.local_attempt_path = f"file:///tmp/s3a/{self.uuid}/{task.attempt_id}"
        self._cleaned = False
        self.abort_fails_on_missing = cleanup_abort_fails(options)

    def job_uuid(self) -> str:
        return staging_job_uuid(self.job)

    def local(self) -> Store:
        return self.env.local()

    # -- job and task set-up -------------------------------------------------------------------

    def setup_job(self) -> None:
        """Procedure StagingCommitter.setupJob: the wrapped v1 committer is set up on the
        cluster job attempt path.  The directory committer's "fail" conflict mode is checked
        here and only here (HADOOP-15469)."""
        if self.mode == "fail" and exists_dir(self.fs, self.dest):
            raise CommitFailed(self.dest, "destination exists (conflict mode fail)")
        self.wrapped.setup_job()

    def setup_task(self) -> None:
        """Procedure StagingCommitter.setupTask: a unique local attempt path; wrapped setup."""
        self.wrapped.setup_task()

    def write(self, relpath: str, data: bytes) -> None:
        """``getWorkPath`` is on the local filesystem: writes are private and not steps."""
        self.local().put(join(self.local_attempt_path, relpath), data)

    def local_files(self) -> list[ObjectInfo]:
        """The task's staged files, without hidden names (they are not output)."""
        return [o for o in list_files(self.local(), self.local_attempt_path)
                if not hidden(relative(o.url, self.local_attempt_path))]

    def needs_task_commit(self) -> bool:
        """Function needsTaskCommit: ``exists(localfs, localAttemptPath)``."""
        return bool(self.local_files())

    # -- task commit and abort -----------------------------------------------------------------

    def check_task_conflicts(self, relpaths: list[str]) -> None:
        """Task-side conflict check: none for the directory committer."""

    def commit_task(self) -> PendingSet:
        """Procedure StagingCommitter.commitTask: upload every local file to a pending commit at
        its final key, save the PendingSet at the cluster task attempt path, then let the
        wrapped v1 committer rename it to the committed task path.  A failed upload aborts the
        uploads already started (TestStagingCommitter)."""
        assert self.task is not None
        files = self.local_files()
        relpaths = [relative(o.url, self.local_attempt_path) for o in files]
        self.check_task_conflicts(relpaths)
        commits: list[PendingCommit] = []
        try:
            for obj, rel in zip(files, relpaths, strict=True):
                data = self.local().get(obj.url)
                commits.append(upload_pending(self.fs, join(self.dest, rel), data,
                                              self.uuid, self.task.attempt_id))
        except Exception:
            for commit in commits:
                abort_pending(self.fs, commit)
            raise
        pendingset = pending_set(self.uuid, self.task.attempt_id, commits)
        self.env.cluster.put(self.wrapped.task_attempt_path, encode_json(pendingset))
        self.wrapped.commit_task()
        delete_recursive(self.local(), self.local_attempt_path)
        return pendingset

    def abort_task(self) -> None:
        """Procedure StagingCommitter.abortTask: delete the staged data; wrapped abortTask."""
        delete_recursive(self.local(), self.local_attempt_path)
        self.wrapped.abort_task()

    # -- job commit ----------------------------------------------------------------------------

    def load_pending_sets(self) -> list[PendingSet]:
        """``for f in listFiles(clusterfs, clusterJobAttemptPath): loadPendingSet(f)``."""
        sets = []
        for path, is_dir in self.wrapped.committed_tasks():
            if not is_dir:
                sets.append(load_pending_set(self.env.cluster.get(path), path))
        return sets

    def commit_job(self, messages: list[PendingSet | None] | None) -> None:
        """Procedure StagingCommitter.commitJob: load the pending sets (from the cluster
        filesystem, or exactly the accepted tasks' messages under the Spark protocol), resolve
        conflicts, complete every upload (reverting on failure), write ``_SUCCESS``, clean up."""
        sets = ([m for m in messages if m is not None] if messages is not None
                else self.load_pending_sets())
        commits = [c for s in sets for c in s["commits"]]
        self.pre_commit_job(commits)
        done = complete_all(self.fs, commits)
        names = [relative(url, self.dest) for url in done]
        self.publish(done, success_data(self.name, self.uuid, names))

    def pre_commit_job(self, commits: list[PendingCommit]) -> None:
        """``checkForConflicts``: "replace" deletes the destination before the uploads are
        completed; "fail" was checked in setup_job; "append" does nothing."""
        if self.mode == "replace":
            delete_recursive(self.fs, self.dest)

    def abort_job(self) -> None:
        """Procedure StagingCommitter.abortJob: abort every upload the committed pending sets
        list, then the wrapped committer's abortJob.  With
        :data:`~zerorename_model.systems.protocols.common.CLEANUP_ABORT_FAILS_ON_MISSING`,
        Hadoop 3.5.0's: then the job clean-up, which an upload gone before its abort fails."""
        for pendingset in self.load_pending_sets():
            for commit in pendingset["commits"]:
                abort_pending(self.fs, commit)
        self.wrapped.abort_job()
        if self.abort_fails_on_missing:
            self.clean_up(strict=True)

    def clean_up(self, *, strict: bool) -> None:
        """Procedure StagingCommitter.cleanupJob (``cleanup_job`` and ``commit_cleanup``, once:
        :class:`Publishes`): abort every upload pending under the destination *directory*,
        delete the job's cluster staging directory (HADOOP-18793); local directories of other
        hosts are out of reach, as in Hadoop.  ``strict``: then fail if an upload was gone
        before its abort (Hadoop 3.5.0)."""
        gone = abort_uploads_under(self.fs, dir_prefix(self.dest))
        delete_recursive(self.env.cluster, self.cluster_job_dir)
        self._cleaned = True
        if strict:
            raise_if_gone(gone)


@register("partitioned")
class PartitionedStagingCommitter(DirectoryStagingCommitter):
    """Conflict resolution is scoped to the partition directories the job writes to (VI.1,
    "Enhancing conflict resolution"); files at the root are always appended."""

    name = "partitioned"

    @staticmethod
    def partitions(relpaths: list[str]) -> list[str]:
        return sorted({rel.rsplit("/", 1)[0] for rel in relpaths if "/" in rel})

    def setup_job(self) -> None:
        """No destination-wide check: the dataset is expected to exist."""
        self.wrapped.setup_job()

    def check_task_conflicts(self, relpaths: list[str]) -> None:
        """"fail" is enforced at task commit, against the task's own partitions only
        (TestStagingPartitionedTaskCommit)."""
        if self.mode != "fail":
            return
        for partition in self.partitions(relpaths):
            if exists_dir(self.fs, join(self.dest, partition)):
                raise CommitFailed(join(self.dest, partition),
                                   "partition exists (conflict mode fail)")

    def pre_commit_job(self, commits: list[PendingCommit]) -> None:
        """"replace" deletes every partition the pending commits write into, and nothing else
        (TestStagingPartitionedJobCommit)."""
        if self.mode != "replace":
            return
        bucket = split_url(self.dest)[0]
        scheme = self.dest.split("://", 1)[0]
        urls = [f"{scheme}://{bucket}/{c['destinationKey']}" for c in commits]
        for partition in self.partitions([relative(u, self.dest) for u in urls]):
            delete_recursive(self.fs, join(self.dest, partition))


@register("directory+SPARK-33402")
class SameJobIdStagingCommitter(DirectoryStagingCommitter):
    """SPARK-33402 reintroduced: the cluster staging path is built from the job ID alone, so
    two jobs started in the same second share it (paper XIV.C.2)."""

    def job_uuid(self) -> str:
        return self.job.job_id


@register("directory+take-back")
class TakeBackDirectoryCommitter(DirectoryStagingCommitter):
    """zerorename's fix (:mod:`~zerorename_model.systems.protocols.takeback`)."""

    take_back = True


@register("partitioned+take-back")
class TakeBackPartitionedCommitter(PartitionedStagingCommitter):
    """zerorename's fix (:mod:`~zerorename_model.systems.protocols.takeback`)."""

    take_back = True
