"""Hadoop's committers on a real HDFS (a MiniDFSCluster, issue 45 item 2), in CI's budget.

One cluster for the module (``HadoopSession(fs="minidfs")``: HDFS 3.5.0, one NameNode and one
DataNode in the driver's JVM), beside one imitation (``HdfsLikeFileSystem``).  A few shipped
witnesses replay alike on both and agree with the model; an imitation deliberately wrong
(``examples.LocalRenameFileSystem``: the local disk's rename) is caught.  The full run (every
witness, 1,000 random schedules per committer) is ``python -m
zerorename_bridge.hadoop.minidfs``; its figures are in
``bench/results/hadoop_conformance_hdfs.json``.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from zerorename_bridge.hadoop.differential import TRACES, random_runs, witness_run
from zerorename_bridge.hadoop.minidfs import IMITATION_CLASS, Side, both, difference, fs_rules
from zerorename_bridge.hadoop.session import FILESYSTEMS, HadoopSession

pytestmark = [pytest.mark.hadoop, pytest.mark.slow]

#: the imitation without HDFS's rename rules (jvm/research/.../examples)
WRONG_IMITATION = {"fs.hlfs.impl": "zerorename.conformance.examples.LocalRenameFileSystem"}
#: witnesses of each committer (the manifest one with Hadoop 3.5.0's option, as the jars run)
ALIKE = ("v1.hdfs.completeness.hadoop.jsonl", "v2.hdfs.liveness.spark.jsonl",
         "manifest.hdfs.concurrency.hadoop.jsonl")


@pytest.fixture(scope="module")
def sides() -> Iterator[tuple[Side, Side]]:
    hdfs = Side.start("minidfs")
    imitation = Side.start("imitation")
    try:
        yield hdfs, imitation
    finally:
        hdfs.close()
        imitation.close()


def test_the_cluster_is_hdfs(sides: tuple[Side, Side]) -> None:
    """The session's root and a file live on the cluster, not on the local disk: the local
    directory of the same name stays empty."""
    hdfs, _ = sides
    root = hdfs.translator.workdir / "probe"
    hdfs.session.mkdirs(str(root / "d"))
    assert hdfs.session.files(str(root)) == {"d/": None}
    assert not root.exists()
    hdfs.session.remove(str(root))
    assert hdfs.session.files(str(root)) == {}


@pytest.mark.parametrize("name", ALIKE)
def test_a_witness_replays_alike_on_hdfs_and_the_imitation(sides: tuple[Side, Side],
                                                          name: str) -> None:
    hdfs, imitation = sides
    outcome = both(hdfs, imitation, witness_run(TRACES / name, hadoop_35=True), name)
    assert outcome.minidfs.agrees, outcome.minidfs.describe()
    assert outcome.imitation.agrees, outcome.imitation.describe()
    assert outcome.same, outcome.first_difference
    assert outcome.minidfs.aligned > 5


def test_random_schedules_replay_alike(sides: tuple[Side, Side], schedule_seed: int) -> None:
    hdfs, imitation = sides
    for name, marked in random_runs("v2", 3, schedule_seed):
        outcome = both(hdfs, imitation, marked, name)
        assert outcome.minidfs.agrees, outcome.minidfs.describe()
        assert outcome.same, f"seed {schedule_seed}: {outcome.first_difference}"


def test_a_restart_recovers_the_task_the_model_names(sides: tuple[Side, Side]) -> None:
    """Found by the MiniDFSCluster run (seed 1687103030, v1 schedule 747): the driver
    recovered task 0 whatever task the model's ``recover_task`` named, so task 1's committed
    output never reached the new job attempt and ``part-00001`` was missing, on HDFS and on
    the imitation alike.  The driver now recovers the task the call names."""
    hdfs, imitation = sides
    name, marked = next(random_runs("v1", 1, 1687103030, start=747))
    assert name == "v1 restart-hadoop seed 1687108091309837"
    outcome = both(hdfs, imitation, marked, name)
    assert outcome.minidfs.agrees, outcome.minidfs.describe()
    assert outcome.imitation.agrees, outcome.imitation.describe()
    assert outcome.same, outcome.first_difference


def test_a_wrong_imitation_is_caught(sides: tuple[Side, Side]) -> None:
    """The local disk's rename (an existing destination replaced, never moved into) differs
    from HDFS where v1's job commit renames a task's directory: caught both ways, against
    HDFS and against the model."""
    hdfs, imitation = sides
    name = "v1.hdfs.completeness.hadoop.jsonl"
    outcome = both(hdfs, imitation, witness_run(TRACES / name), name, WRONG_IMITATION)
    assert outcome.minidfs.agrees, outcome.minidfs.describe()
    assert not outcome.same
    assert outcome.first_difference.startswith("answer ")
    assert not outcome.imitation.agrees


def test_the_imitation_answers_every_probe_as_hdfs_does(sides: tuple[Side, Side]) -> None:
    """Each filesystem rule the committers rely on, probed on HDFS and on the imitation (and
    on the deliberately wrong one, which must be caught).  Before this test the imitation
    differed from HDFS in six probes (a file renamed onto itself, a rename or create below a
    file, createNonRecursive in a missing directory, a non-recursive delete's exception):
    docs/research/hdfs-findings.md."""
    rules = fs_rules(sides[0].session, (IMITATION_CLASS, WRONG_IMITATION["fs.hlfs.impl"]))
    assert len(rules) >= 35
    differ = {name: answers for name, answers in rules.items() if answers[0] != answers[1]}
    assert differ == {}
    wrong = {name for name, answers in rules.items() if answers[0] != answers[2]}
    assert "rename a file onto a file" in wrong
    assert "rename a directory into a non-empty directory" in wrong
    assert rules["rename a file onto a file"][0].startswith("false |")


def test_difference_names_the_first_answer_that_departs() -> None:
    from zerorename_bridge.hadoop.translate import Comparison

    empty = Comparison("x", ())
    same = [("pending", "stat", "/1/a", ""), ("done", "")]
    assert difference((empty, same), (empty, list(same))) == ""
    other = [("pending", "stat", "/1/a", ""), ("failed", "IOException")]
    assert difference((empty, same), (empty, other)).startswith("answer 1: minidfs")
    assert difference((empty, same), (empty, same[:1])) == "answers: minidfs 2, imitation 1"


def test_an_unknown_filesystem_is_refused() -> None:
    assert FILESYSTEMS == ("imitation", "minidfs")
    with pytest.raises(ValueError, match="no filesystem 'ext4'"):
        HadoopSession(fs="ext4")
