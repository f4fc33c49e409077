"""Hadoop's own committers as rows of the matrix cannot drift: ``paper/results/hadoop.json`` is
what ``zerorename check --target hadoop --quick`` gives (one cell explored again here), and
``paper/results/hadoop_s3a.json`` (S3A's committers on moto) what the same check gives at
``hadoop_rows.S3A_RUNS`` runs per scope; every witness replays in the JVM to the same violation,
and the tables in ``paper/README.md`` and in the paper are their rendering beside the model's
rows of ``verdicts.json``.  A stale file is fixed by ``.venv/bin/python paper/make_paper.py
--hadoop`` (about 10 minutes) or ``--hadoop-s3a`` (about half an hour)."""

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
def s3a() -> dict[str, Any]:
    loaded: dict[str, Any] = hadoop_rows.load(hadoop_rows.S3A_STORE)
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


def test_the_block_is_what_the_results_render_to(data: dict[str, Any], s3a: dict[str, Any],
                                                  results: Results) -> None:
    text = hadoop_rows.README.read_text(encoding="utf-8")
    assert text == hadoop_rows.updated_readme(text, [data, s3a], results), (
        "paper/README.md's hadoop block is stale: run .venv/bin/python paper/make_paper.py "
        "--hadoop or --hadoop-s3a")
    paper = (PAPER_DIR / "zerorename.md").read_text(encoding="utf-8")
    for rows in (data, s3a):
        assert hadoop_rows.render_table(rows, results) in paper, "the paper's table is stale"
    changed = copy.deepcopy(data)
    row = next(r for r in changed["rows"]
               if r["cells"]["concurrency"]["verdict"] == "violated")
    row["cells"]["concurrency"].update(verdict="holds", shown="holds", trace=None)
    assert hadoop_rows.updated_readme(text, [changed, s3a], results) != text, (
        "a flipped verdict shows")
    flipped = hadoop_rows.differences(changed, results)
    assert any((d["committer"], d["protocol"], d["property"])
               == (row["committer"], row["protocol"], "concurrency") for d in flipped), (
        "a real cell that now differs from the model's is listed")
    # and in S3A's table: every real cell is read from the file
    changed = copy.deepcopy(s3a)
    cell = changed["rows"][0]["cells"]["abortability"]
    cell.update(verdict="violated", shown="violated", trace="results/hadoop_traces/x.jsonl",
                scope="abort-hadoop")
    assert hadoop_rows.updated_readme(text, [data, changed], results) != text
    assert "[**violated**](results/hadoop_traces/x.jsonl) ≠" in hadoop_rows.render_table(
        changed, results)


def test_s3as_rows_are_its_committers_under_hadoops_protocol(s3a: dict[str, Any],
                                                             results: Results) -> None:
    from zerorename_bridge.hadoop.check import PROPERTIES

    assert [(r["committer"], r["protocol"]) for r in s3a["rows"]] == [
        (c, "hadoop") for c in ("magic", "directory", "partitioned")]
    assert (s3a["properties"], s3a["store"], s3a["runs_per_scope"]) == (
        list(PROPERTIES), "s3", hadoop_rows.S3A_RUNS)
    table = hadoop_rows.render_table(s3a, results)
    assert f"{hadoop_rows.S3A_RUNS} runs per scope" in table
    assert "so S3A users read the `hadoop` rows" in table
    model = hadoop_rows.model_cells(results, "s3")
    for row in s3a["rows"]:
        for prop, cell in row["cells"].items():
            mine = model[row["committer"], row["protocol"], prop]
            if cell["verdict"] == "holds":
                assert cell["shown"] == ("holds" if cell["complete"] else "holds*"), (row, prop)
            if mine.verdict.value == "violated" and cell["verdict"] != "violated" and (
                    not cell["complete"]):
                # never read as "holds": the budget did not reach the model's violation
                assert hadoop_rows.real_shown(mine, cell) == f"not found in {cell['runs']} runs"
                assert f"**not found in {cell['runs']} runs** ≠" in table, (row, prop)


