"""Small committers for testing the checkers and the harness: one correct, the others each
broken in exactly one known way.  They are test fixtures, not part of the model's matrix."""

from __future__ import annotations

import json
from typing import Any

from zerorename_model.engine.errors import ModelStoreError
from zerorename_model.engine.scenario import JobSpec, TaskSpec


class _Base:
    supports_recovery = False

    def __init__(self, env: Any, job: JobSpec, task: TaskSpec | None,
                 options: dict[str, str]) -> None:
        self.fs = env.store
        self.env = env
        self.job = job
        self.task = task
        self.dest = job.dest
        self.pending: dict[str, tuple[str, str]] = {}

    def setup_job(self) -> None:
        pass

    def setup_task(self) -> None:
        pass

    def needs_task_commit(self) -> bool:
        return bool(self.pending)

    def abort_task(self) -> None:
        for rel, (upload_id, _etag) in self.pending.items():
            try:
                self.fs.abort_multipart(f"{self.dest}/{rel}", upload_id)
            except ModelStoreError as error:  # the driver's cleanup may abort it first
                if error.code != "NoSuchUpload":
                    raise

    def cleanup_job(self) -> None:
        pass

    # pending-upload writing shared by several toys
    def write(self, relpath: str, data: bytes) -> None:
        url = f"{self.dest}/{relpath}"
        upload_id = self.fs.create_multipart(url)
        self.pending[relpath] = (upload_id, self.fs.upload_part(url, upload_id, 1, data))

    def commit_task(self) -> Any:
        return json.dumps(self.pending)

    def _complete(self, messages: list[Any]) -> None:
        for message in messages:
            for rel, (upload_id, etag) in json.loads(message).items():
                self.fs.complete_multipart(f"{self.dest}/{rel}", upload_id, [(1, etag)])

    def _abort_uploads(self, prefix: str) -> None:
        for upload in self.fs.list_multipart_uploads(prefix):
            try:
                self.fs.abort_multipart(upload.url, upload.upload_id)
            except ModelStoreError as error:  # a killed attempt may abort it first
                if error.code != "NoSuchUpload":
                    raise


class Ideal(_Base):
    """Correct under the Spark protocol: pending uploads, completed only for accepted tasks,
    everything else under the destination *directory* aborted."""

    def commit_job(self, messages: list[Any] | None) -> None:
        assert messages is not None, "Ideal needs the Spark protocol"
        self._complete(messages)
        self._abort_uploads(self.dest + "/")

    def abort_job(self) -> None:
        self._abort_uploads(self.dest + "/")


class DropsLastTask(Ideal):
    """Broken for completeness: forgets the last accepted task's files."""

    def commit_job(self, messages: list[Any] | None) -> None:
        assert messages is not None
        super().commit_job(messages[:-1])


class EagerTaskCommit(Ideal):
    """Broken for exclusivity and continuity: task commit publishes directly, so a duplicate
    or partitioned attempt that commits too (or later) overwrites the accepted output."""

    def write(self, relpath: str, data: bytes) -> None:
        self.pending[relpath] = ("", "")
        self.data = {**getattr(self, "data", {}), relpath: data}

    def commit_task(self) -> Any:
        for rel, data in self.data.items():
            self.fs.put(f"{self.dest}/{rel}", data)
        return json.dumps({})

    def abort_task(self) -> None:
        pass


class NoAbort(Ideal):
    """Broken for abortability: abort_job forgets the pending uploads."""

    def abort_job(self) -> None:
        pass


class PrefixCleanup(Ideal):
    """Broken for concurrency: aborts uploads by *string* prefix, so the job writing to
    ``dataset1`` aborts the pending uploads of the job writing to ``dataset10``."""

    def commit_job(self, messages: list[Any] | None) -> None:
        assert messages is not None
        self._complete(messages)
        self._abort_uploads(self.dest)


class ListsTemporary(_Base):
    """Broken for consistency: tasks write under ``_temporary/<task>``; job commit *lists* it
    and copies what it finds, so a lagging listing loses a file."""

    def write(self, relpath: str, data: bytes) -> None:
        assert self.task is not None
        self.fs.put(f"{self.dest}/_temporary/{self.task.task_id}/{relpath}", data)

    def needs_task_commit(self) -> bool:
        return False

    def commit_task(self) -> Any:
        return None

    def commit_job(self, messages: list[Any] | None) -> None:
        prefix = f"{self.dest}/_temporary/"
        for obj in self.fs.list_page(prefix).objects:
            rel = obj.url[len(prefix):].split("/", 1)[1]
            self.fs.copy(obj.url, f"{self.dest}/{rel}")

    def abort_job(self) -> None:
        pass


class MixesAttempts(EagerTaskCommit):
    """Broken for valid-outcome: task commit publishes the attempt's files one PUT at a time
    (attempt 1 in the reverse order), so two attempts that both commit — one partitioned from
    the driver, one its retry — can leave one attempt's first file beside the other's second."""

    def commit_task(self) -> Any:
        assert self.task is not None
        files = sorted(self.data.items(), reverse=self.task.attempt % 2 == 1)
        for rel, data in files:
            self.fs.put(f"{self.dest}/{rel}", data)
        return json.dumps({})


class PublishesAtWrite(Ideal):
    """Broken for valid-outcome: ``write`` PUTs the file straight into the destination, so an
    attempt that never commits (a duplicate the driver kills) can leave the visible file."""

    def write(self, relpath: str, data: bytes) -> None:
        self.fs.put(f"{self.dest}/{relpath}", data)
        self.pending[relpath] = ("", "")

    def commit_task(self) -> Any:
        return json.dumps({})

    def abort_task(self) -> None:
        pass


class FailsRetries(Ideal):
    """Broken for liveness, as HADOOP-17258 was: a retried attempt's task commit always fails
    (it finds what attempt 0 left), so one crash of a task's first attempt fails the job."""

    def commit_task(self) -> Any:
        assert self.task is not None
        if self.task.attempt > 0:
            raise RuntimeError("an earlier attempt's task commit is in the way")
        return super().commit_task()


class Spins(Ideal):
    """Never finishes its job commit (polls a key forever): a run of it is cut at the harness's
    step limit, which liveness must not count as a job that failed to commit."""

    def commit_job(self, messages: list[Any] | None) -> None:
        while True:
            self.fs.head(f"{self.dest}/_never")
