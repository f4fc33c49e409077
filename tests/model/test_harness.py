"""The harness: schedules, faults, coordinator semantics, exploration and traces."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.model.toy_committers import EagerTaskCommit, Ideal, ListsTemporary
from zerorename_model.check.explore import explore, run_once
from zerorename_model.check.sampling import shrink
from zerorename_model.engine.choices import FirstChooser, ScriptedChooser
from zerorename_model.engine.harness import Call, Channel, Move, MoveKind, Run
from zerorename_model.engine.scenario import Faults, Scenario
from zerorename_model.experiments.trace import choices_of, read_trace, replay, write_trace


def test_fault_free_run_commits_every_task() -> None:
    result = Run(Scenario("ideal", tasks=3), Ideal).run(FirstChooser())
    job = result.jobs[0]
    assert job.outcome == "committed"
    assert sorted(job.dest_at_commit or {}) == ["part-00000", "part-00001", "part-00002"]
    assert result.final_uploads == []


def test_every_store_operation_is_a_step() -> None:
    result = Run(Scenario("ideal", tasks=1), Ideal).run(FirstChooser())
    ops = [e["op"] for e in result.trace if e["t"] == "op"]
    assert ops == ["create_multipart", "upload_part", "can_commit?", "report success",
                   "await tasks", "complete_multipart", "list_multipart_uploads"]
    steps = [e["move"] for e in result.trace if e["t"] == "choice"]
    assert not any("await" in s for s in steps), "waking a waiter is not a choice"


def test_crashed_attempt_is_retried_and_its_upload_left_for_cleanup() -> None:
    scenario = Scenario("ideal", tasks=1, faults=Faults(crash=1))
    run = Run(scenario, Ideal)
    opts = run.options()
    crash = next(o for o in opts if o.kind is MoveKind.CRASH)
    run.apply(Move(MoveKind.STEP, crash.actor))  # create_multipart happens
    run.apply(next(o for o in run.options() if o.kind is MoveKind.CRASH))
    result = run.run(FirstChooser())
    names = [a.name for a in run.actors]
    assert "j0.t0.a1" in names, "a new attempt replaces the crashed one"
    assert result.jobs[0].outcome == "committed"
    assert result.final_uploads == [], "job commit aborted the crashed attempt's upload"


def test_coordinator_grants_one_attempt_and_releases_on_failure() -> None:
    scenario = Scenario("ideal", tasks=1, faults=Faults(speculate=1, partition=1))
    run = Run(scenario, Ideal)
    run.apply(next(o for o in run.options() if o.kind is MoveKind.SPECULATE))
    first, second = run.actors[1], run.actors[2]
    job = run.jobs[0]
    can_commit = run.driver_rules._can_commit
    assert can_commit(job, first.task) and not can_commit(job, second.task)
    run.apply(Move(MoveKind.PARTITION, first.name))
    assert can_commit(job, second.task), "a failed holder releases the task"
    assert not can_commit(job, first.task), "the partitioned attempt is refused"


@pytest.mark.parametrize("faults", [Faults(crash=1), Faults(speculate=1), Faults(partition=1)],
                         ids=["crash", "speculate", "partition"])
def test_exhaustive_exploration_proves_the_ideal_committer_within_bounds(faults: Faults) -> None:
    scenario = Scenario("ideal", tasks=2, faults=faults)
    report = explore(scenario, Ideal, ["completeness", "exclusivity", "continuity"])
    assert report.complete and not report.violations
    assert report.runs > 30 and report.states > report.runs / 4


def test_exploration_finds_and_shrinks_the_eager_committers_mix() -> None:
    scenario = Scenario("eager", tasks=2, faults=Faults(partition=1))
    report = explore(scenario, EagerTaskCommit, ["exclusivity"])
    assert "exclusivity" in report.violations
    _violations, _result, choices = report.violations["exclusivity"]
    short, result = shrink(scenario, EagerTaskCommit, "exclusivity", choices)
    assert len(short) <= len(choices) and result.steps <= 25


def test_trace_replays_to_the_same_state(tmp_path: Path) -> None:
    scenario = Scenario("lists", store="s3-2018", tasks=2, driver="hadoop")
    report = explore(scenario, ListsTemporary, ["consistency"])
    _v, result, _c = report.violations["consistency"]
    path = write_trace(tmp_path / "t.jsonl", result.trace)
    events = read_trace(path)
    again = run_once(scenario, ListsTemporary, choices_of(events))
    assert again.digest == result.digest


def test_replay_detects_a_different_final_state(tmp_path: Path) -> None:
    from zerorename_model.present.demo import SCENARIO, run_demo

    eventual, _strong = run_demo(tmp_path)
    assert replay(tmp_path / "demo-s3-2018.jsonl").same
    events = read_trace(tmp_path / "demo-s3-2018.jsonl")
    events[-1]["digest"] = "0" * 64
    write_trace(tmp_path / "tampered.jsonl", events)
    assert not replay(tmp_path / "tampered.jsonl").same
    assert eventual.scenario == SCENARIO


def test_the_demo_shows_a_lagging_listing_and_the_same_schedule_consistent() -> None:
    from zerorename_model.present.demo import missed_keys, run_demo

    eventual, strong = run_demo()
    assert missed_keys(eventual) == ["events/part-00000"]
    assert missed_keys(strong) == []
    assert choices_of(eventual.trace) == choices_of(strong.trace)


def test_scripted_chooser_rejects_an_impossible_answer() -> None:
    with pytest.raises(ValueError):
        Run(Scenario("ideal", tasks=1), Ideal).run(ScriptedChooser([7]))


def test_moves_pending_operations_and_history_are_typed_records() -> None:
    """Probes read typed records (this attempt was told it may commit), and the records
    render the text traces have always had (saved traces match on it)."""
    run = Run(Scenario("ideal", tasks=1), Ideal)
    first = run.options()[0]
    assert first == Move(MoveKind.STEP, "j0.t0.a0")
    pending = run.actor(first).pending
    assert pending is not None and pending.channel is Channel.STORE
    assert pending.op == "create_multipart"
    assert pending.urls() == ("s3://bucket/out/part-00000",)
    result = run.run(FirstChooser())
    attempt = run.by_name["j0.t0.a0"]
    assert [s.result for s in attempt.history if s.call is Call.CAN_COMMIT] == [True]
    assert [str(s) for s in attempt.history][-2:] == ["can_commit?=True", "report success=True"]
    choice = next(e for e in result.trace if e["t"] == "choice")
    assert choice == {"t": "choice", "n": 1, "i": 0,
                      "move": "step j0.t0.a0: create_multipart s3://bucket/out/part-00000"}
