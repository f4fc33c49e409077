"""``zerorename check --target hadoop --quick`` on S3A's committers (hadoop-aws 3.5.0) on moto
(issue 45 item 3), in CI.

What CI runs is a slice of the quick check, within its budget: the abortability scopes
(``abort``, ``abort-crash``) of magic, directory and partitioned at :data:`SLICE_RUNS` runs a
scope, where each must hold as the model's committers do.  The whole quick check of each
committer (every property, 40 runs a scope) is ``zerorename check --target hadoop --quick
--committer magic`` (or directory, partitioned), run by hand: bench/results/hadoop_conformance.md
says how long it takes.  The broken committer class is caught on the HDFS-like filesystem
(test_hadoop_check.py); on S3A the quick budget does not reach it (docs/research/s3a-findings.md,
"The quick check on S3A")."""

from __future__ import annotations

from pathlib import Path

import pytest

from zerorename_bridge.hadoop import check
from zerorename_model.experiments.cells import Verdict
from zerorename_model.experiments.explored import Held

#: runs a scope of the slice CI runs (the quick check runs check.QUICK_RUNS)
SLICE_RUNS = 3


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
