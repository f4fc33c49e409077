"""The manifest committer's per-task record, field-compatible with Hadoop's
(``...committer.manifest.files.TaskManifest/1``, with its short keys ``s d z e`` / ``d t l``).

A task attempt's manifest lists the files job commit renames into the destination and the
directories it must create; it is validated as strictly as the upload records, because job
commit acts on every entry.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from zerorename.errors import FormatError
from zerorename.formats.base import JsonRecord
from zerorename.formats.fields import (
    int_field,
    mapping_of,
    stats_field,
    str_field,
    str_map_field,
    version_field,
)
from zerorename.formats.uploads import check_unique_destinations

__all__ = ["MANIFEST_TYPE", "MANIFEST_VERSION", "DirEntry", "FileEntry", "TaskManifest"]

MANIFEST_VERSION = 1
MANIFEST_TYPE = (
    "org.apache.hadoop.mapreduce.lib.output.committer.manifest.files.TaskManifest/"
    f"{MANIFEST_VERSION}"
)


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
class TaskManifest(JsonRecord):
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
        d = mapping_of(data, path, "task manifest")
        kind = d.get("type")
        if kind != MANIFEST_TYPE:
            raise FormatError(path, f"type {kind!r} is not {MANIFEST_TYPE!r}")
        version = version_field(d, path, MANIFEST_VERSION, "task manifest")
        raw_files = d.get("files", [])
        raw_dirs = d.get("directories", [])
        if not isinstance(raw_files, list) or not isinstance(raw_dirs, list):
            raise FormatError(path, "fields 'files' and 'directories' must be lists")
        files: list[FileEntry] = []
        for i, entry in enumerate(raw_files):
            where = f"{path} (file entry {i})"
            e = mapping_of(entry, where, "file entry")
            etag = e.get("e")
            if etag is not None and not isinstance(etag, str):
                raise FormatError(where, f"etag is not a string: {etag!r}")
            files.append(FileEntry(
                source=str_field(e, "s", where, non_empty=True),
                dest=str_field(e, "d", where, non_empty=True),
                size=int_field(e, "z", where, minimum=0), etag=etag or None,
            ))
        dirs: list[DirEntry] = []
        for i, entry in enumerate(raw_dirs):
            where = f"{path} (directory entry {i})"
            e = mapping_of(entry, where, "directory entry")
            dirs.append(DirEntry(
                dest=str_field(e, "d", where, non_empty=True),
                status=int_field(e, "t", where, default=0),
                level=int_field(e, "l", where, default=0, minimum=0),
            ))
        manifest = cls(
            job_id=str_field(d, "jobId", path, non_empty=True),
            job_attempt=int_field(d, "jobAttemptNumber", path, default=0, minimum=0),
            task_id=str_field(d, "taskID", path, non_empty=True),
            task_attempt_id=str_field(d, "taskAttemptID", path, non_empty=True),
            task_attempt_dir=str_field(d, "taskAttemptDir", path, non_empty=True),
            files=files, directories=dirs,
            extra_data=str_map_field(d.get("extraData"), path, "extraData"),
            iostatistics=stats_field(d.get("iostatistics"), path), version=version,
        )
        check_unique_destinations((f.dest for f in files), path)
        return manifest

