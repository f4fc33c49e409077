"""The task commit messages: what a task commit hands the driver, and the checks a job commit
makes on the list Spark passes back.

Apart from the lifecycle because the messages cross process boundaries (Spark serialises them
from the executors to the driver), so they are untrusted input: a message from another job,
another job attempt or another committer, or two for one task, is refused with a clear error
before the job commit sends any request.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from zerorename.committers.state import CommitterState
from zerorename.context import TaskContext
from zerorename.errors import CommitError, FormatError
from zerorename.messages import TaskCommitMessage

__all__ = ["TaskMessages"]


class TaskMessages(CommitterState):
    """Makes this committer's task commit messages and checks the ones a job commit gets."""

    def make_message(self, task: TaskContext, kind: str, payload: dict[str, Any], record: str,
                     stats: dict[str, Any]) -> TaskCommitMessage:
        return TaskCommitMessage(
            committer=self.name, job_id=self.job.id, job_attempt=self.job.attempt,
            task_id=task.task_id, task_attempt=task.attempt, attempt_id=task.attempt_id,
            kind=kind, payload=payload, record=record, iostatistics=stats,
        )

    def _parse_messages(self, messages: Sequence[TaskCommitMessage | Mapping[str, Any] | str]
                        ) -> list[TaskCommitMessage]:
        if isinstance(messages, (str, bytes, Mapping)):
            raise FormatError("task commit messages", "expected a list of messages")
        parsed: list[TaskCommitMessage] = []
        seen: dict[int, str] = {}
        for raw in messages:
            msg = TaskCommitMessage.from_json(raw)
            if msg.job_id != self.job.id:
                raise FormatError(msg.path, f"written by job {msg.job_id}, not this job "
                                            f"{self.job.id}")
            if msg.job_attempt != self.job.attempt:
                raise FormatError(msg.path, f"from job attempt {msg.job_attempt}, this is job "
                                            f"attempt {self.job.attempt}")
            if msg.committer != self.name:
                raise FormatError(msg.path, f"written by the {msg.committer} committer, not "
                                            f"{self.name}")
            if msg.task_id in seen:
                raise CommitError(msg.path, f"task {msg.task_id} is committed twice (also by "
                                            f"{seen[msg.task_id]}): which output wins is "
                                            "undefined")
            seen[msg.task_id] = msg.attempt_id
            parsed.append(msg)
        return parsed
