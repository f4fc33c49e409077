"""The task commit message: what a task attempt sends its driver when it commits.

Spark's protocol moves task commit results to the driver in memory
(``FileCommitProtocol.TaskCommitMessage``) and the driver commits exactly the messages of the
attempts it accepted — no listing of the store, and no confusion with an attempt the driver
gave up on.  A zerorename message is self-contained: it carries the task's pendingset (S3A
committers), manifest (manifest committer) or file list (v1/v2), plus the URL where the same
record was saved for Hadoop's discover-by-listing protocol.

Messages are JSON-serialisable: ``to_json()`` gives a dict, ``dumps()`` text, and
``from_json()`` accepts either (or bytes) and validates the envelope.  The payload is validated
by the committer that receives it, with the job's own checks (same job, destinations inside the
job's destination).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from zerorename.errors import FormatError
from zerorename.formats import parse_json

__all__ = ["MESSAGE_FORMAT", "TaskCommitMessage"]

MESSAGE_FORMAT = "zerorename.TaskCommitMessage/1"

#: What the payload holds, by committer family.
KINDS = ("pendingset", "manifest", "files")


@dataclass
class TaskCommitMessage:
    """One committed task attempt, as its driver receives it."""

    committer: str
    job_id: str
    job_attempt: int
    task_id: int
    task_attempt: int
    attempt_id: str
    kind: str
    payload: dict[str, Any] = field(default_factory=dict)
    record: str = ""
    iostatistics: dict[str, Any] = field(default_factory=dict)

    @property
    def path(self) -> str:
        """How errors name this message (there is no file behind it)."""
        return f"task commit message of {self.attempt_id}"

    def to_json(self) -> dict[str, Any]:
        return {
            "format": MESSAGE_FORMAT,
            "committer": self.committer,
            "jobId": self.job_id,
            "jobAttempt": self.job_attempt,
            "taskId": self.task_id,
            "taskAttempt": self.task_attempt,
            "attemptId": self.attempt_id,
            "kind": self.kind,
            "record": self.record,
            "payload": self.payload,
            "iostatistics": self.iostatistics,
        }

    def dumps(self) -> str:
        return json.dumps(self.to_json(), ensure_ascii=False)

    @classmethod
    def from_json(cls, data: Mapping[str, Any] | str | bytes | TaskCommitMessage
                  ) -> TaskCommitMessage:
        """Parse and validate the envelope; raises :class:`FormatError` naming the message."""
        if isinstance(data, TaskCommitMessage):
            return data
        where = "task commit message"
        if isinstance(data, (str, bytes)):
            raw = data.encode("utf-8") if isinstance(data, str) else data
            data = parse_json(raw, where)
        if not isinstance(data, Mapping):
            raise FormatError(where, f"not a JSON object: {type(data).__name__}")
        attempt = data.get("attemptId")
        if isinstance(attempt, str) and attempt:
            where = f"task commit message of {attempt}"
        if data.get("format") != MESSAGE_FORMAT:
            raise FormatError(where, f"format {data.get('format')!r} is not {MESSAGE_FORMAT!r}")
        kind = data.get("kind")
        if kind not in KINDS:
            raise FormatError(where, f"kind {kind!r} is not one of {KINDS}")
        strings = {k: data.get(k) for k in ("committer", "jobId", "attemptId", "record")}
        for key, value in strings.items():
            if not isinstance(value, str) or (key != "record" and not value):
                raise FormatError(where, f"field {key!r} is missing or not a string")
        ints = {k: data.get(k) for k in ("jobAttempt", "taskId", "taskAttempt")}
        for key, value in ints.items():
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise FormatError(where, f"field {key!r} is not an integer >= 0: {value!r}")
        payload = data.get("payload")
        stats = data.get("iostatistics", {})
        if not isinstance(payload, Mapping) or not isinstance(stats, Mapping):
            raise FormatError(where, "fields 'payload' and 'iostatistics' must be objects")
        return cls(
            committer=str(strings["committer"]), job_id=str(strings["jobId"]),
            job_attempt=int(ints["jobAttempt"] or 0), task_id=int(ints["taskId"] or 0),
            task_attempt=int(ints["taskAttempt"] or 0), attempt_id=str(strings["attemptId"]),
            kind=str(kind), payload=dict(payload), record=str(strings["record"]),
            iostatistics=dict(stats),
        )
