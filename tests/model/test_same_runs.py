"""A Hadoop job committer takes no messages, so its two protocols' scopes are the same runs.

``commitJob(JobContext)`` has no place for the task commit messages: under Spark's protocol the
driver calls such a committer (``takes_messages=False``) with ``None`` as Hadoop's does, and the
verdict matrix explores its scopes once, giving Spark's cells the verdicts (and, run again
under Spark's protocol, the traces) of Hadoop's.  These tests check that the shared cells are
what exploring Spark's scopes gives, that their traces replay under Spark's protocol, and that
the re-run guard rejects the claim for a committer that does read its messages.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.model.cell_json import as_json, shown
from zerorename_model.experiments import verdicts
from zerorename_model.experiments.cells import Verdict
from zerorename_model.experiments.trace import read_trace, replay
from zerorename_model.experiments.verdicts import Budget, decide_pair
from zerorename_model.systems.protocols import get

PROPS = ("completeness", "exclusivity", "valid-outcome")
BUDGET = Budget(max_runs=300)


def test_hadoop_committers_take_no_messages_and_the_others_do() -> None:
    assert [c for c in verdicts.MATRIX_COMMITTERS if not get(c).takes_messages] == \
        ["v1", "v2", "manifest", "direct"]


def test_spark_cells_of_a_committer_without_messages_are_its_hadoop_runs(
        tmp_path: Path) -> None:
    cells = as_json(decide_pair("v2", "s3", PROPS, BUDGET, str(tmp_path)))
    hadoop = {c["property"]: c for c in cells if c["protocol"] == "hadoop"}
    spark = {c["property"]: c for c in cells if c["protocol"] == "spark"}
    assert sorted(hadoop) == sorted(spark) == sorted(PROPS)
    assert any(c["verdict"] == "violated" for c in spark.values())
    for prop, cell in spark.items():
        assert shown(cell) == shown(hadoop[prop])
        assert cell["explored"]["runs_of"] == "hadoop"
        assert "runs_of" not in hadoop[prop]["explored"]
        if cell["trace"]:
            assert cell["trace"] != hadoop[prop]["trace"]
            assert read_trace(cell["trace"])[0]["scenario"]["driver"] == "spark"
            assert replay(cell["trace"]).same
    # exploring Spark's scopes themselves gives the same verdicts
    explored = as_json(decide_pair("v2", "s3", PROPS, BUDGET, None, protocols=("spark",)))
    assert {c["property"]: shown(c) for c in explored} == \
        {p: shown(c) for p, c in spark.items()}
    assert all("runs_of" not in c["explored"] for c in explored)


def test_a_committer_that_reads_its_messages_is_explored_under_each_protocol() -> None:
    cells = as_json(decide_pair("magic", "s3", ("completeness",), BUDGET, None))
    assert [c["protocol"] for c in cells] == ["hadoop", "spark"]
    assert all("runs_of" not in c["explored"] for c in cells)


def test_the_rerun_guard_rejects_a_committer_whose_messages_matter(tmp_path: Path) -> None:
    """magic lists pendingsets under Hadoop's protocol and reads the messages under Spark's:
    its Hadoop-protocol completeness violation is not a run of Spark's protocol."""
    [hadoop] = decide_pair("magic", "s3", ("completeness",), BUDGET, str(tmp_path),
                           protocols=("hadoop",))
    assert hadoop.verdict is Verdict.VIOLATED
    with pytest.raises(AssertionError, match="not those of hadoop's protocol"):
        verdicts._same_runs(hadoop, "spark", "hadoop", str(tmp_path), verdicts.model_resolver)
