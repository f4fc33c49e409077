"""Persistent JSON formats, field-compatible with Hadoop's, validated on every load.

* :class:`SinglePendingCommit` — a ``.pending`` file: one uncompleted multipart upload
  (Hadoop ``org.apache.hadoop.fs.s3a.commit.files.SinglePendingCommit``, version 2).
* :class:`PendingSet` — a ``.pendingset`` file: every upload of one committed task attempt
  (Hadoop ``PendingSet``, version 2); the committing attempt is in ``extraData``
  ``task.attempt.id`` (HADOOP-17258).
* :class:`TaskManifest` — the manifest committer's per-task record (Hadoop
  ``...committer.manifest.files.TaskManifest/1``) with Hadoop's short keys ``s d z e`` / ``d t l``.
* :class:`SuccessData` — the JSON ``_SUCCESS`` file that both Hadoop families write.

Why validate so strictly: job commit acts on these files — it completes uploads and renames
files to the destinations they name.  A truncated, corrupt, foreign (other job) or future
(newer version) file must stop the commit with a :class:`~zerorename.errors.FormatError` that
names the file and the reason, before anything becomes visible.  Destinations are stored raw
(``destinationKey``) and as a percent-encoded ``uri`` (Hadoop parses it as a URI: HADOOP-17112
was a path with a space), and the two must agree.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, ClassVar, TypeVar
from urllib.parse import quote, unquote

from zerorename.errors import CommitError, DuplicateDestinationError, FormatError, NotFoundError
from zerorename.store import Store
from zerorename.urls import join, parse_url

__all__ = [
    "MANIFEST_TYPE",
    "PENDINGSET_VERSION",
    "PENDING_VERSION",
    "SUCCESS_FILE_LIMIT",
    "SUCCESS_NAME",
    "DirEntry",
    "FileEntry",
    "PendingSet",
    "SinglePendingCommit",
    "SuccessData",
    "TaskManifest",
    "UploadIntent",
    "decode_uri",
    "encode_url",
    "load",
    "parse_json",
    "read_success",
]

PENDING_VERSION = 2
PENDINGSET_VERSION = 2
MANIFEST_VERSION = 1
MANIFEST_TYPE = (
    "org.apache.hadoop.mapreduce.lib.output.committer.manifest.files.TaskManifest/"
    f"{MANIFEST_VERSION}"
)
SUCCESS_NAME = "org.apache.hadoop.fs.s3a.commit.files.SuccessData/1"
#: Hadoop's SUCCESS_MARKER_FILE_LIMIT: ``filenames`` is a sample, not the full list.
SUCCESS_FILE_LIMIT = 100
#: pendingset extraData key naming the task attempt that committed it (HADOOP-17258).
TASK_ATTEMPT_ID = "task.attempt.id"

F = TypeVar("F", bound="_Format")


def now_millis() -> int:
    return int(time.time() * 1000)


def date_text(millis: int) -> str:
    return datetime.fromtimestamp(millis / 1000, tz=UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def encode_url(url: str) -> str:
    """``url`` with its key percent-encoded, as Hadoop's ``Path.toUri()`` would print it."""
    u = parse_url(url)
    key = quote(u.key, safe="/")
    return f"file:///{key}" if u.scheme == "file" else f"{u.scheme}://{u.bucket}/{key}"


def decode_uri(uri: str) -> str:
    return unquote(uri)


def parse_json(data: bytes, path: str) -> Any:
    """JSON from ``data``, or a :class:`FormatError` saying what is wrong with ``path``."""
    if not data:
        raise FormatError(path, "empty file (0 bytes): truncated, or not written by a committer")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise FormatError(path, f"not UTF-8 text (byte {exc.start}): corrupt") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise FormatError(
            path, f"corrupt or truncated JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"
        ) from None


# -- field checks -------------------------------------------------------------------------


