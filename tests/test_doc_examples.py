"""Every example of the user pages (README.md, docs/user/*.md) works as written.

* Each ```python block that needs no Spark session runs verbatim, in a fresh namespace,
  against a moto server reached through ``AWS_ENDPOINT_URL`` (bucket ``bucket``, with a
  committed ``fenced`` job of Parquet files at ``s3://bucket/events``).  It may use no name it
  does not define or import.
* A block that needs a Spark session (one that imports pyspark, or uses ``spark``, ``df`` or
  ``events`` without defining it; the Spark suites in ``tests/spark`` run those routes) is
  checked without Spark: its imports run, every call of a zerorename function binds to its
  signature, and every ``.option(name, …)`` is an option the writer knows.
* Every ``zerorename <command> …`` and ``python -m zerorename.spark.jvm …`` the pages show, in
  code blocks or inline, is accepted by the command's argparse parser (parse only).
* Every ``zr.…`` / ``zrs.…`` / ``zerorename.…`` name the pages mention exists in the code (as
  an attribute, an option name, or a name the code spells out as a string).
* Every ```json block parses.

The checkers are functions returning problems, so that the tests at the end can show that each
one catches a deliberately wrong example.
"""

from __future__ import annotations

import ast
import builtins
import contextlib
import importlib
import inspect
import io
import itertools
import json
import re
import shlex
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

import zerorename as zr
from zerorename import options as O
from zerorename.cli import UnavailableCommand, available_commands, build_parser

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs" / "user").glob("*.md"))]
#: names a Spark example may take from the reader's session (a pyspark shell has ``spark``)
SPARK_NAMES = frozenset({"spark", "df", "events"})
#: ``.option`` names that are Spark's own, not the zerorename writer's
SPARK_OWN_OPTIONS = frozenset({"checkpointLocation"})
#: the prefixes of options the writer passes through to the committer (docs/user/spark.md)
PASSED_THROUGH = ("fs.", "mapreduce.", "zerorename.")


@dataclass(frozen=True)
class Block:
    page: str
    line: int
    lang: str
    code: str

    @property
    def where(self) -> str:
        return f"{self.page}:{self.line}"


def blocks(text: str, page: str) -> list[Block]:
    """Every fenced code block of a Markdown text, indented ones (in lists) dedented."""
    found = []
    for m in re.finditer(r"^( *)```(\w*)\n(.*?)^\1```", text, re.S | re.M):
        indent = len(m.group(1))
        code = "\n".join(line[indent:] for line in m.group(3).splitlines()) + "\n"
        found.append(Block(page, text.count("\n", 0, m.start()) + 1, m.group(2), code))
    return found


def page_blocks(lang: str) -> list[Block]:
    return [b for page in PAGES
            for b in blocks(page.read_text(encoding="utf-8"), str(page.relative_to(ROOT)))
            if b.lang == lang]


# -- python blocks --------------------------------------------------------------------------


def free_names(code: str) -> set[str]:
    """Names a block reads but neither defines nor imports (builtins aside)."""
    tree = ast.parse(code)
    bound: set[str] = set()
    loaded: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            (loaded if isinstance(node.ctx, ast.Load) else bound).add(node.id)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            bound.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, ast.FunctionDef | ast.ClassDef):
            bound.add(node.name)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
    return loaded - bound - set(dir(builtins))


def needs_spark(block: Block) -> bool:
    """A block that starts or uses a Spark session (never run here)."""
    imports_pyspark = any(
        (isinstance(n, ast.ImportFrom) and (n.module or "").startswith("pyspark"))
        or (isinstance(n, ast.Import) and any(a.name.startswith("pyspark") for a in n.names))
        for n in ast.walk(ast.parse(block.code)))
    return imports_pyspark or bool(free_names(block.code) & SPARK_NAMES)


