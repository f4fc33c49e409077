"""Committer classes "from outside the tree" for tests/test_committer_plugins.py, named to
``zerorename check`` as ``tests.plugin_committers:<Class>``."""

from __future__ import annotations

import zerorename as zr
from zerorename.committers import FencedCommitter
from zerorename.formats import PendingSet


class PublishingAtTaskCommit(FencedCommitter):
    """fenced whose task commit completes its uploads: output visible before job commit."""

    def commit_task(self) -> zr.TaskCommitMessage:
        message = super().commit_task()
        for upload in PendingSet.from_json(message.payload["pendingset"]).commits:
            self.store.complete_multipart(upload.url, upload.upload_id, upload.parts)
        return message


class NoContract:
    """Not a committer: lacks the contract's methods."""

    visible_before_job_commit = False

    def setup_job(self) -> None:
        pass


class Undeclared(FencedCommitter):
    """A committer that hides whether its output may be visible before job commit."""

    visible_before_job_commit = None  # type: ignore[assignment]
