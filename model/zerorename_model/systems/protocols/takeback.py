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
    """Mixin of the S3A committers: :meth:`publish`, as Hadoop's or as zerorename's."""

    #: zerorename's take-back (False: Hadoop's behaviour)
    take_back: ClassVar[bool] = False
    fs: Store
    dest: str
    _cleaned: bool

    def cleanup_job(self) -> None:
        raise NotImplementedError

    def commit_cleanup(self) -> None:
        """The clean-up inside the job commit (Hadoop 3.5.0's may fail where
        :meth:`cleanup_job`, the deprecated call, passes over; see the committers)."""
        self.cleanup_job()

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