def _placeholder_namespace(code: str) -> dict[str, Any]:
    """The block's imports, run (no Spark session is started by an import)."""
    namespace: dict[str, Any] = {}
    tree = ast.parse(code)
    imports: list[ast.stmt] = [n for n in tree.body if isinstance(n, ast.Import | ast.ImportFrom)]
    exec(compile(ast.Module(body=imports, type_ignores=[]), "<imports>", "exec"), namespace)
    return namespace


def _resolve(node: ast.expr, namespace: dict[str, Any]) -> Any:
    if isinstance(node, ast.Name):
        return namespace.get(node.id)
    if isinstance(node, ast.Attribute):
        owner = _resolve(node.value, namespace)
        return None if owner is None else getattr(owner, node.attr, None)
    return None


def _is_zerorename(obj: Any) -> bool:
    return callable(obj) and str(getattr(obj, "__module__", "")).startswith("zerorename")


def option_problem(name: str) -> str | None:
    """Why ``.option(name, …)`` on a zerorename writer would be refused, or None."""
    stream = {o.name for o in O.OPTIONS if o.scope is O.Scope.STREAM}
    if name in O.writer_names() or name in stream or name in SPARK_OWN_OPTIONS:
        return None
    if name.startswith(PASSED_THROUGH) and O.unknown_name_reason(name, O.Scope.STREAM) is None:
        return None
    return f"option {name!r} is not one the zerorename writer takes"


def _spark_write() -> Any:
    import zerorename.spark

    return zerorename.spark.write


def static_problems(block: Block) -> list[str]:
    """For a block that needs Spark: its imports run, its zerorename calls bind to their
    signatures, its ``.option`` names exist."""
    problems = []
    try:
        namespace = _placeholder_namespace(block.code)
    except Exception as error:
        return [f"{block.where}: its imports fail: {type(error).__name__}: {error}"]
    for node in ast.walk(ast.parse(block.code)):
        if not isinstance(node, ast.Call):
            continue
        if (isinstance(node.func, ast.Attribute) and node.func.attr == "option"
                and node.args and isinstance(node.args[0], ast.Constant)
                and isinstance(node.args[0].value, str)):
            problem = option_problem(node.args[0].value)
            if problem:
                problems.append(f"{block.where}: {problem}")
        target = _resolve(node.func, namespace)
        if not _is_zerorename(target) or any(isinstance(a, ast.Starred) for a in node.args):
            continue
        keywords = {k.arg: None for k in node.keywords if k.arg is not None}
        signature = inspect.signature(target)
        try:
            bound = signature.bind(*[None] * len(node.args), **keywords)
        except TypeError as error:
            problems.append(f"{block.where}: {ast.unparse(node.func)}(…) does not match "
                            f"{target.__qualname__}{signature}: {error}")
            continue
        if target is _spark_write():  # its **options are writer options
            problems += [f"{block.where}: {problem}" for name in bound.arguments.get("options", {})
                         if (problem := option_problem(name))]
    return problems


def run_problems(block: Block) -> list[str]:
    """Run a block verbatim in a fresh namespace; what went wrong."""
    free = free_names(block.code)
    if free:
        return [f"{block.where}: uses {sorted(free)} without defining or importing it"]
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            exec(compile(block.code, block.where, "exec"), {"__name__": "__doc_example__"})
    except Exception as error:
        return [f"{block.where}: {type(error).__name__}: {error}"]
    return []


# -- commands -------------------------------------------------------------------------------

_INLINE = re.compile(r"`((?:python -m zerorename\.spark\.jvm|zerorename)(?: [^`]*)?)`")


def commands_in(text: str) -> list[tuple[str, bool]]:
    """Every ``zerorename …`` and ``python -m zerorename.spark.jvm …`` command of a page, as
    written: code-block lines (comments stripped), and inline code.  With each, whether it is
    a command line to run (a code-block line, or inline code with a flag) rather than a name
    in prose (``zerorename uploads abort`` removes it), which may leave out its arguments."""
    found = []
    for block in blocks(text, ""):
        if block.lang not in ("", "bash", "sh", "console"):
            continue
        for line in block.code.splitlines():
            line = line.split(" #", 1)[0].strip()
            if re.match(r"(python -m zerorename\.spark\.jvm|zerorename)(\s|$)", line):
                found.append((line, True))
    for m in _INLINE.finditer(text):
        command = " ".join(m.group(1).split())
        found.append((command, " -" in command))
    return found


