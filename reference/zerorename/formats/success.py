"""The JSON ``_SUCCESS`` file that both Hadoop committer families write, and reading it back.

People read it (``zerorename success``, the job's summary), so it is indented and prints as
one line; programs read it to learn what a job committed (:func:`read_success`), so a 0-byte
marker from a classic committer is told apart from a missing one.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from zerorename import statistics as S
from zerorename.errors import FormatError, NotFoundError
from zerorename.formats.base import JsonRecord, date_text, now_millis
from zerorename.formats.fields import int_field, mapping_of, stats_field, str_field, str_map_field
from zerorename.store import Store
from zerorename.urls import join

__all__ = ["SUCCESS_FILE_LIMIT", "SUCCESS_NAME", "SuccessData", "read_success"]

SUCCESS_NAME = "org.apache.hadoop.fs.s3a.commit.files.SuccessData/1"
#: Hadoop's SUCCESS_MARKER_FILE_LIMIT: ``filenames`` is a sample, not the full list.
SUCCESS_FILE_LIMIT = 100
#: Hadoop S3A's counter of multipart uploads its job commit completed: one per file
S3A_COMMITS_COMPLETED = S.COMMITTER_COMMITS_COMPLETED


#: the class-name prefixes of zerorename's committers (Python, JVM) in ``_SUCCESS`` diagnostics
ZERORENAME_CLASSES = ("zerorename.", "io.zerorename.")


@dataclass
class SuccessData(JsonRecord):
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
        d = mapping_of(data, path, "_SUCCESS file")
        name = d.get("name")
        if name != SUCCESS_NAME:
            raise FormatError(path, f"incompatible file format: name is {name!r}, "
                                    f"expected {SUCCESS_NAME!r}")
        filenames = d.get("filenames", [])
        if not isinstance(filenames, list) or not all(isinstance(f, str) for f in filenames):
            raise FormatError(path, "field 'filenames' is not a list of strings")
        metrics = d.get("metrics")
        if metrics is None:  # absent: no metrics (a falsy value of another type is refused)
            metrics = {}
        if not isinstance(metrics, Mapping) or not all(
                isinstance(v, int) and not isinstance(v, bool) for v in metrics.values()):
            raise FormatError(path, "field 'metrics' must map names to integers")
        success = d.get("success", True)
        if not isinstance(success, bool):
            raise FormatError(path, f"field 'success' is not a boolean: {success!r}")
        return cls(
            committer=str_field(d, "committer", path), job_id=str_field(d, "jobId", path),
            job_id_source=str_field(d, "jobIdSource", path),
            timestamp=int_field(d, "timestamp", path, default=0, minimum=0),
            hostname=str_field(d, "hostname", path), description=str_field(d, "description", path),
            success=success, filenames=list(filenames),
            metrics={str(k): int(v) for k, v in metrics.items()},
            diagnostics=str_map_field(d.get("diagnostics"), path, "diagnostics"),
            iostatistics=stats_field(d.get("iostatistics"), path),
            state=str_field(d, "state", path), stage=str_field(d, "stage", path),
        )

    def counter(self, name: str) -> int:
        """An iostatistics counter (0 if absent)."""
        counters = self.iostatistics.get("counters", {})
        value = counters.get(name, 0) if isinstance(counters, Mapping) else 0
        return int(value) if isinstance(value, int) else 0

    @property
    def written_by_zerorename(self) -> bool:
        """Whether one of zerorename's committers wrote this (its diagnostics name the class:
        the Python ``zerorename.committers.…`` or the JVM ``io.zerorename.committer.…``);
        otherwise Hadoop's S3A committers did, whose names (``magic``, ``directory``,
        ``partitioned``) zerorename's share."""
        return self.diagnostics.get("committer.class", "").startswith(ZERORENAME_CLASSES)

    @property
    def origin(self) -> str:
        return "zerorename" if self.written_by_zerorename else "Hadoop S3A"

    @property
    def files_committed(self) -> int:
        """Files the job made visible.  zerorename counts them as ``committer_files_committed``;
        Hadoop's S3A committers do not, and complete one multipart upload per file
        (``committer_commits_completed``)."""
        counters = self.iostatistics.get("counters", {})
        if not self.written_by_zerorename and isinstance(counters, Mapping) \
                and S.COMMITTER_FILES_COMMITTED not in counters:
            return self.counter(S3A_COMMITS_COMPLETED)
        return self.counter(S.COMMITTER_FILES_COMMITTED)

    def __str__(self) -> str:
        """One line: whose job, whether it succeeded, how much it committed, when.  (The
        generated repr printed every field, up to 100 file names and every statistic.)"""
        state = "succeeded" if self.success else "FAILED"
        committer = self.committer if self.written_by_zerorename \
            else f"{self.origin} {self.committer}"
        return (f"_SUCCESS of job {self.job_id} ({committer} committer): {state}, "
                f"{self.files_committed} files, "
                f"{self.counter(S.COMMITTER_BYTES_COMMITTED)} bytes committed, "
                f"{date_text(self.timestamp)} on {self.hostname or '?'}")

    def __repr__(self) -> str:
        return (f"SuccessData(committer={self.committer!r}, job_id={self.job_id!r}, "
                f"success={self.success!r}, filenames=<{len(self.filenames)}>, "
                f"timestamp={self.timestamp!r})")

    def describe(self) -> str:
        """A human-readable summary (what ``zerorename success`` prints)."""
        origin = "" if self.written_by_zerorename else f" ({self.origin} committer)"
        lines = [
            f"committer:   {self.committer}{origin}",
            f"job:         {self.job_id} ({self.job_id_source or 'unknown source'})",
            f"success:     {self.success}",
            f"date:        {date_text(self.timestamp)} on {self.hostname or '?'}",
            f"files:       {self.files_committed} committed, "
            f"{self.counter(S.COMMITTER_BYTES_COMMITTED)} bytes",
        ]
        if self.description:
            lines.append(f"description: {self.description}")
        for name in self.filenames:
            lines.append(f"  {name}")
        if len(self.filenames) >= SUCCESS_FILE_LIMIT:
            lines.append(f"  (list capped at {SUCCESS_FILE_LIMIT})")
        for key, value in sorted(self.diagnostics.items()):
            lines.append(f"diagnostic {key} = {value}")
        metrics = {name: count for name, count in self.metrics.items() if count}
        if metrics:
            # S3A writes its filesystem's counters here, over 100, mostly 0 (and counted
            # over every job of the filesystem instance, not just this one)
            omitted = len(self.metrics) - len(metrics)
            lines.append("metrics" + (f" ({omitted} zero omitted)" if omitted else "") + ":")
            width = max(len(name) for name in metrics)
            for name, count in sorted(metrics.items()):
                lines.append(f"  {name:<{width}} {count:>10}")
        counters = self.iostatistics.get("counters", {})
        if isinstance(counters, Mapping) and counters:
            lines.append("statistics (docs: zerorename.statistics):")
            width = max(len(str(name)) for name in counters)
            for name, value in sorted(counters.items()):
                meaning = S.describe(str(name))
                lines.append(f"  {name:<{width}} {value:>10}" + (f"  {meaning}" if meaning else ""))
        return "\n".join(lines)



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
