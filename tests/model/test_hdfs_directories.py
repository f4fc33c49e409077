"""The model's HDFS has real directories, as Hadoop's FileSystem contract and HDFS give them
(issue 33: both behaviours were found wrong by replaying the model's witnesses against Hadoop
3.5.0's own committers, ``tests/conformance``).

* ``rename(src, dst)`` onto an existing directory moves ``src`` *into* it (and fails onto an
  existing file); the model used to fail whenever ``dst`` existed, so for v1 it reported a job
  that aborts where Hadoop commits a task's output plus a stray ``attempt_...`` directory.
* listing the children of a directory that does not exist fails (Hadoop's ``listStatus``
  throws FileNotFoundException); the model used to list nothing, so with two jobs on one
  destination it reported a job committed with a file missing where Hadoop fails the job.
* listing a directory shows its subdirectories even once they are empty (issue 45): the model
  used to list only the prefixes of keys, so a committed task directory whose file another
  job's commit had renamed away was invisible, and the job's commit skipped it where Hadoop's
  ``mergePaths`` lists it, finds it deleted by the other job's clean-up and fails.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from tests.model.bare_env import BareEnv as _Env
from zerorename_model.engine.choices import ScriptedChooser
from zerorename_model.engine.errors import ModelStoreError
from zerorename_model.engine.harness import Run
from zerorename_model.engine.scenario import JobSpec, Scenario, TaskSpec
from zerorename_model.engine.stores.store import ModelStore
from zerorename_model.experiments.scopes import SCOPES
from zerorename_model.systems.protocols import get
from zerorename_model.systems.protocols.common import delete_recursive
from zerorename_model.systems.protocols.manifest import SAVE_ATTEMPTS, ManifestCommitter
from zerorename_model.systems.protocols.v1 import V1Committer

ROOT = Path(__file__).resolve().parents[2]
OUT = "s3://bucket/out"




def test_rename_onto_an_existing_directory_moves_the_source_into_it() -> None:
    hdfs = ModelStore("hdfs")
    hdfs.put(f"{OUT}/_temporary/0/task_1/part-0", b"first")
    hdfs.put(f"{OUT}/_temporary/0/_temporary/attempt_1/part-0", b"second")
    hdfs.rename(f"{OUT}/_temporary/0/_temporary/attempt_1", f"{OUT}/_temporary/0/task_1")
    assert hdfs.snapshot() == {
        f"{OUT}/_temporary/0/task_1/attempt_1/part-0": b"second",
        f"{OUT}/_temporary/0/task_1/part-0": b"first",
    }


def test_rename_onto_an_existing_file_or_into_a_taken_name_fails() -> None:
    hdfs = ModelStore("hdfs")
    hdfs.put(f"{OUT}/a", b"a")
    hdfs.put(f"{OUT}/b", b"b")
    with pytest.raises(ModelStoreError) as raised:
        hdfs.rename(f"{OUT}/a", f"{OUT}/b")
    assert raised.value.code == "DestinationExists"
    hdfs.put(f"{OUT}/d/a", b"taken")
    with pytest.raises(ModelStoreError):  # into d/, where d/a exists
        hdfs.rename(f"{OUT}/a", f"{OUT}/d")
    assert hdfs.snapshot() == {f"{OUT}/a": b"a", f"{OUT}/b": b"b", f"{OUT}/d/a": b"taken"}


def test_an_object_store_with_rename_still_refuses_an_existing_directory() -> None:
    """Only the profile with real directories moves into one (ABFS and GCS as before)."""
    abfs = ModelStore("abfs")
    abfs.put(f"{OUT}/d/x", b"x")
    abfs.put(f"{OUT}/s/y", b"y")
    with pytest.raises(ModelStoreError):
        abfs.rename(f"{OUT}/s", f"{OUT}/d")


def test_listing_a_missing_directory_fails_and_an_emptied_one_lists_empty() -> None:
    hdfs = ModelStore("hdfs")
    with pytest.raises(ModelStoreError) as raised:
        hdfs.list_page(f"{OUT}/_temporary/0/", delimiter="/")
    assert raised.value.status == 404
    assert hdfs.list_page(f"{OUT}/_temporary/0/").objects == []  # a recursive probe: nothing
    hdfs.put(f"{OUT}/_temporary/0/task_1/part-0", b"x")
    hdfs.delete(f"{OUT}/_temporary/0/task_1/part-0")
    page = hdfs.list_page(f"{OUT}/_temporary/0/task_1/", delimiter="/")  # empty, not missing
    assert (page.objects, page.prefixes) == ([], [])
    delete_recursive(hdfs, f"{OUT}/_temporary")  # takes the (empty) directories too
    with pytest.raises(ModelStoreError):
        hdfs.list_page(f"{OUT}/_temporary/0/task_1/", delimiter="/")
    assert ModelStore("s3").list_page(f"{OUT}/_temporary/0/", delimiter="/").objects == []


def test_an_emptied_subdirectory_is_still_listed_by_its_parent() -> None:
    hdfs = ModelStore("hdfs")
    hdfs.put(f"{OUT}/_temporary/0/task_1/part-0", b"x")
    hdfs.put(f"{OUT}/_temporary/0/task_2/sub/part-0", b"y")
    hdfs.rename(f"{OUT}/_temporary/0/task_1/part-0", f"{OUT}/part-0")
    hdfs.rename(f"{OUT}/_temporary/0/task_2/sub/part-0", f"{OUT}/part-1")
    page = hdfs.list_page(f"{OUT}/_temporary/0/", delimiter="/")
    assert (page.objects, page.prefixes) == (
        [], [f"{OUT}/_temporary/0/task_1/", f"{OUT}/_temporary/0/task_2/"])
    page = hdfs.list_page(f"{OUT}/_temporary/0/task_2/", delimiter="/")
    assert page.prefixes == [f"{OUT}/_temporary/0/task_2/sub/"]
    assert hdfs.list_page(f"{OUT}/_temporary/0/").objects == []  # recursive: files only
    s3 = ModelStore("s3")  # no real directories: a prefix without keys is nothing
    s3.put(f"{OUT}/_temporary/0/task_1/part-0", b"x")
    s3.delete(f"{OUT}/_temporary/0/task_1/part-0")
    assert s3.list_page(f"{OUT}/_temporary/0/", delimiter="/").prefixes == []


class _SeededChooser:
    """The differential run's random chooser (``zerorename_bridge.hadoop.differential``)."""

    def __init__(self, seed: int) -> None:
        import random

        self._random = random.Random(seed)

    def choose(self, label: str, options: Sequence[str]) -> int:
        return self._random.randrange(len(options))


