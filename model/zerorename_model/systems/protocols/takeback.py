"""The S3A committers' publication step, Hadoop's and zerorename's (the ``+take-back`` rows).

Hadoop's S3A job commit (the model's ``magic``, ``directory`` and ``partitioned``) completes
every upload, PUTs ``_SUCCESS``, then cleans up, all inside ``commitJob``: a request refused
after the completions (a role that loses ``s3:PutObject``, or has no
``s3:ListBucketMultipartUploads`` for the cleanup) fails the job with its files visible.

zerorename's production committers (``reference/zerorename/committers/s3a.py``) differ in two
ways, which the ``+take-back`` variants put into the model:

* a failure before the commit point (``_SUCCESS`` saved) *takes back* the completed files:
  they are deleted before the error goes up, so a failed job leaves nothing visible;
* a failure of the cleanup after ``_SUCCESS`` leaves the job committed (its output is whole
  and visible; what the cleanup left is the next job's sweep's or ``abort_job``'s).

The permission family (``zerorename_model.experiments.permissions``) decides both rows.
"""

from __future__ import annotations

from typing import ClassVar

from zerorename.store import Store
from zerorename_model.engine.errors import ModelStoreError
from zerorename_model.systems.protocols.common import SUCCESS, CommitFailed, join


class Publishes:
    """Mixin of the S3A committers: :meth:`publish`, as Hadoop's or as zerorename's, and the
    two job clean-ups around it, each running the committer's :meth:`clean_up` once."""

    #: zerorename's take-back (False: Hadoop's behaviour)
    take_back: ClassVar[bool] = False
    fs: Store
    dest: str
    _cleaned: bool
    #: :data:`~zerorename_model.systems.protocols.common.CLEANUP_ABORT_FAILS_ON_MISSING` is set
    abort_fails_on_missing: bool

    def clean_up(self, *, strict: bool) -> None:
        """Abort the uploads under the destination, delete the committer's own directory (each
        committer says which); ``strict``: then fail if an upload was gone before its abort
        (Hadoop 3.5.0)."""
        raise NotImplementedError

    def cleanup_job(self) -> None:
        """Job cleanup (:meth:`clean_up`, once): an upload gone before its abort is passed
        over (3.5.0's deprecated cleanupJob suppresses it)."""
        if self._cleaned:
            return
        self.clean_up(strict=False)

    def commit_cleanup(self) -> None:
        """The clean-up inside commitJob, after ``_SUCCESS``: with
        :data:`~zerorename_model.systems.protocols.common.CLEANUP_ABORT_FAILS_ON_MISSING`, an
        upload gone before its abort fails the job commit (its files are visible)."""
        if self._cleaned:
            return
        self.clean_up(strict=self.abort_fails_on_missing)

    def publish(self, done: list[str], success: bytes) -> None:
        """``_SUCCESS`` over the completed files ``done`` (the commit point), then clean up."""
        if not self.take_back:  # Hadoop: every failure fails commitJob, whatever is visible
            self.fs.put(join(self.dest, SUCCESS), success)
            self.commit_cleanup()
            return
        try:
            self.fs.put(join(self.dest, SUCCESS), success)
        except (ModelStoreError, CommitFailed):
            for url in done:  # the job failed: take back what it made visible
                self.fs.delete(url)
            raise
        try:
            self.commit_cleanup()
        except (ModelStoreError, CommitFailed):
            self._cleaned = True  # committed: what is left is not output (the next sweep's)
