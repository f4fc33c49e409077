"""The fenced committer's records and outcomes: the job commit record (the commit point,
self-contained so a later job attempt can roll forward from it alone), the ``_SUCCESS`` that
names every committed file, and the errors that tell a caller which attempt won.

Apart from :mod:`~zerorename.committers.fenced` because readers need them without the
committer (:func:`zerorename.committed_files` reads ``_SUCCESS``) and because the formats are
a contract between job attempts, possibly of different versions: they change on their own
terms, not with the protocol code.
"""

from __future__ import annotations

import hashlib
import io
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from zerorename.committers.paths import check_destination
from zerorename.errors import CommitError, FormatError, JobFailedError
from zerorename.formats import SuccessData, check_unique_destinations, parse_json
from zerorename.messages import TaskCommitMessage

__all__ = [
    "COMMIT_RECORD_FORMAT",
    "SUCCESS_FILES_KEY",
    "CommittedFile",
    "ConditionalWriteUnsupportedError",
    "FencedCommitRecord",
    "FencedSuccessData",
    "JobAlreadyCommittedError",
    "JobCommitIncompleteError",
    "JobCommitRefusedError",
    "RacyConditionalWritesError",
    "RecordedUpload",
    "TaskCommittedByOtherAttemptError",
    "TaskFencedError",
    "expected_multipart_etag",
]

COMMIT_RECORD_FORMAT = "zerorename.FencedJobCommit/1"
#: the ``_SUCCESS`` key holding every committed file (Hadoop readers ignore unknown keys)
SUCCESS_FILES_KEY = "zerorename.fenced.files"


# -- errors and outcomes ----------------------------------------------------------------------


class ConditionalWriteUnsupportedError(CommitError):
    """The store does not refuse a second ``If-None-Match: *`` PUT, so it cannot arbitrate
    commits.  Raised by ``setup_job`` before any output is written."""


class RacyConditionalWritesError(ConditionalWriteUnsupportedError):
    """The store refuses a second ``If-None-Match: *`` PUT, but let two or more *racing*
    writers win one key when measured: two attempts of one task could both commit.  Raised by
    ``setup_job`` before any output is written, unless ``override`` (the option that accepts
    the risk) was set.  ``store`` names the store, ``winners`` the most racers that won one
    key, of ``writers``, and ``rounds`` how many rounds were raced."""

    def __init__(self, path: str, reason: str, *, store: str, winners: int, writers: int,
                 rounds: int, override: str) -> None:
        super().__init__(path, reason)
        self.store = store
        self.winners = winners
        self.writers = writers
        self.rounds = rounds
        self.override = override


class TaskCommittedByOtherAttemptError(CommitError):
    """Another attempt of this task committed first (its record PUT won).  This attempt's
    uploads have been aborted; ``winner`` names the attempt whose output the task keeps, and
    ``message`` is that attempt's commit message, built from its record: a driver that never
    received it (the winner died after its PUT) may commit the task with it."""

    def __init__(self, path: str, reason: str, winner: str,
                 message: TaskCommitMessage | None = None) -> None:
        super().__init__(path, reason)
        self.winner = winner
        self.message = message


class TaskFencedError(CommitError):
    """The job was committed without this attempt (its task commit arrived after the job's
    commit point, or the job was committed by another job attempt); its uploads are aborted."""


class JobAlreadyCommittedError(CommitError):
    """Not a failure: this job was committed (by this or an earlier job attempt), and
    ``setup_job`` finished publishing it (rolled forward).  Do not run its tasks again;
    ``success`` is its ``_SUCCESS`` data."""

    def __init__(self, path: str, reason: str, success: SuccessData) -> None:
        super().__init__(path, reason)
        self.success = success


class JobCommitIncompleteError(JobFailedError):
    """The job passed its commit point (its commit record is saved) but some uploads could not
    be completed now.  Nothing was reverted: the next job attempt (``setup_job`` of the same
    job ID) rolls forward and completes them."""


