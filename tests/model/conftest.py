"""Explorations shared by several model test modules, each made once per session."""

from __future__ import annotations

from typing import Any

import pytest

from tests.model.cell_json import as_json
from zerorename_model.check.properties import PROPERTIES
from zerorename_model.experiments.scopes import FAMILIES
from zerorename_model.experiments.verdicts import Budget, Row, decide_pair

#: above every scope's size (the largest, nested-hadoop, needs 39,433 runs since fenced's job
#: commit lists its keys before the commit point: check-first), so a scope that finishes is
#: enumerated completely; the paper's second pass has the same budget
ENOUGH = Budget(max_runs=50_000)


@pytest.fixture(scope="session")
def fenced_s3_row() -> list[dict[str, Any]]:
    """fenced's row of the matrix on ``s3``: every property, every scope family, both
    protocols (one cell per property and protocol), explored by the matrix's own code.  It is
    the costliest exploration of the suite (6.5 minutes alone, more beside the Spark tier; its
    group's time limit: tests/conftest.py's GROUP_TIMEOUTS): tests/model/test_fenced.py checks
    the row, tests/model/test_verdicts.py the bug rows whose fixed committer is fenced on s3."""
    return as_json(decide_pair("fenced", "s3", tuple(PROPERTIES), ENOUGH, None,
                               row=Row(families=tuple(f.name for f in FAMILIES))))
