"""Section XIV's production bugs: on each bug's schedule the variant goes wrong and the fixed
committer does not, and the property the bug's data names is the one that catches it.  What
"wrong" is comes from the runs (job outcomes, property checkers).  The matrix rows, decided by
exploration, are tested in ``test_verdicts.py``."""

from __future__ import annotations

from dataclasses import replace

import pytest

from zerorename_model.experiments import bugs


@pytest.mark.parametrize("bug", bugs.BUGS, ids=lambda b: b.report)
def test_the_variant_goes_wrong_and_the_fixed_committer_does_not(bug: bugs.ProductionBug) -> None:
    variant, fixed = bugs.show(bug)
    assert set(fixed.outcomes) == {"committed"} and not fixed.violated, fixed.errors
    assert "aborted" in variant.outcomes or variant.violated, (
        f"{bug.variant} ran {bug.report}'s schedule without a failed job or a violation")
    assert bug.shows in variant.violated, (bug.shows, sorted(variant.violated))


def test_the_bugs_fail_in_the_ways_their_reports_say() -> None:
    pendingset, spaces, prefix, job_id, sweep = (
        bugs.show(bugs.by_report(r))[0]
        for r in ("HADOOP-17258", "HADOOP-17112", "prefix-cleanup", "SPARK-33402", "XIV.C.1"))
    assert pendingset.outcomes == ["aborted"]
    assert any("pendingset already exists" in t.get("msg", "") for t in pendingset.result.trace)
    assert set(pendingset.violated) == {"liveness"}  # no other property sees HADOOP-17258
    assert "%20" in spaces.errors[0] and "NoSuchUpload" in spaces.errors[0]
    assert prefix.outcomes == ["committed", "aborted"] and "concurrency" in prefix.violated
    assert "out10" in prefix.errors[0]
    assert {"completeness", "concurrency"} <= set(job_id.violated)
    assert sweep.outcomes[0] == "committed" and sweep.outcomes[1] != "committed"
    assert any("NoSuchUpload" in str(t.get("result", "")) for t in sweep.result.trace)


def test_a_schedule_that_cannot_happen_is_reported() -> None:
    bug = bugs.by_report("HADOOP-17258")
    impossible = replace(bug, once=(r"^crash nobody$",))
    with pytest.raises(ValueError, match="never became possible"):
        bugs.run_schedule(impossible, "magic")
    with pytest.raises(KeyError, match="known"):
        bugs.by_report("HADOOP-0")
