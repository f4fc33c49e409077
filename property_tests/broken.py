"""Committers broken on purpose, to show that the per-step invariants catch what the
end-of-run properties cannot.

Each is a model protocol with one change; it is not registered (it appears in no matrix), and
it inherits its base class's declarations — so the suite checks it for the promises the real
committer makes.
"""

from __future__ import annotations

from typing import Any

from zerorename_model.systems.protocols.common import join, relative
from zerorename_model.systems.protocols.staging import DirectoryStagingCommitter


# the model's protocols are not yet typed (mypy follows them as Any: issue 12, item 8)
class PreviewingStagingCommitter(DirectoryStagingCommitter):  # type: ignore[misc]
    """The directory staging committer whose task commit first PUTs each file at its final
    key — a "preview" — and deletes it again, then commits as usual.

    When the run ends the destination is exactly what the real committer leaves (the preview
    is gone before the task even reports success), so completeness, exclusivity, abortability
    and continuity all hold; but between the PUT and the DELETE a reader listing the
    destination sees output of a job that has not committed and may never commit."""

    def commit_task(self) -> dict[str, Any]:
        for obj in self.local_files():
            url = join(self.dest, relative(obj.url, self.local_attempt_path))
            self.fs.put(url, self.local().get(obj.url))
            self.fs.delete(url)
        result: dict[str, Any] = super().commit_task()
        return result
