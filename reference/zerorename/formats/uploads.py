"""The records of uncompleted multipart uploads, field-compatible with Hadoop's S3A committers.

* :class:`SinglePendingCommit` — a ``.pending`` file: one uncompleted multipart upload
  (Hadoop ``org.apache.hadoop.fs.s3a.commit.files.SinglePendingCommit``, version 2).
* :class:`PendingSet` — a ``.pendingset`` file: every upload of one committed task attempt
  (Hadoop ``PendingSet``, version 2); the committing attempt is in ``extraData``
  ``task.attempt.id`` (HADOOP-17258).
* :class:`UploadIntent` — zerorename's own: the keys a task attempt is about to create
  uploads for, so that an upload whose ID was never recorded can still be found and aborted.

Job commit completes the uploads these records name, so each destination is checked twice:
stored raw (``destinationKey``) and as a percent-encoded ``uri`` (Hadoop parses it as a URI:
HADOOP-17112 was a path with a space), and the two must agree; two commits to one destination
are refused.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, ClassVar

from zerorename.errors import CommitError, DuplicateDestinationError, FormatError
from zerorename.formats.base import JsonRecord, date_text, decode_uri, encode_url, now_millis
from zerorename.formats.fields import (
    int_field,
    mapping_of,
    stats_field,
    str_field,
    str_map_field,
    version_field,
)
from zerorename.urls import parse_url

__all__ = [
    "INTENT_FORMAT",
    "PENDINGSET_VERSION",
    "PENDING_VERSION",
    "TASK_ATTEMPT_ID",
    "PendingSet",
    "SinglePendingCommit",
    "UploadIntent",
    "check_unique_destinations",
]

PENDING_VERSION = 2
PENDINGSET_VERSION = 2
#: pendingset extraData key naming the task attempt that committed it (HADOOP-17258).
TASK_ATTEMPT_ID = "task.attempt.id"


# -- .pending ------------------------------------------------------------------------------


@dataclass
class SinglePendingCommit(JsonRecord):
    """One uncompleted multipart upload and everything needed to complete it elsewhere."""

    WHAT: ClassVar[str] = "pending commit"

    uri: str
    bucket: str
    destination_key: str
    upload_id: str
    etags: list[str]
    length: int
    created: int = 0
    saved: int = 0
    job_id: str = ""
    task_id: str = ""
    text: str = ""
    extra_data: dict[str, str] = field(default_factory=dict)
    iostatistics: dict[str, Any] = field(default_factory=dict)
    filename: str = ""
    version: int = PENDING_VERSION

    @classmethod
    def create(
        cls, url: str, upload_id: str, etags: Iterable[str], length: int, *, job_id: str,
        task_id: str, created: int | None = None, now: int | None = None,
    ) -> SinglePendingCommit:
        """A pending commit saved at ``now`` (ms; default: the system clock) for an upload
        started at ``created`` (default: ``now``).  Committers pass their job's clock."""
        u = parse_url(url)
        now = now_millis() if now is None else now
        return cls(
            uri=encode_url(url), bucket=u.bucket, destination_key=u.key, upload_id=upload_id,
            etags=list(etags), length=length, created=created or now, saved=now,
            job_id=job_id, task_id=task_id,
        )

    @property
    def url(self) -> str:
        """The destination as a (raw, unencoded) URL."""
        scheme = parse_url(decode_uri(self.uri)).scheme
        if scheme == "file":
            return f"file:///{self.destination_key}"
        return f"{scheme}://{self.bucket}/{self.destination_key}"

    @property
    def parts(self) -> list[tuple[int, str]]:
        return [(i + 1, etag) for i, etag in enumerate(self.etags)]

    def to_json(self) -> dict[str, Any]:
        return {
            "version": self.version,
            "filename": self.filename,
            "uri": self.uri,
            "uploadId": self.upload_id,
            "bucket": self.bucket,
            "destinationKey": self.destination_key,
            "created": self.created,
            "saved": self.saved,
            "date": date_text(self.saved) if self.saved else "",
            "jobId": self.job_id,
            "taskId": self.task_id,
            "text": self.text,
            "etags": list(self.etags),
            "extraData": dict(self.extra_data),
            "iostatistics": dict(self.iostatistics),
            "length": self.length,
        }

    @classmethod
    def from_json(cls, data: Any, path: str = "<json>") -> SinglePendingCommit:
        d = mapping_of(data, path, "pending commit")
        version = version_field(d, path, PENDING_VERSION, "pending commit")
        uri = str_field(d, "uri", path, non_empty=True)
        bucket = str_field(d, "bucket", path)
        key = str_field(d, "destinationKey", path, non_empty=True)
        upload_id = str_field(d, "uploadId", path, non_empty=True)
        etags = d.get("etags")
        if not isinstance(etags, list) or not etags:
            raise FormatError(path, "field 'etags' must be a non-empty list (one per part)")
        for i, etag in enumerate(etags):
            if not isinstance(etag, str) or not etag:
                raise FormatError(path, f"etag of part {i + 1} is empty or not a string")
        commit = cls(
            uri=uri, bucket=bucket, destination_key=key, upload_id=upload_id,
            etags=list(etags), length=int_field(d, "length", path, minimum=0),
            created=int_field(d, "created", path, default=0, minimum=0),
            saved=int_field(d, "saved", path, default=0, minimum=0),
            job_id=str_field(d, "jobId", path), task_id=str_field(d, "taskId", path),
            text=str_field(d, "text", path),
            extra_data=str_map_field(d.get("extraData"), path, "extraData"),
            iostatistics=stats_field(d.get("iostatistics"), path),
            filename=path, version=version,
        )
        commit._check_uri(path)
        return commit

    def _check_uri(self, path: str) -> None:
        try:
            parsed = parse_url(decode_uri(self.uri))
        except CommitError as exc:
            raise FormatError(path, f"field 'uri' is not a URL: {exc.reason}") from None
        if parsed.scheme != "file" and not self.bucket:
            raise FormatError(path, "field 'bucket' is empty")
        if parsed.bucket != self.bucket or parsed.key != self.destination_key:
            raise FormatError(path, f"uri {self.uri!r} does not match bucket {self.bucket!r} "
                                    f"and destinationKey {self.destination_key!r}")


