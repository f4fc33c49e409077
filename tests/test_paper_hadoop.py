"""Hadoop's own committers as rows of the matrix cannot drift: ``paper/results/hadoop.json`` is
what ``zerorename check --target hadoop --quick`` gives (one cell explored again here), every
witness replays in the JVM to the same violation, and the table in ``paper/README.md`` and in
the paper is its rendering beside the model's rows of ``verdicts.json``.  A stale file is fixed
by ``.venv/bin/python paper/make_paper.py --hadoop`` (about 10 minutes)."""

from __future__ import annotations

import copy
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from zerorename_model.check.properties import PROPERTIES as CHECKERS
from zerorename_model.experiments import trace

PAPER_DIR = Path(__file__).resolve().parents[1] / "paper"
sys.path.insert(0, str(PAPER_DIR))  # paper/zrpaper, as paper/make_paper.py imports it

from zrpaper import hadoop_rows  # noqa: E402
from zrpaper.results import Results, load_results  # noqa: E402


@pytest.fixture(scope="module")
def data() -> dict[str, Any]:
    loaded: dict[str, Any] = hadoop_rows.load()
    return loaded


@pytest.fixture(scope="module")
def results() -> Results:
    return load_results()


@pytest.fixture(scope="module")
def jvm() -> Iterator[None]:
    """The research driver's JVM (one per module), ended afterwards."""
    from zerorename_bridge.hadoop import check
    from zerorename_bridge.hadoop.session import HadoopUnavailable, research_jar

    try:
        research_jar()
    except HadoopUnavailable as missing:  # pragma: no cover - bootstrap builds it
        pytest.fail(f"the research jar is missing ({missing}): run scripts/jvm-build.sh")
    yield
    check.close()


def test_the_block_is_what_the_results_render_to(data: dict[str, Any],
                                                  results: Results) -> None:
    text = hadoop_rows.README.read_text(encoding="utf-8")
    assert text == hadoop_rows.updated_readme(text, data, results), (
        "paper/README.md's hadoop block is stale: run .venv/bin/python paper/make_paper.py "
        "--hadoop")
    assert hadoop_rows.render_table(data, results) in (PAPER_DIR / "zerorename.md").read_text(
        encoding="utf-8"), "the paper's hadoop table is stale"
    changed = copy.deepcopy(data)
    row = next(r for r in changed["rows"]
               if r["cells"]["concurrency"]["verdict"] == "violated")
    row["cells"]["concurrency"].update(verdict="holds", shown="holds", trace=None)
    assert hadoop_rows.updated_readme(text, changed, results) != text, "a flipped verdict shows"
    flipped = hadoop_rows.differences(changed, results)
    assert any((d["committer"], d["protocol"], d["property"])
               == (row["committer"], row["protocol"], "concurrency") for d in flipped), (
        "a real cell that now differs from the model's is listed")


def test_the_rows_are_the_hdfs_committers_under_both_protocols(data: dict[str, Any],
                                                               results: Results) -> None:
    from zerorename_bridge.hadoop.check import PROPERTIES, QUICK_RUNS

    assert [(r["committer"], r["protocol"]) for r in data["rows"]] == [
        (c, p) for c in ("v1", "v2", "manifest") for p in ("hadoop", "spark")]
    assert (data["properties"], data["store"], data["runs_per_scope"]) == (
        list(PROPERTIES), "hdfs", QUICK_RUNS)
    table = hadoop_rows.render_table(data, results)
    for left_out in ("magic", "directory", "partitioned"):
        assert f"`{left_out}`" in table, "the text says which committers are left out"
    for row in data["rows"]:
        for prop, cell in row["cells"].items():
            if cell["verdict"] == "holds":
                assert cell["shown"] == ("holds" if cell["complete"] else "holds*"), (row, prop)


