"""The two towers and the one seam between them (docs/research/architecture.md).

The repository ships two distributions: ``zerorename`` (``reference/``: committers, stores, the
production CLI, the Spark writer) and ``zerorename-research`` (``model/``: the model, the
bridge, the research CLI, the demo, the Spark fault hooks).  The import rules:

* production → research: never, not even lazily inside a function.  Production finds the
  research commands and the Spark fault hooks through entry points, by group, never by name;
* model → production: only ``zerorename.store`` — the store protocol and its value types,
  defined once there — so the model runs on the production types without depending on the
  committers, and never imports the bridge;
* bridge → anything: it is where the two meet (it drives production committers from the
  model's harness).

Each rule is read from the source (every ``import`` statement, at any depth, and every
``import_module``/``__import__`` of a literal name), so that a lazy import cannot slip through.
The slow test at the end installs the production wheel alone in a fresh virtualenv.
"""

from __future__ import annotations

import ast
import dataclasses
import os
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from importlib.metadata import EntryPoint
from pathlib import Path

import pytest

import zerorename.store as production_types
from zerorename import cli
from zerorename.spark import hooks

ROOT = Path(__file__).resolve().parent.parent
PRODUCTION = ROOT / "reference" / "zerorename"
MODEL = ROOT / "model" / "zerorename_model"
#: the store protocol's value types: defined in zerorename.store, nowhere else
VALUE_TYPES = ("ObjectInfo", "ListPage", "UploadInfo", "StoreCapabilities")


def research_packages() -> list[str]:
    """The research distribution's top-level packages, as its pyproject.toml declares them
    (so that a package added there is covered here without editing this test)."""
    project = tomllib.loads((ROOT / "model" / "pyproject.toml").read_text())
    include = project["tool"]["setuptools"]["packages"]["find"]["include"]
    return sorted({name.split(".")[0] for name in include})


def imported_modules(root: Path) -> Iterator[tuple[str, int, str]]:
    """(file, line, module) for every module a file under ``root`` imports, at any depth:
    ``import m``, ``from m import x`` (relative imports resolved against the package),
    ``importlib.import_module("m")`` and ``__import__("m")`` with a literal name."""
    for path in sorted(root.rglob("*.py")):
        tree = ast.parse(path.read_text(), filename=str(path))
        package = ".".join(path.relative_to(root.parent).with_suffix("").parts[:-1])
        where = str(path.relative_to(root.parent))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    yield where, node.lineno, alias.name
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")[:len(package.split(".")) - node.level + 1]
                    module = ".".join([*base, *([node.module] if node.module else [])])
                else:
                    module = node.module or ""
                yield where, node.lineno, module
                for alias in node.names:  # ``from zerorename import store``: a module too
                    yield where, node.lineno, f"{module}.{alias.name}"
            elif (isinstance(node, ast.Call) and node.args
                  and isinstance(node.args[0], ast.Constant)
                  and isinstance(node.args[0].value, str)
                  and ((isinstance(node.func, ast.Attribute)
                        and node.func.attr == "import_module")
                       or (isinstance(node.func, ast.Name)
                           and node.func.id in ("import_module", "__import__")))):
                yield where, node.lineno, node.args[0].value


def _in(module: str, packages: list[str]) -> bool:
    return any(module == p or module.startswith(p + ".") for p in packages)


# -- production → research: never ---------------------------------------------------------------

def test_the_research_distribution_is_what_the_rules_below_are_about() -> None:
    assert research_packages() == ["zerorename_bridge", "zerorename_model"]


def test_production_imports_nothing_of_the_research_tower() -> None:
    """No module under reference/zerorename imports the model or the bridge, even lazily."""
    research = research_packages()
    found = [f"{where}:{line}: {module}" for where, line, module in imported_modules(PRODUCTION)
             if _in(module, research)]
    assert found == []


def test_the_scan_sees_lazy_relative_and_dynamic_imports(tmp_path: Path) -> None:
    """The scan above must be able to fail: an import inside a function, a relative import
    and an ``import_module`` of a literal are all reported."""
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "mod.py").write_text(
        "import importlib\n"
        "def later():\n"
        "    from zerorename_model.engine.stores.store import ModelStore\n"
        "    import zerorename_bridge.cli\n"
        "    return importlib.import_module('zerorename_model.experiments.verdicts')\n"
        "from . import sibling\n")
    modules = {module for _where, _line, module in imported_modules(package)}
    assert {"zerorename_model.engine.stores.store", "zerorename_bridge.cli",
            "zerorename_model.experiments.verdicts", "pkg.sibling"} <= modules