def check_unique_destinations(urls: Iterable[str], path: str) -> None:
    """Reject two commits to one destination: which would win is undefined."""
    seen: set[str] = set()
    for url in urls:
        if url in seen:
            raise DuplicateDestinationError(
                path, f"destination {url} is written to by more than one pending commit")
        seen.add(url)


# -- .pendingset ---------------------------------------------------------------------------


@dataclass
class PendingSet(JsonRecord):
    """Every upload of one committed task attempt."""

    WHAT: ClassVar[str] = "pendingset"

    job_id: str
    commits: list[SinglePendingCommit] = field(default_factory=list)
    extra_data: dict[str, str] = field(default_factory=dict)
    iostatistics: dict[str, Any] = field(default_factory=dict)
    version: int = PENDINGSET_VERSION

    @property
    def task_attempt_id(self) -> str:
        return self.extra_data.get(TASK_ATTEMPT_ID, "")

    def to_json(self) -> dict[str, Any]:
        return {
            "version": self.version,
            "jobId": self.job_id,
            "commits": [c.to_json() for c in self.commits],
            "extraData": dict(self.extra_data),
            "iostatistics": dict(self.iostatistics),
        }

    @classmethod
    def from_json(cls, data: Any, path: str = "<json>") -> PendingSet:
        d = mapping_of(data, path, "pendingset")
        version = version_field(d, path, PENDINGSET_VERSION, "pendingset")
        raw = d.get("commits")
        if not isinstance(raw, list):
            raise FormatError(path, "field 'commits' is not a list")
        commits = [
            SinglePendingCommit.from_json(c, f"{path} (commit {i})") for i, c in enumerate(raw)
        ]
        for c in commits:
            c.filename = path
        pset = cls(
            job_id=str_field(d, "jobId", path), commits=commits,
            extra_data=str_map_field(d.get("extraData"), path, "extraData"),
            iostatistics=stats_field(d.get("iostatistics"), path), version=version,
        )
        check_unique_destinations((c.url for c in commits), path)
        return pset


# -- upload intents ------------------------------------------------------------------------

INTENT_FORMAT = "zerorename.UploadIntent/1"


@dataclass
class UploadIntent(JsonRecord):
    """Written *before* a multipart upload is created, naming its destination(s).

    A task attempt can die between creating an upload and recording its ID; the intent lets
    the job's abort find that upload by its exact key (listing uploads for that key), so no
    orphaned upload keeps costing storage.  Magic tasks write one per file, staging tasks one
    per task commit.
    """

    WHAT: ClassVar[str] = "upload intent"

    job_id: str
    task_attempt_id: str
    uris: list[str] = field(default_factory=list)
    created: int = field(default_factory=now_millis)

    @property
    def urls(self) -> list[str]:
        return [decode_uri(u) for u in self.uris]

    def to_json(self) -> dict[str, Any]:
        return {
            "format": INTENT_FORMAT,
            "jobId": self.job_id,
            "taskAttemptId": self.task_attempt_id,
            "uris": list(self.uris),
            "created": self.created,
        }

    @classmethod
    def from_json(cls, data: Any, path: str = "<json>") -> UploadIntent:
        d = mapping_of(data, path, "upload intent")
        if d.get("format") != INTENT_FORMAT:
            raise FormatError(path, f"format {d.get('format')!r} is not {INTENT_FORMAT!r}")
        uris = d.get("uris")
        if not isinstance(uris, list) or not all(isinstance(u, str) and u for u in uris):
            raise FormatError(path, "field 'uris' must be a list of non-empty strings")
        for uri in uris:
            try:
                parse_url(decode_uri(uri))
            except CommitError as exc:
                raise FormatError(path, f"uri {uri!r} is not a URL: {exc.reason}") from None
        return cls(
            job_id=str_field(d, "jobId", path, non_empty=True),
            task_attempt_id=str_field(d, "taskAttemptId", path, non_empty=True),
            uris=list(uris), created=int_field(d, "created", path, default=0, minimum=0),
        )

