"""``zerorename check --target hadoop``: Hadoop's own committers explored under the model's
scheduler and faults (issue 45 item 3, issue 47 item 3).  Each test explores the real classes
in the JVM: the real v1 must be found breaking what the model's v1 breaks, a deliberately
broken class named as ``hadoop:<class>`` must be caught where v1 is not, and every witness
must replay on the real store."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from zerorename.cli import main
from zerorename_bridge.hadoop import check
from zerorename_model.experiments.cells import Verdict
from zerorename_model.experiments.explored import Held

ROOT = Path(__file__).resolve().parents[2]
#: the research jar's deliberately broken committer: it publishes at task commit
BROKEN = "hadoop:zerorename.conformance.examples.TaskCommitPublishingCommitter"


def _model_verdict(committer: str, store: str, prop: str, protocol: str) -> str:
    cells = json.loads((ROOT / "paper/results/verdicts.json").read_text())["cells"]
    for cell in cells:
        if (cell["committer"], cell["store"], cell["property"], cell["protocol"]) == (
                committer, store, prop, protocol) and not cell.get("bug"):
            return str(cell["verdict"])
    raise AssertionError(f"no model cell {committer} {store} {prop} {protocol}")


def test_the_real_v1_breaks_concurrency_as_the_models_does(tmp_path: Path) -> None:
    assert _model_verdict("v1", "hdfs", "concurrency", "hadoop") == "violated"
    cells = check.run_check(["v1"], None, ["concurrency"], quick=True, traces=str(tmp_path))
    assert [(str(c.protocol), c.verdict) for c in cells] == [
        ("hadoop", Verdict.VIOLATED), ("spark", Verdict.VIOLATED)]
    for cell in cells:
        assert cell.trace is not None
        replayed = check.replay(cell.trace)
        assert replayed.same, cell.trace
        # what broke is Hadoop's own doing: a job's commit failed in the JVM
        assert "HadoopCallFailed" in json.dumps(replayed.result.trace[-1]) or any(
            "HadoopCallFailed" in str(e) for e in replayed.result.trace)


def test_a_committer_class_that_publishes_at_task_commit_is_caught(tmp_path: Path) -> None:
    broken = check.run_check([BROKEN], ["hdfs"], ["abortability"], quick=True,
                             traces=str(tmp_path), protocols=("hadoop",))
    assert [c.verdict for c in broken] == [Verdict.VIOLATED]
    assert broken[0].trace is not None and check.replay(broken[0].trace).same
    # the same search on Hadoop's v1 (which publishes at job commit) finds nothing
    v1 = check.run_check(["v1"], None, ["abortability"], quick=True, traces=str(tmp_path),
                         protocols=("hadoop",))
    assert [c.verdict for c in v1] == [Verdict.HOLDS]


def test_the_cli_checks_a_class_of_the_users(tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    out_json = tmp_path / "cells.json"
    code = main(["check", "--target", "hadoop", "--quick", "--committer", BROKEN,
                 "--property", "abortability", "--protocol", "hadoop",
                 "--json", str(out_json), "--traces", str(tmp_path / "traces")])
    out, _err = capsys.readouterr()
    assert code == 0
    assert "VIOL" in out
    cells = json.loads(out_json.read_text())
    assert [(c["committer"], c["verdict"]) for c in cells] == [(BROKEN, "violated")]
    witness = cells[0]["trace"]
    code = main(["trace", "replay", witness])
    assert code == 0, capsys.readouterr()


def test_a_class_that_is_not_there_is_refused_with_the_fix(
        capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["check", "--target", "hadoop", "--quick", "--committer",
                 "hadoop:org.example.NoSuchCommitter", "--property", "liveness"])
    _out, err = capsys.readouterr()
    assert code == 2
    assert "hadoop:org.example.NoSuchCommitter" in err and "--jar" in err
    assert "Traceback" not in err


def test_a_builtin_on_another_store_is_refused() -> None:
    with pytest.raises(check.HadoopCommitterError, match="runs on hdfs only"):
        check.store_for("v1", ["s3"])
    with pytest.raises(check.HadoopCommitterError, match="unknown Hadoop committer"):
        check.jvm_name("v3")


def test_s3as_magic_runs_under_the_models_scheduler_on_moto(tmp_path: Path) -> None:
    """A small budget (S3A's calls cost seconds per run here): magic's job alone commits in
    every run tried, on moto, through the same route as the quick check."""
    cells = check.run_check(["magic"], None, ["liveness"], quick=True, traces=str(tmp_path),
                            protocols=("hadoop",), max_runs=2)
    assert [(c.store, c.verdict) for c in cells] == [("s3", Verdict.HOLDS)]
    held = cells[0].explored
    assert isinstance(held, Held) and held.runs > 0
