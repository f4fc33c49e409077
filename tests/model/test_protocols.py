"""The model commit protocols, run on the harness: fault-free output, and the schedules in which
the paper says each protocol holds or fails (Sections III, VI, VIII, XIV).

Every verdict below comes from running the protocol: schedules are scripted with :class:`Steer`
(take named moves as soon as they are possible, otherwise prefer some actors), and the
assertions compare what the destination held when ``commit_job`` returned with what the
accepted task attempts wrote.
"""

from __future__ import annotations

import json
import re

import pytest

from zerorename_model.check.explore import explore
from zerorename_model.check.properties import check_all
from zerorename_model.engine.choices import Chooser, FirstChooser, SteeredChooser
from zerorename_model.engine.harness import Run, RunResult
from zerorename_model.engine.scenario import Faults, JobSpec, Scenario
from zerorename_model.engine.stores.store import ModelStore
from zerorename_model.systems.protocols import get
from zerorename_model.systems.protocols.common import (
    dir_prefix,
    load_pending_set,
    rename_or_copy,
)
from zerorename_model.systems.protocols.staging import CONFLICT_MODE

FILES = ("part-{task:05d}", "year=2024/part-{task:05d}.csv")

#: where each protocol is meant to work (fault-free): rename-based ones need rename or at least
#: consistent listings; upload-based ones need multipart uploads (HDFS has none)
WORKS_ON = {
    "v1": ("hdfs", "s3", "gcs", "abfs"),
    "v2": ("hdfs", "s3", "gcs", "abfs"),
    "directory": ("s3-2018", "s3", "gcs", "abfs"),
    "partitioned": ("s3-2018", "s3", "gcs", "abfs"),
    "magic": ("s3", "gcs", "abfs"),
    "manifest": ("hdfs", "s3", "gcs", "abfs"),
}
MATRIX = [(c, s) for c, stores in WORKS_ON.items() for s in stores]


#: A scripted schedule (``once`` moves in order, then ``prefer`` patterns, then option 0).
Steer = SteeredChooser


def settle_all_but(fragment: str) -> str:
    """A ``prefer`` pattern: make every lagging write visible at once, except keys containing
    ``fragment`` (a store that is consistent but for one key)."""
    return rf"^settle (?!.*{re.escape(fragment)})"


def run(scenario: Scenario, chooser: Chooser | None = None) -> tuple[Run, RunResult]:
    harness = Run(scenario, get(scenario.committer))
    result = harness.run(chooser or FirstChooser())
    if isinstance(chooser, Steer):
        assert not chooser.once, f"scripted moves never became possible: {chooser.once}"
    return harness, result


def expected(result: RunResult, index: int = 0) -> dict[str, bytes]:
    """What the accepted attempts of job ``index`` wrote."""
    job = result.jobs[index]
    out: dict[str, bytes] = {}
    for task, _message in job.accepted.values():
        out.update(result.written[task.name])
    return out


def visible(result: RunResult, index: int = 0) -> dict[str, bytes]:
    """Output a reader finds in job ``index``'s destination at the end of the run."""
    prefix = dir_prefix(result.jobs[index].spec.dest)
    return {k[len(prefix):]: v for k, v in result.final.items()
            if k.startswith(prefix) and not re.search(r"(^|/)[_.]", k[len(prefix):])}


def violated(result: RunResult) -> set[str]:
    """The properties (properties.py, paper Section VIII) this run violated."""
    return {name for name, found in check_all(result).items() if found}


def notes(result: RunResult) -> str:
    return "\n".join(t["msg"] for t in result.trace if t["t"] == "note")


# -- fault-free runs -------------------------------------------------------------------------------