def expand(command: str) -> list[list[str]]:
    """The argument lists a command's notation stands for: ``a|b`` alternatives (``\\|`` in
    tables), ``[--opt X]`` optional parts given, ``<placeholder>`` as one word."""
    command = command.replace("\\|", "|").replace("[", "").replace("]", "")
    command = re.sub(r"<[^>]*>", "X", command)
    words = shlex.split(command)
    choices = [w.split("|") if "|" in w and not w.startswith("-") else [w] for w in words]
    return [list(c) for c in itertools.product(*choices)]


def parse_problem(argv: list[str]) -> str | None:
    """Why a command line is refused by its parser (parse only), or None."""
    stderr = io.StringIO()
    try:
        with contextlib.redirect_stderr(stderr), contextlib.redirect_stdout(io.StringIO()):
            if argv[:3] == ["python", "-m", "zerorename.spark.jvm"]:
                from zerorename.spark.jvm import _cli_parser

                _cli_parser().parse_args(argv[3:])
                return None
            assert argv[0] == "zerorename", argv
            commands = available_commands()
            if len(argv) <= 2:  # the program or a command named in prose: that it exists
                return None if argv[1:] in ([], ["--version"]) or argv[1] in commands \
                    else f"no command {argv[1]!r}"
            args, unknown = build_parser(commands).parse_known_args(argv[1:])
            command = commands[args.command]
            if isinstance(command, UnavailableCommand):
                return f"{args.command} is not installed here"
            if unknown and args.command == "demo":  # the demo hands them to the main job
                from zerorename_bridge import mainjob

                mainjob.parse_args(unknown)
            elif unknown and not command.passes_unknown_options:
                return f"unrecognized arguments: {' '.join(unknown)}"
    except SystemExit as stop:
        if stop.code in (0, None):  # --version, --help
            return None
        return (stderr.getvalue().strip().splitlines() or [f"exit {stop.code}"])[-1]
    return None


def command_problems(text: str, page: str) -> list[str]:
    problems = []
    for command, complete in commands_in(text):
        for argv in expand(command):
            problem = parse_problem(argv)
            if problem and not complete and "required" in problem:
                problem = parse_problem([*argv, "s3://bucket/prefix"])  # named in prose
            if problem:
                problems.append(f"{page}: `{command}` ({' '.join(argv)}): {problem}")
    return problems


# -- names ----------------------------------------------------------------------------------

_NAME = re.compile(r"(?<![\w./-])((?:zr|zrs|zerorename)(?:\.[A-Za-z_]\w*)+)(?![\w/-])")
_ALIASES = {"zr": "zerorename", "zrs": "zerorename.spark"}


def _importable(dotted: str) -> bool:
    parts = dotted.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj: Any = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        for attr in parts[i:]:
            if not hasattr(obj, attr):
                return False
            obj = getattr(obj, attr)
        return True
    return False


def _code_strings() -> str:
    return "\n".join(p.read_text(encoding="utf-8")
                     for p in (ROOT / "reference" / "zerorename").rglob("*.py"))


def name_problems(text: str, page: str, strings: str) -> list[str]:
    option_names = {n for o in O.OPTIONS for n in o.names}
    problems = set()
    for m in _NAME.finditer(text):
        name = m.group(1)
        head, _, rest = name.partition(".")
        full = f"{_ALIASES.get(head, head)}.{rest}"
        if (name in option_names or any(o.startswith(name + ".") for o in option_names)
                or _importable(full) or re.search(rf"[\"']{re.escape(name)}\.?[\"']", strings)):
            continue
        problems.add(f"{page}:{text.count(chr(10), 0, m.start()) + 1}: {name} is not in the code")
    return sorted(problems)


