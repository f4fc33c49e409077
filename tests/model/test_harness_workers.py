"""Pools whose workers are actors: exploration chooses the order in which a job commit's
parallel requests land (issue 12, item 9)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.model.toy_committers import Ideal
from zerorename.executor import BoundedExecutor
from zerorename_bridge.adapters import ReferenceFactory
from zerorename_model.check.explore import Reduction, Stats, new_run, run_once, runs
from zerorename_model.check.properties import PROPERTIES
from zerorename_model.engine.choices import FirstChooser
from zerorename_model.engine.harness import Call, Move, MoveKind, Op, Run, RunResult
from zerorename_model.engine.harness.events import Fault, Role
from zerorename_model.engine.scenario import Faults, JobSpec, Scenario, TaskSpec
from zerorename_model.experiments.trace import choices_of, read_trace, write_trace


def _results(scenario: Scenario, factory: Any, max_runs: int = 3_000) -> Iterator[RunResult]:
    stats = Stats()
    for done in runs(lambda: new_run(scenario, factory), stats, reduction=Reduction.FAULTS,
                     max_runs=max_runs):
        yield done.result
    assert stats.complete, "the scope must be explored completely"


def _ops(result: RunResult, op: str) -> tuple[str, ...]:
    """The URLs ``op`` was performed on, in the order the requests landed."""
    return tuple(str(e.said.op.args[0]) for e in result.events
                 if isinstance(e, Op) and e.said.op.op == op and e.said.op.store_op)


def test_the_reference_job_commits_completes_land_in_every_order() -> None:
    """fenced completes a job's uploads in a pool: with its workers as actors both orders of
    two completes are explored; with the pool inline only the order of submission is."""
    scenario = Scenario("fenced", store="s3", tasks=1, files=("a.csv", "b.csv"))
    orders = {workers: {_ops(r, "complete_multipart")
                        for r in _results(scenario, ReferenceFactory("fenced", workers))}
              for workers in (1, 2)}
    assert orders[1] == {("s3://bucket/out/a.csv", "s3://bucket/out/b.csv")}
    assert orders[2] == {("s3://bucket/out/a.csv", "s3://bucket/out/b.csv"),
                         ("s3://bucket/out/b.csv", "s3://bucket/out/a.csv")}


def test_a_trace_with_pool_workers_replays_to_its_digest(tmp_path: Path) -> None:
    scenario = Scenario("fenced", store="s3", tasks=1, files=("a.csv", "b.csv"))
    factory = ReferenceFactory("fenced", 2)
    result = next(r for r in _results(scenario, factory)
                  if _ops(r, "complete_multipart")[0].endswith("b.csv"))
    assert any(e["t"] == "choice" and e["move"].startswith("step driver0.w")
               for e in result.trace), "the workers are actors the scheduler chose"
    path = write_trace(tmp_path / "workers.jsonl", result.trace)
    again = run_once(scenario, factory, choices_of(read_trace(path)))
    assert again.digest == result.digest
    assert _ops(again, "complete_multipart") == _ops(result, "complete_multipart")


class ParallelSuccess(Ideal):
    """Broken only when its requests interleave: the job commit hands the completes *and the
    _SUCCESS marker* to one pool, so a worker free early writes _SUCCESS while another's
    complete has not landed (a reader then trusts a partial directory)."""

    width = 2

    def __init__(self, env: Any, job: JobSpec, task: TaskSpec | None,
                 options: dict[str, str]) -> None:
        super().__init__(env, job, task, options)
        self.pools = env.worker_pools(self.width) if self.width > 1 else None

    def commit_job(self, messages: list[Any] | None) -> None:
        assert messages is not None
        def completing(url: str, upload_id: str, etag: str) -> Callable[[], Any]:
            return lambda: self.fs.complete_multipart(url, upload_id, [(1, etag)])

        work: list[Callable[[], Any]] = []
        for message in messages:
            for rel, (upload_id, etag) in json.loads(message).items():
                work.append(completing(f"{self.dest}/{rel}", upload_id, etag))
        work.append(lambda: self.fs.put(f"{self.dest}/_SUCCESS", b"{}"))
        with BoundedExecutor(1, "commit", backend=self.pools) as pool:
            pool.run(lambda step: step(), work)


class InlineSuccess(ParallelSuccess):
    width = 1


def _success_before_a_file(result: RunResult) -> bool:
    landed = [e.said.op for e in result.events if isinstance(e, Op)
              and e.said.op.op in ("put", "complete_multipart")]
    success = [i for i, op in enumerate(landed) if str(op.args[0]).endswith("/_SUCCESS")]
    return bool(success) and any(op.op == "complete_multipart" for op in landed[success[0]:])


def test_a_bug_only_interleaved_requests_show_is_found_with_workers_as_actors() -> None:
    scenario = Scenario("toy", tasks=2)
    assert not any(_success_before_a_file(r) for r in _results(scenario, InlineSuccess))
    assert any(_success_before_a_file(r) for r in _results(scenario, ParallelSuccess))


def test_workers_are_named_after_their_owner_and_die_with_it() -> None:
    """A crash strikes the process: the attempt's workers end with it, the fault is the
    attempt's, and the driver retries the attempt."""
    scenario = Scenario("v2", store="abfs", tasks=1, files=("a.csv", "b.csv"),
                        faults=Faults(crash=1))
    run = Run(scenario, ReferenceFactory("v2", 2))
    while not any(a.owner is not None and not a.done for a in run.actors):
        run.apply(run.options()[0])
    owner = run.by_name["j0.t0.a0"]
    workers = [a for a in run.actors if a.owner is owner]
    assert [w.name for w in workers][:1] == ["j0.t0.a0.w0"]
    assert owner.pending is not None and owner.pending.call is Call.AWAIT_WORKERS
    crash = [m for m in run.options() if m.kind is MoveKind.CRASH]
    assert crash == [Move(MoveKind.CRASH, "j0.t0.a0")], "one crash per process"
    run.apply(crash[0])
    assert owner.done and all(w.done and w.crashed for w in workers)
    result = run.run(FirstChooser())
    assert Fault(MoveKind.CRASH, "j0.t0.a0", 0, Role.ATTEMPT) in result.incidents
    assert result.jobs[0].outcome == "committed"
    assert "j0.t0.a1" in run.by_name


