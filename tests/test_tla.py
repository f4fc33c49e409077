"""Checks of the TLA+ specifications in tla/ (see tla/README.md).

* every module parses with the PyPI ``tla`` parser, and the check can fail;
* no file under tla/ contains a TAB;
* every module passes the SANY-like name check of tla/tools/minitlc.py;
* tla/README.md's table of expected results is generated from tla/expected.json, which
  lists exactly the .cfg files present, with their invariants;
* tla/tools/minitlc.py reproduces every expected result it can check;
* TLC reproduces every expected result, when TLA2TOOLS_JAR names tla2tools.jar.
"""

from __future__ import annotations

import contextlib
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


@pytest.mark.parametrize("entry", [e for e in EXPECTED if e["minitlc"]],
                         ids=lambda e: e["config"])
def test_minitlc_reproduces_expected_result(entry: dict[str, Any]) -> None:
    out = io.StringIO()
    checker = minitlc.Checker(str(TLA_DIR / f"{entry['module']}.tla"),
                              str(TLA_DIR / entry["config"]))
    rc = checker.run(max_states=200_000, out=out)
    _judge(entry, rc, out.getvalue())


TLC_SKIP = ("TLA2TOOLS_JAR is not set: TLC (tla2tools.jar) is in no package registry the "
            "build machines reach (PyPI, Debian, npm), so it cannot be installed here; set "
            "TLA2TOOLS_JAR=/path/to/tla2tools.jar to run TLC on every tla/*.cfg")


@pytest.mark.parametrize("entry", EXPECTED, ids=lambda e: e["config"])
def test_tlc_reproduces_expected_result(entry: dict[str, Any], tmp_path: Path) -> None:
    jar = os.environ.get("TLA2TOOLS_JAR")
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
