"""Spark's DirectOutputCommitter (paper Section XII.A): tasks write straight to the destination;
task and job commit do nothing but write ``_SUCCESS``.  Kept as the zero-rename baseline that
fails: a failed or speculative attempt's output cannot be told apart or removed.
"""

from __future__ import annotations

from zerorename_model.engine.scenario import CommitterEnv, JobSpec, TaskSpec
from zerorename_model.systems.protocols import ModelCommitter, register


@register("direct", visible_before_job_commit=True, takes_messages=False)
class DirectCommitter(ModelCommitter):
    def __init__(self, env: CommitterEnv, job: JobSpec, task: TaskSpec | None,
                 options: dict[str, str]) -> None:
        self.fs = env.store
        self.dest = job.dest
        self.wrote = False

    def setup_job(self) -> None:
        pass

    def setup_task(self) -> None:
        pass

    def write(self, relpath: str, data: bytes) -> None:
        self.fs.put(f"{self.dest}/{relpath}", data)  # visible at once
        self.wrote = True

    def needs_task_commit(self) -> bool:
        return False  # nothing to promote: the data is already in place

    def commit_task(self) -> None:
        pass

    def abort_task(self) -> None:
        pass  # the attempt's files are indistinguishable from any other attempt's

    def commit_job(self, messages: list[object] | None) -> None:
        self.fs.put(f"{self.dest}/_SUCCESS", b"")

    def abort_job(self) -> None:
        pass

    def cleanup_job(self) -> None:
        pass
