"""The same two designs as model committers (``zerorename check --target model``): the
model's fenced protocol, and one whose task commit completes its uploads."""

from __future__ import annotations

from typing import Any

from zerorename_model.systems.protocols.common import complete_pending
from zerorename_model.systems.protocols.fenced import FencedCommitter


class CarefulModelCommitter(FencedCommitter):  # type: ignore[misc]
    """The model's fenced protocol, unchanged."""


class EagerModelCommitter(FencedCommitter):  # type: ignore[misc]
    """Completes the task's uploads in its task commit (the flaw)."""

    def commit_task(self) -> Any:
        record = super().commit_task()
        if isinstance(record, dict):  # this attempt won (else: CommittedByAnother)
            for upload in self.uploads:
                complete_pending(self.fs, upload)
        return record