@pytest.mark.parametrize("driver", ["spark", "hadoop"])
@pytest.mark.parametrize(("committer", "store"), MATRIX)
def test_fault_free_run_publishes_exactly_what_was_written(
        committer: str, store: str, driver: str) -> None:
    harness, result = run(Scenario(committer, store=store, driver=driver, files=FILES))
    job = result.jobs[0]
    assert job.outcome == "committed", job.error
    assert len(expected(result)) == 4
    assert job.dest_at_commit == expected(result)
    assert visible(result) == expected(result)
    assert job.uploads_after_cleanup == [] and result.final_uploads == []
    assert job.temp_after_cleanup == []
    assert harness.cluster.objects == {}, "staging data left on the cluster filesystem"
    assert violated(result) == set()
    success = result.final["s3://bucket/out/_SUCCESS"]
    if committer in ("v1", "v2"):
        assert success == b""  # the classic committer's marker
    else:
        assert sorted(json.loads(success)["filenames"]) == sorted(expected(result))


@pytest.mark.parametrize(("store", "op", "absent"), [("hdfs", "rename", "copy"),
                                                      ("s3", "copy", "rename")])
def test_v1_renames_where_the_store_can_and_copies_where_it_cannot(
        store: str, op: str, absent: str) -> None:
    _harness, result = run(Scenario("v1", store=store, files=FILES))
    requests = result.trace[-1]["requests"]
    assert requests.get(op, 0) > 0 and requests.get(absent, 0) == 0


def test_emulated_directory_rename_copies_each_listed_file() -> None:
    store = ModelStore("s3")
    for name in ("a", "sub/b"):
        store.put(f"s3://b/src/{name}", name.encode())
    rename_or_copy(store, "s3://b/src", "s3://b/dst", directory=True)
    assert store.snapshot() == {"s3://b/dst/a": b"a", "s3://b/dst/sub/b": b"sub/b"}
    assert store.request_counts()["copy"] == 2


def test_pending_set_rejects_two_commits_to_one_destination() -> None:
    commit = {"destinationKey": "out/x", "uploadId": "u", "uri": "s3://b/out/x", "etags": []}
    data = json.dumps({"version": 2, "commits": [commit, commit]}).encode()
    with pytest.raises(Exception, match="more than one pending commit"):
        load_pending_set(data, "s3://b/p.pendingset")


def test_staging_rejects_an_unknown_conflict_mode() -> None:
    job = JobSpec("s3://bucket/out", "job0")
    with pytest.raises(ValueError, match="MERGE"):
        get("directory")(None, job, None, {CONFLICT_MODE: "merge"})


# -- failed tasks and aborted jobs -----------------------------------------------------------------


@pytest.mark.parametrize(("committer", "store"),
                         [("v1", "hdfs"), ("v2", "hdfs"), ("directory", "s3"),
                          ("partitioned", "s3"), ("magic", "s3"), ("manifest", "abfs")])
def test_job_aborted_after_a_task_committed_shows_output_only_for_v2(
        committer: str, store: str) -> None:
    """The task commits, then dies before reporting; with no retries left the job aborts.
    Only v2 has already promoted the task's files (Table V: committed output observable)."""
    steer = Steer(once=[r"^crash j0\.t0\.a0: report success$"])
    _h, result = run(Scenario(committer, store=store, tasks=1, files=FILES, max_attempts=1,
                              faults=Faults(crash=1)), steer)
    assert result.jobs[0].outcome == "aborted"
    assert result.final_uploads == []
    leaked = visible(result)
    if committer == "v2":
        assert leaked == result.written["j0.t0.a0"]
        assert violated(result) == {"abortability"}
    else:
        assert leaked == {}
        assert violated(result) == set()


