"""Every ``zerorename`` subcommand run end to end, each asserting on what it printed or wrote.

``--help`` alone let ``zerorename table`` ship calling a ``tablev.main`` that did not exist; here
each research subcommand runs on a small scope: ``table`` on two committers, ``check`` on one
cell, ``trace show``/``replay`` on the traces those wrote, ``demo --model-only``, and the demo's
model report (progress, first finding, matrix, explanation).  The full demo, with Spark, runs in
a ``slow`` test on one committer.  The production subcommands (``uploads``, ``success``) run on
moto in ``tests/test_cli.py``.

Cost: about 100 s without the slow test on a busy 2-core machine (Table V on two committers
~6 s; the demo's model report on one committer and store, both protocols and its bug rows,
~40 s; the production-bug row of magic ~40 s); the slow test ~80 s more.
"""

from __future__ import annotations

import io
import json
import re
import subprocess
import sys
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest

from zerorename.cli import main
from zerorename_model.experiments.cells import Cell, JobProtocol, Verdict
from zerorename_model.experiments.explored import Held, ScopeRecord, Search, Violation

#: a progress line: elapsed seconds in brackets, then the step
PROGRESS = re.compile(r"^\[\s*\d+\.\ds\] \S")


def zr(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "zerorename.cli", *args], capture_output=True,
                          text=True, timeout=900)


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


# -- table ---------------------------------------------------------------------------------------

