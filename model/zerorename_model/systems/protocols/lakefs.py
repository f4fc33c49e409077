"""The lakeFS output committer proposed in seed 003 ("branch out, prepare the desired output,
and merge back in as part of the HOC commit"), over :mod:`zerorename_model.systems.lakefs_store`.

* job setup: create the job branch from ``main`` (overwrite mode also deletes, on the branch,
  everything under the destination).  Its name is predictable from the job ID, the destination
  and the job's index (which stands in for Spark's write-job UUID, so two jobs that got the same
  ID, SPARK-33402, still get different branches).  A restarted job attempt reuses the branch.
* task setup: create a task-attempt branch from the job branch; writes go there.
* task commit: merge the attempt branch into the job branch, claiming the task, in one atomic
  lakeFS merge; then drop the attempt branch.  The first attempt to merge a task wins: a later
  one (a partitioned attempt the driver gave up on) fails instead of replacing its output.  The
  price: an attempt that crashes after its merge but before reporting success leaves the task
  claimed, so the retry fails and the job fails, safely (v1 instead lets the last rename win,
  which is how a partitioned attempt contaminates its output).
* task abort: drop the attempt branch.
* job commit: write ``_SUCCESS`` on the job branch (the proposal keeps it "as a courtesy", and it
  makes every two writers of one destination conflict), then merge the job branch into ``main``:
  the whole output appears at once, or, if ``main`` changed under the same paths since the
  branch was created, the merge fails with a conflict and nothing appears.
* job abort and cleanup: drop the job branch and its attempt branches.
* recovery: committed tasks live on the job branch, which outlives the job attempt.  The
  restarted attempt fences the branch with its attempt number: claims of tasks it did not
  recover are released (their output removed from the branch), and merges from attempts of the
  previous job attempt are refused from then on.
"""

from __future__ import annotations

import hashlib

from zerorename_model.engine.scenario import CommitterEnv, JobSpec, TaskSpec
from zerorename_model.systems.lakefs_store import MAIN, LakeFS
from zerorename_model.systems.protocols import ModelCommitter, register
from zerorename_model.systems.protocols.common import (
    SUCCESS,
    CommitFailed,
    TaskReport,
    split_url,
    success_data,
)

MODE = "fs.lakefs.committer.mode"  # "append" (keep what main holds) or "overwrite"


def job_branch(job: JobSpec) -> str:
    digest = hashlib.sha256(job.dest.encode()).hexdigest()[:8]
    return f"spark-{job.job_id}-{job.index}-{digest}"


def _claim(task: TaskSpec) -> str:
    return f"task {task.task_id}"


@register("lakefs", supports_recovery=True)
class LakeFSCommitter(ModelCommitter):
    def __init__(self, env: CommitterEnv, job: JobSpec, task: TaskSpec | None,
                 options: dict[str, str]) -> None:
        bucket, key = split_url(job.dest)
        self.lake = LakeFS(env, f"{job.dest.split('://', 1)[0]}://{bucket}")
        self.prefix = key.strip("/")  # the destination, as a path in the repository
        self.job = job
        self.task = task
        self.branch = job_branch(job)
        self.mode = options.get(MODE, "append")
        if self.mode not in ("append", "overwrite"):
            raise CommitFailed(job.dest, f"{MODE}={self.mode!r}: expected append or overwrite")
        self.attempt_branch = f"{self.branch}--{task.attempt_id}" if task else ""
        self.files: list[str] = []
        self.recovered: list[str] = []  # claims of the tasks this job attempt recovered

    def _path(self, relpath: str) -> str:
        return f"{self.prefix}/{relpath}" if self.prefix else relpath

    # -- task side -------------------------------------------------------------------------------

    def setup_task(self) -> None:
        self.lake.create_branch(self.attempt_branch, self.branch, reset=True)

    def write(self, relpath: str, data: bytes) -> None:
        self.lake.put(self.attempt_branch, self._path(relpath), data)
        self.files.append(relpath)

    def needs_task_commit(self) -> bool:
        return bool(self.files)

    def commit_task(self) -> TaskReport:
        assert self.task is not None
        self.lake.merge(self.attempt_branch, self.branch, claim=_claim(self.task),
                        epoch=self.job.attempt)
        self.lake.delete_branches(self.attempt_branch)
        return {"attempt": self.task.attempt_id, "files": sorted(self.files)}

    def abort_task(self) -> None:
        self.lake.delete_branches(self.attempt_branch)

    # -- job side --------------------------------------------------------------------------------

    def setup_job(self) -> None:
        self.lake.create_branch(self.branch, MAIN, reset=self.job.attempt == 0)
        if self.job.attempt > 0:
            self.lake.fence(self.branch, self.job.attempt, self.recovered)
        if self.mode == "overwrite":
            self.lake.delete_prefix(self.branch, self._path(""))

    def recover_task(self, task: TaskSpec) -> None:
        """Keep the task: its output was merged into the job branch, which survives."""
        self.recovered.append(_claim(task))

    def commit_job(self, messages: list[TaskReport | None] | None) -> None:
        files = sorted(f for m in messages or [] if m for f in m["files"])
        # the same bytes from every job attempt, so a restarted attempt's merge is idempotent
        self.lake.put(self.branch, self._path(SUCCESS),
                      success_data("lakefs", self.job.job_id, files))
        self.lake.merge(self.branch, MAIN)

    def abort_job(self) -> None:
        self.lake.delete_branches(self.branch)

    def cleanup_job(self) -> None:
        self.lake.delete_branches(self.branch)
