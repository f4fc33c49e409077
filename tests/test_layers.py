"""The research model's layers, and the rule that its imports only point down
(docs/architecture.md).

``zerorename_model`` is five subpackages, lowest first:

* ``engine``: the simulated world and how it runs (scenario, object stores, harness, choices);
* ``systems``: the commit protocols under study (and the lakeFS service they use);
* ``check``: the properties and the searches that check them (explore, sampling);
* ``experiments``: scopes, verdicts, the matrix, Table V, seeds, traces on disk;
* ``present``: reading a trace as data, the happens-before graph, figures, the demo.

A module may import its own layer or any lower one, never a higher one; a property is *about* the
protocols, so ``check`` sits above ``systems``.  Every import of the model's own modules sits at a
module's top level: none hides inside a function or under ``if TYPE_CHECKING:`` (the way a cycle is
usually dodged), and the module graph those imports make has no cycle.

Inside ``engine/harness`` the same rule orders the harness's own modules (``HARNESS``, lowest
first): the run's parts (recorder, driver rules, fault moves) hold its shared state and never
import the scheduler built on them, and none is a mixin of another harness class.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
MODEL = ROOT / "model" / "zerorename_model"
#: lowest first: a module may import from its own layer and those before it
LAYERS = ("engine", "systems", "check", "experiments", "present")
#: the harness's modules, lowest first: each may import only those before it
#: (docs/research/architecture.md, "The harness is built by composition")
HARNESS = ("events", "state", "control", "workers", "env", "recorder", "driver", "faults",
           "scheduler")


@dataclass(frozen=True)
class Import:
    where: str   # the importing module, dotted
    line: int
    module: str  # the imported module (or package), dotted
    top_level: bool  # a statement of the module's body, not in a function, class or ``if``


def _module_name(path: Path, root: Path) -> str:
    parts = path.relative_to(root.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_module(name: str, root: Path) -> bool:
    relative = Path(*name.split(".")[1:]) if "." in name else Path()
    base = root / relative
    return base.with_suffix(".py").is_file() or (base / "__init__.py").is_file()


def own_imports(root: Path) -> Iterator[Import]:
    """Every import, at any depth, of a module of the package at ``root`` (relative imports
    resolved; ``from pkg import sub`` names the submodule when ``sub`` is one)."""
    package = root.name
    for path in sorted(root.rglob("*.py")):
        tree = ast.parse(path.read_text(), filename=str(path))
        where = _module_name(path, root)
        top = {id(node) for node in tree.body}
        here = where if path.name == "__init__.py" else where.rpartition(".")[0]
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = here.split(".")[:len(here.split(".")) - node.level + 1]
                    module = ".".join([*base, *([node.module] if node.module else [])])
                else:
                    module = node.module or ""
                subs = [f"{module}.{a.name}" for a in node.names
                        if _is_module(f"{module}.{a.name}", root)]
                names = subs if subs and len(subs) == len(node.names) else [module, *subs]
            else:
                continue
            for name in names:
                if name == package or name.startswith(package + "."):
                    yield Import(where, node.lineno, name, id(node) in top)


def layer_of(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in LAYERS else None


def upward_imports(root: Path) -> list[str]:
    found = []
    for imp in own_imports(root):
        mine, theirs = layer_of(imp.where), layer_of(imp.module)
        if mine is None or theirs is None:
            continue
        if LAYERS.index(theirs) > LAYERS.index(mine):
            found.append(f"{imp.where}:{imp.line}: {mine} imports {imp.module} ({theirs})")
    return found


def hidden_imports(root: Path) -> list[str]:
    return [f"{imp.where}:{imp.line}: {imp.module}" for imp in own_imports(root)
            if not imp.top_level]


def cycles(root: Path) -> list[list[str]]:
    """The cycles of the graph of top-level imports (one per strongly connected part)."""
    graph: dict[str, set[str]] = {}
    for imp in own_imports(root):
        if imp.top_level and imp.module != imp.where:
            graph.setdefault(imp.where, set()).add(imp.module)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:  # Tarjan's strongly connected components
        index[node] = low[node] = len(index)
        stack.append(node)
        for other in sorted(graph.get(node, ())):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            part = []
            while True:
                member = stack.pop()
                part.append(member)
                if member == node:
                    break
            if len(part) > 1:
                found.append(sorted(part))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def _harness_module(module: str, package: str) -> str | None:
    """``module``'s name inside the harness package (None: not one of its modules)."""
    prefix = f"{package}.engine.harness."
    return module[len(prefix):] if module.startswith(prefix) else None


def harness_out_of_order(root: Path) -> list[str]:
    """Imports between the harness's modules that do not point down :data:`HARNESS` (or
    involve a module it does not list)."""
    found = []
    for imp in own_imports(root):
        mine, theirs = (_harness_module(imp.where, root.name),
                        _harness_module(imp.module, root.name))
        if mine is None or theirs is None:
            continue
        if mine not in HARNESS or theirs not in HARNESS or \
                HARNESS.index(theirs) >= HARNESS.index(mine):
            found.append(f"{imp.where}:{imp.line}: {mine} imports {theirs}")
    return found


