"""The demo speaks to users: one line per committer run, and a short committers × protocols
matrix read from explored cells (``--research`` keeps the full report)."""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("pyspark")  # mainjob's Result lives beside the Spark job

from zerorename.spark.verify import Comparison, Leftovers
from zerorename_bridge.mainjob import Result, parse_args
from zerorename_bridge.user_report import guarantees, summary_line
from zerorename_model.experiments.cells import Cell, JobProtocol, Verdict
from zerorename_model.experiments.explored import (
    Held,
    NotApplicable,
    ScopeRecord,
    Search,
    Violation,
)


def _result(**changes: Any) -> Result:
    result = Result(committer="fenced", files=24, bytes=1_250_000,
                    requests={"put": 30, "complete_multipart": 24}, copied=0, commit_ms=312,
                    comparison=Comparison(0, 0, [], []), after_commit=Leftovers([], []),
                    late_zombie="its task commit was refused; it left 0 hidden objects",
                    abort_leftovers=Leftovers([], []))
    for name, value in changes.items():
        setattr(result, name, value)
    return result


def test_one_line_says_what_the_run_did_and_that_its_guarantees_held() -> None:
    line = summary_line(_result())
    assert "\n" not in line
    assert line.startswith("fenced       wrote 24 files (1.2 MB) with 54 requests")
    assert "job commit 312 ms" in line and "copied" not in line
    assert "complete, nothing extra, a failed job left nothing" in line
    assert line.endswith("a late zombie: its task commit was refused")


def test_one_line_says_what_broke() -> None:
    line = summary_line(_result(comparison=Comparison(3, 0, [], []), copied=4_100_000))
    assert "INCOMPLETE" in line and "copied 4.1 MB" in line
    assert "complete," not in line
    assert summary_line(_result(skipped="publishes by rename")).endswith(
        "skipped: publishes by rename")


def _cell(committer: str, prop: str, protocol: str, verdict: str,
          complete: bool = True, bug: str | None = None) -> Cell:
    explored = (NotApplicable("cannot run") if verdict == "n/a" else
                Violation(_SCOPE, "exploration", 9, "seen", 1, (_SCOPE,))
                if verdict == "violated" else Held((_SCOPE,), complete, 5))
    return Cell(committer, "s3", prop, JobProtocol(protocol), Verdict(verdict), None, explored,
                bug=bug)


_SCOPE = ScopeRecord("crash-spark", Search("exhaustive", 5, 0, 5, True, None))


def test_the_short_matrix_reads_the_cells_per_protocol() -> None:
    cells = [_cell("fenced", p, d, "holds") for p in ("completeness", "liveness")
             for d in ("spark", "hadoop")]
    cells += [_cell("magic", "completeness", "spark", "holds"),
              _cell("magic", "completeness", "hadoop", "violated"),
              _cell("magic", "liveness", "spark", "holds", complete=False),
              _cell("magic", "liveness", "hadoop", "holds"),
              _cell("v1", "completeness", "spark", "n/a"),
              _cell("v1", "completeness", "hadoop", "n/a"),
              _cell("magic", "liveness", "spark", "violated", bug="HADOOP-17258")]
    table = guarantees(cells, ("fenced", "magic", "v1", "absent"), ("spark", "hadoop"))
    rows = {line.split()[0]: line for line in table.splitlines()[1:]}
    assert list(rows) == ["fenced", "magic", "v1"]
    spark, hadoop = (part.strip() for part in rows["magic"][len("magic"):].split("|"))
    assert spark == "no break found (quick search)"  # the variant's row is not the committer's
    assert hadoop == "breaks completeness"
    assert rows["fenced"].count("all hold") == 2
    assert rows["v1"].count("cannot run") == 2


def test_research_is_an_option_and_off_by_default() -> None:
    assert parse_args([]).research is False
    assert parse_args(["--research"]).research is True
