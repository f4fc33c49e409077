"""A clone of the repository is all a reader or an installer needs.

The design notes, the paper and research notes the project grew from live outside the
repository; a clone does not have them.  So no tracked file may send a reader there: what
a reader needs is in ``docs/`` (``docs/research/design.md``, ``docs/user/api.md``), and sources
are cited by title.  And the metadata a clone installs from must not warn.
"""

from __future__ import annotations

import re
import subprocess
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

#: References to material outside the repository (the design document there was DESIGN.md;
#: ours is docs/research/design.md, lower case).
OUTSIDE = ("../shared", "shared/research", "shared/seeds", "shared/DESIGN", "DESIGN.md",
           'DESIGN "')


#: the two distributions' project directories (the top-level pyproject.toml is the workspace)
DISTRIBUTIONS = ("reference", "model")


#: every page a reader follows links in: the READMEs, CONTRIBUTING, CHANGELOG, docs/ at any depth
def _pages() -> list[Path]:
    return [ROOT / "README.md", ROOT / "CONTRIBUTING.md", ROOT / "CHANGELOG.md",
            ROOT / "paper" / "README.md", ROOT / "bench" / "README.md", ROOT / "tla" / "README.md",
            *sorted((ROOT / "docs").rglob("*.md"))]


def _git_grep(pattern: str) -> list[str]:
    """Tracked files (this test excepted) whose text contains ``pattern``, as path:line."""
    result = subprocess.run(
        ["git", "grep", "-n", "-F", "-e", pattern, "--", ".",
         f":(exclude){Path(__file__).relative_to(ROOT)}"],
        cwd=ROOT, capture_output=True, text=True, check=False)
    assert result.returncode in (0, 1), result.stderr  # 1: no match
    return result.stdout.splitlines()


def test_no_tracked_file_points_outside_the_repository() -> None:
    found = [hit for pattern in OUTSIDE for hit in _git_grep(pattern)]
    assert found == []


def test_the_design_and_api_documents_exist_and_the_readme_links_them() -> None:
    readme = (ROOT / "README.md").read_text()
    for doc in ("docs/research/design.md", "docs/user/api.md"):
        assert (ROOT / doc).is_file()
        assert doc in readme


def test_documents_link_only_to_files_that_exist() -> None:
    """Every relative Markdown link in the READMEs, CONTRIBUTING, CHANGELOG and docs/ (at any
    depth) resolves inside the clone."""
    broken = []
    for page in _pages():
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", page.read_text()):
            if "://" in target or target.startswith("mailto:"):
                continue
            if not (page.parent / target).resolve().exists():
                broken.append(f"{page.relative_to(ROOT)} -> {target}")
    assert broken == []


def test_the_documented_install_line_is_one_that_works_from_a_clone() -> None:
    """zerorename is not on PyPI: ``pip install "zerorename[spark]"`` cannot work."""
    texts = {p.relative_to(ROOT).as_posix(): p.read_text()
             for p in _pages()}
    assert not [name for name, text in texts.items() if '"zerorename[spark]"' in text]
    assert 'pip install -e "./reference[spark]"' in texts["docs/user/spark.md"]


def test_package_metadata_uses_the_spdx_license_string() -> None:
    """The table form (``{ text = … }``) makes setuptools >= 77 print a deprecation warning
    at every build; the SPDX string needs setuptools >= 77 to build at all."""
    for distribution in DISTRIBUTIONS:
        project = tomllib.loads((ROOT / distribution / "pyproject.toml").read_text())
        assert project["project"]["license"] == "Apache-2.0"
        requires = project["build-system"]["requires"]
        assert any(re.fullmatch(r"setuptools>=(7[7-9]|[89]\d|\d{3,})(\.\d+)*", r)
                   for r in requires)


def test_the_spark_extra_has_what_spark_s_arrow_conversions_import() -> None:
    """``DataFrame.toPandas()`` and Arrow-backed ``createDataFrame`` need pandas and pyarrow."""
    extra = tomllib.loads((ROOT / "reference" / "pyproject.toml").read_text())[
        "project"]["optional-dependencies"]["spark"]
    names = {re.split(r"[<>=!~\[; ]", requirement, maxsplit=1)[0] for requirement in extra}
    assert {"pyspark", "pyarrow", "pandas"} <= names


def test_the_spark_extra_keeps_pandas_where_pyspark_supports_it() -> None:
    """PySpark 4.3 needs pandas >= 2.2 and warns that it does not fully support pandas 3
    ("It is recommended to use pandas < 3.0.0 for now"), so the extra must not install 3."""
    from packaging.requirements import Requirement

    extra = tomllib.loads((ROOT / "reference" / "pyproject.toml").read_text())[
        "project"]["optional-dependencies"]["spark"]
    pandas = next(Requirement(r) for r in extra if Requirement(r).name == "pandas")
    assert "2.2.0" in pandas.specifier and "2.1.4" not in pandas.specifier
    assert "3.0.0" not in pandas.specifier