def harness_mixins(root: Path) -> list[str]:
    """Classes of the harness built on a class of another harness module (how the run used to
    be assembled, from mixins over a base declaring the shared attributes)."""
    found = []
    for path in sorted((root / "engine" / "harness").glob("*.py")):
        tree = ast.parse(path.read_text(), filename=str(path))
        imported = {alias.asname or alias.name for node in ast.walk(tree)
                    if isinstance(node, ast.ImportFrom) and (
                        node.level > 0
                        or (node.module or "").startswith(f"{root.name}.engine.harness"))
                    for alias in node.names}
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                bases = {b.id for b in node.bases if isinstance(b, ast.Name)}
                for base in sorted(bases & imported):
                    found.append(f"{path.stem}.{node.name} extends {base}")
    return found


# -- the model ------------------------------------------------------------------------------------

def test_every_module_of_the_model_is_in_a_layer() -> None:
    loose = [str(path.relative_to(MODEL)) for path in MODEL.glob("*.py")
             if path.name != "__init__.py"]
    assert loose == []
    assert sorted(p.name for p in MODEL.iterdir() if (p / "__init__.py").is_file()) == \
        sorted(LAYERS)


def test_the_models_imports_only_point_down() -> None:
    assert upward_imports(MODEL) == []


def test_no_import_of_the_model_hides_in_a_function_or_under_type_checking() -> None:
    assert hidden_imports(MODEL) == []


def test_the_models_imports_make_no_cycle() -> None:
    assert cycles(MODEL) == []


def test_the_harness_modules_import_only_those_below_them() -> None:
    assert harness_out_of_order(MODEL) == []
    modules = sorted(p.stem for p in (MODEL / "engine" / "harness").glob("*.py")
                     if p.name != "__init__.py")
    assert modules == sorted(HARNESS), "a harness module HARNESS does not place"


def test_the_run_is_composed_not_mixed_in() -> None:
    assert harness_mixins(MODEL) == []
    edges = {(imp.where, imp.module) for imp in own_imports(MODEL)}
    harness = "zerorename_model.engine.harness"
    assert (f"{harness}.scheduler", f"{harness}.faults") in edges  # the scan sees the parts
    for part in ("recorder", "driver", "faults"):
        assert (f"{harness}.{part}", f"{harness}.state") in edges
        assert (f"{harness}.{part}", f"{harness}.scheduler") not in edges


def test_the_scan_sees_the_models_real_imports() -> None:
    """Guards the scan itself: it must find edges the model is known to have."""
    edges = {(imp.where, imp.module) for imp in own_imports(MODEL)}
    assert ("zerorename_model.check.properties", "zerorename_model.systems.protocols") in edges
    assert ("zerorename_model.present.viz", "zerorename_model.present.hb") in edges
    assert ("zerorename_model.systems.protocols.v2", "zerorename_model.systems.protocols.v1") \
        in edges  # a relative or absolute import of a sibling, resolved


# -- the checks can fail ------------------------------------------------------------------------

def _package(tmp_path: Path, files: dict[str, str]) -> Path:
    root = tmp_path / "zerorename_model"
    for name, text in {"__init__.py": "", **files}.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.parent != root and not (path.parent / "__init__.py").exists():
            (path.parent / "__init__.py").write_text("")
        path.write_text(text)
    return root


def test_a_lower_layer_importing_a_higher_one_is_reported(tmp_path: Path) -> None:
    root = _package(tmp_path, {
        "engine/harness.py": "from zerorename_model.check.properties import PROPERTIES\n",
        "check/properties.py": "from zerorename_model.engine import harness\nPROPERTIES = {}\n",
        "present/viz.py": "from ..experiments import verdicts\n",
        "experiments/verdicts.py": "",
    })
    assert upward_imports(root) == [
        "zerorename_model.engine.harness:1: engine imports "
        "zerorename_model.check.properties (check)"]
    assert cycles(root) == [["zerorename_model.check.properties",
                             "zerorename_model.engine.harness"]]


@pytest.mark.parametrize("hiding", [
    "def later():\n    from zerorename_model.present import viz\n",
    "from typing import TYPE_CHECKING\n"
    "if TYPE_CHECKING:\n    from zerorename_model.present import viz\n",
    "class Holder:\n    import zerorename_model.present.viz\n",
])
def test_an_import_inside_a_function_or_under_type_checking_is_reported(
        tmp_path: Path, hiding: str) -> None:
    root = _package(tmp_path, {"engine/state.py": hiding, "present/viz.py": ""})
    assert hidden_imports(root) == [
        f"zerorename_model.engine.state:{hiding.count(chr(10))}: zerorename_model.present.viz"]
    assert upward_imports(root) != []  # and, pointing up, it breaks the order too


def test_a_harness_part_importing_the_scheduler_is_reported(tmp_path: Path) -> None:
    root = _package(tmp_path, {
        "engine/harness/state.py": "class RunState:\n    pass\n",
        "engine/harness/scheduler.py": "from .state import RunState\nclass Run:\n    pass\n",
        "engine/harness/recorder.py": "from zerorename_model.engine.harness.scheduler import Run\n"
                                      "class Recorder(Run):\n    pass\n",
        "engine/harness/extra.py": "from .state import RunState\n",
    })
    assert harness_out_of_order(root) == [
        "zerorename_model.engine.harness.extra:1: extra imports state",
        "zerorename_model.engine.harness.recorder:1: recorder imports scheduler"]
    assert harness_mixins(root) == ["recorder.Recorder extends Run"]