# -- the checks on the real pages -----------------------------------------------------------


@pytest.fixture(scope="module")
def s3(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A moto server with bucket ``bucket`` and a committed ``fenced`` job of Parquet files at
    ``s3://bucket/events`` (what the pages' readers read)."""
    moto_server = pytest.importorskip("moto.server")
    pq = pytest.importorskip("pyarrow.parquet")
    import boto3
    import pyarrow as pa  # type: ignore[import-untyped]

    server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=0)
    server.start()
    host, port = server.get_host_and_port()
    endpoint = f"http://{host}:{port}"
    with pytest.MonkeyPatch.context() as env:
        for name, value in {"AWS_ENDPOINT_URL": endpoint, "AWS_ACCESS_KEY_ID": "testing",
                            "AWS_SECRET_ACCESS_KEY": "testing", "AWS_SESSION_TOKEN": "testing",
                            "AWS_DEFAULT_REGION": "us-east-1"}.items():
            env.setenv(name, value)
        env.chdir(tmp_path_factory.mktemp("examples"))
        boto3.client("s3").create_bucket(Bucket="bucket")
        store = zr.S3Store(zr.make_s3_client())
        job = zr.JobContext(dest="s3://bucket/events", options={})
        driver = zr.create_committer("fenced", store, job)
        driver.setup_job()
        messages = []
        for task_id in range(2):
            task = zr.create_committer("fenced", store, job, task=job.task(task_id))
            task.setup_task()
            data = io.BytesIO()
            pq.write_table(pa.table({"id": [task_id, task_id + 10]}), data)
            task.write(f"year=2024/part-{task_id:05d}.parquet", data.getvalue())
            messages.append(task.commit_task())
        driver.commit_job(messages)
        try:
            yield endpoint
        finally:
            server.stop()


PYTHON_BLOCKS = page_blocks("python")


@pytest.mark.parametrize("block", [b for b in PYTHON_BLOCKS if not needs_spark(b)],
                         ids=lambda b: b.where)
def test_a_plain_python_example_runs_as_written(s3: str, block: Block) -> None:
    assert run_problems(block) == []


@pytest.mark.parametrize("block", [b for b in PYTHON_BLOCKS if needs_spark(b)],
                         ids=lambda b: b.where)
def test_a_spark_example_imports_and_calls_what_exists(block: Block) -> None:
    pytest.importorskip("pyspark")
    assert free_names(block.code) <= SPARK_NAMES
    assert static_problems(block) == []


def test_the_pages_have_examples_of_both_kinds() -> None:
    """The split above is not vacuous: the README's and api.md's examples run."""
    ran = {b.page for b in PYTHON_BLOCKS if not needs_spark(b)}
    assert {"README.md", "docs/user/api.md", "docs/user/committers.md"} <= ran
    assert any(needs_spark(b) for b in PYTHON_BLOCKS)


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_command_shown_is_accepted_by_its_parser(page: Path) -> None:
    pytest.importorskip("zerorename_bridge")  # the research commands' parsers (check, demo)
    assert command_problems(page.read_text(encoding="utf-8"), str(page.relative_to(ROOT))) == []


def test_the_commands_found_cover_every_cli_and_jvm_flag_family() -> None:
    every = [c for page in PAGES for c, _ in commands_in(page.read_text(encoding="utf-8"))]
    for expected in ("zerorename uploads", "zerorename records", "zerorename success",
                     "zerorename probe", "python -m zerorename.spark.jvm --conf",
                     "python -m zerorename.spark.jvm --packages"):
        assert any(c.startswith(expected) for c in every), expected


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_name_mentioned_exists(page: Path) -> None:
    pytest.importorskip("pyspark")  # zerorename.spark's names
    assert name_problems(page.read_text(encoding="utf-8"), str(page.relative_to(ROOT)),
                         _code_strings()) == []


