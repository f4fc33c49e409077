"""The Table V peers (Direct, Stocator, EMR) and the lakeFS committer: correct output when
nothing goes wrong, and the failures their designs imply when something does."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from zerorename_model.check.explore import explore
from zerorename_model.check.properties import check_all
from zerorename_model.engine.choices import FirstChooser
from zerorename_model.engine.harness import MoveKind, Run
from zerorename_model.engine.scenario import Faults, JobSpec, Scenario, TaskSpec, file_data
from zerorename_model.engine.stores.store import ModelStore
from zerorename_model.systems.lakefs_store import LakeFS, LakeFSError, MergeConflict
from zerorename_model.systems.protocols import get
from zerorename_model.systems.protocols.stocator import published_name

FILES = ("part-{task:05d}", "year=2024/part-{task:05d}.csv")


def _expected(result, *, rename: bool = False) -> dict[str, bytes]:
    """What the accepted attempts wrote, under the names a reader should see."""
    job = result.jobs[0]
    out = {}
    for task, _message in job.accepted.values():
        for rel, data in result.written[task.name].items():
            out[published_name(rel, task) if rename else rel] = data
    return out


@pytest.mark.parametrize("driver", ["spark", "hadoop"])
@pytest.mark.parametrize("name", ["stocator", "emr", "lakefs"])
def test_fault_free_run_publishes_exactly_the_committed_output(name: str, driver: str) -> None:
    result = Run(Scenario(name, tasks=3, files=FILES, driver=driver), get(name)).run()
    job = result.jobs[0]
    assert job.outcome == "committed", job.error
    assert job.dest_at_commit == _expected(result, rename=name == "stocator")
    assert len(job.dest_at_commit) == 6
    assert result.final_uploads == []
    assert "s3://bucket/out/_SUCCESS" in result.final


@pytest.mark.parametrize("name", ["emr", "lakefs"])
def test_emr_and_lakefs_pass_every_property_checker_on_a_fault_free_run(name: str) -> None:
    result = Run(Scenario(name, tasks=2, files=FILES), get(name)).run(FirstChooser())
    assert {k: v for k, v in check_all(result).items() if v} == {}


def test_stocator_names_carry_the_attempt_id_and_keep_the_sort_order() -> None:
    task = TaskSpec(JobSpec("s3://b/out", "job7", attempt=1), task_id=3, attempt=2)
    assert published_name("part-00003", task) == "part-00003-attempt_job7_01_m_000003_2"
    assert published_name("a=1/part-3.snappy.parquet", task) == \
        "a=1/part-3-attempt_job7_01_m_000003_2.snappy.parquet"
    assert published_name(".hidden", task) == ".hidden-attempt_job7_01_m_000003_2"
    names = [published_name(f"part-{i:05d}.csv", task) for i in (2, 10, 1)]
    assert sorted(names) == [published_name(f"part-{i:05d}.csv", task) for i in (1, 2, 10)]


def test_stocator_success_manifest_lists_only_committed_files() -> None:
    result = Run(Scenario("stocator", tasks=2), get("stocator")).run(FirstChooser())
    manifest = json.loads(result.final["s3://bucket/out/_SUCCESS"])
    assert manifest["filenames"] == sorted(_expected(result, rename=True))
    assert manifest["committer"] == "stocator"


def test_stocator_job_commit_deletes_a_crashed_attempts_file() -> None:
    scenario = Scenario("stocator", tasks=1, faults=Faults(crash=1))
    run = Run(scenario, get("stocator"))
    run.apply(next(o for o in run.options()
                   if o.kind is MoveKind.STEP and run.actor(o).task))  # a0 writes
    run.apply(next(o for o in run.options() if o.kind is MoveKind.CRASH))
    result = run.run(FirstChooser())
    job = result.jobs[0]
    assert [t.name for t, _ in job.accepted.values()] == ["j0.t0.a1"]
    assert job.dest_at_commit == _expected(result, rename=True)
    assert "s3://bucket/out/part-00000-attempt_job0_00_m_000000_0" not in result.final


def test_stocator_abort_task_deletes_the_attempts_files() -> None:
    env = SimpleNamespace(store=ModelStore("s3"))
    task = TaskSpec(JobSpec("s3://bucket/out", "job0"), 0, 0)
    committer = get("stocator")(env, task.job, task, {})
    committer.write("part-00000", file_data(task.job, task, "part-00000"))
    assert list(env.store.objects) == ["s3://bucket/out/part-00000-attempt_job0_00_m_000000_0"]
    committer.abort_task()
    assert env.store.objects == {}


def test_emr_task_commit_makes_files_visible_before_the_job_commit() -> None:
    env = SimpleNamespace(store=ModelStore("s3"))
    task = TaskSpec(JobSpec("s3://bucket/out", "job0"), 0, 0)
    committer = get("emr")(env, task.job, task, {})
    committer.write("part-00000", b"data")
    assert env.store.objects == {} and len(env.store.uploads) == 1
    committer.commit_task()
    assert env.store.snapshot() == {"s3://bucket/out/part-00000": b"data"}


def test_emr_job_commit_aborts_uploads_of_uncommitted_attempts() -> None:
    env = SimpleNamespace(store=ModelStore("s3"))
    job = JobSpec("s3://bucket/out", "job0")
    loser = get("emr")(env, job, TaskSpec(job, 0, 1), {})
    loser.write("part-00000", b"loser")
    get("emr")(env, job, None, {}).commit_job([])
    assert env.store.uploads == {}
    assert set(env.store.objects) == {"s3://bucket/out/_SUCCESS"}


@pytest.mark.parametrize("faults", [Faults(speculate=1), Faults(partition=1)],
                         ids=["speculative", "partitioned"])
def test_direct_loses_exclusivity_and_completeness_with_a_second_attempt(faults) -> None:
    report = explore(Scenario("direct", tasks=1, faults=faults), get("direct"),
                     ["exclusivity", "completeness"], stop_when_all_violated=True)
    assert {"exclusivity", "completeness"} <= set(report.violations)
    violations, result, _choices = report.violations["exclusivity"]
    assert "not accepted" in violations[0].detail
    assert len(result.written) == 2  # the witness has two attempts of the one task


@pytest.mark.parametrize("name", ["emr", "lakefs"])
def test_emr_and_lakefs_keep_exclusivity_with_a_speculative_attempt(name: str) -> None:
    report = explore(Scenario(name, tasks=1, faults=Faults(speculate=1)), get(name),
                     ["exclusivity", "completeness"])
    assert report.complete and report.violations == {}


# -- lakeFS ---------------------------------------------------------------------------------------

def test_lakefs_second_of_two_conflicting_writers_fails_its_merge() -> None:
    scenario = Scenario("lakefs", tasks=1, dests=("s3://bucket/out", "s3://bucket/out"))
    result = Run(scenario, get("lakefs")).run(FirstChooser())
    outcomes = sorted(j.outcome for j in result.jobs)
    assert outcomes == ["aborted", "committed"]
    winner = next(j for j in result.jobs if j.outcome == "committed")
    loser = next(j for j in result.jobs if j.outcome == "aborted")
    assert "MergeConflict" in loser.error and "part-00000" in loser.error
    shown = {k: v for k, v in result.final.items() if not k.startswith("s3://bucket/.lakefs")}
    assert shown["s3://bucket/out/part-00000"].startswith(f"{winner.spec.job_id}|".encode())
    assert not any(k.startswith("s3://bucket/.lakefs/") for k in result.final), \
        "abort and cleanup drop every branch"


def test_lakefs_jobs_to_adjacent_destinations_do_not_conflict() -> None:
    dests = ("s3://bucket/out/dataset1", "s3://bucket/out/dataset10")
    result = Run(Scenario("lakefs", tasks=1, dests=dests), get("lakefs")).run(FirstChooser())
    assert [j.outcome for j in result.jobs] == ["committed", "committed"]
    assert check_all(result, ["concurrency"]) == {"concurrency": []}


def test_lakefs_merge_is_one_step_and_output_appears_all_at_once() -> None:
    run = Run(Scenario("lakefs", tasks=2, files=FILES), get("lakefs"))
    shown = []
    while not run.finished():
        run.apply(run.options()[0])
        shown.append(len([k for k in run.store.objects if k.startswith("s3://bucket/out/")]))
    assert run.jobs[0].outcome == "committed"
    assert set(shown) == {0, 5}, "nothing, then every file and _SUCCESS in one step"


def _lake(store: ModelStore) -> LakeFS:
    return LakeFS(SimpleNamespace(store=store), "s3://bucket")


def test_lakefs_serialised_writers_both_succeed_and_the_later_wins() -> None:
    store = ModelStore("s3")
    lake = _lake(store)
    lake.create_branch("a")
    lake.put("a", "out/part-0", b"first")
    lake.merge("a")
    lake.create_branch("b")  # branched after a's merge: sees a's file as its base
    lake.put("b", "out/part-0", b"second")
    lake.merge("b")
    assert store.objects["s3://bucket/out/part-0"].data == b"second"


def test_lakefs_conflicting_merge_changes_nothing() -> None:
    store = ModelStore("s3")
    lake = _lake(store)
    lake.create_branch("a")
    lake.create_branch("b")
    lake.put("a", "out/part-0", b"a")
    lake.put("b", "out/part-0", b"b")
    lake.put("b", "out/part-1", b"b")
    lake.merge("a")
    before = store.snapshot()
    with pytest.raises(MergeConflict, match="out/part-0"):
        lake.merge("b")
    assert store.snapshot() == before
    assert "s3://bucket/out/part-1" not in store.objects


def test_lakefs_identical_change_on_both_sides_is_not_a_conflict() -> None:
    store = ModelStore("s3")
    lake = _lake(store)
    lake.create_branch("a")
    lake.put("a", "out/_SUCCESS", b"same")
    lake.merge("a")
    lake.merge("a")  # a restarted job attempt merging the same branch again
    assert store.objects["s3://bucket/out/_SUCCESS"].data == b"same"


def test_lakefs_claim_lets_only_one_branch_merge_a_task() -> None:
    store = ModelStore("s3")
    lake = _lake(store)
    lake.create_branch("job")
    lake.create_branch("job--a0", "job")
    lake.create_branch("job--a1", "job")
    lake.put("job--a0", "out/x-a0", b"0")
    lake.put("job--a1", "out/x-a1", b"1")  # different names: only the claim can conflict
    lake.merge("job--a0", "job", claim="task 0")
    with pytest.raises(MergeConflict, match="already has 'task 0'"):
        lake.merge("job--a1", "job", claim="task 0")
    lake.delete_branches("job")
    assert store.objects == {}


def test_lakefs_fence_releases_unrecovered_claims_and_refuses_stale_merges() -> None:
    store = ModelStore("s3")
    lake = _lake(store)
    lake.create_branch("job")
    for attempt, task in (("a0", "task 0"), ("b0", "task 1")):
        lake.create_branch(f"job--{attempt}", "job")
        lake.put(f"job--{attempt}", f"out/{attempt}", attempt.encode())
        lake.merge(f"job--{attempt}", "job", claim=task, epoch=0)
    lake.create_branch("job--late", "job")  # an attempt of job attempt 0 still running
    lake.put("job--late", "out/late", b"late")
    lake.fence("job", 1, keep=["task 0"])  # the restarted job attempt recovered task 0 only
    assert lake.server.view("job").keys() == {"out/a0"}
    with pytest.raises(MergeConflict, match="epoch"):
        lake.merge("job--late", "job", claim="task 2", epoch=0)
    lake.create_branch("job--b1", "job")
    lake.put("job--b1", "out/b1", b"b1")
    lake.merge("job--b1", "job", claim="task 1", epoch=1)  # released: the rerun may claim it
    lake.merge("job")
    shown = {k for k in store.objects if not k.startswith("s3://bucket/.lakefs/")}
    assert shown == {"s3://bucket/out/a0", "s3://bucket/out/b1"}


def test_lakefs_merge_of_a_dropped_branch_fails() -> None:
    lake = _lake(ModelStore("s3"))
    lake.create_branch("gone")
    lake.delete_branches("gone")
    with pytest.raises(LakeFSError, match="no branch"):
        lake.merge("gone")


@pytest.mark.parametrize(("mode", "kept"), [("append", True), ("overwrite", False)])
def test_lakefs_modes_keep_or_replace_what_main_held(mode: str, kept: bool) -> None:
    scenario = Scenario("lakefs", tasks=1, preexisting=(("old-file", "old"),),
                        options=(("fs.lakefs.committer.mode", mode),))
    result = Run(scenario, get("lakefs")).run(FirstChooser())
    assert result.jobs[0].outcome == "committed"
    assert ("old-file" in (result.jobs[0].dest_at_commit or {})) is kept
    assert "part-00000" in (result.jobs[0].dest_at_commit or {})