def test_v2_partitioned_attempt_mixes_its_files_with_the_retry() -> None:
    """MAPREDUCE-7282: attempt 0 is partitioned half-way through its v2 task commit; attempt 1
    commits and is accepted; attempt 0 carries on renaming.  The destination holds ``a`` from
    attempt 1 and ``b`` from attempt 0: a mix of two attempts (exclusivity violated)."""
    steer = Steer(once=[r"^partition j0\.t0\.a0: head s3://bucket/out/b$"],
                  prefer=[r"^step j0\.t0\.a1", r"^step j0\.t0\.a0"])
    _h, result = run(Scenario("v2", store="hdfs", tasks=1, files=("a", "b"),
                              faults=Faults(partition=1)), steer)
    job = result.jobs[0]
    assert job.outcome == "committed"
    assert job.accepted[0][0].name == "j0.t0.a1"
    assert job.dest_at_commit is not None
    assert job.dest_at_commit["a"] == result.written["j0.t0.a1"]["a"]
    assert job.dest_at_commit["b"] == result.written["j0.t0.a0"]["b"]
    assert job.dest_at_commit != expected(result)
    assert {"exclusivity", "completeness"} <= violated(result)


def test_v1_same_schedule_publishes_the_late_attempt_in_a_directory_of_its_own() -> None:
    """The same partition under v1: the late attempt's task commit renames its attempt
    directory onto the committed task directory, which exists, so HDFS moves it *into* it;
    job commit then publishes ``attempt_.../a`` and ``.../b`` beside the accepted attempt's
    files.  Hadoop 3.5.0's FileOutputCommitter does the same on this schedule
    (``tests/conformance``); the model's HDFS used to refuse the rename instead."""
    steer = Steer(once=[r"^partition j0\.t0\.a0: rename "],
                  prefer=[r"^step j0\.t0\.a1", r"^step j0\.t0\.a0"])
    _h, result = run(Scenario("v1", store="hdfs", tasks=1, files=("a", "b"),
                              faults=Faults(partition=1)), steer)
    job = result.jobs[0]
    assert job.accepted[0][0].name == "j0.t0.a1"
    stray = {f"attempt_job0_00_m_000000_0/{name}": data
             for name, data in result.written["j0.t0.a0"].items()}
    assert job.dest_at_commit == {**expected(result), **stray}
    assert violated(result) == {"exclusivity", "valid-outcome"}


# -- inconsistent listings (s3-2018) ---------------------------------------------------------------


def test_v1_on_s3_2018_loses_everything_when_listings_lag() -> None:
    """``needsTaskCommit`` is a LIST; while it lags, every task reports "no output" (III.B)."""
    _h, result = run(Scenario("v1", store="s3-2018", files=FILES))
    job = result.jobs[0]
    assert job.outcome == "committed"
    assert len(expected(result)) == 4 and job.dest_at_commit == {}
    assert violated(result) == {"completeness", "valid-outcome", "consistency"}


def test_v1_on_s3_2018_rename_by_listing_skips_an_unlisted_file() -> None:
    """Consistent but for one key: S3A's rename copies what the LIST shows, so the one file
    the LIST omits never reaches the committed task directory, nor the destination."""
    steer = Steer(prefer=[settle_all_but("attempt_job0_00_m_000001_0/b-1")])
    _h, result = run(Scenario("v1", store="s3-2018", files=("a-{task}", "b-{task}")), steer)
    job = result.jobs[0]
    assert job.outcome == "committed"
    assert job.dest_at_commit is not None
    assert set(expected(result)) - set(job.dest_at_commit) == {"b-1"}
    assert {"completeness", "consistency"} <= violated(result)


@pytest.mark.parametrize(("driver", "complete"), [("hadoop", False), ("spark", True)])
def test_magic_on_s3_2018_misses_a_pendingset_the_listing_omits(
        driver: str, complete: bool) -> None:
    """Magic job commit finds pendingsets by LIST (VIII.C): one lagging pendingset and the task's
    output is silently dropped.  Given the accepted tasks' messages (Spark) it holds."""
    steer = Steer(prefer=[settle_all_but("task_job0_m_000001.pendingset")])
    _h, result = run(Scenario("magic", store="s3-2018", driver=driver, files=FILES), steer)
    job = result.jobs[0]
    assert job.outcome == "committed"
    assert job.dest_at_commit is not None
    assert (job.dest_at_commit == expected(result)) is complete
    assert violated(result) == (set() if complete
                                else {"completeness", "valid-outcome", "consistency"})
    if not complete:
        assert set(expected(result)) - set(job.dest_at_commit) == {
            "part-00001", "year=2024/part-00001.csv"}


