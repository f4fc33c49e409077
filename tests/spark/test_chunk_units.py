"""The Python half of ``encoder='spark'`` without a SparkSession: chunk rows into files, the
jar's build, the option's checking."""

from __future__ import annotations

import contextlib
import io
from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
import pytest

from zerorename.spark import jvm
from zerorename.spark.chunks import CHUNK_COLUMNS, ChunkedFileWriter, IncompleteChunksError
from zerorename.spark.spec import WriteOptionError, spec_from_options


class _Files:
    """An ``open()`` like a committer's: what each file received, and how it was closed."""

    def __init__(self) -> None:
        self.data: dict[str, bytes] = {}
        self.failed: list[str] = []

    @contextlib.contextmanager
    def open(self, relpath: str) -> Iterator[io.BytesIO]:
        sink = io.BytesIO()
        try:
            yield sink
        except BaseException:
            self.failed.append(relpath)
            raise
        self.data[relpath] = sink.getvalue()


def _batch(*chunks: tuple[int, str, int, bytes, int, bool]) -> pa.RecordBatch:
    columns = list(zip(*chunks, strict=True))
    return pa.RecordBatch.from_arrays(
        [pa.array(columns[0], pa.int32()), pa.array(columns[1], pa.string()),
         pa.array(columns[2], pa.int32()), pa.array(columns[3], pa.binary()),
         pa.array(columns[4], pa.int64()), pa.array(columns[5], pa.bool_())],
        names=list(CHUNK_COLUMNS))


def test_interleaved_chunks_become_whole_files_named_like_spark_s() -> None:
    files = _Files()
    writer = ChunkedFileWriter(open_file=files.open, file_stem="part-00003-job")
    written = writer.write_all([
        _batch((0, "month=1", 0, b"ab", -1, False), (1, "month=2", 0, b"xy", -1, False)),
        _batch((0, "month=1", 0, b"cd", 7, True), (2, "month=1", 1, b"z", 1, True),
               (1, "month=2", 0, b"", 3, True), (3, "", 0, b"top", 2, True)),
    ])
    assert files.data == {"month=1/part-00003-job.parquet": b"abcd",
                          "month=2/part-00003-job.parquet": b"xy",
                          "month=1/part-00003-job-c001.parquet": b"z",
                          "part-00003-job.parquet": b"top"}
    assert [(w.relpath, w.size, w.rows) for w in written] == [
        ("month=1/part-00003-job.parquet", 4, 7), ("month=1/part-00003-job-c001.parquet", 1, 1),
        ("month=2/part-00003-job.parquet", 2, 3), ("part-00003-job.parquet", 3, 2)]


def test_chunks_ending_before_a_file_is_finished_fail_and_drop_it() -> None:
    files = _Files()
    writer = ChunkedFileWriter(open_file=files.open, file_stem="part-00000-job")
    with pytest.raises(IncompleteChunksError, match=r"part-00000-job\.parquet"):
        writer.write_all([_batch((0, "", 0, b"PAR1...", -1, False))])
    assert files.failed == ["part-00000-job.parquet"] and files.data == {}


def test_a_missing_jar_is_a_clear_error_naming_the_reason(monkeypatch: pytest.MonkeyPatch,
                                                          tmp_path: Path) -> None:
    monkeypatch.setattr(jvm, "JAR", tmp_path / "zerorename-spark.jar")
    with pytest.raises(jvm.EncoderUnavailableError, match=r"jvm-build\.sh"):
        jvm.packaged_jar()


def test_the_jar_ships_in_the_package_at_the_wheels_version() -> None:
    import zipfile

    import zerorename

    jar = jvm.packaged_jar()
    assert jar.parent == Path(jvm.__file__).with_name("jars")
    with zipfile.ZipFile(jar) as opened:
        manifest = opened.read("META-INF/MANIFEST.MF").decode()
        assert "io/zerorename/spark/ParquetChunks.class" in opened.namelist()
    assert f"Implementation-Version: {zerorename.__version__}" in manifest


def test_encoder_option_is_checked() -> None:
    assert spec_from_options({"path": "s3://b/o"}).encoder == "python"
    assert spec_from_options({"path": "s3://b/o", "encoder": "Spark"}).encoder == "spark"
    with pytest.raises(WriteOptionError, match=r"encoder=.jvm.*python.*spark"):
        spec_from_options({"path": "s3://b/o", "encoder": "jvm"})