def _mapping(value: Any, path: str, what: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise FormatError(path, f"{what} is not a JSON object")
    return value


def _str(data: Mapping[str, Any], key: str, path: str, *, required: bool = True,
         non_empty: bool = False) -> str:
    value = data.get(key)
    if value is None:
        if required and non_empty:
            raise FormatError(path, f"missing field {key!r}")
        return ""
    if not isinstance(value, str):
        raise FormatError(path, f"field {key!r} is not a string: {value!r}")
    if non_empty and not value:
        raise FormatError(path, f"field {key!r} is empty")
    return value


def _int(data: Mapping[str, Any], key: str, path: str, *, default: int | None = None,
         minimum: int | None = None) -> int:
    value = data.get(key, default)
    if value is None:
        raise FormatError(path, f"missing field {key!r}")
    if isinstance(value, bool) or not isinstance(value, int):
        raise FormatError(path, f"field {key!r} is not an integer: {value!r}")
    if minimum is not None and value < minimum:
        raise FormatError(path, f"field {key!r} is {value}, must be >= {minimum}")
    return value


def _str_map(value: Any, path: str, key: str) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise FormatError(path, f"field {key!r} is not a JSON object")
    out: dict[str, str] = {}
    for k, v in value.items():
        if not isinstance(k, str) or not isinstance(v, str):
            raise FormatError(path, f"field {key!r} must map strings to strings: {k!r}: {v!r}")
        out[k] = v
    return out


def _stats(value: Any, path: str) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise FormatError(path, "field 'iostatistics' is not a JSON object")
    return dict(value)


def _version(data: Mapping[str, Any], path: str, expected: int, what: str) -> int:
    version = data.get("version")
    if version is None:
        raise FormatError(path, f"missing field 'version' (not a {what})")
    if isinstance(version, bool) or not isinstance(version, int):
        raise FormatError(path, f"field 'version' is not an integer: {version!r}")
    if version != expected:
        raise FormatError(path, f"{what} version {version} is not supported (expected {expected})")
    return version


class _Format:
    """Shared (de)serialisation: ``to_json`` → dict, ``to_bytes`` → UTF-8 JSON.

    Records that machines read back (``.pending``, ``.pendingset``, manifests, intents) are
    written compact: a pendingset of 10,000 files is a third smaller than indented, and job
    commit reads thousands of them.  ``_SUCCESS``, which people read, is indented as Hadoop
    writes it.  Readers accept either: whitespace is not part of the format.
    """

    WHAT: ClassVar[str] = "file"
    #: ``json.dumps`` indentation; None = compact
    INDENT: ClassVar[int | None] = None

    def to_json(self) -> dict[str, Any]:
        raise NotImplementedError

    def to_bytes(self) -> bytes:
        if self.INDENT is None:
            text = json.dumps(self.to_json(), ensure_ascii=False, separators=(",", ":"))
        else:
            text = json.dumps(self.to_json(), indent=self.INDENT, ensure_ascii=False)
        return text.encode("utf-8")

    @classmethod
    def from_json(cls: type[F], data: Any, path: str = "<json>") -> F:
        raise NotImplementedError

    @classmethod
    def from_bytes(cls: type[F], data: bytes, path: str) -> F:
        return cls.from_json(parse_json(data, path), path)


# -- .pending ------------------------------------------------------------------------------


@dataclass
class SinglePendingCommit(_Format):
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
        d = _mapping(data, path, "pending commit")
        version = _version(d, path, PENDING_VERSION, "pending commit")
        uri = _str(d, "uri", path, non_empty=True)
        bucket = _str(d, "bucket", path)
        key = _str(d, "destinationKey", path, non_empty=True)
        upload_id = _str(d, "uploadId", path, non_empty=True)
        etags = d.get("etags")
        if not isinstance(etags, list) or not etags:
            raise FormatError(path, "field 'etags' must be a non-empty list (one per part)")
        for i, etag in enumerate(etags):
            if not isinstance(etag, str) or not etag:
                raise FormatError(path, f"etag of part {i + 1} is empty or not a string")
        commit = cls(
            uri=uri, bucket=bucket, destination_key=key, upload_id=upload_id,
            etags=list(etags), length=_int(d, "length", path, minimum=0),
            created=_int(d, "created", path, default=0, minimum=0),
            saved=_int(d, "saved", path, default=0, minimum=0),
            job_id=_str(d, "jobId", path), task_id=_str(d, "taskId", path),
            text=_str(d, "text", path),
            extra_data=_str_map(d.get("extraData"), path, "extraData"),
            iostatistics=_stats(d.get("iostatistics"), path),
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
class PendingSet(_Format):
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
        d = _mapping(data, path, "pendingset")
        version = _version(d, path, PENDINGSET_VERSION, "pendingset")
        raw = d.get("commits")
        if not isinstance(raw, list):
            raise FormatError(path, "field 'commits' is not a list")
        commits = [
            SinglePendingCommit.from_json(c, f"{path} (commit {i})") for i, c in enumerate(raw)
        ]
        for c in commits:
            c.filename = path
        pset = cls(
            job_id=_str(d, "jobId", path), commits=commits,
            extra_data=_str_map(d.get("extraData"), path, "extraData"),
            iostatistics=_stats(d.get("iostatistics"), path), version=version,
        )
        check_unique_destinations((c.url for c in commits), path)
        return pset


# -- upload intents ------------------------------------------------------------------------

INTENT_FORMAT = "zerorename.UploadIntent/1"


@dataclass
class UploadIntent(_Format):
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
        d = _mapping(data, path, "upload intent")
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
            job_id=_str(d, "jobId", path, non_empty=True),
            task_attempt_id=_str(d, "taskAttemptId", path, non_empty=True),
            uris=list(uris), created=_int(d, "created", path, default=0, minimum=0),
        )


# -- task manifest -------------------------------------------------------------------------


@dataclass(frozen=True)
class FileEntry:
    """A file to rename at job commit: source ``s``, destination ``d``, size ``z``, etag ``e``."""

    source: str
    dest: str
    size: int
    etag: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"s": self.source, "d": self.dest, "z": self.size}
        if self.etag:
            out["e"] = self.etag
        return out