@pytest.mark.parametrize("driver", ["spark", "hadoop"])
def test_on_s3_2018_staging_holds_where_magic_fails(driver: str) -> None:
    """No write ever becomes visible to LIST (the in-order schedule never settles): staging
    finds its work on the consistent cluster filesystem and holds; magic loses everything."""
    for committer, holds in (("directory", True), ("magic", False)):
        _h, result = run(Scenario(committer, store="s3-2018", driver=driver, files=FILES))
        job = result.jobs[0]
        assert job.outcome == "committed"
        assert (job.dest_at_commit == expected(result)) is holds, committer
        assert ("completeness" not in violated(result)) is holds
        assert result.final_uploads == []


# -- job recovery ----------------------------------------------------------------------------------


@pytest.mark.parametrize(("committer", "store", "recovers"),
                         [("v1", "hdfs", True), ("v1", "s3", True), ("v2", "hdfs", True),
                          ("magic", "s3", False), ("directory", "s3", False),
                          ("manifest", "abfs", False)])
def test_restarted_job_recovers_committed_tasks_only_where_supported(
        committer: str, store: str, recovers: bool) -> None:
    """The driver dies after every task committed.  v1 moves the committed task directories
    into the new job attempt (recoverTask); committers without recovery rerun every task."""
    steer = Steer(once=[r"^step j0\.t1\.a0: report success", r"^restart driver0"])
    _h, result = run(Scenario(committer, store=store, driver="hadoop", files=FILES,
                              faults=Faults(restart=1)), steer)
    job = result.jobs[0]
    assert job.spec.attempt == 1 and job.outcome == "committed"
    assert job.dest_at_commit == expected(result)
    rerun = {name for name in result.written if name.endswith(".a1")}
    assert rerun == (set() if recovers else {"j0.t0.a1", "j0.t1.a1"})
    assert violated(result) == set()


# -- production bugs (Section XIV) -----------------------------------------------------------------


@pytest.mark.parametrize(("committer", "commits"),
                         [("magic", True), ("magic+HADOOP-17258", False)])
def test_second_attempt_after_a_committed_pendingset(committer: str, commits: bool) -> None:
    """HADOOP-17258: attempt 0 saves its pendingset and dies before reporting.  Fixed, attempt
    1 overwrites it and the job commits attempt 1's output; before the fix every further
    attempt fails "pendingset already exists" and so does the job."""
    steer = Steer(once=[r"^crash j0\.t0\.a0: report success$"])
    _h, result = run(Scenario(committer, tasks=1, driver="hadoop", files=FILES,
                              faults=Faults(crash=1)), steer)
    job = result.jobs[0]
    # the bug costs the job (liveness), not the output's correctness
    assert violated(result) == (set() if commits else {"liveness"})
    if commits:
        assert job.outcome == "committed"
        assert job.dest_at_commit == expected(result) == result.written["j0.t0.a1"]
    else:
        assert job.outcome == "aborted"
        assert "pendingset already exists" in notes(result)
        assert visible(result) == {} and result.final_uploads == []