def test_table_prints_the_computed_table_and_where_it_differs_from_the_paper(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from zerorename_model.experiments.tablev import ATTRIBUTES, PAPER_COLUMN, PAPER_TABLE_V

    code, out, err = run(capsys, "table", "--committer", "direct", "--committer", "magic",
                         "--json", str(tmp_path / "t.json"), "--traces", str(tmp_path / "tr"))
    assert code == 0, err
    data = json.loads((tmp_path / "t.json").read_text())
    assert set(data["cells"]) == {"direct", "magic"}
    lines = out.splitlines()
    header = next(line for line in lines if line.startswith("attribute"))
    assert header.split()[-2:] == ["direct", "magic"]
    for key, label in ATTRIBUTES:
        row = next(line for line in lines if line.startswith(label))
        for committer in ("direct", "magic"):
            ours = data["cells"][committer][key]["value"]
            paper = PAPER_TABLE_V[key][PAPER_COLUMN[committer]]
            assert isinstance(ours, bool)
            assert str(ours) in row
            difference = f"{committer} / {label}: ours {ours}, paper {paper}"
            assert (difference in out) == (ours != paper), difference
    assert any(PROGRESS.match(line) and "magic" in line for line in err.splitlines())
    assert f"wrote {tmp_path / 't.json'}" in err


def test_table_traces_show_and_replay_through_the_cli(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The witness traces ``table --traces`` writes replay to their recorded state, including
    a probe that wraps its committer (Direct made to ask for its task commit)."""
    code, _out, err = run(capsys, "table", "--committer", "direct", "--traces",
                          str(tmp_path))
    assert code == 0, err
    written = sorted(tmp_path.glob("tablev.direct.*.jsonl"))
    assert written
    for path in written:
        code, out, err = run(capsys, "trace", "show", str(path))
        assert code == 0 and out.startswith("scenario: committer=direct"), err
        code, out, err = run(capsys, "trace", "replay", str(path))
        assert code == 0, err or out[-400:]
        assert "replay: same final state" in out


def test_table_refuses_an_unknown_committer(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "table", "--committer", "nosuch")
    assert code == 2 and out == ""
    assert "unknown committer 'nosuch'" in err and "direct" in err


# -- check and trace -----------------------------------------------------------------------------

def test_check_one_cell_prints_what_it_wrote_and_its_trace_replays(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "check", "--committer", "direct", "--store", "s3",
                         "--property", "exclusivity", "--quick",
                         "--json", str(tmp_path / "m.json"), "--traces", str(tmp_path))
    assert code == 0, err
    hadoop, spark = json.loads((tmp_path / "m.json").read_text())
    for cell, protocol in ((hadoop, "hadoop"), (spark, "spark")):
        assert (cell["committer"], cell["store"], cell["property"], cell["protocol"]) == (
            "direct", "s3", "exclusivity", protocol)
    short = {"violated": "VIOL", "holds": "holds"}
    both = f"{short[hadoop['verdict']]}/{short[spark['verdict']]}"
    row = next(line for line in out.splitlines() if line.startswith("direct"))
    assert row.split() == ["direct", "s3", both]
    assert "each cell: hadoop / spark" in out and "Hadoop's protocol" in out
    assert any(PROGRESS.match(line) and "direct on s3: exclusivity="
               f"{hadoop['verdict']}/{spark['verdict']} (hadoop/spark)" in line
               for line in err.splitlines())
    for cell in (hadoop, spark):
        if cell["verdict"] == "violated":
            code, out, err = run(capsys, "trace", "show", cell["trace"])
            assert code == 0 and "VIOLATED exclusivity" in out
            code, out, err = run(capsys, "trace", "replay", cell["trace"])
            assert code == 0 and "replay: same final state" in out


def test_check_one_protocol(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "check", "--committer", "direct", "--store", "s3",
                         "--property", "completeness", "--quick", "--protocol", "spark",
                         "--json", str(tmp_path / "m.json"))
    assert code == 0, err
    [cell] = json.loads((tmp_path / "m.json").read_text())
    assert cell["protocol"] == "spark" and "each cell: spark" in out and "hadoop:" not in out


def test_check_shows_a_production_bug_beside_its_fixed_committer(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """By default (--variants) the Section XIV bugs whose fixed committer and store are asked
    for are rows: HADOOP-17112's variant violates liveness in the scope with a space in a file
    name, by exploration, with a trace that replays; magic, in the same scope, holds."""
    code, out, err = run(capsys, "check", "--committer", "magic", "--store", "s3",
                         "--property", "liveness", "--quick", "--json",
                         str(tmp_path / "m.json"), "--traces", str(tmp_path / "traces"))
    assert code == 0, err
    cells = json.loads((tmp_path / "m.json").read_text())
    rows = {(c["committer"], c["bug"], c["protocol"]): c for c in cells}
    for protocol in ("hadoop", "spark"):
        variant = rows[("magic+HADOOP-17112", "HADOOP-17112", protocol)]
        fixed = rows[("magic", "HADOOP-17112", protocol)]
        assert variant["variant_of"] == "magic" and fixed["variant_of"] is None
        assert variant["verdict"] == "violated" and fixed["verdict"] == "holds"
        assert variant["explored"]["scope"] == f"spaces-{protocol}"
    assert rows[("magic", None, "spark")]["bug"] is None  # the matrix's own row
    table = out[out.index("production bugs"):]
    assert re.search(r"HADOOP-17112\s+spaces\s+magic\+HADOOP-17112 \(variant\)\s+s3\s+liveness"
                     r"\s+VIOL/VIOL", table)
    trace = rows[("magic+HADOOP-17112", "HADOOP-17112", "hadoop")]["trace"]
    code, out, err = run(capsys, "trace", "replay", trace)
    assert code == 0 and "replay: same final state" in out
    code, out, err = run(capsys, "check", "--committer", "magic", "--store", "s3",
                         "--property", "liveness", "--quick", "--no-variants", "--protocol",
                         "spark", "--json", str(tmp_path / "n.json"))
    assert code == 0 and "production bugs" not in out
    assert {c["bug"] for c in json.loads((tmp_path / "n.json").read_text())} == {None}


def test_check_help_lists_the_valid_committers_stores_and_properties() -> None:
    from zerorename_bridge.verdicts import REFERENCE_COMMITTERS, REFERENCE_STORES
    from zerorename_model.check.properties import PROPERTIES
    from zerorename_model.engine.stores.profiles import PROFILES
    from zerorename_model.systems.protocols import load_all

    out = zr("check", "--help")
    assert out.returncode == 0, out.stderr
    text = " ".join(out.stdout.split())  # argparse wraps lines
    for name in [*load_all(), *PROFILES, *PROPERTIES, *REFERENCE_COMMITTERS,
                 *REFERENCE_STORES]:
        assert re.search(rf"(?<![\w+-]){re.escape(name)}(?![\w+-])", text), name


# -- demo ----------------------------------------------------------------------------------------

def test_demo_model_only_through_the_installed_command() -> None:
    out = zr("demo", "--model-only")
    assert out.returncode == 0, out.stderr
    assert "reader listed []; missed ['events/part-00000']" in out.stdout
    assert "verdict: LIST under s3-2018 missed a key that was PUT" in out.stdout


class Both(io.StringIO):
    """stdout or stderr, also copied into ``together`` (to check what came first)."""

    def __init__(self, together: io.StringIO) -> None:
        super().__init__()
        self.together = together

    def write(self, text: str) -> int:
        self.together.write(text)
        return super().write(text)


def test_demo_model_report_shows_progress_the_first_finding_at_once_and_explains(
        ) -> None:
    """The demo's model part: the first finding is printed before the matrix starts (not held
    back until it ends), every step says on stderr when it starts, while it runs and when it
    ends, and under the matrix each violation of a committer that passed the Spark runs is
    explained by the scope that found it."""
    from zerorename_bridge import mainjob

    together = io.StringIO()
    out, err = Both(together), Both(together)
    with redirect_stdout(out), redirect_stderr(err):
        mainjob.model_report(mainjob.Progress(heartbeat=0.2), committers=["magic"],
                             stores=["s3"], passed=["magic"])
    log = together.getvalue()
    finding = "verdict: LIST under s3-2018 missed a key that was PUT"
    matrix_step = "model: quick verdict matrix"
    assert finding in out.getvalue() and matrix_step not in out.getvalue()
    assert log.index(finding) < log.index(matrix_step)
    steps = [line for line in err.getvalue().splitlines() if PROGRESS.match(line)]
    assert steps == err.getvalue().splitlines()  # stderr holds only progress lines
    assert any(matrix_step in line and "still running" in line for line in steps)
    assert any(matrix_step in line and "done in" in line for line in steps)
    assert any("model matrix: magic on s3: completeness=" in line and "(hadoop/spark)" in line
               for line in steps)

    shown = out.getvalue()
    matrix_row = next(line for line in shown.splitlines() if line.startswith("magic"))
    explained = shown[shown.index(matrix_row):]
    assert "each cell: hadoop / spark" in explained
    # the saved witnesses are replayed first, so the quick matrix shows what the full run found:
    # magic on s3 breaks completeness under Hadoop's protocol (Section VIII.C), and the
    # adjacent-prefix variant's row breaks concurrency beside its fixed committer's
    assert "VIOL" in matrix_row
    assert "Why committers that held every property in the Spark runs above (magic)" \
        in explained
    assert "* scope " in explained and "    magic: " in explained
    assert "one per job-commit protocol" in " ".join(explained.split())
    variant = next(line for line in shown.splitlines()
                   if "magic+prefix-cleanup (variant)" in line)
    assert "VIOL" in variant


def _cell(committer: str, store: str, prop: str, scope: str, verdict: str = "violated",
          bug: str | None = None, variant_of: str | None = None) -> Cell:
    where = ScopeRecord(scope, Search("exhaustive", 5, 0, 5, True, None))
    explored = (Violation(where, "exploration", 9, f"{prop} (job 0): seen", 1, (where,))
                if verdict == "violated" else Held((where,), True, 5))
    return Cell(committer, store, prop, JobProtocol(scope.rsplit("-", 1)[1]), Verdict(verdict),
                None, explored, variant_of, bug)


def test_the_explanation_follows_the_cells_it_is_given() -> None:
    """Only committers that passed the Spark runs are explained; each under the scope that
    found its violation, described from that scope's scenario, with what the other protocol
    decided; the Section VIII.C race only for Hadoop's protocol with a partitioned attempt; a
    lagging store named as the cause when it is the only store; bug rows left to their table."""
    from zerorename_bridge.matrix_report import explain_matrix

    cells = [_cell("magic", "s3", "exclusivity", "partition-hadoop"),
             _cell("magic", "s3", "exclusivity", "partition-spark", verdict="holds"),
             _cell("magic", "s3", "completeness", "partition-hadoop"),
             _cell("magic", "s3", "completeness", "crash-spark", verdict="holds"),
             _cell("manifest", "s3-2018", "consistency", "crash-hadoop"),
             _cell("v2", "s3", "abortability", "abort-spark"),
             _cell("directory", "s3", "exclusivity", "partition-hadoop", verdict="holds"),
             _cell("magic+HADOOP-17258", "s3", "liveness", "crash-hadoop",
                   bug="HADOOP-17258", variant_of="magic")]
    text = " ".join(explain_matrix(cells, passed=["magic", "manifest", "directory"]).split())
    assert "(magic, manifest)" in text and "v2" not in text and "directory" not in text
    assert "HADOOP-17258" not in text
    assert "one per job-commit protocol" in text
    scopes = dict(part.split(":", 1) for part in text.split("* scope ")[1:])
    assert set(scopes) == {"partition-hadoop", "crash-hadoop"}
    race, crash = scopes["partition-hadoop"], scopes["crash-hadoop"]
    assert "Hadoop's protocol" in race and "a partitioned attempt" in race
    assert "Section VIII.C" in race and "Section VIII.C" not in crash
    assert "a task attempt crashes" in crash and "partitioned" not in crash
    assert ("magic: exclusivity, completeness violated on s3 under hadoop's protocol; under "
            "spark's: holds ") in race
    assert ("manifest: consistency violated on s3-2018 under hadoop's protocol only on "
            "s3-2018") in crash
    assert explain_matrix(cells, passed=["v1"]) == ""


@pytest.mark.slow
@pytest.mark.spark
def test_the_whole_demo_on_one_committer_and_one_matrix_cell() -> None:
    """``zerorename demo --research`` on a small scope: Spark writes through magic, the full
    report is printed when the runs end, then the model's part; progress on stderr."""
    out = zr("demo", "--research", "--committers", "magic", "--rows", "400",
             "--matrix-committers", "magic", "--matrix-stores", "s3")
    assert out.returncode == 0, out.stderr[-3000:]
    assert "== magic" in out.stdout and "completeness        yes" in out.stdout
    assert "1 committers ran, 0 skipped; properties held on every run." in out.stdout
    assert out.stdout.index("held on every run") < out.stdout.index("verdict: LIST under")
    assert re.search(r"^committer\s+store\s+completeness", out.stdout, re.M)
    assert "each cell: hadoop / spark" in out.stdout
    progress = [line for line in out.stderr.splitlines() if PROGRESS.match(line)]
    for step in ("starting Spark", "magic: writing 400 rows", "model: quick verdict matrix"):
        assert any(step in line and "done in" in line for line in progress), step
    assert not any(PROGRESS.match(line) for line in out.stdout.splitlines())
