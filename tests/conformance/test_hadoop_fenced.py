"""``zerorename check --target hadoop`` on zerorename's JVM ``fenced`` committer (issue 46 item
3): the production class, from the production jar, explored under the model's scheduler and
faults on moto (its S3A task output and its own S3 requests each a step), in a slice of the
quick scopes; a deliberately broken subclass must be caught there.  The full quick-scope run
is ``bench/hadoop_fenced.py`` (figures in bench/results/hadoop_fenced.md)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from zerorename.spark.jvm import packaged_jar
from zerorename_bridge.hadoop import check
from zerorename_model.experiments.cells import Verdict
from zerorename_model.experiments.explored import Held, Violation

ROOT = Path(__file__).resolve().parents[2]
FENCED = "hadoop:io.zerorename.committer.FencedCommitter"
#: the research jar's broken fenced: its task commit completes the task's uploads
BROKEN = "hadoop:zerorename.conformance.examples.TaskCommitPublishingFencedCommitter"
#: runs per scope of the slice (each run on moto costs seconds)
SLICE_RUNS = 2


@pytest.fixture
def jar(monkeypatch: pytest.MonkeyPatch) -> str:
    """The production jar; the class path run_check extends is restored afterwards."""
    monkeypatch.delenv(check.CLASSPATH_VARIABLE, raising=False)
    return str(packaged_jar())


def test_a_fenced_records_clocks_and_upload_ids_leave_the_digest_alone() -> None:
    """The fenced committer's commit record holds its commit time and the uploads' IDs: two
    runs that publish the same files must reach the same digest (or no witness replays), and
    a record naming another attempt must not."""
    def record(committed: int, upload: str, attempt: str) -> bytes:
        return json.dumps({"format": "zerorename.FencedJobCommit/1", "jobId": "job0",
                           "destination": "s3a://zr-1/out", "committed": committed,
                           "tasks": {"task_0": attempt},
                           "uploads": [{"a": attempt, "u": "s3a://zr-1/out/part-0",
                                        "i": upload, "z": 3}]}).encode()

    rel = "zr-1/out/__fenced_job-job0/commit.json"
    first = check._stable(rel, record(1, "upload-a", "attempt_0"), "zr-1")
    assert first == check._stable(rel, record(2, "upload-b", "attempt_0"), "zr-1")
    assert first != check._stable(rel, record(1, "upload-a", "attempt_1"), "zr-1")


def _model_holds(prop: str) -> bool:
    """The model's fenced on s3 holds ``prop`` under Hadoop's protocol (every family)."""
    cells = json.loads((ROOT / "paper/results/verdicts.json").read_text())["cells"]
    verdicts = {c["verdict"] for c in cells if (c["committer"], c["store"], c["property"],
                                                 c["protocol"]) == ("fenced", "s3", prop,
                                                                    "hadoop")
                and not c.get("bug")}
    assert verdicts, f"no model cell fenced s3 {prop}"
    return verdicts == {"holds"}


def test_the_jvm_fenced_holds_what_the_models_fenced_holds(tmp_path: Path, jar: str) -> None:
    """Every property the Hadoop target decides, the first runs of every quick scope: the
    model's fenced holds them all, and so must the JVM's.  (Before the JVM's commitTask
    returned on finding a dead attempt's record, liveness was violated here: the crash
    scope's second run.)"""
    props = list(check.PROPERTIES)
    assert all(_model_holds(p) for p in props)
    cells = check.run_check([FENCED], ["s3"], props, quick=True, traces=str(tmp_path),
                            protocols=("hadoop",), jars=[jar], max_runs=SLICE_RUNS)
    assert {c.prop: c.verdict for c in cells} == {p: Verdict.HOLDS for p in props}, [
        (c.prop, c.explored) for c in cells if c.verdict is not Verdict.HOLDS]
    for cell in cells:
        assert isinstance(cell.explored, Held) and cell.explored.runs > 0, cell.prop


def test_a_fenced_that_publishes_at_task_commit_is_caught(tmp_path: Path, jar: str) -> None:
    """A subclass whose task commit completes its uploads: a job that fails after a task
    committed leaves that task's files behind (abortability), found in the same budget in
    which the production class holds (above); its witness replays."""
    broken = check.run_check([BROKEN], ["s3"], ["abortability"], quick=True,
                             traces=str(tmp_path), protocols=("hadoop",), jars=[jar],
                             max_runs=SLICE_RUNS)
    assert [c.verdict for c in broken] == [Verdict.VIOLATED], broken
    found = broken[0].explored
    assert isinstance(found, Violation) and "part-0000" in found.witness, found
    assert broken[0].trace is not None and check.replay(broken[0].trace).same


def _put_before_the_run(self: Any, url: str, data: bytes) -> None:
    """``HadoopStore.put`` for the scenario's object there before the run
    (``Scenario.preexisting``): PUT on moto in the run's bucket, before any actor runs."""
    from zerorename_bridge.hadoop.check_process import _PROCESS, _endpoint
    from zerorename_bridge.hadoop.check_store import MODEL_BUCKET

    key = url.removeprefix(f"s3://{MODEL_BUCKET}/")
    _endpoint().client.put_object(Bucket=self.place.root, Key=key, Body=data)
    _PROCESS.changes += 1  # the harness reads the bucket again


#: runs of ``abort-hadoop+foreign``: the first is the plain schedule (tasks commit, the job
#: commit meets the object, the driver aborts)
FOREIGN_RUNS = 2


def test_another_writers_object_leaves_the_jvm_fenced_abortable(
        monkeypatch: pytest.MonkeyPatch, jar: str) -> None:
    """The model's ``abort-hadoop+foreign`` scope (foreign_object.py: an object another writer
    left at the first task's key before the job) run against the production class: the job
    commit is refused before its commit point, so the driver's abort removes everything the job
    wrote (abortability), the object stays byte for byte (foreign-kept), and nothing of the
    failed job is visible (invisibility).  The earlier jar completed with ``If-None-Match: *``
    after its commit point: the job ended committed-incomplete, its abort refused, the other
    file published (abortability, invisibility violated on the first run)."""
    from zerorename_bridge.hadoop.check_committer import hadoop_resolver
    from zerorename_bridge.hadoop.check_process import PROPERTIES as DECIDABLE
    from zerorename_bridge.hadoop.check_process import close, extra_classpath
    from zerorename_bridge.hadoop.check_store import HadoopStore
    from zerorename_model.check.explore import Reduction, Stats, runs
    from zerorename_model.check.properties import PROPERTIES as CHECKERS
    from zerorename_model.engine.harness import Run
    from zerorename_model.experiments.foreign_object import (
        foreign_kept,
        foreign_scopes,
        incomplete_reported,
        invisibility,
    )

    monkeypatch.setattr(HadoopStore, "put", _put_before_the_run, raising=False)
    monkeypatch.setenv(check.CLASSPATH_VARIABLE, os.pathsep.join([jar, *extra_classpath()]))
    close()  # a JVM started before has another class path
    scope = next(s for s in foreign_scopes(("hadoop",)) if s.scope.name == "abort-hadoop")
    checks = {**{p: CHECKERS[p] for p in scope.props if p in DECIDABLE},
              "foreign-kept": foreign_kept, "incomplete-reported": incomplete_reported,
              "invisibility": invisibility}
    assert "abortability" in checks
    factory, backend = hadoop_resolver(FENCED, "s3")

    def make() -> Run:
        run = Run(scope.make(FENCED, "s3"), factory, backend=backend())
        run.forget_finished = True
        return run

    found: dict[str, list[str]] = {}
    stats = Stats()
    try:
        for done in runs(make, stats, reduction=Reduction.FAULTS, max_runs=FOREIGN_RUNS):
            assert done.result.preexisting, "the other writer's object was not placed"
            for name, checker in checks.items():
                found.setdefault(name, []).extend(str(v) for v in checker(done.result))
    finally:
        close()
    assert stats.runs > 0
    assert {name: bad for name, bad in found.items() if bad} == {}