@pytest.mark.parametrize("block", page_blocks("json"), ids=lambda b: b.where)
def test_a_json_example_parses(block: Block) -> None:
    json.loads(block.code)


# -- each checker catches a wrong example ---------------------------------------------------


def test_the_runner_catches_an_undefined_name_and_a_failing_call(s3: str) -> None:
    page = "```python\nimport zerorename as zr\nzr.read_success(store, 's3://bucket/out')\n```\n"
    [block] = blocks(page, "wrong.md")
    assert run_problems(block) == ["wrong.md:1: uses ['store'] without defining or importing it"]
    wrong = Block("wrong.md", 1, "python", "import zerorename as zr\n"
                  "zr.read_success(zr.S3Store(zr.make_s3_client()), 's3://bucket/nothing')\n")
    assert "NotFoundError" in run_problems(wrong)[0]
    right = Block("right.md", 1, "python", "import zerorename as zr\n"
                  "zr.read_success(zr.S3Store(zr.make_s3_client()), 's3://bucket/events')\n")
    assert run_problems(right) == []


def test_the_static_check_catches_a_wrong_signature_and_option() -> None:
    pytest.importorskip("pyspark")
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    [spark_block] = [b for b in blocks(readme, "README.md") if b.lang == "python"
                     and needs_spark(b)]
    assert static_problems(spark_block) == []
    misspelt = Block(spark_block.page, spark_block.line, "python",
                     spark_block.code.replace("partition_by=", "partition_bye=")
                     .replace('.option("committer"', '.option("comitter"'))
    problems = static_problems(misspelt)
    assert len(problems) == 2, problems
    assert any("'partition_bye'" in p for p in problems)  # zrs.write's **options
    assert any("'comitter'" in p for p in problems)
    s3a = Block("s3a.md", 1, "python", "from zerorename.spark.s3a import S3AEndpoint\n"
                "S3AEndpoint('http://h:1', access_key='a', secret='b')\n")
    assert "S3AEndpoint(…) does not match" in static_problems(s3a)[0]
    missing = Block("gone.md", 1, "python", "from zerorename.spark.s3a import configur\n")
    assert "its imports fail" in static_problems(missing)[0]


def test_the_command_check_catches_a_wrong_flag_and_choice() -> None:
    pytest.importorskip("zerorename_bridge")
    good = "`zerorename uploads list\\|abort s3://b/p [--older-than 12h] [--dry-run]`"
    assert command_problems(good, "good.md") == []
    assert len(expand(good.strip("`"))) == 2
    wrong = ("```bash\nzerorename uploads abort s3://b/p --olderthan 12h   # misspelt\n```\n"
             "`python -m zerorename.spark.jvm --conf fenced2` and "
             "`zerorename records expire s3://b/p --older-than soon` and "
             "`zerorename uploads abort --job ID` and `zerorename demo --reserch`")
    problems = command_problems(wrong, "wrong.md")
    assert [p.split("`")[1] for p in problems] == [
        "zerorename uploads abort s3://b/p --olderthan 12h",
        "python -m zerorename.spark.jvm --conf fenced2",
        "zerorename records expire s3://b/p --older-than soon",
        "zerorename uploads abort --job ID",
        "zerorename demo --reserch"], problems


def test_the_name_check_catches_a_misspelt_name() -> None:
    pytest.importorskip("pyspark")
    strings = _code_strings()
    good = ("`zr.read_success`, `zrs.write`, `zerorename.spark.s3a.configure`, "
            "`fs.zerorename.fenced.store-check`, `zerorename.fenced.record.retention`, "
            "`zerorename.TaskCommitMessage/1`, `zerorename.saved`")
    assert name_problems(good, "good.md", strings) == []
    wrong = "`zr.read_sucess`, `zerorename.spark.s3a.configur`, `zrs.writer`"
    assert len(name_problems(wrong, "wrong.md", strings)) == 3
