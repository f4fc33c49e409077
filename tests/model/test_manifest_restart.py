"""The reference manifest committer after a driver restart: the new job attempt's commit must
complete even though the crashed attempt's commit already renamed some of the job's files
into the destination, or all of them (a store whose rename refuses an existing target: ABFS,
HDFS)."""

from __future__ import annotations

import pytest

from zerorename_bridge.adapters import ReferenceFactory
from zerorename_model.check.explore import Reduction, Stats, new_run, runs
from zerorename_model.check.properties import liveness
from zerorename_model.engine.harness.events import Note, Op
from zerorename_model.engine.scenario import Faults, Scenario


@pytest.mark.parametrize("files", [("part-{task:05d}",), ("a.csv", "b.csv")])
def test_a_restarted_job_commits_over_files_its_crashed_attempt_renamed(
        files: tuple[str, ...]) -> None:
    """Attempt 0's job commit renames part-00000 and the driver crashes; attempt 1 reruns the
    task and its rename finds the destination taken, by this job's own earlier output (its
    etag is the one attempt 0's manifest recorded): the rerun replaces it instead of failing
    the job for ever (liveness: a job whose faults were survivable commits).  The same holds
    when the crash came after ``_SUCCESS`` was saved, while the commit cleaned up: the
    manifests are gone, but ``_SUCCESS`` names this job.  With two files, two pool workers are
    refused at once (a lock held across the evidence's reads hung the harness's greenlets)."""
    scenario = Scenario("manifest", store="abfs", tasks=1, files=files, faults=Faults(restart=1))
    stats = Stats()
    stuck: dict[str, list[int]] = {}
    interrupted = 0
    for done in runs(lambda: new_run(scenario, ReferenceFactory("manifest")), stats,
                     reduction=Reduction.FAULTS, max_runs=3_000):
        renamed_then_crashed = False
        for event in done.result.events:
            if isinstance(event, Note) and event.msg.startswith("crash driver"):
                break
            renamed_then_crashed |= isinstance(event, Op) and event.said.op.op == "rename"
        interrupted += renamed_then_crashed
        for violation in liveness(done.result):
            stuck.setdefault(str(violation), done.choices)
    assert stats.complete
    assert interrupted > 0, "some driver crashes land after a rename of the job commit"
    assert not stuck, sorted(stuck)
