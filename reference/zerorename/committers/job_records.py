"""The records a job keeps beside its output: the job attempt's marker, and the JSON records
(intents, pendingsets) the committers write through :meth:`JobRecords.put_json`.

Apart from the lifecycle because where records live is a committer's choice (the staging
committers keep them on the cluster filesystem, not in the destination): the lifecycle only
asks :meth:`JobRecords.records_store` and :meth:`JobRecords.job_layout`.  The marker is what
lets one committer object commit a job another object set up, so its writing and its check
are kept together here.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from zerorename.committers.layout import JobLayout
from zerorename.committers.paths import check_destination
from zerorename.committers.reliable import ReliableStore
from zerorename.committers.state import CommitterState
from zerorename.errors import NotFoundError

__all__ = ["JobRecords"]


class JobRecords(CommitterState):
    """Where a committer's job records live and the marker of a set-up job attempt."""

    def check_in_destination(self, url: str, path: str) -> str:
        """:func:`~zerorename.committers.paths.check_destination` against this job's
        destination: every URL a task record names passes it before job commit uses it."""
        return check_destination(url, self.dest, path)

    def put_json(self, url: str, data: Mapping[str, Any]) -> None:
        self.records_store().put(url, json.dumps(dict(data), ensure_ascii=False)
                                 .encode("utf-8"))

    def records_store(self) -> ReliableStore:
        """Where the job keeps its records (markers, intents, pendingsets): the destination
        store unless a committer keeps them elsewhere (the staging committers' cluster
        filesystem)."""
        return self.store

    def write_marker(self) -> None:
        self.put_json(self.job_layout().marker, {
            "jobId": self.job.id, "jobAttempt": self.job.attempt, "committer": self.name,
            "destination": self.dest,
        })

    def job_layout(self) -> JobLayout:
        raise NotImplementedError

    def require_marker(self) -> None:
        """Hadoop protocol: commit_job of a job attempt that was never set up, or has already
        been committed or aborted (both delete the marker), must fail, not publish again."""
        marker = self.job_layout().marker
        if self.records_store().head(marker) is None:
            raise NotFoundError(marker, f"job attempt directory does not exist: job {self.job.id}"
                                        " was never set up, or was already committed or aborted")
