"""Amazon's EMRFS S3-optimized committer (paper Section XII.C), as inferred from its
documentation and the 2019 article (the source is not public).

* ``write``: start a multipart upload to the file's *final* key and upload the data as its part;
  nothing is visible yet, so in-progress and speculative attempts are invisible.
* task commit: complete the attempt's uploads, one POST per file.  The files become visible in
  the task commit, not the job commit, and a failure part-way leaves some of them visible: the
  task commit is not atomic, and a retried attempt commits into a destination of unknown state.
* task abort: abort the attempt's uploads.
* job commit: write ``_SUCCESS``, then list and abort every incomplete upload under ``dest/``
  (work of attempts that never committed).
* job abort: abort the incomplete uploads; files completed by committed tasks stay visible,
  because nothing recorded which they are.
* recovery: a committed task's files are already complete at their final keys, so a restarted
  job attempt has nothing to redo for it (``recover_task`` is a no-op).
"""

from __future__ import annotations

from zerorename_model.engine.scenario import CommitterEnv, JobSpec, TaskSpec
from zerorename_model.systems.protocols import ModelCommitter, register
from zerorename_model.systems.protocols.common import (
    SUCCESS,
    PendingCommit,
    TaskReport,
    abort_pending,
    abort_uploads_under,
    complete_pending,
    dir_prefix,
    join,
    relative,
    success_data,
    upload_pending,
)


@register("emr", supports_recovery=True, visible_before_job_commit=True)
class EMRCommitter(ModelCommitter):
    def __init__(self, env: CommitterEnv, job: JobSpec, task: TaskSpec | None,
                 options: dict[str, str]) -> None:
        self.fs = env.store
        self.job = job
        self.task = task
        self.dest = job.dest
        self.pending: list[PendingCommit] = []  # held in the worker's memory, as EMR does

    # -- task side -------------------------------------------------------------------------------

    def setup_task(self) -> None:
        pass

    def write(self, relpath: str, data: bytes) -> None:
        assert self.task is not None
        url = join(self.dest, relpath)
        self.pending.append(upload_pending(self.fs, url, data, self.job.job_id,
                                           self.task.attempt_id))

    def needs_task_commit(self) -> bool:
        return bool(self.pending)

    def commit_task(self) -> TaskReport:
        """Complete every upload of the attempt: one visible file per POST, not atomic."""
        assert self.task is not None
        files = [relative(complete_pending(self.fs, commit), self.dest)
                 for commit in self.pending]
        self.pending = []
        return {"attempt": self.task.attempt_id, "files": files}

    def abort_task(self) -> None:
        for commit in self.pending:
            abort_pending(self.fs, commit)
        self.pending = []

    # -- job side --------------------------------------------------------------------------------

    def setup_job(self) -> None:
        pass

    def recover_task(self, task: TaskSpec) -> None:
        """Nothing to do: the task's files were completed at their final keys."""

    def commit_job(self, messages: list[TaskReport | None] | None) -> None:
        files = sorted(f for m in messages or [] if m for f in m["files"])
        self.fs.put(join(self.dest, SUCCESS), success_data("emr", self.job.job_id, files))
        abort_uploads_under(self.fs, dir_prefix(self.dest))

    def abort_job(self) -> None:
        abort_uploads_under(self.fs, dir_prefix(self.dest))

    def cleanup_job(self) -> None:
        pass  # commit_job and abort_job already aborted what was pending
