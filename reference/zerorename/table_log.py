"""The table log: which files of a destination are committed, read from commit records only.

A reader that lists a destination sees every completed object: the files of a job that is
still completing its uploads (a partial job), and, for Spark's own streaming sink, the files
of every failed attempt.  zerorename's committing writers leave a record per commit instead,
created with ``If-None-Match: *`` (so each commit happens once), and this module reads them:

* the streaming sink's **batch records**, ``<dest>/_zerorename_log/<batch id, 20 digits>.json``
  (format :data:`BATCH_FORMAT`), one per committed micro-batch;
* **log checkpoints**, ``<dest>/_zerorename_log/<sequence number>.checkpoint.json``
  (:data:`CHECKPOINT_FORMAT`), each folding batches ``0..through`` into one record, so that
  old batch records can be expired and small files compacted (:mod:`zerorename.table_fold`).
  Each is created with ``If-None-Match: *`` under the next free sequence number, so two
  processes folding at once cannot both succeed;
* the batch ``fenced`` committer's job commit records, ``<dest>/__fenced_job-<id>/commit.json``,
  one per committed job (kept by the committer for ever).

Every record lists its files with their sizes.  A record's files are visible **all or none**:
when one of them is not (yet) in the destination — the writer is past its commit point and
still completing uploads, or a later overwrite deleted it — the whole record is left out.  So
a reader of the log never sees a partial batch or job, nor a file no record names.  The same
rule picks the checkpoint: the newest one whose files are all in place (a compaction past its
commit point, still completing its rewritten files, leaves the previous checkpoint and the
batch records after it in force until it is done).

The format is small on purpose (JSON; see ``docs/spark.md``); pyarrow or Polars users call
:func:`table_files` and open the URLs it returns.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from zerorename.committers.existing_keys import gives_multipart_etags, object_holds
from zerorename.committers.fenced_records import (
    CommittedFile,
    FencedCommitRecord,
)
from zerorename.committers.layout import FENCED_AREA
from zerorename.errors import FormatError, NotFoundError
from zerorename.formats import parse_json
from zerorename.store import ObjectInfo, Store, list_dir
from zerorename.urls import is_hidden, join, relative_to

__all__ = [
    "BATCH_FORMAT",
    "CHECKPOINT_FORMAT",
    "LOG_DIR",
    "BatchRecord",
    "LogCheckpoint",
    "LoggedFile",
    "TableLog",
    "batch_record_url",
    "checkpoint_url",
    "complete_upload",
    "table_files",
]

LOG_DIR = "_zerorename_log"
BATCH_FORMAT = "zerorename.StreamBatch/1"
CHECKPOINT_FORMAT = "zerorename.StreamLogCheckpoint/1"
_DIGITS = 20


def batch_record_url(dest: str, batch_id: int) -> str:
    """Where batch ``batch_id``'s record is: zero-padded, so names sort as numbers."""
    return join(dest.rstrip("/"), f"{LOG_DIR}/{batch_id:0{_DIGITS}d}.json")


def checkpoint_url(dest: str, seq: int) -> str:
    """Where checkpoint number ``seq`` is (numbers only grow; a newer one supersedes)."""
    return join(dest.rstrip("/"), f"{LOG_DIR}/{seq:0{_DIGITS}d}.checkpoint.json")


@dataclass(frozen=True, slots=True)
class LoggedFile:
    """One file a record names.  ``upload_id`` and ``etags`` are what completing it needs
    (the sink records them before completing); readers use ``url`` and ``size``."""

    url: str
    size: int
    upload_id: str = ""
    etags: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"url": self.url, "size": self.size}
        if self.upload_id:
            data["uploadId"] = self.upload_id
            data["etags"] = list(self.etags)
        return data

    @classmethod
    def from_json(cls, data: Any, path: str) -> LoggedFile:
        if not isinstance(data, Mapping):
            raise FormatError(path, "a file entry is not a JSON object")
        url, size = data.get("url"), data.get("size")
        upload_id, etags = data.get("uploadId", ""), data.get("etags", [])
        if not isinstance(url, str) or not url or isinstance(size, bool) \
                or not isinstance(size, int) or size < 0 or not isinstance(upload_id, str) \
                or not isinstance(etags, list) or not all(isinstance(e, str) for e in etags):
            raise FormatError(path, f"file entry {dict(data)!r} needs a 'url' and a "
                                    "'size' >= 0 ('uploadId' and 'etags' are optional)")
        return cls(url, size, upload_id, tuple(etags))


def _files(d: Mapping[str, Any], path: str) -> tuple[LoggedFile, ...]:
    files = d.get("files")
    if not isinstance(files, list):
        raise FormatError(path, "field 'files' is not a list")
    return tuple(LoggedFile.from_json(f, f"{path} (file {i})") for i, f in enumerate(files))


