"""Every statistic name comes from ``zerorename.statistics``: no literal at a call site, and
every name documented there."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from zerorename import statistics as S

PACKAGE = Path(__file__).resolve().parent.parent / "reference" / "zerorename"
#: IOStatistics' methods that take a statistic name first
RECORDING = frozenset({"incr", "duration", "set_gauge", "sample", "record_duration", "counter"})
LOOKS_LIKE_A_STATISTIC = re.compile(r"^(committer|job_stage|task_stage|commit_file)_"
                                    r"[a-z_]+(\.failures)?$")


def literal_names(source: str) -> list[str]:
    """Where ``source`` names a statistic by a literal: a registered name (or one shaped like
    a statistic) as a string, or any literal or f-string passed to a recording method."""
    tree = ast.parse(source)
    docstrings = {id(node.value) for node in ast.walk(tree)
                  if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)}
    # ``__all__`` names Python objects (a function may be called committer_options)
    exported = {id(element) for node in ast.walk(tree) if isinstance(node, ast.Assign)
                and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets)
                for element in ast.walk(node.value)}
    docstrings |= exported
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and node.func.attr in RECORDING and node.args \
                and isinstance(node.args[0], ast.Constant | ast.JoinedStr):
            found.append(f"line {node.lineno}: {node.func.attr}({ast.unparse(node.args[0])})")
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) \
                and id(node) not in docstrings \
                and (node.value in S.NAMES or LOOKS_LIKE_A_STATISTIC.match(node.value)):
            found.append(f"line {node.lineno}: {node.value!r}")
    return found


def test_no_statistic_name_is_a_literal_at_a_call_site() -> None:
    found = {str(path.relative_to(PACKAGE)): hits
             for path in sorted(PACKAGE.rglob("*.py")) if path.name != "statistics.py"
             for hits in [literal_names(path.read_text(encoding="utf-8"))] if hits}
    assert found == {}, "use the constants of zerorename.statistics"


def test_the_check_catches_a_literal_name() -> None:
    assert literal_names('stats.incr("committer_files_committed")')
    assert literal_names('stats.duration(f"store_{op}")')
    assert literal_names('NAME = "job_stage_something_new"')
    assert literal_names('"""A docstring naming committer_files_committed."""') == []
    assert literal_names('__all__ = ["committer_options"]') == []
    assert literal_names('__all__ = ["f"]\nNAME = "committer_options"')
    assert literal_names("stats.incr(S.COMMITTER_FILES_COMMITTED)") == []


def test_every_statistic_is_documented() -> None:
    source = (PACKAGE / "statistics.py").read_text(encoding="utf-8")
    constants = re.findall(r'^([A-Z_]+): Final = "([a-z_.]+)"$', source, re.M)
    assert len(constants) > 50
    undocumented = [c for c, value in constants
                    if value != S.FAILURES_SUFFIX and not S.DESCRIPTIONS.get(value)]
    assert undocumented == []
    for op in S.REQUEST_OPS:
        assert S.describe(S.request(op)) == f"{op} requests sent"
    assert S.describe("job_stage_setup.failures.max").endswith("(failed)")


JAVA_STATISTICS = (Path(__file__).resolve().parents[1] / "jvm" / "spark" / "src" / "main" / "java"
                   / "io" / "zerorename" / "committer" / "FencedStatistics.java")


def java_statistic_names(source: str) -> dict[str, str]:
    """The ``public static final String NAME = "value";`` constants of a Java class (a
    declaration may wrap after its ``=``)."""
    return dict(re.findall(r'public static final String (\w+)\s*=\s*"([a-z_.]+)";', source))


def test_every_statistic_of_the_jvm_committer_is_one_of_pythons() -> None:
    """Both implementations write their statistics into ``_SUCCESS`` and ``zerorename success``
    describes them from this module: a name the JVM adds must be defined (and described) here."""
    names = java_statistic_names(JAVA_STATISTICS.read_text(encoding="utf-8"))
    assert len(names) > 20
    assert names.pop("FAILURES_SUFFIX") == S.FAILURES_SUFFIX
    assert {c: v for c, v in names.items() if v not in S.NAMES} == {}


def test_the_jvm_drift_check_sees_a_new_name() -> None:
    source = ('  public static final String A_NEW_ONE =\n      "committer_a_new_one";\n'
              '  public static final String OLD = "committer_files_committed";\n')
    names = java_statistic_names(source)
    assert names == {"A_NEW_ONE": "committer_a_new_one", "OLD": "committer_files_committed"}
    assert [v for v in names.values() if v not in S.NAMES] == ["committer_a_new_one"]
