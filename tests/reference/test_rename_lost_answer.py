"""A rename whose answer was lost, on a store whose rename refuses an existing destination
(HDFS, ABFS).  Found by exploring the reference v1 committer in the model's ``ambiguous``
scope on ``abfs`` (``paper/results/reference_ambiguous.json``): the retried rename met its own
landed file (``DestinationExists``), the committer took it for an old file to overwrite,
deleted it — the file's only copy — and the job failed with a task's output gone while its
message said the output was kept for a rerun.  A retried rename that meets its own landing
must be recognised as landed, never deleted."""

from __future__ import annotations

import pytest

import zerorename as zr
from zerorename.errors import StoreError, ThrottledError

from .conftest_helpers import Env, FaultyStore, options, run_job

pytestmark = pytest.mark.usefixtures("no_leaked_threads")

FILES = {0: {"part-0": b"a" * 7}, 1: {"dir/part-1": b"b" * 5}}


class LosesARenameAnswer(FaultyStore):
    """Rename refuses an existing destination (``DestinationExists``, 409, as HDFS and ABFS
    do), and the first rename into the destination's ``dir/`` lands, then answers with a
    retryable error, as if the answer was lost on the way back."""

    def rename(self, src: str, dst: str) -> None:
        if self.inner.head(dst) is not None:
            raise StoreError(dst, "rename destination exists", code="DestinationExists",
                             status=409)
        super().rename(src, dst)
        if dst.endswith("/dir/part-1") and not self.calls["lost"]:
            self.calls["lost"] += 1
            raise ThrottledError(src, "injected: the rename landed, its answer was lost")


@pytest.mark.parametrize("committer", ["v1", "v2", "manifest"])
def test_a_retried_rename_that_meets_its_own_file_keeps_it(committer: str,
                                                           local_env: Env) -> None:
    dest = local_env.dest()
    store = LosesARenameAnswer(local_env.store)
    run_job(committer, store, dest, FILES, opts=options())
    assert store.calls["lost"] == 1
    assert local_env.output(dest) == {"part-0": b"a" * 7, "dir/part-1": b"b" * 5}
    if committer != "v2":  # v2 renames in task commit, outside the job's publication
        assert zr.read_success(local_env.store, dest).counter(
            "commit_file_rename_recovered") == 1
