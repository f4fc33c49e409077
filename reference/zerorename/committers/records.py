"""Retention of the hidden records a finished job leaves, and their expiry.

Every committer removes its job root when the job ends (commit, abort or cleanup), except the
fenced committer's commit record (``__fenced_job-<id>/commit.json``): it is the commit point,
and a late task commit of that job reads it to learn that it was fenced out.  Late task
commits come from attempts the driver gave up on, which do not live for ever, so the record
is needed only for a while: the **retention** (option :data:`RETENTION_OPTION`, default
:data:`DEFAULT_RETENTION` seconds).  Afterwards it is *expired*: the cleanup of the next
fenced job on the destination deletes the expired records of earlier jobs, and
``zerorename records expire <dest>`` does the same on demand.  The hidden objects of a
destination therefore do not grow with the number of jobs written to it.

Only a finished job's record expires: a job root holding anything besides its commit record
(a job attempt's marker, task records) is a job in flight, or one whose commit has uploads
still to complete — its record is their only copy, and it is never touched.  Ages come from
one listing of the destination's fenced job roots (each record's last-modified time): no
record is read to expire it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from zerorename import options as O
from zerorename.committers.deletes import delete_pages
from zerorename.committers.layout import FENCED_AREA, FENCED_COMMIT_RECORD
from zerorename.store import ObjectInfo, Store, list_all
from zerorename.urls import dir_prefix

__all__ = ["DEFAULT_RETENTION", "RETENTION_OPTION", "ExpiredRecord", "delete_expired",
           "find_expired", "list_fenced_roots"]

#: How long a finished fenced job's commit record is kept (seconds; durations such as ``1h``
#: are accepted where the option is read).
RETENTION_OPTION = O.FENCED_RECORD_RETENTION.name
#: One day: far beyond how long Spark lets an abandoned task attempt run.
DEFAULT_RETENTION = 24 * 3600.0


@dataclass(frozen=True)
class ExpiredRecord:
    """A finished job's commit record past the retention: its URL, job ID and age (s)."""

    url: str
    job_id: str
    age: float


def list_fenced_roots(store: Store, dest: str) -> list[ObjectInfo]:
    """Every object under ``dest``'s fenced job roots: one paged LIST.  A fenced job commit
    lists its own root this way, so that expiring the others costs no request more."""
    return list(list_all(store, dir_prefix(dest) + FENCED_AREA.prefix))


def find_expired(store: Store, dest: str, *, older_than: float, now: float,
                 keep_root: str | None = None,
                 listed: Sequence[ObjectInfo] | None = None) -> list[ExpiredRecord]:
    """The commit records of finished fenced jobs on ``dest`` older than ``older_than``
    seconds at ``now``, except the one under ``keep_root`` (the job that is cleaning up).
    ``listed`` reuses a :func:`list_fenced_roots` listing already made."""
    objects = list_fenced_roots(store, dest) if listed is None else listed
    held: dict[str, list[ObjectInfo]] = {}
    for info in objects:
        root, _, _rest = info.url[len(dir_prefix(dest)):].partition("/")
        held.setdefault(root, []).append(info)
    keep = keep_root.rstrip("/").rsplit("/", 1)[-1] if keep_root is not None else None
    found: list[ExpiredRecord] = []
    for root, entries in sorted(held.items()):
        if root == keep or len(entries) != 1 \
                or not entries[0].url.endswith(f"/{root}/{FENCED_COMMIT_RECORD}"):
            continue  # in flight, or its uploads are not all completed: kept
        modified = entries[0].mtime
        if modified is not None and now - modified >= older_than:
            found.append(ExpiredRecord(entries[0].url, root[len(FENCED_AREA.prefix):],
                                       now - modified))
    return found


def delete_expired(store: Store, records: Sequence[ExpiredRecord]) -> int:
    """Delete ``records``; returns how many."""
    delete_pages(store, [r.url for r in records])
    return len(records)
