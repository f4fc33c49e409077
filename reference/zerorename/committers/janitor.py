"""What ``zerorename uploads abort`` may abort, and the records a job's abort removes.

The janitor (``zerorename uploads abort <dest>`` run from cron, say) aborts the incomplete
uploads under a destination.  Some of them may belong to a job in flight — on the destination,
in a directory inside it, or above it — and aborting those would fail that job after it had
been told its tasks were committed.  So, without ``--job``, an upload is aborted only where no
job is active (:class:`~zerorename.committers.neighbours.Neighbours`); the others are
reported, with the job roots that hold them back.  A job that crashed leaves its job root, and
its uploads are aborted by naming it: ``--job <id>``, which then removes the job's records too,
so an aborted job leaves nothing behind.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from zerorename.committers.cleanup import UPLOAD_RECORD_AREAS, PendingUpload
from zerorename.committers.deletes import delete_pages
from zerorename.committers.neighbours import Neighbours
from zerorename.store import Store, list_dir

__all__ = ["Sorted", "delete_job_records", "job_records", "sort_by_activity"]


@dataclass
class Sorted:
    """Uploads a janitor may abort, and those held back by a job in flight."""

    free: list[PendingUpload] = field(default_factory=list)
    held: list[PendingUpload] = field(default_factory=list)


def sort_by_activity(store: Store, dest: str, uploads: Sequence[PendingUpload]) -> Sorted:
    """Split ``uploads`` (under ``dest``) by whether a job is active above ``dest``, in it, or
    between it and the upload's key."""
    neighbours = Neighbours(store)
    above = neighbours.active_above(dest)
    result = Sorted()
    for upload in uploads:
        if above or neighbours.active_between(dest, upload.url):
            result.held.append(upload)
        else:
            result.free.append(upload)
    return result


def job_records(store: Store, dest: str, job_id: str) -> list[str]:
    """Every record of ``job_id`` under ``dest``: its job roots of every committer family."""
    return [o.url for area in UPLOAD_RECORD_AREAS
            for o in list_dir(store, area.root(dest, job_id))]


def delete_job_records(store: Store, urls: Sequence[str]) -> int:
    """Delete ``urls`` (from :func:`job_records`); returns how many."""
    delete_pages(store, sorted(urls))
    return len(urls)