def _int(d: Mapping[str, Any], key: str, path: str) -> int:
    value = d.get(key)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise FormatError(path, f"field {key!r} is not a whole number >= 0")
    return value


def _str(d: Mapping[str, Any], key: str, path: str) -> str:
    value = d.get(key)
    if not isinstance(value, str):
        raise FormatError(path, f"field {key!r} is not a string")
    return value


def _envelope(data: bytes, path: str, fmt: str) -> Mapping[str, Any]:
    d = parse_json(data, path)
    if not isinstance(d, Mapping) or d.get("format") != fmt:
        got = d.get("format") if isinstance(d, Mapping) else type(d).__name__
        raise FormatError(path, f"format {got!r}, expected {fmt!r}")
    return d


@dataclass(frozen=True)
class BatchRecord:
    """Batch ``batch_id`` is committed, by query run ``run_id`` (claim ``epoch``), with these
    files (written by job ``job_id``).  Creating it with ``If-None-Match: *`` is the commit
    point of the batch; it is never rewritten."""

    batch_id: int
    epoch: int
    run_id: str
    job_id: str
    committed: int
    files: tuple[LoggedFile, ...]

    def to_bytes(self) -> bytes:
        return json.dumps({
            "format": BATCH_FORMAT, "batchId": self.batch_id, "epoch": self.epoch,
            "runId": self.run_id, "jobId": self.job_id, "committed": self.committed,
            "files": [f.to_json() for f in self.files],
        }, indent=1).encode("utf-8")

    @classmethod
    def from_bytes(cls, data: bytes, path: str) -> BatchRecord:
        d = _envelope(data, path, BATCH_FORMAT)
        return cls(_int(d, "batchId", path), _int(d, "epoch", path), _str(d, "runId", path),
                   _str(d, "jobId", path), _int(d, "committed", path), _files(d, path))


@dataclass(frozen=True)
class LogCheckpoint:
    """Batches ``0..through`` folded into one record: their files, or the files a compaction
    rewrote them into (those carry ``uploadId``/``etags`` until completed, as a batch
    record's do).  A folded batch id is never committed again: its id is ``<= through``."""

    through: int
    files: tuple[LoggedFile, ...]

    def to_bytes(self) -> bytes:
        return json.dumps({"format": CHECKPOINT_FORMAT, "through": self.through,
                           "files": [f.to_json() for f in self.files]},
                          indent=1).encode("utf-8")

    @classmethod
    def from_bytes(cls, data: bytes, path: str) -> LogCheckpoint:
        d = _envelope(data, path, CHECKPOINT_FORMAT)
        return cls(_int(d, "through", path), _files(d, path))


def _record_id(name: str) -> tuple[int, bool] | None:
    """``(batch id or checkpoint number, is checkpoint)`` for a log file name, None for
    other names."""
    for suffix, checkpoint in ((".checkpoint.json", True), (".json", False)):
        stem = name[: -len(suffix)] if name.endswith(suffix) else ""
        if len(stem) == _DIGITS and stem.isdigit():
            return int(stem), checkpoint
    return None


