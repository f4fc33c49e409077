"""The speed report's matrix timings are typed records written as the JSON they always were:
the same keys in the same order, the comparison with the committed results only when made."""

from __future__ import annotations

import json

from zerorename_model.experiments.speed import FullStoreMatrix, QuickMatrix


def test_a_quick_matrix_without_committed_results_writes_no_comparison() -> None:
    timed = QuickMatrix(wall=1.5, cpu=2.0, cells=3, seeds=None, violated=1, found_by_seed=0,
                        incomplete=0)
    assert list(timed.to_json()) == ["wall", "cpu", "cells", "seeds", "violated",
                                     "found_by_seed", "incomplete"]


def test_a_quick_matrix_beside_committed_results_writes_what_it_missed_and_found() -> None:
    timed = QuickMatrix(wall=1.5, cpu=2.0, cells=3, seeds="seeds", violated=1, found_by_seed=1,
                        incomplete=0, missed=["v1/s3/completeness/hadoop/"],
                        beyond_committed=[])
    written = json.loads(json.dumps(timed.to_json()))
    assert written["missed"] == ["v1/s3/completeness/hadoop/"]
    assert written["beyond_committed"] == [] and written["seeds"] == "seeds"


def test_a_full_store_matrix_names_its_cells() -> None:
    timed = FullStoreMatrix(wall=3.0, cells=2, violated=["v1/s3-2018/exclusivity"],
                            incomplete=[])
    assert timed.to_json() == {"wall": 3.0, "cells": 2, "violated": ["v1/s3-2018/exclusivity"],
                               "incomplete": []}
