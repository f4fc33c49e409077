"""One version, everywhere a user or a pipeline reads it: the package, the CLI, the wheel's
metadata (from the same file) and the changelog."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

import zerorename
from zerorename import _version
from zerorename.cli import main

ROOT = Path(__file__).resolve().parent.parent


def test_the_package_says_the_version_defined_once() -> None:
    assert zerorename.__version__ == _version.__version__
    assert re.fullmatch(r"\d+\.\d+\.\d+(?:[ab]|rc)?\d*", zerorename.__version__)


def test_the_wheel_metadata_reads_the_same_file() -> None:
    """No second literal in pyproject.toml that could drift from ``_version.py``."""
    project = tomllib.loads((ROOT / "reference" / "pyproject.toml").read_text())
    assert "version" not in project["project"]
    assert "version" in project["project"]["dynamic"]
    attr = project["tool"]["setuptools"]["dynamic"]["version"]["attr"]
    assert attr == "zerorename._version.__version__"


def test_zerorename_version_prints_it(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["--version"])
    assert exited.value.code == 0
    assert capsys.readouterr().out.strip() == f"zerorename {zerorename.__version__}"


def test_the_changelog_has_a_heading_for_the_version() -> None:
    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    assert re.search(rf"^## {re.escape(zerorename.__version__)}\b", changelog, re.M)