def test_git_grep_finds_no_import_of_the_research_packages_in_reference() -> None:
    pattern = (r"^[[:space:]]*(from|import)[[:space:]]+(" + "|".join(research_packages())
               + r")([.[:space:]]|$)")
    result = subprocess.run(["git", "grep", "-n", "-E", pattern, "--", "reference/"],
                            cwd=ROOT, capture_output=True, text=True, check=False)
    assert result.returncode == 1, result.stdout or result.stderr  # 1: no match


def test_production_metadata_depends_on_boto3_alone_and_packages_only_zerorename() -> None:
    project = tomllib.loads((ROOT / "reference" / "pyproject.toml").read_text())
    assert [r.split(">")[0] for r in project["project"]["dependencies"]] == ["boto3"]
    assert project["tool"]["setuptools"]["packages"]["find"]["include"] == [
        "zerorename", "zerorename.*"]
    research = tomllib.loads((ROOT / "model" / "pyproject.toml").read_text())["project"]
    assert "zerorename[spark]" in research["dependencies"]  # research → production, allowed


# -- model → production: only the store protocol's types ----------------------------------------

def test_the_model_imports_only_zerorename_store_from_production() -> None:
    found = [f"{where}:{line}: {module}" for where, line, module in imported_modules(MODEL)
             if _in(module, ["zerorename"]) and not _in(module, ["zerorename.store"])
             and module != "zerorename"]  # ``from zerorename.store import X`` yields both
    bare = [f"{where}:{line}" for where, line, module in imported_modules(MODEL)
            if module == "zerorename"]
    bridge = [f"{where}:{line}: {module}" for where, line, module in imported_modules(MODEL)
              if _in(module, ["zerorename_bridge"])]
    assert (found, bare, bridge) == ([], [], [])


def test_the_value_types_are_defined_once_in_zerorename_store() -> None:
    """No class of the model redefines a value type, and the model's names are the very
    classes of zerorename.store (not look-alikes kept in step by hand)."""
    from zerorename_model.engine.stores import store as model_stores

    redefined = [f"{path.relative_to(ROOT)}:{node.lineno}: {node.name}"
                 for root in (MODEL, ROOT / "model" / "zerorename_bridge")
                 for path in sorted(root.rglob("*.py"))
                 for node in ast.walk(ast.parse(path.read_text()))
                 if isinstance(node, ast.ClassDef) and node.name in VALUE_TYPES]
    assert redefined == []
    for name in VALUE_TYPES:
        assert getattr(model_stores, name) is getattr(production_types, name), name
        assert dataclasses.is_dataclass(getattr(production_types, name))


def test_model_stores_answer_with_the_production_value_types() -> None:
    from zerorename_model.engine.stores.store import ModelStore

    store = ModelStore("s3")
    store.put("s3://b/dir/a", b"1")
    upload = store.create_multipart("s3://b/dir/big")
    assert isinstance(store.capabilities(), production_types.StoreCapabilities)
    assert isinstance(store.head("s3://b/dir/a"), production_types.ObjectInfo)
    page = store.list_page("s3://b/dir/")
    assert isinstance(page, production_types.ListPage)
    assert all(isinstance(o, production_types.ObjectInfo) for o in page.objects)
    [pending] = store.list_multipart_uploads("s3://b/dir/")
    assert isinstance(pending, production_types.UploadInfo) and pending.upload_id == upload
    assert isinstance(store, production_types.Store)


# -- the seams: entry points, found by group ----------------------------------------------------

def test_the_research_commands_are_entry_points_of_the_research_distribution() -> None:
    from zerorename_bridge import cli as research_cli

    commands = cli.available_commands()
    assert list(commands)[:4] == list(cli.RESEARCH_COMMANDS)
    assert commands["check"] is research_cli.CHECK and commands["demo"] is research_cli.DEMO
    assert all(isinstance(c, cli.Command) for c in commands.values())