@pytest.mark.parametrize(("driver", "winner"), [("hadoop", "j0.t0.a0"), ("spark", "j0.t0.a1")])
def test_magic_late_pendingset_of_a_partitioned_attempt(driver: str, winner: str) -> None:
    """VIII.C's race, kept by the HADOOP-17258 fix: a partitioned attempt PUTs its pendingset
    after the accepted attempt did.  A job committer that lists commits the *partitioned*
    attempt's output; one given the accepted attempts' messages commits the accepted one."""
    steer = Steer(once=[r"^partition j0\.t0\.a0: put \S+\.pendingset"],
                  prefer=[r"^step j0\.t0\.a1", r"^step j0\.t0\.a0"])
    _h, result = run(Scenario("magic", tasks=1, driver=driver, files=FILES,
                              faults=Faults(partition=1)), steer)
    job = result.jobs[0]
    assert job.outcome == "committed"
    assert job.accepted[0][0].name == "j0.t0.a1"
    assert job.dest_at_commit == result.written[winner]
    assert result.final_uploads == []
    listed = driver == "hadoop"
    assert violated(result) == ({"completeness", "exclusivity"} if listed else set())


@pytest.mark.parametrize(("committer", "survives"),
                         [("magic", True), ("magic+prefix-cleanup", False)])
def test_cleanup_of_dataset1_and_pending_work_of_dataset10(committer: str, survives: bool) -> None:
    """Job 1 writes to ``out10`` while job 0 on ``out1`` commits and cleans up.  Listing uploads
    by the bare prefix ``out1`` aborts job 1's uploads, so job 1's commit fails."""
    steer = Steer(prefer=[r"^step j1\.t0\.a0: (create_multipart|upload_part|put) "])
    _h, result = run(Scenario(committer, tasks=1, files=FILES,
                              dests=("s3://bucket/out1", "s3://bucket/out10")), steer)
    assert result.jobs[0].outcome == "committed"
    assert result.jobs[0].dest_at_commit == expected(result, 0)
    if survives:
        assert result.jobs[1].outcome == "committed"
        assert result.jobs[1].dest_at_commit == expected(result, 1)
    else:
        assert result.jobs[1].outcome == "aborted"
        assert "NoSuchUpload" in result.jobs[1].error
        assert visible(result, 1) == {}


@pytest.mark.parametrize(("committer", "works"),
                         [("magic", True), ("magic+HADOOP-17112", False)])
def test_paths_with_spaces(committer: str, works: bool) -> None:
    """HADOOP-17112: a pending commit's URI read back undecoded names ``...%20...``, a key with
    no upload: job commit fails for any path containing a space."""
    _h, result = run(Scenario(committer, files=("my dir/part {task}.csv",)))
    job = result.jobs[0]
    if works:
        assert job.outcome == "committed"
        assert job.dest_at_commit == expected(result)
        assert "my dir/part 0.csv" in job.dest_at_commit
    else:
        assert job.outcome == "aborted" and "NoSuchUpload" in job.error
        assert visible(result) == {} and result.final_uploads == []


@pytest.mark.parametrize(("committer", "isolated"),
                         [("directory", True), ("directory+SPARK-33402", False)])
def test_two_staging_jobs_with_one_job_id(committer: str, isolated: bool) -> None:
    """SPARK-33402: two jobs started in the same second get one job ID.  With a cluster staging
    path built from it alone, job 0's task commit replaces job 1's committed pendingset and job
    0's cleanup deletes the shared directory: job 1 commits nothing."""
    steer = Steer(prefer=[r"^step j1\.t0\.a0"])
    _h, result = run(Scenario(committer, tasks=1, driver="hadoop", files=FILES,
                              dests=("s3://bucket/a", "s3://bucket/b"), same_job_id=True), steer)
    assert [j.outcome for j in result.jobs] == ["committed", "committed"]
    assert result.jobs[0].dest_at_commit == expected(result, 0)
    if isolated:
        assert result.jobs[1].dest_at_commit == expected(result, 1)
        assert violated(result) == set()
    else:
        assert len(expected(result, 1)) == 2 and result.jobs[1].dest_at_commit == {}
        assert {"completeness", "concurrency"} <= violated(result)