def test_sleep_sets_keep_every_end_state_with_task_side_workers() -> None:
    """v2 renames a task's files in a pool during its task commit: the attempt's steps have
    footprints, its workers' do not, and a crash strikes attempt and workers together.  The
    reduced search must reach every final state the full one does."""
    scenario = Scenario("v2", store="abfs", tasks=1, files=("a.csv", "b.csv"),
                        faults=Faults(crash=1))
    factory = ReferenceFactory("v2", 2)
    full = {r.digest for r in _results_with(scenario, factory, Reduction.NONE)}
    reduced = {r.digest for r in _results_with(scenario, factory, Reduction.FAULTS)}
    assert len(full) > 5 and reduced == full


def _results_with(scenario: Scenario, factory: Any, reduction: Reduction) -> list[RunResult]:
    stats = Stats()
    found = [done.result for done in runs(lambda: new_run(scenario, factory), stats,
                                          reduction=reduction, max_runs=3_000)]
    assert stats.complete
    return found


class ReadsBeside(Ideal):
    """Lists the pending uploads beside its completes (as the S3A job commit reads what the
    job owns while its uploads complete), through ``BoundedExecutor.beside``."""

    def commit_job(self, messages: list[Any] | None) -> None:
        assert messages is not None
        with BoundedExecutor(1, "commit", backend=self.env.worker_pools(2)) as pool, \
                pool.beside(lambda: self.fs.list_multipart_uploads(self.dest + "/")) as read:
            self._complete(messages)
        read.result()


def test_work_beside_a_pool_is_an_actor_too() -> None:
    orders = set()
    for result in _results(Scenario("toy", tasks=1), ReadsBeside):
        landed = [e for e in result.events if isinstance(e, Op)
                  and e.said.op.op in ("list_multipart_uploads", "complete_multipart")
                  and e.actor.startswith("driver0")]
        assert any(e.actor.startswith("driver0.w") for e in landed)
        orders.add(tuple(e.said.op.op for e in landed)[:2])
    assert orders == {("list_multipart_uploads", "complete_multipart"),
                      ("complete_multipart", "list_multipart_uploads")}