@dataclass(frozen=True)
class DirEntry:
    """A destination directory: path ``d``, status ``t`` (Hadoop EntryStatus ordinal:
    0 unknown, 1 not_found, 2 file, 3 dir, 4 created_dir) and tree level ``l``."""

    dest: str
    status: int = 0
    level: int = 0

    def to_json(self) -> dict[str, Any]:
        return {"d": self.dest, "t": self.status, "l": self.level}


@dataclass
class TaskManifest(_Format):
    """What one task attempt asks the manifest committer's job commit to rename."""

    WHAT: ClassVar[str] = "task manifest"

    job_id: str
    job_attempt: int
    task_id: str
    task_attempt_id: str
    task_attempt_dir: str
    files: list[FileEntry] = field(default_factory=list)
    directories: list[DirEntry] = field(default_factory=list)
    extra_data: dict[str, str] = field(default_factory=dict)
    iostatistics: dict[str, Any] = field(default_factory=dict)
    version: int = MANIFEST_VERSION

    def to_json(self) -> dict[str, Any]:
        return {
            "type": MANIFEST_TYPE,
            "version": self.version,
            "jobId": self.job_id,
            "jobAttemptNumber": self.job_attempt,
            "taskID": self.task_id,
            "taskAttemptID": self.task_attempt_id,
            "taskAttemptDir": self.task_attempt_dir,
            "files": [f.to_json() for f in self.files],
            "directories": [d.to_json() for d in self.directories],
            "extraData": dict(self.extra_data),
            "iostatistics": dict(self.iostatistics),
        }

    @classmethod
    def from_json(cls, data: Any, path: str = "<json>") -> TaskManifest:
        d = _mapping(data, path, "task manifest")
        kind = d.get("type")
        if kind != MANIFEST_TYPE:
            raise FormatError(path, f"type {kind!r} is not {MANIFEST_TYPE!r}")
        version = _version(d, path, MANIFEST_VERSION, "task manifest")
        raw_files = d.get("files", [])
        raw_dirs = d.get("directories", [])
        if not isinstance(raw_files, list) or not isinstance(raw_dirs, list):
            raise FormatError(path, "fields 'files' and 'directories' must be lists")
        files: list[FileEntry] = []
        for i, entry in enumerate(raw_files):
            where = f"{path} (file entry {i})"
            e = _mapping(entry, where, "file entry")
            etag = e.get("e")
            if etag is not None and not isinstance(etag, str):
                raise FormatError(where, f"etag is not a string: {etag!r}")
            files.append(FileEntry(
                source=_str(e, "s", where, non_empty=True),
                dest=_str(e, "d", where, non_empty=True),
                size=_int(e, "z", where, minimum=0), etag=etag or None,
            ))
        dirs: list[DirEntry] = []
        for i, entry in enumerate(raw_dirs):
            where = f"{path} (directory entry {i})"
            e = _mapping(entry, where, "directory entry")
            dirs.append(DirEntry(
                dest=_str(e, "d", where, non_empty=True),
                status=_int(e, "t", where, default=0), level=_int(e, "l", where, default=0,
                                                                     minimum=0),
            ))
        manifest = cls(
            job_id=_str(d, "jobId", path, non_empty=True),
            job_attempt=_int(d, "jobAttemptNumber", path, default=0, minimum=0),
            task_id=_str(d, "taskID", path, non_empty=True),
            task_attempt_id=_str(d, "taskAttemptID", path, non_empty=True),
            task_attempt_dir=_str(d, "taskAttemptDir", path, non_empty=True),
            files=files, directories=dirs,
            extra_data=_str_map(d.get("extraData"), path, "extraData"),
            iostatistics=_stats(d.get("iostatistics"), path), version=version,
        )
        check_unique_destinations((f.dest for f in files), path)
        return manifest