def test_v1_job_commit_fails_on_a_listed_task_directory_the_other_job_deleted() -> None:
    """Issue 45's difference (``same-destination-spark``, schedule seed 20261261783624): job 1
    renames its task's file out of the shared ``_temporary/0/task_job1...`` before job 0 lists
    ``_temporary/0``, then deletes ``_temporary`` while job 0 merges; Hadoop 3.5.0's commitJob
    lists the (emptied, then deleted) directory and fails with FileNotFoundException.  The
    model used to commit job 0."""
    scope = next(s for s in SCOPES if s.name == "same-destination-spark")
    result = Run(scope.make("v1", "hdfs"), get("v1")).run(_SeededChooser(20261261783624))
    assert [job.outcome for job in result.jobs] == ["aborted", "committed"]
    assert any("task_job1_m_000000: FileNotFound" in str(event) for event in result.events)


def test_a_recursive_delete_takes_what_was_moved_in_after_the_listing() -> None:
    """HDFS deletes a directory atomically; the model's recursive delete (LIST, then DELETE
    of the path and the keys listed) used to leave a file renamed into the directory between
    the two (a task committing while another job cleaned up the shared ``_temporary``)."""
    hdfs = ModelStore("hdfs")
    hdfs.put(f"{OUT}/_temporary/0/_temporary/attempt_0/part-0", b"x")
    listed = [o.url for o in hdfs.list_page(f"{OUT}/_temporary/").objects]
    hdfs.rename(f"{OUT}/_temporary/0/_temporary/attempt_0", f"{OUT}/_temporary/0/task_0")
    hdfs.delete_many([f"{OUT}/_temporary", *listed])
    assert hdfs.snapshot() == {}