class TableLog:
    """One listing of ``dest``, read as commit records and the objects they name.

    With ``records_only``, only ``_zerorename_log/`` is listed: enough to know which batches
    are committed and folded (what the sink asks at every batch), at a cost that does not grow
    with the table's files; :meth:`files` and :meth:`complete` need the full listing."""

    def __init__(self, store: Store, dest: str, *, records_only: bool = False) -> None:
        self.store = store
        self.dest = dest.rstrip("/")
        self.records_only = records_only
        self.objects: dict[str, ObjectInfo] = {}
        self.batches: dict[int, str] = {}
        self.checkpoints: dict[int, str] = {}
        self.job_records: list[str] = []
        self._read: dict[int, LogCheckpoint] = {}
        listed = list_dir(store, join(self.dest, LOG_DIR)) if records_only \
            else list_dir(store, self.dest)
        for obj in listed:
            rel = relative_to(obj.url, self.dest)
            first, _, rest = rel.partition("/")
            if first == LOG_DIR:
                found = _record_id(rest)
                if found is not None:
                    (self.checkpoints if found[1] else self.batches)[found[0]] = obj.url
            elif FENCED_AREA.holds(first) and rest == "commit.json":
                self.job_records.append(obj.url)
            elif not is_hidden(rel):
                self.objects[obj.url] = obj

    @property
    def has_records(self) -> bool:
        return bool(self.batches or self.checkpoints or self.job_records)

    def read_checkpoint(self, seq: int) -> LogCheckpoint:
        url = self.checkpoints[seq]
        if seq not in self._read:
            self._read[seq] = LogCheckpoint.from_bytes(self.store.get(url), url)
        return self._read[seq]

    def newest_checkpoint(self) -> tuple[int, LogCheckpoint] | None:
        """The checkpoint with the highest number, complete or not (a fold past its commit
        point may still be completing its files)."""
        if not self.checkpoints:
            return None
        seq = max(self.checkpoints)
        return seq, self.read_checkpoint(seq)

    def checkpoint(self) -> LogCheckpoint | None:
        """The checkpoint readers use: the newest whose files are all in place."""
        for seq in sorted(self.checkpoints, reverse=True):
            found = self.read_checkpoint(seq)
            if self.complete(found.files):
                return found
        return None

    def batch(self, batch_id: int) -> BatchRecord | None:
        url = self.batches.get(batch_id)
        return None if url is None else BatchRecord.from_bytes(self.store.get(url), url)

    def folded_through(self) -> int:
        """The highest batch id folded into a checkpoint (-1: none): committed, whether or not
        that checkpoint's files are all in place yet."""
        newest = self.newest_checkpoint()
        return -1 if newest is None else newest[1].through

    def complete(self, files: Iterable[LoggedFile]) -> bool:
        """Every file is in the destination with its recorded size."""
        if self.records_only:
            raise ValueError("TableLog(records_only=True) did not list the table's files")
        for f in files:
            obj = self.objects.get(f.url)
            if obj is None or obj.size != f.size:
                return False
        return True

    def committed_batches(self) -> list[BatchRecord]:
        """Batch records after the checkpoint readers use, ascending."""
        base = self.checkpoint()
        through = -1 if base is None else base.through
        return [r for b in sorted(self.batches) if b > through
                for r in [self.batch(b)] if r is not None]

    def files(self, *, unrecorded: bool = False) -> list[LoggedFile]:
        """Files of every committed batch and job whose files are all present, sorted; with
        ``unrecorded``, also every visible file no record names (another committer's)."""
        chosen: dict[str, LoggedFile] = {}
        named: set[str] = set()
        checkpoint = self.checkpoint()
        if checkpoint is not None:  # complete: every file of it is in place
            named |= {f.url for f in checkpoint.files}
            chosen.update((f.url, f) for f in checkpoint.files)
        # named, never read: a newer checkpoint's files still being completed, and what an
        # older checkpoint or a folded batch record names that a compaction replaced and has
        # not deleted yet
        for seq in self.checkpoints:
            named |= {f.url for f in self.read_checkpoint(seq).files}
        through = -1 if checkpoint is None else checkpoint.through
        for b in self.batches:
            record = self.batch(b) if unrecorded and b <= through else None
            named |= {f.url for f in record.files} if record is not None else set()
        groups = [r.files for r in self.committed_batches()]
        groups += [tuple(self._job_files(url)) for url in self.job_records]
        for files in groups:
            named |= {f.url for f in files}
            if self.complete(files):
                chosen.update((f.url, f) for f in files)
        if unrecorded:
            chosen.update((u, LoggedFile(u, o.size)) for u, o in self.objects.items()
                          if u not in named)
        return [chosen[u] for u in sorted(chosen)]

    def _job_files(self, url: str) -> list[LoggedFile]:
        job_id = relative_to(url, self.dest).split("/", 1)[0][len(FENCED_AREA.prefix):]
        record = FencedCommitRecord.from_bytes(self.store.get(url), url, job_id=job_id,
                                               dest=self.dest)
        return [LoggedFile(u.url, u.size) for u in record.uploads]


def table_files(store: Store, dest: str) -> list[CommittedFile]:
    """Every committed file of ``dest`` — all batches of a zerorename stream, all jobs of the
    fenced committer — whose batch or job is wholly visible; sorted by URL.

    Raises :class:`NotFoundError` when ``dest`` holds no commit record at all (written by
    another committer, or nothing committed yet): list the destination instead.
    """
    log = TableLog(store, dest)
    if not log.has_records:
        raise NotFoundError(join(dest.rstrip("/"), LOG_DIR),
                            f"no commit records under {dest}: it was not written by the "
                            "zerorename stream sink or the fenced committer")
    return [CommittedFile(f.url, f.size, log.objects[f.url].etag) for f in log.files()]


def complete_upload(store: Store, f: LoggedFile) -> None:
    """Complete one recorded upload; an upload already gone is done when the object holds its
    data (:func:`~zerorename.committers.existing_keys.object_holds`: its size, part count and
    multipart ETag; on S3, another writer's single PUT of the same size is not it)."""
    try:
        store.complete_multipart(f.url, f.upload_id, [(i + 1, e) for i, e in enumerate(f.etags)])
    except NotFoundError:
        info = store.head(f.url)
        if info is None or not object_holds(
                info, f.size, f.etags, multipart_etags=gives_multipart_etags(store, f.url)):
            raise
