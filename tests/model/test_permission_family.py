"""The permission fault family of the model (``zerorename_model.experiments.permissions``):
from some point on every request of one kind answers 403 AccessDenied."""

from __future__ import annotations

from dataclasses import replace

from zerorename_model.check.explore import run_once
from zerorename_model.engine.scenario import Faults
from zerorename_model.experiments.permissions import decide, invisibility, scenario
from zerorename_model.systems.protocols import get


def test_a_denied_kind_stays_denied() -> None:
    """The witness run: the fault is noted once, and every later request of that kind in the
    run answers AccessDenied (none of them takes effect)."""
    verdict = decide("magic", "spark")
    assert verdict.complete and verdict.witness is not None
    result = run_once(scenario("magic", "spark"), get("magic"), verdict.witness)
    assert invisibility(result), "the witness replays to the same violation"
    trace = "\n".join(str(e) for e in result.events)
    assert "deny " in trace and "AccessDenied" in trace


def test_without_the_fault_a_failed_job_is_not_found() -> None:
    """The checker holds where nothing is denied (no failed job: nothing to find)."""
    plain = replace(scenario("magic", "spark"), faults=Faults())
    result = run_once(plain, get("magic"), [])
    assert result.jobs[0].outcome == "committed"
    assert invisibility(result) == []


def test_the_family_decides_every_committer_quickly() -> None:
    """Exhaustive for every matrix committer under both protocols; completeness holds (a job
    reported committed is whole) and the verdicts are found, not typed in."""
    for committer in ("magic", "fenced", "directory", "partitioned", "manifest", "v1"):
        for protocol in ("spark", "hadoop"):
            verdict = decide(committer, protocol, max_runs=5_000)
            assert verdict.complete, (committer, protocol, verdict.runs)
            assert verdict.holds("completeness"), (committer, protocol, verdict.violated)