def test_v1_job_commit_fails_when_its_attempt_directory_is_gone() -> None:
    """FileOutputCommitter.commitJob lists the job attempt directory: another job's clean-up
    deleted it, so the job fails (the model used to commit it with its output missing)."""
    job = JobSpec(OUT, "job0", 0, 0)
    with pytest.raises(ModelStoreError):
        V1Committer(_Env(ModelStore("hdfs")), job, None, {}).commit_job(None)
    gcs = ModelStore("gcs")  # no real directories: an empty listing, an empty job
    V1Committer(_Env(gcs), job, None, {}).commit_job(None)
    assert f"{OUT}/_SUCCESS" in gcs.snapshot()


def test_the_manifest_scan_fails_when_the_attempt_directory_is_gone() -> None:
    job = JobSpec(OUT, "job0", 0, 0)
    task = TaskSpec(job, 0, 0)
    hdfs = ModelStore("hdfs")
    committer = ManifestCommitter(_Env(hdfs), job, task, {})
    committer.write("part-0", b"x")
    delete_recursive(hdfs, f"{OUT}/_temporary")  # another job's clean-up
    with pytest.raises(ModelStoreError):
        committer.commit_task()


class _RacedStore(ModelStore):
    """HDFS where another attempt renames its manifest onto the final name just before this
    attempt's first rename (the manifest liveness witness, compressed)."""

    def __init__(self, final: str) -> None:
        super().__init__("hdfs")
        self.final = final
        self.raced = False

    def rename(self, src: str, dst: str) -> None:
        if not self.raced:
            self.raced = True
            self.put(self.final, b"the other attempt's manifest")
        super().rename(src, dst)


@pytest.mark.parametrize("attempts", [None, "5"])
def test_the_manifest_save_retry_is_hadoop_35s_version_option(attempts: str | None) -> None:
    """3.3.x (no option): the failed rename fails the task commit; 3.5.0 (the option set):
    the save is tried again and this attempt's manifest wins."""
    job = JobSpec(OUT, "job0", 0, 0)
    task = TaskSpec(job, 0, 1)
    final = f"{OUT}/_temporary/job0/00/manifests/task_job0_m_000000-manifest.json"
    store = _RacedStore(final)
    options = {} if attempts is None else {SAVE_ATTEMPTS: attempts}
    committer = ManifestCommitter(_Env(store), job, task, options)
    committer.write("part-0", b"x")
    if attempts is None:
        with pytest.raises(ModelStoreError):
            committer.commit_task()
    else:
        committer.commit_task()
        assert b"attempt_job0_00_m_000000_1" in store.snapshot()[final]


def test_the_v1_liveness_witness_now_commits_a_stray_attempt_directory() -> None:
    """The liveness witness the model shipped before its HDFS directories (a partitioned
    attempt commits its task while the retry commits too): as Hadoop 3.5.0 does, the retry's
    attempt directory lands inside the committed task's, and job commit publishes both."""
    scenario = Scenario.from_json({
        "committer": "v1", "store": "hdfs", "tasks": 1, "files": ["part-{task:05d}"],
        "max_attempts": 2, "dests": ["s3://bucket/out"], "driver": "hadoop",
        "faults": {"crash": 0, "partition": 1, "speculate": 0, "throttle": 0, "restart": 0,
                   "fail_job": 0, "settle": True, "settle_eagerly": False},
        "preexisting": [], "options": [], "reader": False, "same_job_id": False})
    # the witness's choices, as paper/results/traces/v1.hdfs.liveness.hadoop.jsonl held them
    # before this round's regeneration (the new model finds a shorter witness there)
    choices = [0, 0, 0, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]
    result = Run(scenario, get("v1")).run(ScriptedChooser(choices))
    assert [job.outcome for job in result.jobs] == ["committed"]
    assert {k: v for k, v in result.final.items() if "_SUCCESS" not in k} == {
        f"{OUT}/part-00000": b"job0|t0|a0|j0|part-00000",
        f"{OUT}/attempt_job0_00_m_000000_1/part-00000": b"job0|t0|a1|j0|part-00000",
    }
