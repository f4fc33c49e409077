"""Every option comes from ``zerorename.options``: no literal name at a call site, validation
by the declared types, the Spark writer's names and the configuration page generated from it."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import zerorename as zr
from zerorename import options as O

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "reference" / "zerorename"
PAGE = ROOT / "docs" / "user" / "configuration.md"
#: Options' reading methods (``zerorename.context.Options``)
READING = frozenset({"get_str", "get_bool", "get_int", "get_size", "get_seconds", "raw",
                     "first"})
COMMITTER_NAMES = frozenset(n for o in O.OPTIONS if o.scope is O.Scope.COMMITTER
                            for n in o.names)


def literal_options(source: str) -> list[str]:
    """Where ``source`` names a committer option by a literal, or reads a dotted (committer)
    option by a literal or a computed name.  (The Spark writer's own short names are read in
    ``zerorename.spark.spec`` only, which takes the set it accepts from the registry.)"""
    tree = ast.parse(source)
    docstrings = {id(node.value) for node in ast.walk(tree)
                  if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)}
    found = []
    for node in ast.walk(tree):
        first = node.args[0] if isinstance(node, ast.Call) and node.args else None
        computed = isinstance(first, ast.JoinedStr | ast.BinOp)
        dotted = isinstance(first, ast.Constant) and "." in str(first.value)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and node.func.attr in READING and first is not None and (computed or dotted):
            found.append(f"line {node.lineno}: {node.func.attr}({ast.unparse(first)})")
        elif isinstance(node, ast.Constant) and node.value in COMMITTER_NAMES \
                and id(node) not in docstrings:
            found.append(f"line {node.lineno}: {node.value!r}")
    return found


def test_no_option_name_is_a_literal_at_a_call_site() -> None:
    found = {str(path.relative_to(PACKAGE)): hits
             for path in sorted(PACKAGE.rglob("*.py")) if path.name != "options.py"
             for hits in [literal_options(path.read_text(encoding="utf-8"))] if hits}
    assert found == {}, "take option names from zerorename.options"


def test_the_check_catches_a_literal_option() -> None:
    assert literal_options('opts.get_bool("fs.s3a.committer.magic.enabled")')
    assert literal_options('opts.get_bool(PREFIX + "validate.output")')
    assert literal_options('NAME = "fs.s3a.retry.limit"')
    assert literal_options("opts.get_bool(O.MAGIC_ENABLED.name)") == []


#: the Spark writer's names, as the lower-cased option dictionaries hold them
WRITER_NAMES = frozenset(n.lower() for o in O.WRITER for n in o.names)


def literal_writer_options(source: str) -> list[str]:
    """Where ``source`` reads a writer option from a dictionary by a literal name:
    ``opts.get("mode")``, ``opts["mode"]``, ``"mode" in opts``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and node.func.attr in ("get", "pop") and node.args:
            named = node.args[0]
        elif isinstance(node, ast.Subscript):
            named = node.slice
        elif isinstance(node, ast.Compare) and any(
                isinstance(op, ast.In | ast.NotIn) for op in node.ops):
            named = node.left
        else:
            continue
        if isinstance(named, ast.Constant) and str(named.value).lower() in WRITER_NAMES:
            found.append(f"line {node.lineno}: {ast.unparse(node)}")
    return found


def test_the_spark_writer_reads_no_option_by_a_literal_name() -> None:
    found = {path.name: hits for path in sorted((PACKAGE / "spark").glob("*.py"))
             for hits in [literal_writer_options(path.read_text(encoding="utf-8"))] if hits}
    assert found == {}, "read writer options through zerorename.options (O.W_...)"


def test_the_writer_check_catches_a_literal_read() -> None:
    assert literal_writer_options('mode = opts.get("mode")')
    assert literal_writer_options('n = opts["maxRecordsPerFile"]')
    assert literal_writer_options('if "threads" in opts: pass')
    assert literal_writer_options("mode = read(O.W_MODE)") == []


def test_the_configuration_page_is_what_the_registry_renders() -> None:
    assert PAGE.read_text(encoding="utf-8") == O.markdown(), (
        "stale: python -c 'import zerorename.options as o; print(o.markdown(), end=\"\")' "
        "> docs/user/configuration.md")
    for option in O.OPTIONS:
        assert f"| `{option.name}` |" in O.markdown()


def test_the_writer_accepts_exactly_the_registered_names() -> None:
    pytest.importorskip("pyspark")
    from zerorename.spark.spec import OPTION_NAMES, WriteOptionError, check_option_names

    assert O.writer_names() == OPTION_NAMES
    with pytest.raises(WriteOptionError, match="comitter"):
        check_option_names("s3://b/o", ["comitter"])


@pytest.mark.parametrize(("name", "bad"), [
    ("fs.s3a.committer.magic.enabled", "maybe"),
    ("fs.s3a.multipart.size", "big"),
    ("fs.s3a.retry.limit", "three"),
    ("fs.s3a.retry.interval", "soon"),
    ("fs.s3a.committer.staging.conflict-mode", "overwrite"),
    ("fs.s3a.committer.threads", "many"),  # an alias is checked as its option
])
def test_a_value_of_the_wrong_type_is_refused_naming_the_option(
        tmp_path: Path, name: str, bad: str) -> None:
    job = zr.JobContext(dest=f"file://{tmp_path}/out", options={name: bad})
    with pytest.raises(zr.OptionValueError) as refused:
        zr.create_committer("fenced", zr.LocalStore(), job)
    assert refused.value.path == name
    if name != "fs.s3a.committer.staging.conflict-mode":  # a choice names what it was given
        assert bad not in str(refused.value)


def test_good_values_and_unregistered_names_pass() -> None:
    O.validate({"fs.s3a.multipart.size": "64M", "fs.s3a.retry.interval": "500ms",
                "fs.s3a.committer.magic.enabled": True, "fs.s3a.committer.threads": -2,
                "fs.s3a.committer.staging.conflict-mode": "REPLACE",
                "some.hadoop.setting": "anything"})
