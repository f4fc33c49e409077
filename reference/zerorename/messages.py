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

A message parsed from text keeps its payload as that text, compressed, and decodes it each
time it is read (:class:`EncodedPayload`).  Why: a driver holds every task's message until the
job commit has read them all, and a decoded pendingset costs about three times its JSON (a
dict of 16 fields per file: 24 kB for a task of 10 files against 7.9 kB of text), so 10,000
such tasks held decoded took about 246 MB of the driver's memory.  The text repeats itself
(the same field names, job, bucket and prefixes in every file's entry), so zlib at its fastest
level keeps it in a fraction of its size.  The job commit reads each payload once, in its own
task's turn, so at most the messages being committed are decoded at a time.
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from zerorename.errors import FormatError
from zerorename.formats import parse_json

__all__ = ["MESSAGE_FORMAT", "EncodedPayload", "TaskCommitMessage"]

MESSAGE_FORMAT = "zerorename.TaskCommitMessage/1"

_WHERE = "task commit message"

#: What the payload holds, by committer family.
KINDS = ("pendingset", "manifest", "files")


class EncodedPayload(Mapping[str, Any]):
    """One object field of a message (``payload``, or ``iostatistics``) kept as the whole
    message's JSON text, compressed, and decoded on every read (see the module docstring).
    The text was parsed and its envelope checked when the message was made, so decoding it
    again cannot fail."""

    __slots__ = ("_blob", "_field")

    def __init__(self, blob: bytes, field: str = "payload") -> None:
        self._blob = blob  # the whole message's JSON, zlib-compressed
        self._field = field

    def decoded(self) -> dict[str, Any]:
        """The field as a new dict (nothing of it is kept here)."""
        value: dict[str, Any] = json.loads(zlib.decompress(self._blob)).get(self._field, {})
        return value

    def __getitem__(self, key: str) -> Any:
        return self.decoded()[key]

    def get(self, key: str, default: Any = None) -> Any:
        return self.decoded().get(key, default)

    def __iter__(self) -> Iterator[str]:
        return iter(self.decoded())

    def __len__(self) -> int:
        return len(self.decoded())

    def __repr__(self) -> str:
        return f"EncodedPayload({self._field!r} of {len(self._blob)} bytes of compressed JSON)"


def _as_dict(payload: Mapping[str, Any]) -> dict[str, Any]:
    return payload.decoded() if isinstance(payload, EncodedPayload) else dict(payload)


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
    #: a dict, or (parsed from text) an :class:`EncodedPayload` that decodes on every read
    payload: Mapping[str, Any] = field(default_factory=dict)
    record: str = ""
    iostatistics: Mapping[str, Any] = field(default_factory=dict)

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
            "payload": _as_dict(self.payload),
            "iostatistics": _as_dict(self.iostatistics),
        }

    def dumps(self) -> str:
        return json.dumps(self.to_json(), ensure_ascii=False)

    def compressed(self) -> bytes:
        """The message's JSON text, zlib-compressed: what a task sends when its driver will hold
        every message until the job commit (Spark's outcomes).  :meth:`from_compressed` reads
        it back and keeps these very bytes as the payload, so the driver holds one copy."""
        return zlib.compress(self.dumps().encode("utf-8"), 1)

    @classmethod
    def from_json(cls, data: Mapping[str, Any] | str | bytes | TaskCommitMessage
                  ) -> TaskCommitMessage:
        """Parse and validate the envelope; raises :class:`FormatError` naming the message.
        From text, the payload is kept compressed (:class:`EncodedPayload`)."""
        if isinstance(data, TaskCommitMessage):
            return data
        if isinstance(data, (str, bytes)):
            text = data.encode("utf-8") if isinstance(data, str) else data
            return cls._checked(parse_json(text, _WHERE), zlib.compress(text, 1))
        return cls._checked(data, None)

    @classmethod
    def from_compressed(cls, blob: bytes) -> TaskCommitMessage:
        """A message from :meth:`compressed`'s bytes, validated as :meth:`from_json`; its
        payload keeps ``blob`` itself."""
        try:
            text = zlib.decompress(blob)
        except (zlib.error, TypeError) as exc:
            raise FormatError(_WHERE, f"not a compressed message: {exc}") from None
        return cls._checked(parse_json(text, _WHERE), blob)

    @classmethod
    def _checked(cls, data: Any, blob: bytes | None) -> TaskCommitMessage:
        """The message ``data`` holds, its envelope validated; its payload and statistics
        read from ``blob`` (the message's compressed text) when it came as text, else copies
        of the decoded dicts.  (Compressing costs less than the dicts it saves: the text is
        read once here, and the blob is a few bytes per file.)"""
        where = _WHERE
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
            kind=str(kind),
            payload=dict(payload) if blob is None else EncodedPayload(blob),
            record=str(strings["record"]),
            iostatistics=dict(stats) if blob is None else EncodedPayload(blob, "iostatistics"),
        )
