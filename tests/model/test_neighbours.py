"""Nested destinations (issue 31): two jobs at once, one on a table ``t``, the other on its
partition ``t/date=1``.  The ``nested`` scope families must catch a committer whose cleanup
aborts the other job's uploads (``fenced+top-level-cleanup``, the cleanup the reference
shipped), and the fixed ``fenced`` must hold there; a sweeping committer (the model's magic) is
caught too.  The property checks must not blame either job for the other's files."""

from __future__ import annotations

import pytest

from zerorename_model.check.explore import explore
from zerorename_model.check.properties import check_all
from zerorename_model.engine.scenario import Scenario
from zerorename_model.experiments.scopes import JOB_FILES, NESTED, family_named, scope_named
from zerorename_model.experiments.trace import replay, write_trace
from zerorename_model.systems.protocols import get
from zerorename_model.systems.protocols.common import list_files
from zerorename_model.systems.protocols.fenced import FencedCommitter, _ancestors, _is_marker


@pytest.mark.parametrize("committer", ["fenced+top-level-cleanup", "magic"])
@pytest.mark.parametrize("protocol", ["hadoop", "spark"])
def test_a_cleanup_that_aborts_the_nested_jobs_uploads_is_caught(
        committer: str, protocol: str, tmp_path) -> None:
    scope = scope_named(f"nested-{protocol}")
    report = explore(scope.make(committer, "s3"), get(committer), ["concurrency"],
                     max_runs=3_000, stop_when_all_violated=True)
    assert "concurrency" in report.violations
    violations, result, _choices = report.violations["concurrency"]
    assert any("the job failed" in str(v) for v in violations), violations
    path = write_trace(tmp_path / "witness.jsonl", result.trace)
    assert replay(str(path)).same  # the witness replays to the same state


@pytest.mark.parametrize("protocol", ["hadoop", "spark"])
def test_fenced_holds_with_nested_jobs(protocol: str) -> None:
    """The overlapping shape is enumerated completely; the crash scope, larger (about 18,000
    runs: the slow bug-row test proves it), is sampled here."""
    overlap = scope_named(f"nested-overlap-{protocol}")
    report = explore(overlap.make("fenced", "s3"), get("fenced"), ["concurrency"],
                     max_runs=5_000)
    assert report.complete and not report.violations
    nested = scope_named(f"nested-{protocol}")
    report = explore(nested.make("fenced", "s3"), get("fenced"), ["concurrency"],
                     max_runs=400)
    assert not report.violations


class _SubtreeOnly(FencedCommitter):
    """The fix without its look above: other jobs' markers searched below the destination
    only."""

    def other_job_active(self) -> bool:
        return any(_is_marker(o.url) and o.url != self.marker
                   for o in list_files(self.fs, self.dest))


def test_the_job_on_the_partition_must_look_above_it_too() -> None:
    """``nested-overlap``: the table's job writes into the partition, so the partition's job
    meets the table job's uploads under its own prefix; a cleanup that looks only below its
    destination aborts them, and the table's job fails."""
    scope = scope_named("nested-overlap-spark")
    report = explore(scope.make("fenced", "s3"), _SubtreeOnly, ["concurrency"],
                     max_runs=3_000, stop_when_all_violated=True)
    violations = report.violations["concurrency"][0]
    assert [v.job for v in violations] == [0], violations  # the table's job is the victim


def test_neither_job_is_blamed_for_the_other_jobs_files() -> None:
    """Fault-free, both jobs commit, and the partition's files under the table's destination
    are no exclusivity, valid-outcome or continuity violation of the table's job."""
    from zerorename_model.check.explore import run_once

    for committer in ("fenced", "v2", "direct"):
        result = run_once(Scenario(committer, tasks=1, files=JOB_FILES, dests=NESTED),
                          get(committer), [])
        assert [j.outcome for j in result.jobs] == ["committed", "committed"]
        assert f"{NESTED[1]}/part-00000-job1" in result.final  # under the table's destination
        assert not {p: v for p, v in check_all(result).items() if v}, committer


def test_the_families_decide_concurrency() -> None:
    assert family_named("nested").props == ("concurrency",)
    assert family_named("nested-overlap").props == ("concurrency",)
    assert NESTED[1].startswith(NESTED[0] + "/")


def test_markers_and_ancestors() -> None:
    assert _is_marker("s3://b/t/date=1/_fenced/job1/active")
    assert not _is_marker("s3://b/t/_fenced/job1/commit.json")
    assert not _is_marker("s3://b/t/active")
    assert _ancestors("s3://b/out/t") == ["s3://b/out", "s3://b"]