# -- _SUCCESS ------------------------------------------------------------------------------


@dataclass
class SuccessData(_Format):
    """The JSON ``_SUCCESS`` summary (same format for the S3A and manifest committers)."""

    WHAT: ClassVar[str] = "_SUCCESS file"
    INDENT: ClassVar[int | None] = 2

    committer: str
    job_id: str
    job_id_source: str = ""
    timestamp: int = field(default_factory=now_millis)
    hostname: str = ""
    description: str = ""
    success: bool = True
    filenames: list[str] = field(default_factory=list)
    metrics: dict[str, int] = field(default_factory=dict)
    diagnostics: dict[str, str] = field(default_factory=dict)
    iostatistics: dict[str, Any] = field(default_factory=dict)
    state: str = ""
    stage: str = ""
    name: str = SUCCESS_NAME

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "timestamp": self.timestamp,
            "date": date_text(self.timestamp),
            "hostname": self.hostname,
            "committer": self.committer,
            "description": self.description,
            "jobId": self.job_id,
            "jobIdSource": self.job_id_source,
            "metrics": dict(sorted(self.metrics.items())),
            "diagnostics": dict(sorted(self.diagnostics.items())),
            "filenames": list(self.filenames[:SUCCESS_FILE_LIMIT]),
            "iostatistics": dict(self.iostatistics),
            "success": self.success,
            "state": self.state,
            "stage": self.stage,
        }

    @classmethod
    def from_json(cls, data: Any, path: str = "<json>") -> SuccessData:
        d = _mapping(data, path, "_SUCCESS file")
        name = d.get("name")
        if name != SUCCESS_NAME:
            raise FormatError(path, f"incompatible file format: name is {name!r}, "
                                    f"expected {SUCCESS_NAME!r}")
        filenames = d.get("filenames", [])
        if not isinstance(filenames, list) or not all(isinstance(f, str) for f in filenames):
            raise FormatError(path, "field 'filenames' is not a list of strings")
        metrics = d.get("metrics") or {}
        if not isinstance(metrics, Mapping) or not all(
                isinstance(v, int) and not isinstance(v, bool) for v in metrics.values()):
            raise FormatError(path, "field 'metrics' must map names to integers")
        success = d.get("success", True)
        if not isinstance(success, bool):
            raise FormatError(path, f"field 'success' is not a boolean: {success!r}")
        return cls(
            committer=_str(d, "committer", path), job_id=_str(d, "jobId", path),
            job_id_source=_str(d, "jobIdSource", path),
            timestamp=_int(d, "timestamp", path, default=0, minimum=0),
            hostname=_str(d, "hostname", path), description=_str(d, "description", path),
            success=success, filenames=list(filenames),
            metrics={str(k): int(v) for k, v in metrics.items()},
            diagnostics=_str_map(d.get("diagnostics"), path, "diagnostics"),
            iostatistics=_stats(d.get("iostatistics"), path),
            state=_str(d, "state", path), stage=_str(d, "stage", path),
        )

    def counter(self, name: str) -> int:
        """An iostatistics counter (0 if absent)."""
        counters = self.iostatistics.get("counters", {})
        value = counters.get(name, 0) if isinstance(counters, Mapping) else 0
        return int(value) if isinstance(value, int) else 0

    def __str__(self) -> str:
        """One line: whose job, whether it succeeded, how much it committed, when.  (The
        generated repr printed every field, up to 100 file names and every statistic.)"""
        state = "succeeded" if self.success else "FAILED"
        return (f"_SUCCESS of job {self.job_id} ({self.committer} committer): {state}, "
                f"{self.counter('committer_files_committed')} files, "
                f"{self.counter('committer_bytes_committed')} bytes committed, "
                f"{date_text(self.timestamp)} on {self.hostname or '?'}")

    def __repr__(self) -> str:
        return (f"SuccessData(committer={self.committer!r}, job_id={self.job_id!r}, "
                f"success={self.success!r}, filenames=<{len(self.filenames)}>, "
                f"timestamp={self.timestamp!r})")

    def describe(self) -> str:
        """A human-readable summary (what ``zerorename success`` prints)."""
        lines = [
            f"committer:   {self.committer}",
            f"job:         {self.job_id} ({self.job_id_source or 'unknown source'})",
            f"success:     {self.success}",
            f"date:        {date_text(self.timestamp)} on {self.hostname or '?'}",
            f"files:       {self.counter('committer_files_committed')} committed, "
            f"{self.counter('committer_bytes_committed')} bytes",
        ]
        if self.description:
            lines.append(f"description: {self.description}")
        for name in self.filenames:
            lines.append(f"  {name}")
        if len(self.filenames) >= SUCCESS_FILE_LIMIT:
            lines.append(f"  (list capped at {SUCCESS_FILE_LIMIT})")
        for key, value in sorted(self.diagnostics.items()):
            lines.append(f"diagnostic {key} = {value}")
        return "\n".join(lines)


def load(store: Store, url: str, cls: type[F]) -> F:
    """GET ``url`` and parse it as ``cls``; a missing file is
    :class:`~zerorename.errors.NotFoundError`, anything unreadable a FormatError."""
    return cls.from_bytes(store.get(url), url)


def read_success(store: Store, dest: str) -> SuccessData:
    """The parsed ``_SUCCESS`` of the job that wrote ``dest``.

    A missing file raises :class:`NotFoundError`; a 0-byte one (the classic
    FileOutputCommitter's marker) or any other content raises :class:`FormatError`.
    """
    url = join(dest.rstrip("/"), "_SUCCESS")
    try:
        data = store.get(url)
    except NotFoundError as error:
        if error.code == "NoSuchBucket":  # the bucket is missing, not the job's file
            raise
        raise NotFoundError(url, "no _SUCCESS: the job did not commit, or did not write one") \
            from None
    if not data:
        raise FormatError(url, "0-byte _SUCCESS: written by a classic committer, not zerorename")
    return SuccessData.from_bytes(data, url)