class PoolWrites(Ideal):
    """Writes each file from a pool worker (the attempt waits for it)."""

    def write(self, relpath: str, data: bytes) -> None:
        with BoundedExecutor(1, "write", backend=self.env.worker_pools(2)) as pool:
            pool.run(lambda _none: Ideal.write(self, relpath, data), [None])


def test_a_kill_reaches_an_attempt_waiting_for_its_workers() -> None:
    """Spark kills the other attempts of a task once one succeeds: an attempt blocked on its
    pool is interrupted (and aborts) rather than carrying on once its workers are done."""
    run = Run(Scenario("toy", tasks=1, faults=Faults(speculate=1)), PoolWrites)
    run.apply(next(m for m in run.options() if m.kind is MoveKind.SPECULATE))
    loser = run.by_name["j0.t0.a1"]
    while not (loser.pending is not None and loser.pending.call is Call.AWAIT_WORKERS):
        run.apply(Move(MoveKind.STEP, loser.name))
    while not run.jobs[0].accepted:  # the first attempt finishes and is accepted
        run.apply(next(m for m in run.options() if m.actor.startswith("j0.t0.a0")))
    assert loser.killed
    run.options()  # wakes the loser: the kill interrupts its wait
    assert loser.kill_delivered
    result = run.run(FirstChooser())
    assert any(getattr(e, "msg", "") == "j0.t0.a1 was killed: abort_task" for e in result.events)
    assert result.jobs[0].outcome == "committed"


S3A_COMMITTERS = ("magic", "directory", "partitioned")


def test_s3a_committers_default_to_inline_pools() -> None:
    """Their exhaustive property scopes grow 4-20x with two workers (and the abort scope's
    look at the instant the driver's cleanup ends sees a killed attempt's upload not yet
    aborted); the dedicated tests below explore their pools with workers in small scopes."""
    assert {name: ReferenceFactory(name).workers for name in S3A_COMMITTERS} == \
        dict.fromkeys(S3A_COMMITTERS, 1)


@pytest.mark.parametrize("name", S3A_COMMITTERS)
def test_s3a_job_commits_land_their_completes_in_every_order_and_keep_every_property(
        name: str) -> None:
    """The S3A job commit completes in its pool and reads what the job owns beside it
    (``BoundedExecutor.beside``): with two workers either complete can land first, and so can
    the read, and every property holds on every schedule.  The first landings are watched
    on every state the search passes (a run that reaches an explored state is cut short, so
    the finished runs alone do not show every order)."""
    scenario = Scenario(name, store="s3", tasks=1, files=("a.csv", "b.csv"))
    firsts: set[tuple[str, str]] = set()

    def watch(run: Run, move: Move | None) -> None:
        actor = run.by_name.get(move.actor) if move is not None else None
        if (actor is None or move is None or move.kind is not MoveKind.STEP
                or not actor.name.startswith("driver0.w") or actor.pending is None):
            return
        if not any(u.endswith(("/a.csv", "/b.csv")) for u in run.store.snapshot()):
            what = actor.pending.op
            firsts.add((what, str(actor.pending.args[0]).rsplit("/", 1)[-1]
                        if what == "complete_multipart" else ""))

    stats = Stats()
    for done in runs(lambda: new_run(scenario, ReferenceFactory(name, 2)), stats,
                     reduction=Reduction.FAULTS, watch=watch, max_runs=3_000):
        assert not [v for prop in PROPERTIES.values() for v in prop(done.result)], name
    assert stats.complete, name
    assert {f for f in firsts if f[0] == "complete_multipart"} == {
        ("complete_multipart", "a.csv"), ("complete_multipart", "b.csv")}, name
    assert {f[0] for f in firsts} > {"complete_multipart"}, \
        f"{name}: the read beside the completes also lands before them"
