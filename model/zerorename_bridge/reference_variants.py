"""Reference committers with a safeguard taken out, for the research harness only.

The production package has no switch to turn its landed checks off, and must not: these
subclasses exist so that exploration can show what each check protects (issue 34), the way
the model's variant rows do.  ``fenced`` recognises its own records twice over — the retry
loop's ``put_landed``/``complete_landed`` (:class:`~zerorename_bridge.adapters.BlindRetryPolicy`
turns those off) and its own comparisons of a record's bytes and of a completed object's size
and ETag — so its variant loses both, as the model's ``fenced+no-landed-check`` does.
"""

from __future__ import annotations

from zerorename.committers.fenced import CommittedUploads, FencedCommitter
from zerorename.committers.fenced_records import FencedCommitRecord, RecordedUpload
from zerorename.errors import CommitError, PreconditionFailedError
from zerorename.formats import PendingSet

__all__ = ["UnrecognisingFencedCommitter"]


class UnrecognisingFencedCommitter(FencedCommitter):
    """``fenced`` that never recognises its own earlier success: a task record or commit
    record PUT that meets 412 takes the record there for another writer's, and a complete
    that meets NoSuchUpload fails (the production class checks the bytes, the size and the
    ETag first)."""

    def _put_task_record(self, url: str, data: bytes) -> PendingSet | None:
        try:
            self.store.put(url, data, if_none_match=True)
            return None
        except PreconditionFailedError:
            return PendingSet.from_bytes(self.store.get(url), url)

    def _save_commit_record(self, record: FencedCommitRecord,
                            committed: CommittedUploads) -> None:
        data = record.encode(committed.uploads())
        try:
            self.store.put(self.commit_record_url, data, if_none_match=True)
        except PreconditionFailedError:
            raise CommitError(self.commit_record_url, f"job {self.job.id} was already "
                              "committed by another job attempt") from None

    def _complete_one(self, upload: RecordedUpload, *, condition: bool = True) -> str:
        return self.store.complete_multipart(upload.url, upload.upload_id, upload.parts,
                                             if_none_match=condition)