def test_magic_with_one_job_id_on_two_destinations_is_fine() -> None:
    """Magic keeps its job attempt directory under the destination, so a shared job ID on
    different destinations does not collide."""
    steer = Steer(prefer=[r"^step j1\.t0\.a0"])
    _h, result = run(Scenario("magic", tasks=1, driver="hadoop", files=FILES,
                              dests=("s3://bucket/a", "s3://bucket/b"), same_job_id=True), steer)
    for index in (0, 1):
        assert result.jobs[index].dest_at_commit == expected(result, index)


# -- staging conflict modes ------------------------------------------------------------------------


@pytest.mark.parametrize(("mode", "outcome", "kept"),
                         [("append", "committed", True), ("replace", "committed", False),
                          ("fail", "driver-failed", True)])
def test_directory_conflict_modes(mode: str, outcome: str, kept: bool) -> None:
    _h, result = run(Scenario("directory", files=FILES, preexisting=(("old/x", "old"),),
                              options=((CONFLICT_MODE, mode),)))
    job = result.jobs[0]
    assert job.outcome == outcome
    output = {} if outcome != "committed" else expected(result)
    assert visible(result) == {**output, **({"old/x": b"old"} if kept else {})}
    assert violated(result) == set()


@pytest.mark.parametrize(("mode", "committed", "left"),
                         [("append", True, {"p=0/old", "p=9/keep"}),
                          ("replace", True, {"p=9/keep"}),
                          ("fail", False, {"p=0/old", "p=9/keep"})])
def test_partitioned_conflict_modes_apply_to_written_partitions_only(
        mode: str, committed: bool, left: set[str]) -> None:
    _h, result = run(Scenario("partitioned", files=("p={task}/part-{task}",),
                              preexisting=(("p=0/old", "x"), ("p=9/keep", "y")),
                              options=((CONFLICT_MODE, mode),)))
    job = result.jobs[0]
    assert (job.outcome == "committed") is committed
    written = set(expected(result)) if committed else set()
    assert set(visible(result)) == written | left
    assert result.final_uploads == []
    assert violated(result) == set()


# -- bounded exhaustive exploration (explore.py) -------------------------------------------------

PROPS = ["completeness", "exclusivity", "consistency", "abortability", "continuity"]


@pytest.mark.parametrize(("committer", "store", "driver", "faults", "tasks", "found"), [
    # staging needs nothing of the destination's listings: proved for every lag and crash point
    pytest.param("directory", "s3-2018", "hadoop", Faults(crash=1), 2, set(),
                 marks=pytest.mark.slow),
    # magic discovers work by LIST: some lag loses a task's output
    ("magic", "s3-2018", "hadoop", Faults(), 1, {"completeness", "consistency"}),
    ("v1", "s3-2018", "spark", Faults(), 1, {"completeness", "consistency"}),
    # a partitioned attempt that still reaches the store: harmless when the job commits the
    # accepted attempts' messages, the last-writer-wins race when it lists (VIII.C)
    ("magic", "s3", "spark", Faults(partition=1), 1, set()),
    ("magic", "s3", "hadoop", Faults(partition=1), 1, {"completeness", "exclusivity"}),
    ("directory", "s3", "spark", Faults(partition=1), 1, set()),
    # v2 task commit is not atomic (MAPREDUCE-7282)
    ("v2", "hdfs", "spark", Faults(partition=1), 1,
     {"completeness", "exclusivity", "abortability", "continuity"}),
])
def test_exhaustive_exploration_within_small_scopes(
        committer: str, store: str, driver: str, faults: Faults, tasks: int,
        found: set[str]) -> None:
    files = ("a", "b") if committer == "v2" else ("part-{task:05d}",)
    scenario = Scenario(committer, store=store, driver=driver, faults=faults, tasks=tasks,
                        files=files)
    report = explore(scenario, get(committer), PROPS, max_runs=5000,
                     stop_when_all_violated=False)
    assert report.complete, report.summary()
    assert set(report.violations) == found
