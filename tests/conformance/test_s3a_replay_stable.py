"""The S3A harness's speed-ups change nothing it explores (issue 45 item 1).

``data/s3a_schedules.jsonl`` holds what the harness found, before any speed-up (main at
d91f863), for every shipped ``s3`` witness of magic, directory and partitioned and for 24
random schedules of each (one per reproduced scope, seed in the file's first line): each
comparison's fingerprint (:meth:`~zerorename_bridge.hadoop.translate.Comparison.fingerprint`:
every answer of S3A's side in order, each call's outcome, each differing file).  Replayed
now, every fingerprint must be the same: the same requests in the same order, the same
outcomes, the same verdict.  Re-recorded since (the file's first line says which): only the
four ``same-job-id`` schedules of directory and partitioned, after the harness gave each job
the model's own write UUID (docs/research/s3a-findings.md, finding 4); then the 21 whose model
run changed with the 3.5.0 options of findings 6 and 7 (``as_hadoop_35``: the clean-up that
fails on an upload gone before its abort, magic's per-job directory), 6 of which now agree; then
the 21 whose fingerprint changed when S3A's committers came to be replayed under Hadoop's
protocol (``as_hadoop_35`` sets ``driver="hadoop"``: of the 31 model runs that changed, all of
Spark-protocol schedules, 10 kept their fingerprint; 3 magic ones differed and now agree); then
the 24 magic ones whose model run changed with magic's commit-task option
(``DELETE_ATTEMPT_AFTER_COMMIT``; all agreed and still agree); the others are as recorded at
d91f863."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from zerorename_bridge.hadoop.differential import random_runs, witness_run
from zerorename_bridge.hadoop.recording import MarkedResult
from zerorename_bridge.hadoop.s3a_translate import (
    S3A_COMMITTERS,
    S3ATranslator,
    s3a_translator,
    s3a_witness_paths,
)

RECORDED = Path(__file__).with_name("data") / "s3a_schedules.jsonl"


def _recorded() -> tuple[dict[str, Any], list[dict[str, Any]]]:
    lines = [json.loads(line) for line in RECORDED.read_text(encoding="utf-8").splitlines()]
    return lines[0], lines[1:]


def _schedules() -> Iterator[tuple[str, MarkedResult]]:
    """The recorded schedules again, in the recorded order."""
    header, _rows = _recorded()
    for path in s3a_witness_paths():
        yield path.name, witness_run(path, hadoop_35=True)
    for committer in S3A_COMMITTERS:
        yield from random_runs(committer, int(header["count"]), int(header["seed"]),
                               store="s3")


@pytest.fixture(scope="module")
def translator() -> Iterator[S3ATranslator]:
    with s3a_translator() as translator:
        yield translator


def test_the_recording_covers_every_committer_and_both_outcomes() -> None:
    _header, rows = _recorded()
    names = [r["name"] for r in rows]
    assert names == [name for name, _marked in _schedules()]
    for committer in S3A_COMMITTERS:
        mine = [r for r in rows if r["name"].startswith(committer)]
        assert len(mine) > 24 and all(r["trail"] for r in mine), committer
    # differences too: a harness that lost them would not match
    assert {r["agrees"] for r in rows} == {True, False}


@pytest.mark.hadoop
@pytest.mark.slow
def test_every_recorded_schedule_replays_to_the_same_fingerprint(
        translator: S3ATranslator) -> None:
    _header, rows = _recorded()
    changed = []
    for (name, marked), row in zip(_schedules(), rows, strict=True):
        now = translator.compare(marked, name).fingerprint()
        if now != row:
            changed.append(f"{name}: " + ", ".join(k for k in row if now.get(k) != row[k]))
    assert not changed, "\n".join(changed)


@pytest.mark.hadoop
def test_a_change_in_what_s3a_does_changes_the_fingerprint(translator: S3ATranslator) -> None:
    """The fingerprint sees a change of S3A's behaviour: without the clean-up's abort of
    pending uploads, a magic schedule whose job ends by aborting sends other requests."""
    _header, rows = _recorded()
    by_name = dict(_schedules())
    row = next(r for r in rows if r["name"].startswith("magic abort-hadoop"))
    marked = by_name[row["name"]]
    same = translator.compare(marked, row["name"]).fingerprint()
    assert same == row
    other = translator.compare(marked, row["name"], options={
        "fs.s3a.committer.abort.pending.uploads": "false"}).fingerprint()
    assert other["trail"] != row["trail"]
