"""Where the committers keep their data inside a destination, named in one place.

Each committer family owns a directory at the root of the destination per job (its *job
root*): the magic committer ``__magic_job-<id>``, the staging committers
``__staging_job-<id>``, the fenced committer ``__fenced_job-<id>``, the rename committers
``_temporary/<id>``.  Tasks may not write there (:func:`~zerorename.committers.paths.
check_relpath`), cleanup finds a job's records there, and a committer recognises another
job's area there — so the names live here, beside :class:`JobLayout`, the paths inside one
job root, rather than as strings repeated in each module.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from zerorename.urls import dir_prefix, join

__all__ = [
    "FENCED_AREA",
    "FENCED_COMMIT_RECORD",
    "MAGIC_AREA",
    "RENAME_AREA",
    "RESERVED_FIRST_ELEMENTS",
    "RESERVED_PREFIXES",
    "STAGING_AREA",
    "SUCCESS_MARKER",
    "JobArea",
    "JobLayout",
    "RecordPlace",
    "in_committer_area",
    "place_of",
]

SUCCESS_MARKER = "_SUCCESS"


@dataclass(frozen=True)
class JobArea:
    """The job roots of one committer family at the root of a destination: ``<prefix><id>``,
    or ``<prefix>/<id>`` when ``nested`` (the rename committers' shared ``_temporary``)."""

    prefix: str
    nested: bool = False

    def root(self, dest: str, job_id: str) -> str:
        """The job root of ``job_id`` under ``dest``."""
        return join(dest, self.relative_root(job_id))

    def relative_root(self, job_id: str) -> str:
        return f"{self.prefix}/{job_id}" if self.nested else f"{self.prefix}{job_id}"

    def holds(self, first_element: str) -> bool:
        """Is a destination's first path element (a directory name) a job root of this
        family?"""
        if self.nested:
            return first_element == self.prefix
        return first_element.startswith(self.prefix)


MAGIC_AREA = JobArea("__magic_job-")
STAGING_AREA = JobArea("__staging_job-")
FENCED_AREA = JobArea("__fenced_job-")
RENAME_AREA = JobArea("_temporary", nested=True)
#: The fenced committer's job commit record, at its job root: kept after the job, it fences
#: late task commits, and until every upload it names is completed it is their only record.
FENCED_COMMIT_RECORD = "commit.json"

#: First path elements a task may not write under, and why: the committers' working
#: directories sit at the root of the destination, and so does the job's ``_SUCCESS`` — a file
#: *under* ``_SUCCESS/`` would make the marker's name a directory, and job commit fail after
#: the data was published.  (Deeper elements are ordinary names: ``a/_SUCCESS`` is output.)
RESERVED_FIRST_ELEMENTS: Mapping[str, str] = MappingProxyType({
    RENAME_AREA.prefix: "is reserved for committer data (the rename committers' working "
                        "directory)",
    SUCCESS_MARKER: "is reserved: job commit writes the _SUCCESS marker there",
})
#: First-element prefixes of the magic, staging and fenced committers' per-job directories
#: (``__magic`` also covers Hadoop's magic paths, ``__magic/…``, besides ``__magic_job-``).
RESERVED_PREFIXES = ("__magic", STAGING_AREA.prefix, FENCED_AREA.prefix)


def in_committer_area(rel: str) -> bool:
    """Is ``rel`` (a path relative to a destination) inside some committer's working area —
    any job's, of any family, at any depth?  What a job may delete from there is not output:
    a staging job replacing the destination must leave every other job's area alone,
    including that of a job writing a directory inside it (``date=1/__magic_job-<id>/``)."""
    return any(part == RENAME_AREA.prefix or part.startswith(RESERVED_PREFIXES)
               for part in rel.split("/"))


#: Suffixes of the upload records under a job root: a task attempt's pendingset (every upload
#: it commits), one file's pending commit (magic, file-based tracking), and an upload intent
#: (keys named before their uploads are created).
PENDINGSET = ".pendingset"
PENDING = ".pending"
INTENT = ".intent"
TASKS_DIR = "tasks"
PENDINGSETS_DIR = "pendingsets"


def attempt_dir_name(job_attempt: int) -> str:
    """A job attempt's directory under the job root: two digits, so listings sort by
    attempt."""
    return f"{job_attempt:02d}"


@dataclass(frozen=True)
class JobLayout:
    """Where a job keeps its records: ``root`` holds every job attempt; ``attempt_dir`` this
    one.  Task data and records are per task *attempt*, so attempts never share a path."""

    root: str
    attempt: int

    @property
    def attempt_dir(self) -> str:
        return self.attempt_dir_of(self.attempt)

    def attempt_dir_of(self, attempt: int) -> str:
        return join(self.root, attempt_dir_name(attempt))

    @property
    def marker(self) -> str:
        """Written by setup_job; Hadoop-protocol job commit requires it (a second commit of
        the same job finds it gone and fails, as Hadoop's does)."""
        return join(self.attempt_dir, "_job.json")

    @property
    def tasks_dir(self) -> str:
        return join(self.attempt_dir, TASKS_DIR)

    def task_dir(self, attempt_id: str) -> str:
        return join(self.tasks_dir, attempt_id)

    def task_intent(self, attempt_id: str) -> str:
        return join(self.tasks_dir, f"{attempt_id}{INTENT}")

    @property
    def pendingsets_dir(self) -> str:
        return join(self.attempt_dir, PENDINGSETS_DIR)

    def pendingset(self, attempt_id: str) -> str:
        return join(self.pendingsets_dir, f"{attempt_id}{PENDINGSET}")

    @property
    def manifests_dir(self) -> str:
        return join(self.attempt_dir, "manifests")

    def manifest(self, attempt_id: str) -> str:
        return join(self.manifests_dir, f"{attempt_id}-manifest.json")

    @property
    def committed_dir(self) -> str:
        return join(self.attempt_dir, "committed")

    def committed_task_dir(self, task_name: str, attempt: int | None = None) -> str:
        base = self.committed_dir if attempt is None else join(self.attempt_dir_of(attempt),
                                                              "committed")
        return join(base, task_name)


@dataclass(frozen=True)
class RecordPlace:
    """Where a record found by listing a job root sits in :class:`JobLayout`: the task
    attempt it belongs to, and whether it is the attempt's own record (its
    ``tasks/<attempt>.intent`` or ``pendingsets/<attempt>.pendingset``) rather than a file
    under its task directory."""

    task_attempt: str
    task_level: bool
    in_tasks: bool


def place_of(root: str, url: str) -> RecordPlace | None:
    """The inverse of :class:`JobLayout` for any job attempt under ``root``: cleanup lists a
    job root and must attribute each record to its task attempt; None for records no task
    attempt owns (markers, manifests)."""
    rel = url[len(dir_prefix(root)):]
    parts = rel.split("/")
    if len(parts) < 3:
        return None
    name = parts[2]
    if parts[1] == TASKS_DIR:
        if len(parts) == 3 and name.endswith(INTENT):
            return RecordPlace(name[: -len(INTENT)], task_level=True, in_tasks=True)
        return RecordPlace(name, task_level=len(parts) == 3, in_tasks=True)
    if parts[1] == PENDINGSETS_DIR and len(parts) == 3 and name.endswith(PENDINGSET):
        return RecordPlace(name[: -len(PENDINGSET)], task_level=True, in_tasks=False)
    return None