def test_every_difference_is_marked_and_explained(data: dict[str, Any],
                                                  results: Results) -> None:
    model = hadoop_rows.model_cells(results, "hdfs")
    table = hadoop_rows.render_table(data, results)
    diffs = hadoop_rows.differences(data, results)
    expected = {(r["committer"], r["protocol"], p) for r in data["rows"]
                for p, cell in r["cells"].items()
                if model[r["committer"], r["protocol"], p].shown != cell["shown"]}
    assert {(d["committer"], d["protocol"], d["property"]) for d in diffs} == expected
    for d in diffs:
        line = (f"* `{d['committer']}`, {d['protocol']}, {d['property']}: model {d['model']}, "
                f"Hadoop {d['real']}: ")
        assert line in table and d["why"], d
    rows = "\n".join(line for line in table.splitlines() if line.startswith("|"))
    assert rows.count("≠") == len(diffs), "each difference marked once in the table"


def test_why_names_the_recovery_the_real_committer_lacks(results: Results) -> None:
    """A real violation in a restart scope where the model's v1 (which recovers committed
    tasks) holds is put down to ``supports_recovery=False``; manifest recovers nothing in the
    model either, so the same pair is not."""
    real = {"verdict": "violated", "shown": "violated", "complete": True, "runs": 5,
            "cut_off": [], "scope": "restart-hadoop", "violation": "x", "reason": None,
            "trace": "t"}
    model = hadoop_rows.model_cells(results, "hdfs")
    held = next(c for c in model.values() if c.committer == "v1" and c.verdict.value == "holds"
                and c.complete)
    assert "supports_recovery=False" in hadoop_rows.why("v1", held, real, 40)
    assert "supports_recovery" not in hadoop_rows.why("manifest", held, real, 40)
    cut = {**real, "verdict": "holds", "shown": "holds*", "complete": False,
           "cut_off": ["partition-hadoop"], "scope": None}
    violated = next(c for c in model.values() if c.committer == "v1"
                    and c.verdict.value == "violated" and c.scope == "partition-hadoop")
    assert "`partition-hadoop`" in hadoop_rows.why("v1", violated, cut, 40)
    assert "not exhausted" in hadoop_rows.why("v1", violated, cut, 40)


def test_every_witness_replays_to_its_violation(data: dict[str, Any], jvm: None) -> None:
    from zerorename_bridge.hadoop.check import is_hadoop_trace, replay

    named = set()
    for row in data["rows"]:
        for prop, cell in row["cells"].items():
            assert (cell["verdict"] == "violated") == (cell["trace"] is not None), (row, prop)
            if cell["trace"] is None:
                continue
            named.add(cell["trace"])
            path = PAPER_DIR / cell["trace"]
            events = trace.read_trace(path)
            assert is_hadoop_trace(events), f"{path.name}: not marked target: hadoop"
            scenario = events[0]["scenario"]
            assert isinstance(scenario, dict)
            assert (scenario["committer"], scenario["store"], scenario["driver"]) == (
                row["committer"], "hdfs", row["protocol"])
            recorded = events[-1]["violations"]
            assert isinstance(recorded, list)
            assert any(str(v).startswith(prop) for v in recorded), path
            replayed = replay(path)
            assert replayed.same, f"{path.name}: replayed to another final state"
            again = {str(v) for v in CHECKERS[prop](replayed.result)}
            assert cell["violation"] in again, f"{path.name}: replayed to another violation"
    on_disk = {p.relative_to(PAPER_DIR).as_posix()
               for p in hadoop_rows.HADOOP_TRACES.glob("*.jsonl")}
    assert on_disk == named, "a trace file no verdict names, or a named one missing"


def test_a_cell_is_a_fresh_exploration(data: dict[str, Any], jvm: None,
                                       tmp_path: Path) -> None:
    """Real v1's concurrency under Hadoop's protocol, explored again: the same verdict, runs
    and exhaustion as the committed results."""
    (cell,) = hadoop_rows.explore("v1", ["concurrency"], str(tmp_path), protocols=("hadoop",))
    committed = next(r for r in data["rows"]
                     if (r["committer"], r["protocol"]) == ("v1", "hadoop"))["cells"]["concurrency"]
    fresh = hadoop_rows.cell_json(cell)
    for key in ("verdict", "shown", "runs", "complete", "cut_off", "scope", "violation"):
        assert fresh[key] == committed[key], key
