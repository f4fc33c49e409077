"""The model against Hadoop 3.5.0's own committers (issue 33), in CI's budget.

One JVM for the module (``zerorename_bridge.hadoop.session``); each schedule runs in the model
and in Hadoop's FileOutputCommitter (v1, v2) or ManifestCommitter on a local filesystem with
HDFS's rules, and both must leave the same files (byte for byte), the same ``_SUCCESS`` and
the same outcome for every committer call.  The full differential run (1,000 random schedules
per committer) is ``python -m zerorename_bridge.hadoop.differential --count 1000``; its last
figures are in ``bench/results/hadoop_conformance.md``.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from zerorename_bridge.hadoop.differential import (
    SCOPES_REPRODUCED,
    SEED_VARIABLE,
    conformance_seed,
    replay_hint,
    run_random,
    witness_paths,
    witness_run,
)
from zerorename_bridge.hadoop.session import HadoopSession
from zerorename_bridge.hadoop.translate import COMMITTERS, Translator
from zerorename_model.engine.stores.profiles import PROFILES

pytestmark = pytest.mark.hadoop

#: the witnesses whose recorded (Hadoop 3.3.x) manifest protocol differs from 3.5.0's jars:
#: 3.5.0 saves a task manifest again when its rename fails (MAPREDUCE-7474)
SAVE_RETRY_WITNESSES = {
    f"manifest.hdfs.{prop}.{protocol}.jsonl"
    for prop in ("liveness", "valid-outcome") for protocol in ("hadoop", "spark")}
#: random schedules per committer here (CI); the differential run does 1,000
SAMPLE = 12


@pytest.fixture(scope="module")
def translator() -> Iterator[Translator]:
    with HadoopSession() as session, Translator(session) as translator:
        yield translator


def test_the_shipped_hdfs_witnesses_are_all_compared() -> None:
    names = [p.name for p in witness_paths()]
    assert len(names) >= 40
    for committer in (*COMMITTERS, "race"):
        assert any(n.startswith(committer + ".") for n in names), committer


@pytest.mark.parametrize("path", witness_paths(), ids=lambda p: p.name)
def test_witness_agrees_with_hadoop_35(translator: Translator, path: Path) -> None:
    """Every witness, with the manifest protocol's 3.5.0 option (the jars' version)."""
    comparison = translator.compare(witness_run(path, hadoop_35=True), str(path))
    assert comparison.agrees, comparison.describe()


def test_recorded_witnesses_differ_only_by_the_manifest_save_retry(
        translator: Translator) -> None:
    """As recorded (the model's default, Hadoop 3.3.x), exactly the manifest witnesses whose
    task commit's manifest rename fails differ, and only in that task commit: the documented
    version difference, not an error of either side."""
    differing = {}
    for path in witness_paths():
        comparison = translator.compare(witness_run(path), path.name)
        if not comparison.agrees:
            differing[path.name] = comparison
    assert set(differing) == SAVE_RETRY_WITNESSES, [c.describe() for c in differing.values()]
    for comparison in differing.values():
        assert {c.method for c in comparison.call_differences} == {"commit_task"}


def test_random_schedules_cover_the_fault_families() -> None:
    """The sample is not vacuous: every kind of actor fault and both protocols are drawn."""
    families = {scope.family for scope in SCOPES_REPRODUCED}
    assert {"crash", "duplicate", "partition", "restart", "abort", "same-destination"} <= families
    assert {scope.protocol for scope in SCOPES_REPRODUCED} == {"hadoop", "spark"}


@pytest.mark.parametrize("committer", COMMITTERS)
def test_random_schedules_agree(translator: Translator, committer: str,
                                schedule_seed: int) -> None:
    """A fresh sample each session (the seed is in the header and in the failure)."""
    tally = run_random(translator, committer, SAMPLE, seed=schedule_seed)
    assert tally.agreed == tally.runs == SAMPLE, "\n".join(
        [replay_hint(schedule_seed), *(c.describe() for c in tally.differences)])


def test_the_seed_is_fresh_unless_fixed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(SEED_VARIABLE, raising=False)
    assert len({conformance_seed() for _ in range(4)}) > 1
    monkeypatch.setenv(SEED_VARIABLE, "20261201")
    assert conformance_seed() == 20261201


def test_issue_45s_v1_schedule_agrees(translator: Translator) -> None:
    """The schedule issue 45 found differing (the model committed both jobs, Hadoop failed
    one): the model's HDFS listing now shows the emptied task directory Hadoop lists."""
    tally = run_random(translator, "v1", 50, seed=20261201)
    assert tally.agreed == tally.runs == 50, "\n".join(c.describe() for c in tally.differences)


def test_the_comparison_catches_the_old_hdfs_rename(translator: Translator,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """Not vacuous: with the model's old HDFS (no real directories: rename refuses an existing
    directory, a missing directory lists empty), the v1 witnesses of liveness and concurrency
    disagree with Hadoop again."""
    monkeypatch.setitem(PROFILES, "hdfs", replace(PROFILES["hdfs"], directories=False))
    for name in ("v1.hdfs.liveness.hadoop.jsonl", "v1.hdfs.concurrency.hadoop.jsonl"):
        path = next(p for p in witness_paths() if p.name == name)
        comparison = translator.compare(witness_run(path), name)
        assert not comparison.agrees, name
