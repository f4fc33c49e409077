"""``_SUCCESS`` files written by Hadoop's S3A committers, read and shown by zerorename.

``data/s3a_magic_success.json`` is the file S3A 3.5.0's magic committer wrote for a
four-file Parquet write from PySpark 4.3.0 (``tests/spark/test_s3a.py`` makes such files on
every run and shows them with ``zerorename success``).  Its format is the one zerorename's
committers write, with S3A's own counters: no ``committer_files_committed`` (one completed
multipart upload per file instead), over 150 filesystem metrics, a ``null`` state, and file
names as paths without the bucket.
"""

from __future__ import annotations

import json
from pathlib import Path

from zerorename.cli import main
from zerorename.formats import SuccessData
from zerorename.stores import LocalStore

DATA = Path(__file__).with_name("data") / "s3a_magic_success.json"


def _s3a() -> SuccessData:
    return SuccessData.from_bytes(DATA.read_bytes(), str(DATA))


def test_s3a_success_data_parses_and_counts_its_files() -> None:
    success = _s3a()
    assert success.committer == "magic" and success.success
    assert not success.written_by_zerorename and success.origin == "Hadoop S3A"
    # S3A has no files counter: one completed upload per file, as many as it names
    assert success.files_committed == len(success.filenames) == 4
    assert success.counter("committer_bytes_committed") == 5622
    assert "(Hadoop S3A magic committer): succeeded, 4 files, 5622 bytes" in str(success)


def test_describe_names_s3a_and_shows_its_nonzero_metrics() -> None:
    text = _s3a().describe()
    assert "committer:   magic (Hadoop S3A committer)" in text
    assert "files:       4 committed, 5622 bytes" in text
    raw = json.loads(DATA.read_text())["metrics"]
    zero = sum(1 for v in raw.values() if v == 0)
    assert f"metrics ({zero} zero omitted):" in text
    block = text.split("metrics (", 1)[1].splitlines()[1:]
    end = next(i for i, line in enumerate(block) if not line.startswith("  "))
    metric_lines = {line.split()[0] for line in block[:end]}
    assert metric_lines == {k for k, v in raw.items() if v}
    assert "committer_magic_files_created" in metric_lines
    shown = {line.split()[0]: int(line.split()[1]) for line in block[:end]}
    assert shown == {k: v for k, v in raw.items() if v}


def test_zerorename_success_is_not_labelled_s3a() -> None:
    """A file of zerorename's own: its files counter, no origin label."""
    own = SuccessData(committer="magic", job_id="j", filenames=["s3://b/d/f"],
                      metrics={"files": 1, "bytes": 5},
                      diagnostics={"committer.class": "zerorename.committers.magic.Magic"},
                      iostatistics={"counters": {"committer_files_committed": 1,
                                                 "committer_commits_completed": 3,
                                                 "committer_bytes_committed": 5}})
    back = SuccessData.from_bytes(own.to_bytes(), "own")
    assert back.written_by_zerorename and back.files_committed == 1
    text = back.describe()
    assert "committer:   magic\n" in text and "Hadoop S3A" not in text
    assert "metrics:\n" in text and "  files " in text


def test_zerorename_success_cli_shows_an_s3a_success(tmp_path: Path,
                                                     capsys: object) -> None:
    dest = tmp_path / "out"
    LocalStore().put(f"file://{dest}/_SUCCESS", DATA.read_bytes())
    assert main(["success", f"file://{dest}"]) == 0
    out = capsys.readouterr().out  # type: ignore[attr-defined]
    assert "committer:   magic (Hadoop S3A committer)" in out
    assert "files:       4 committed" in out
    assert main(["success", f"file://{dest}", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)  # type: ignore[attr-defined]
    assert data["committer"] == "magic" and len(data["metrics"]) == len(
        json.loads(DATA.read_text())["metrics"])


def test_the_jvm_committers_success_is_zerorenames() -> None:
    """The JVM fenced committer (io.zerorename.committer.FencedCommitter) wrote it: shown as
    zerorename's, counted by its own files counter, not labelled S3A's."""
    jvm = SuccessData(committer="fenced", job_id="j", filenames=["s3a://b/d/f"],
                      diagnostics={"committer.class":
                                   "io.zerorename.committer.FencedCommitter"},
                      iostatistics={"counters": {"committer_files_committed": 1,
                                                 "committer_commits_completed": 2}})
    back = SuccessData.from_bytes(jvm.to_bytes(), "jvm")
    assert back.written_by_zerorename and back.origin == "zerorename"
    assert back.files_committed == 1 and "Hadoop S3A" not in back.describe()
