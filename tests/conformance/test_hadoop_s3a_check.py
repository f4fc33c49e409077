"""``zerorename check --target hadoop --quick`` on S3A's committers (hadoop-aws 3.5.0) on moto
(issue 45 item 3), in CI.

What CI runs is a slice of the quick check, within its budget: the abortability scopes
(``abort``, ``abort-crash``) of magic, directory and partitioned at :data:`SLICE_RUNS` runs a
scope, where each must hold as the model's committers do.  The rows of the matrix for the three
(every property, ``hadoop_rows.S3A_RUNS`` runs a scope) are ``paper/make_paper.py --hadoop-s3a``.
A deliberately broken S3A committer (the research jar's ``TaskCommitPublishingMagicCommitter``:
magic, publishing at task commit) must be caught by the same exploration, in the scope where the
real magic holds."""

from __future__ import annotations

from pathlib import Path

import pytest

from zerorename_bridge.hadoop import check
from zerorename_model.check.explore import explore
from zerorename_model.experiments.cells import Verdict
from zerorename_model.experiments.explored import Held
from zerorename_model.experiments.scopes import scope_named

#: runs a scope of the slice CI runs (the quick check runs check.QUICK_RUNS)
SLICE_RUNS = 3
#: the research jar's deliberately broken S3A committer: magic, publishing at task commit
BROKEN = "hadoop:zerorename.conformance.examples.TaskCommitPublishingMagicCommitter"
#: runs of the ``abort-hadoop`` scope the broken committer is explored for (it is caught in
#: its second; the real magic holds in all of them)
BROKEN_RUNS = 4


@pytest.mark.hadoop
@pytest.mark.slow
@pytest.mark.parametrize("committer", ["magic", "directory", "partitioned"])
def test_s3as_committer_holds_abortability_in_the_quick_checks_slice(
        committer: str, tmp_path: Path) -> None:
    cells = check.run_check([committer], None, ["abortability"], quick=True,
                            traces=str(tmp_path), protocols=("hadoop",), max_runs=SLICE_RUNS)
    assert [(c.store, c.prop, c.verdict) for c in cells] == [
        ("s3", "abortability", Verdict.HOLDS)], [c.trace for c in cells]
    held = cells[0].explored
    assert isinstance(held, Held) and held.runs >= SLICE_RUNS  # both scopes were explored


@pytest.mark.hadoop
@pytest.mark.slow
def test_a_magic_committer_that_publishes_at_task_commit_is_caught_on_s3a() -> None:
    """The S3A exploration of the ``abort`` scope (the driver aborts the job) catches a magic
    committer whose task commit completes the task's uploads: a task commits, the job is
    aborted, its file stays.  The real magic, explored the same way, holds: what is caught is
    the subclass's one change.  (The exploration without the witness's shrinking, which takes
    minutes on moto: ``check.run_check`` does both.)"""
    scope = scope_named("abort-hadoop")
    found = {}
    for committer in (BROKEN, "magic"):
        factory, backend = check.hadoop_resolver(committer, "s3")
        report = explore(scope.make(committer, "s3"), factory, ["abortability"],
                         max_runs=BROKEN_RUNS, backend=backend)
        found[committer] = report.violations.get("abortability")
    check.close()
    assert found["magic"] is None, found["magic"]
    caught = found[BROKEN]
    assert caught is not None, "the broken committer's published file was not found"
    violations, result, _choices = caught
    assert any("visible after abort" in str(v) for v in violations), violations
    assert [job.outcome for job in result.jobs] == ["aborted"], result.jobs
