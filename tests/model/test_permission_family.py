"""The permission fault family of the model (``zerorename_model.experiments.permissions``):
from some point on every request of one kind answers 403 AccessDenied."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from zerorename_model.check.explore import run_once
from zerorename_model.engine.choices import SteeredChooser
from zerorename_model.engine.harness import Run
from zerorename_model.engine.scenario import Faults
from zerorename_model.experiments.permissions import (
    TAKE_BACK,
    decide,
    invisibility,
    scenario,
    witness_trace,
)
from zerorename_model.experiments.trace import read_trace, replay, write_trace
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


SUCCESS_DENIED = (r"^deny driver0: put .*/_SUCCESS",)


@pytest.mark.parametrize("committer", sorted(TAKE_BACK))
def test_hadoops_committers_leave_a_failed_jobs_files_and_take_back_removes_them(
        committer: str) -> None:
    """The schedule the production fix is about: ``_SUCCESS``'s PUT denied after every upload
    was completed.  Hadoop's committer (the model's row) fails the job with its file visible,
    and the checker says so; zerorename's (``+take-back``) fails it with nothing visible."""
    for name, caught in ((committer, True), (TAKE_BACK[committer], False)):
        steer = SteeredChooser(SUCCESS_DENIED, ())
        result = Run(scenario(name, "spark"), get(name)).run(steer)
        assert not steer.unmet, (name, steer.unmet)
        assert result.jobs[0].outcome != "committed", name
        found = invisibility(result)
        assert bool(found) is caught, (name, found)
        if caught:
            assert "part-00000 visible after the job failed" in found[0].detail


@pytest.mark.parametrize("protocol", ["spark", "hadoop"])
def test_the_family_separates_the_unfixed_rows_from_zerorenames(protocol: str) -> None:
    """Explored, not scripted: every unfixed row has an invisibility witness, which replays from
    its trace file to the same final state; every ``+take-back`` row holds, exhaustively."""
    for committer, fixed in TAKE_BACK.items():
        unfixed = decide(committer, protocol)
        assert unfixed.complete and not unfixed.holds("invisibility"), committer
        ours = decide(fixed, protocol)
        assert ours.complete and ours.holds("invisibility"), (fixed, ours.violated)
        assert ours.holds("completeness"), (fixed, ours.violated)


def test_a_witness_trace_replays(tmp_path: Path) -> None:
    """A witness as the paper writes it: ``zerorename trace replay`` reaches its final state."""
    verdict = decide("directory", "hadoop")
    path = write_trace(tmp_path / "w.jsonl", witness_trace(verdict, "invisibility"))
    events = read_trace(path)
    violations = events[-1]["violations"]
    assert isinstance(violations, list)
    assert any(str(v).startswith("invisibility") for v in violations)
    assert replay(path).same
