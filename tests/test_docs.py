"""The user-facing pages keep their promises: the README is short and its example runs, every
error a user can meet is explained, and every documentation page belongs to one audience."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
from pathlib import Path

import pytest

import zerorename
import zerorename as zr

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
USER_PAGES = [README, *sorted((ROOT / "docs" / "user").glob("*.md"))]


def _python_block(text: str, heading: str) -> str:
    found = re.search(rf"## {re.escape(heading)}\n\n```python\n(.*?)```", text, re.S)
    assert found, f"no python block under {heading!r}"
    return found.group(1)


def test_the_readme_is_short_and_answers_which_committer_first() -> None:
    lines = README.read_text(encoding="utf-8").splitlines()
    # 170 until the JVM routes (S3A's committers, zerorename's own in Spark's writers) and
    # their generated benchmark table (12 lines) joined; past 195 something belongs in
    # docs/user/ instead
    assert len(lines) <= 195, len(lines)
    first_screen = "\n".join(lines[:40])
    assert "## Which committer, on my store, with what guarantee" in first_screen
    for committer in ("fenced", "magic"):
        assert f"`{committer}`" in first_screen


def test_the_readmes_plain_python_example_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    """Verbatim, against moto's in-process S3 with a bucket named as in the example."""
    moto = pytest.importorskip("moto")
    import boto3

    for name, value in {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
                        "AWS_SESSION_TOKEN": "testing", "AWS_DEFAULT_REGION": "us-east-1"}.items():
        monkeypatch.setenv(name, value)
    code = _python_block(README.read_text(encoding="utf-8"), "From plain Python")
    with moto.mock_aws():
        boto3.client("s3").create_bucket(Bucket="bucket")
        exec(compile(code, "README.md", "exec"), {})  # the README's own code, verbatim
        store = zr.S3Store(boto3.client("s3"))
        success = zr.read_success(store, "s3://bucket/out")
    assert success.committer == "fenced"
    assert success.counter("committer_files_committed") == 2


def _commit_errors() -> set[str]:
    """Every CommitError subclass defined anywhere in the production package."""
    found: set[str] = set()
    for info in pkgutil.walk_packages(zerorename.__path__, "zerorename."):
        if info.name.startswith("zerorename.spark") and info.name != "zerorename.spark.spec":
            # the Spark modules need pyspark; their errors are imported below without it
            continue
        module = importlib.import_module(info.name)
        for name, obj in inspect.getmembers(module, inspect.isclass):
            if issubclass(obj, zr.CommitError) and obj.__module__.startswith("zerorename"):
                found.add(name)
    return found


def test_every_commit_error_has_a_troubleshooting_entry() -> None:
    """docs/user/operations.md explains each error a user can catch: what and what to do."""
    pytest.importorskip("pyspark")
    import zerorename.spark.core
    import zerorename.spark.hooks
    import zerorename.spark.s3a  # noqa: F401 - their errors count too

    errors = _commit_errors() | {"SparkJobError", "OverwriteIncompleteError",
                                 "TaskHookOptionError", "S3AJarsMissingError",
                                 "S3AOptionError"}
    # zerorename check's errors (the research distribution), met by users who check their
    # committer or store (docs/research/committer-authors.md)
    errors |= {"PluginCommitterError", "PrefixNotEmptyError", "AreaEscapeError",
               "HadoopCommitterError"}
    text = (ROOT / "docs" / "user" / "operations.md").read_text(encoding="utf-8")
    explained = set(re.findall(r"^### `(\w+)`$", text, re.M))
    assert errors - explained == set(), "errors without an entry in docs/user/operations.md"
    assert explained - errors == set(), "entries for errors that do not exist"


def test_every_documentation_page_belongs_to_one_audience() -> None:
    docs = ROOT / "docs"
    loose = [p.name for p in docs.iterdir() if p.name != "README.md"
             and p.name not in ("user", "research")]
    assert loose == [], "put each page under docs/user/ or docs/research/"


def test_user_pages_tell_no_lab_story() -> None:
    """No load averages, commit hashes or round-by-round history on a page written for users."""
    story = re.compile(r"load average|\bcommit [0-9a-f]{7,40}\b|\bRound \d+\b")
    found = [f"{page.relative_to(ROOT)}: {m.group(0)}" for page in USER_PAGES
             for m in story.finditer(page.read_text(encoding="utf-8"))]
    assert found == []