def test_a_model_violation_the_budget_missed_reads_not_found(results: Results) -> None:
    """The text is made from the cell: its runs, not a typed number; a cell the real search
    exhausted, or one the model does not find violated, reads as its verdict."""
    model = hadoop_rows.model_cells(results, "s3")
    violated = next(c for c in model.values() if c.committer == "magic"
                    and c.verdict.value == "violated")
    held = next(c for c in model.values() if c.committer == "magic"
                and c.verdict.value == "holds")
    real = {"verdict": "holds", "shown": "holds*", "complete": False, "runs": 77,
            "cut_off": ["crash-hadoop"], "scope": None, "violation": None, "reason": None,
            "trace": None}
    assert hadoop_rows.real_shown(violated, real) == "not found in 77 runs"
    assert hadoop_rows.real_shown(violated, {**real, "runs": 5}) == "not found in 5 runs"
    assert hadoop_rows.real_shown(held, real) == "holds*"
    assert hadoop_rows.real_shown(violated, {**real, "shown": "holds", "complete": True}) == (
        "holds")


def test_a_known_s3a_finding_is_named_from_the_witness(results: Results,
                                                       tmp_path: Path) -> None:
    """A differing cell is put down to an entry of docs/research/s3a-findings.md only when its
    committer, its witness's scope and the witness's text show it."""
    model = hadoop_rows.model_cells(results, "s3")
    held = next(c for c in model.values() if c.committer == "directory"
                and c.prop == "abortability" and c.verdict.value == "holds")
    witness = tmp_path / "w.jsonl"
    witness.write_text('{"t": "op", "result": "FileNotFoundException: Aborting multipart '
                       'upload ID up-1 on out/part-00000"}\n', encoding="utf-8")
    real = {"verdict": "violated", "shown": "violated", "complete": False, "runs": 3,
            "cut_off": [], "scope": "abort-hadoop", "violation": "x", "reason": None,
            "trace": str(witness)}
    line = hadoop_rows.why("directory", held, real, 20)
    assert "finding 6" in line and hadoop_rows.FINDINGS_DOC in line, line
    witness.write_text('{"t": "op", "result": "IOException: something else"}\n',
                       encoding="utf-8")
    assert "finding" not in hadoop_rows.why("directory", held, real, 20)
    partition = {**real, "scope": "partition-hadoop"}
    assert "finding 4" in hadoop_rows.why("directory", held, partition, 20)
    assert "finding 4" not in hadoop_rows.why("magic", held, partition, 20)


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


@pytest.mark.parametrize("store", ["hdfs", "s3"])
def test_every_difference_is_marked_and_explained(store: str, results: Results) -> None:
    data = hadoop_rows.load(store)
    model = hadoop_rows.model_cells(results, store)
    table = hadoop_rows.render_table(data, results)
    diffs = hadoop_rows.differences(data, results)
    expected = {(r["committer"], r["protocol"], p) for r in data["rows"]
                for p, cell in r["cells"].items()
                if model[r["committer"], r["protocol"], p].shown != cell["shown"]}
    assert {(d["committer"], d["protocol"], d["property"]) for d in diffs} == expected
    label = "S3A 3.5.0" if store == "s3" else "Hadoop 3.5.0"
    for d in diffs:
        line = (f"* `{d['committer']}`, {d['protocol']}, {d['property']}: model {d['model']}, "
                f"{label} {d['real']}: ")
        assert line in table and d["why"], d
        mine = model[d["committer"], d["protocol"], d["property"]]
        real = next(r for r in data["rows"] if (r["committer"], r["protocol"]) == (
            d["committer"], d["protocol"]))["cells"][d["property"]]
        # the line is made from the two cells
        assert d["why"] == hadoop_rows.why(d["committer"], mine, real, data["runs_per_scope"],
                                           "the S3A rows'" if store == "s3"
                                           else "the quick check's"), d
        for scope in real["cut_off"] if not real["complete"] else ():
            if mine.verdict.value == "violated" and real["verdict"] != "violated":
                assert f"`{scope}`" in d["why"], d
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


def test_every_witness_replays_to_its_violation(data: dict[str, Any], s3a: dict[str, Any],
                                                jvm: None) -> None:
    from zerorename_bridge.hadoop.check import is_hadoop_trace, replay

    named = set()
    for row, store in [*((r, "hdfs") for r in data["rows"]),
                       *((r, "s3") for r in s3a["rows"])]:
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
                row["committer"], store, row["protocol"])
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