@pytest.fixture
def without_research(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """As if zerorename-research were not installed: no entry point in either group."""
    monkeypatch.setattr(cli, "entry_points", lambda **_kw: [])
    monkeypatch.setattr(hooks, "entry_points", lambda **_kw: [])
    hooks._provider.cache_clear()
    yield
    hooks._provider.cache_clear()


@pytest.mark.parametrize("argv", [["check", "--target", "reference"], ["check", "--help"],
                                  ["table"], ["trace", "show", "x.jsonl"],
                                  ["demo", "--rows", "10"]])
def test_without_the_research_distribution_its_commands_say_what_to_install(
        without_research: None, capsys: pytest.CaptureFixture[str], argv: list[str]) -> None:
    assert cli.main(argv) == 2
    out, err = capsys.readouterr()
    assert out == ""
    [line] = err.splitlines()
    assert f"'{argv[0]}' is a research command" in line and "zerorename-research" in line
    assert "pip install -e ./model" in line


def test_without_the_research_distribution_help_and_production_commands_work(
        without_research: None, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        cli.main(["--help"])
    assert done.value.code == 0
    listing = capsys.readouterr().out
    assert "uploads" in listing and "check" in listing and "needs zerorename-research" in listing
    with pytest.raises(SystemExit):
        cli.main(["uploads", "--help"])
    assert "--older-than" in capsys.readouterr().out


def test_a_plugin_that_fails_to_load_leaves_the_production_commands_working(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    broken = EntryPoint(name="check", value="zerorename_no_such_module:CHECK",
                        group=cli.COMMAND_GROUP)
    monkeypatch.setattr(cli, "entry_points", lambda **_kw: [broken])
    assert cli.main(["check"]) == 2
    [line] = capsys.readouterr().err.splitlines()
    assert "failed to load" in line and "zerorename_no_such_module" in line
    with pytest.raises(SystemExit) as done:
        cli.main(["success", "--help"])
    assert done.value.code == 0


def test_the_spark_fault_options_come_from_the_registered_provider() -> None:
    from zerorename.spark.core import spec_from_options
    from zerorename_bridge.spark_faults import PROVIDER, TaskFaults

    hooks._provider.cache_clear()
    assert hooks._provider() is PROVIDER
    spec = spec_from_options({"path": "s3://b/o", "zerorename.fault.raise_after_write": "1@0"})
    assert isinstance(hooks.for_task(spec.faults, 1, 0), TaskFaults)
    assert hooks.for_task({}, 1, 0) is hooks.NO_HOOKS


def test_without_the_provider_fault_options_are_refused_and_plain_writes_load_nothing(
        without_research: None, monkeypatch: pytest.MonkeyPatch) -> None:
    from zerorename.spark.core import spec_from_options

    with pytest.raises(hooks.TaskHookOptionError, match="zerorename-research") as refused:
        spec_from_options({"path": "s3://b/o", "zerorename.fault.raise_after_write": "1@0"})
    assert refused.value.path == "s3://b/o"

    def no_lookup(**_kw: object) -> list[EntryPoint]:
        raise AssertionError("a write without fault options looked for a provider")

    monkeypatch.setattr(hooks, "entry_points", no_lookup)
    hooks._provider.cache_clear()
    assert spec_from_options({"path": "s3://b/o"}).faults == {}
    assert hooks.for_task({}, 0, 0) is hooks.NO_HOOKS


# -- the production wheel alone, in a clean virtualenv ------------------------------------------

@pytest.mark.slow
@pytest.mark.spark
def test_zerorename_spark_alone_works_in_a_clean_virtualenv() -> None:
    """scripts/check-clean-install.sh: the sdist and both wheels built (``python -m build``), the
    zerorename wheel installed alone and smoke-tested (import, version, ``py.typed``, the CLI, a
    LocalStore job, zerorename's jar inside the wheel at the wheel's version), then
    ``zerorename[spark]``
    (moto beside it as test tooling); a committer round trip, a Spark write, no research
    package importable, ``zerorename check`` naming what to install.  63 s on this 2-core
    machine when quiet (wheels 8 s, pyspark's install 26 s, moto 5 s, the checks 23 s), up to
    2.5 min when the machine is busy."""
    result = subprocess.run(["bash", str(ROOT / "scripts" / "check-clean-install.sh")],
                            env={**os.environ, "ZERORENAME_PYTHON": sys.executable},
                            capture_output=True, text=True, timeout=1500, check=False)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    for step in ("import and version: ok", "py.typed: ok", "zerorename's jar in the wheel: ok",
                 "zerorename --help and --version: ok",
                 "a job written to LocalStore: ok",
                 "no research tower: ok", "committer round trip on moto: ok",
                 "zerorename check: ok", "Spark write, local[1]: ok"):
        assert f"[clean install] {step}" in result.stdout, step
