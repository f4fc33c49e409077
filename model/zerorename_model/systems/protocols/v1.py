"""Hadoop FileOutputCommitter, algorithm v1 (paper Section III.B).

Task commit renames the task attempt directory to the committed-task directory; job commit
merges every committed-task directory into the destination (``merge_paths_v1``).  Correct where
rename is atomic and listings are consistent (HDFS, ABFS).  On S3 the rename is S3A's
copy-and-delete of whatever a LIST shows, so under ``s3-2018`` a lagging listing makes
``needs_task_commit`` answer "no data" or a rename skip files: committed output is lost.

Layout (Hadoop's, manifest_fileoutput_peer_tests.md Part A)::

    dest/_temporary/<jobAttempt>/_temporary/<taskAttemptId>/...   task attempt path
    dest/_temporary/<jobAttempt>/<taskId>/...                     committed task path

The staging committers reuse this class on the cluster filesystem (``wrapped committer``, paper
Section VI), where a task's whole output is one pendingset *file*: ``output_is_file``.
"""

from __future__ import annotations

from zerorename.store import Store
from zerorename_model.engine.scenario import CommitterEnv, JobSpec, TaskSpec
from zerorename_model.systems.protocols import ModelCommitter, register
from zerorename_model.systems.protocols.common import (
    SUCCESS,
    TEMPORARY,
    delete_file,
    delete_recursive,
    exists_dir,
    hidden,
    join,
    list_children,
    name_of,
    rename_or_copy,
    stat,
    task_id,
)


@register("v1", supports_recovery=True, takes_messages=False)
class V1Committer(ModelCommitter):
    def __init__(self, env: CommitterEnv, job: JobSpec, task: TaskSpec | None,
                 options: dict[str, str], *, fs: Store | None = None,
                 output_is_file: bool = False) -> None:
        self.fs = fs if fs is not None else env.store
        self.dest = job.dest
        self.job = job
        self.task = task
        self.output_is_file = output_is_file
        self.job_attempt_path = self.attempt_path(job.attempt)
        if task is not None:
            self.task_attempt_path = join(self.job_attempt_path, TEMPORARY, task.attempt_id)
            self.task_committed_path = join(self.job_attempt_path, task_id(task))
        self._cleaned = False

    def attempt_path(self, attempt: int) -> str:
        """``jobAttemptPath <- destPath/_temporary/jobAttemptId``."""
        return join(self.dest, TEMPORARY, str(attempt))

    # -- job and task set-up -------------------------------------------------------------------

    def setup_job(self) -> None:
        """Procedure setupJob: ``mkdir(fs, jobAttemptPath)``; directories are implicit in
        the model's stores, so there is nothing to write."""

    def setup_task(self) -> None:
        """Procedure setupTask: ``taskAttemptPath <- jobAttemptPath/taskAttemptId``; the
        directory is created on demand by the first write."""

    def write(self, relpath: str, data: bytes) -> None:
        self.fs.put(join(self.task_attempt_path, relpath), data)

    # -- task commit ---------------------------------------------------------------------------

    def _attempt_exists(self) -> bool:
        if self.output_is_file:
            return self.fs.head(self.task_attempt_path) is not None
        return exists_dir(self.fs, self.task_attempt_path)

    def _delete(self, path: str) -> None:
        if self.output_is_file:
            delete_file(self.fs, path)
        else:
            delete_recursive(self.fs, path)

    def needs_task_commit(self) -> bool:
        """Function needsTaskCommit: ``exists(fs, taskAttemptPath)``; "somewhere where any
        eventual consistency of object listings ... can generate a false negative" (III.B)."""
        return self._attempt_exists()

    def commit_task(self) -> dict[str, str]:
        """Procedure commitTask: if the attempt path exists, delete the committed task path and
        rename the attempt path onto it (O(1) and atomic on a real filesystem only)."""
        assert self.task is not None
        if self._attempt_exists():
            self._delete(self.task_committed_path)
            rename_or_copy(self.fs, self.task_attempt_path, self.task_committed_path,
                           directory=not self.output_is_file)
        return {"task": task_id(self.task), "attempt": self.task.attempt_id}

    def abort_task(self) -> None:
        """Procedure abortTask: ``delete(fs, taskAttemptPath, recursive)``."""
        self._delete(self.task_attempt_path)

    # -- job commit ----------------------------------------------------------------------------

    def committed_tasks(self) -> list[tuple[str, bool]]:
        """``listFiles(fs, jobAttemptPath)``, excluding the hidden ``_temporary`` of attempts:
        (path, is_directory) of every committed task."""
        files, dirs = list_children(self.fs, self.job_attempt_path)
        found = [(d, True) for d in dirs] + [(f.url, False) for f in files]
        return sorted((p, d) for p, d in found if not hidden(name_of(p)))

    def commit_job(self, messages: list[object] | None) -> None:
        """Procedure commitJob: merge every committed task into the destination, touch
        ``_SUCCESS``, delete ``_temporary``.  The Hadoop job committer is not told which tasks
        committed (III.D), so ``messages`` are ignored and the listing decides."""
        for path, is_dir in self.committed_tasks():
            self.merge_paths_v1(path, self.dest, src_is_dir=is_dir)
        self.fs.put(join(self.dest, SUCCESS), b"")
        self.cleanup_job()

    def merge_paths_v1(self, src: str, dest: str, *, src_is_dir: bool) -> None:
        """Procedure mergePathsV1: a depth-first overwrite of the destination tree by the source
        tree; whole directories are renamed where the destination has none (III.B)."""
        kind = stat(self.fs, dest)
        if not src_is_dir:
            if kind is not None:
                delete_recursive(self.fs, dest)
            rename_or_copy(self.fs, src, dest)
        elif kind == "file":
            delete_recursive(self.fs, dest)
            rename_or_copy(self.fs, src, dest, directory=True)
        elif kind == "dir":
            files, dirs = list_children(self.fs, src)
            for f in files:
                self.merge_paths_v1(f.url, join(dest, name_of(f.url)), src_is_dir=False)
            for d in dirs:
                self.merge_paths_v1(d, join(dest, name_of(d)), src_is_dir=True)
        else:
            rename_or_copy(self.fs, src, dest, directory=True)

    def abort_job(self) -> None:
        """Procedure v1.abortJob: ``delete(fs, jobAttemptPath, recursive)``."""
        delete_recursive(self.fs, self.job_attempt_path)

    def cleanup_job(self) -> None:
        """Procedure cleanupJob: ``delete(fs, destPath/_temporary, recursive)`` (once: job
        commit already runs it, as FileOutputCommitter.commitJob does)."""
        if not self._cleaned:
            delete_recursive(self.fs, join(self.dest, TEMPORARY))
            self._cleaned = True

    # -- job recovery --------------------------------------------------------------------------

    def recover_task(self, task: TaskSpec) -> None:
        """Procedure recoverTask (III.B "Job Recovery"): the previous job attempt's committed
        task path is moved under this attempt's ``jobAttemptPath``; only in-progress work is
        lost."""
        if self.job.attempt == 0:
            raise ValueError("cannot recover task output for the first job attempt")
        previous = join(self.attempt_path(self.job.attempt - 1), task_id(task))
        current = join(self.job_attempt_path, task_id(task))
        if stat(self.fs, previous) is not None:
            rename_or_copy(self.fs, previous, current, directory=not self.output_is_file)