class JobCommitRefusedError(CommitError):
    """Before its commit point, the job commit found objects it did not write at keys it
    would complete (another writer's).  Nothing is committed: the failed commit aborts the
    job's uploads and deletes its records, and every such object is kept as it was.  ``path``
    is the first such key, ``keys`` every one.  Move the objects away (or write elsewhere)
    and rerun the job."""

    def __init__(self, path: str, reason: str, *, keys: Sequence[str]) -> None:
        super().__init__(path, reason)
        self.keys = list(keys)


# -- formats -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class CommittedFile:
    """One file of a committed job: its URL, size and ETag (as completed)."""

    url: str
    size: int
    etag: str

    def to_json(self) -> dict[str, Any]:
        return {"url": self.url, "size": self.size, "etag": self.etag}

    @classmethod
    def from_json(cls, data: Any, path: str) -> CommittedFile:
        if not isinstance(data, Mapping):
            raise FormatError(path, "a committed file entry is not a JSON object")
        url, size, etag = data.get("url"), data.get("size"), data.get("etag")
        if not isinstance(url, str) or not url or not isinstance(etag, str) \
                or isinstance(size, bool) or not isinstance(size, int) or size < 0:
            raise FormatError(path, f"committed file entry {dict(data)!r} needs a 'url', a "
                                    "'size' >= 0 and an 'etag'")
        return cls(url, size, etag)


@dataclass(frozen=True, slots=True)
class RecordedUpload:
    """One uncompleted upload named by a commit record: everything needed to complete it."""

    attempt_id: str
    url: str
    upload_id: str
    etags: tuple[str, ...]
    size: int

    @property
    def parts(self) -> list[tuple[int, str]]:
        return [(i + 1, e) for i, e in enumerate(self.etags)]


@dataclass
class FencedCommitRecord:
    """The job commit record: which attempt committed each task, and every upload to complete.
    Once this object exists the job is committed; it is self-contained, so rolling forward
    needs no other record."""

    job_id: str
    job_attempt: int
    destination: str
    committed: int
    #: task name -> the attempt id that committed it
    tasks: dict[str, str] = field(default_factory=dict)
    uploads: list[RecordedUpload] = field(default_factory=list)
    #: the committed task records (cleanup need not read them: their uploads are all above)
    records: list[str] = field(default_factory=list)

    @property
    def attempts(self) -> set[str]:
        return set(self.tasks.values())

    @property
    def upload_ids(self) -> set[str]:
        return {u.upload_id for u in self.uploads}

    def to_bytes(self) -> bytes:
        return self.encode(self.uploads)

    def encode(self, uploads: Iterable[RecordedUpload]) -> bytes:
        """This record's bytes with ``uploads`` (streamed: a job commit passes them from its
        spool rather than holding an object per upload) in place of :attr:`uploads`.  One
        JSON object, its ``uploads`` last, written entry by entry."""
        head = json.dumps({
            "format": COMMIT_RECORD_FORMAT,
            "jobId": self.job_id,
            "jobAttempt": self.job_attempt,
            "destination": self.destination,
            "committed": self.committed,
            "tasks": dict(sorted(self.tasks.items())),
            "records": sorted(self.records),
        }, ensure_ascii=False, separators=(",", ":"))
        out = io.BytesIO()
        out.write(head[:-1].encode("utf-8"))
        out.write(b',"uploads":[')
        for i, u in enumerate(uploads):
            if i:
                out.write(b",")
            out.write(json.dumps({"a": u.attempt_id, "u": u.url, "i": u.upload_id,
                                  "e": list(u.etags), "z": u.size},
                                 ensure_ascii=False, separators=(",", ":")).encode("utf-8"))
        out.write(b"]}")
        return out.getvalue()

    @classmethod
    def from_bytes(cls, data: bytes, path: str, *, job_id: str, dest: str
                   ) -> FencedCommitRecord:
        """Parse and validate: the right format and job, every upload inside ``dest``."""
        d = parse_json(data, path)
        if not isinstance(d, Mapping) or d.get("format") != COMMIT_RECORD_FORMAT:
            got = d.get("format") if isinstance(d, Mapping) else type(d).__name__
            raise FormatError(path, f"not a fenced commit record: format {got!r}, expected "
                                    f"{COMMIT_RECORD_FORMAT!r}")
        if d.get("jobId") != job_id:
            raise FormatError(path, f"commit record of job {d.get('jobId')!r}, not {job_id}")
        attempt, committed = d.get("jobAttempt"), d.get("committed")
        tasks, uploads = d.get("tasks"), d.get("uploads")
        if isinstance(attempt, bool) or not isinstance(attempt, int) \
                or isinstance(committed, bool) or not isinstance(committed, int) \
                or not isinstance(tasks, Mapping) or not isinstance(uploads, list) \
                or not all(isinstance(k, str) and isinstance(v, str) for k, v in tasks.items()):
            raise FormatError(path, "commit record needs 'jobAttempt', 'committed', 'tasks' "
                                    "(name -> attempt) and 'uploads'")
        parsed: list[RecordedUpload] = []
        for i, u in enumerate(uploads):
            where = f"{path} (upload {i})"
            if not isinstance(u, Mapping):
                raise FormatError(where, "not a JSON object")
            a, url, uid, etags, size = u.get("a"), u.get("u"), u.get("i"), u.get("e"), u.get("z")
            if not (isinstance(a, str) and isinstance(url, str) and isinstance(uid, str)
                    and uid and isinstance(etags, list) and etags
                    and all(isinstance(e, str) for e in etags)
                    and isinstance(size, int) and not isinstance(size, bool) and size >= 0):
                raise FormatError(where, "needs 'a' (attempt), 'u' (url), 'i' (upload id), "
                                         "'e' (part etags) and 'z' (size)")
            check_destination(url, dest, where)
            parsed.append(RecordedUpload(a, url, uid, tuple(etags), size))
        check_unique_destinations((u.url for u in parsed), path)
        records = d.get("records", [])
        if not isinstance(records, list) or not all(isinstance(r, str) for r in records):
            raise FormatError(path, "field 'records' is not a list of URLs")
        return cls(job_id=job_id, job_attempt=attempt, destination=str(d.get("destination")),
                   committed=committed, tasks=dict(tasks), uploads=parsed, records=records)


