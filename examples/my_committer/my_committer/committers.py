"""Two committers built on zerorename's ``fenced`` committer, as a company fork would be.

* :class:`CarefulCommitter` keeps fenced's protocol: a task's files are multipart uploads left
  uncompleted until the job commits.
* :class:`EagerCommitter` "saves the job commit some work": its task commit completes the
  task's uploads at once.  That is the flaw: a task's output is visible before the job
  commits, and stays visible when the job is aborted afterwards.
"""

from __future__ import annotations

import zerorename as zr
from zerorename.committers import FencedCommitter
from zerorename.formats import PendingSet


class CarefulCommitter(FencedCommitter):
    """fenced, unchanged: what a fork looks like before its first change."""


class EagerCommitter(CarefulCommitter):
    """Publishes at task commit (the flaw the suites find)."""

    def commit_task(self) -> zr.TaskCommitMessage:
        message = super().commit_task()
        pendingset = PendingSet.from_json(message.payload["pendingset"])
        for upload in pendingset.commits:  # complete now: the file becomes visible
            self.store.complete_multipart(upload.url, upload.upload_id, upload.parts)
        return message