@dataclass
class FencedSuccessData(SuccessData):
    """``_SUCCESS`` with every committed file, size and ETag (``filenames`` stays Hadoop's
    capped sample).  Hadoop readers ignore the extra key."""

    files: list[CommittedFile] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        data = super().to_json()
        data[SUCCESS_FILES_KEY] = [f.to_json() for f in self.files]
        return data

    def to_bytes(self) -> bytes:
        """The same bytes as ``json.dumps(self.to_json(), indent=2)``, with the file list —
        100,000 entries for a large job — written entry by entry, not built as a list of
        dicts and one string first."""
        data = super().to_json()
        data[SUCCESS_FILES_KEY] = []
        text = json.dumps(data, indent=self.INDENT, ensure_ascii=False)
        empty = "[]\n}"
        if not self.files or not text.endswith(empty):
            return super().to_bytes()
        out = io.BytesIO()
        out.write(text[: -len(empty)].encode("utf-8"))
        out.write(b"[")
        for i, f in enumerate(self.files):
            out.write(b",\n    {\n" if i else b"\n    {\n")
            out.write((f'      "url": {json.dumps(f.url, ensure_ascii=False)},\n'
                       f'      "size": {f.size},\n'
                       f'      "etag": {json.dumps(f.etag, ensure_ascii=False)}\n'
                       "    }").encode())
        out.write(b"\n  ]\n}")
        return out.getvalue()


def expected_multipart_etag(etags: Sequence[str]) -> str | None:
    """The ETag S3 gives an object completed from parts with these ETags
    (``md5(concat(md5 of each part))-N``), or None when a part ETag is not an MD5."""
    try:
        digests = b"".join(bytes.fromhex(e.strip('"')) for e in etags)
    except ValueError:
        return None
    if len(digests) != 16 * len(etags):
        return None
    return f"{hashlib.md5(digests, usedforsecurity=False).hexdigest()}-{len(etags)}"
