"""``encoder='spark'``: Spark's own Parquet encoder in the tasks, the bytes through zerorename.

The claim is stronger than "a reader cannot tell them apart": the files are the ones Spark's
``df.write.parquet`` makes.  Checked against Spark's writer, with Spark's default settings
(INT96 timestamps included): every Spark SQL type byte for byte; a partitioned write with a
null partition value, ``maxRecordsPerFile`` and a codec gives the same directories, the same
rows per file and the same column chunks; the data source refuses ``encoder='spark'`` on input
that is not chunks, before anything is written.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from zerorename.spark import write
from zerorename.spark.spec import WriteOptionError

from .test_types import _canonical, _every_type, _files

pytestmark = [pytest.mark.spark, pytest.mark.slow]


def _relative(root: Path) -> list[str]:
    """Data files as ``dir/part-N``: directory and task number, not the job's UUID."""
    return sorted(f"{p.parent.relative_to(root)}/{p.name[:10]}" for p in _files(root))


def test_every_spark_type_byte_for_byte_as_spark_writes_it(spark: Any, tmp_path: Path) -> None:
    df = _every_type(spark).coalesce(1)
    native, ours = tmp_path / "native", tmp_path / "ours"
    df.write.parquet(str(native))
    success = write(df, f"file://{ours}", committer="fenced", encoder="spark")
    (native_file,), (our_file,) = _files(native), _files(ours)

    assert our_file.read_bytes() == native_file.read_bytes()
    assert success is not None and success.committer == "fenced"
    back = spark.read.parquet(str(ours))
    assert [f.dataType for f in back.schema.fields] == [f.dataType for f in df.schema.fields]
    assert _canonical(sorted(back.collect())) == _canonical(sorted(df.collect()))
    assert pq.read_table(our_file).num_rows == 3


def test_partitions_options_and_codec_as_spark_s(spark: Any, tmp_path: Path) -> None:
    df = spark.range(0, 30_000, 1, 3).selectExpr(
        "id", "cast(id % 7 as string) as `s.with dot`", "rand(3) as x",
        "case when id % 5 = 0 then null else cast(id % 3 as string) end as k")
    ours, native = tmp_path / "ours", tmp_path / "native"
    write(df, f"file://{ours}", committer="fenced", encoder="spark", partition_by="k",
          compression="zstd", maxRecordsPerFile=1_000)
    (df.write.partitionBy("k").option("compression", "zstd")
     .option("maxRecordsPerFile", 1_000).parquet(str(native)))

    assert {p.parent.name for p in _files(ours)} == {p.parent.name for p in _files(native)} \
        == {"k=0", "k=1", "k=2", "k=__HIVE_DEFAULT_PARTITION__"}
    rows = [sorted(pq.ParquetFile(f).metadata.num_rows for f in _files(root))
            for root in (ours, native)]
    assert rows[0] == rows[1] and max(rows[0]) == 1_000
    codecs = {pq.ParquetFile(f).metadata.row_group(0).column(c).compression
              for f in _files(ours) for c in range(3)}
    assert codecs == {"ZSTD"}
    assert sorted(spark.read.parquet(str(ours)).collect()) == \
        sorted(spark.read.parquet(str(native)).collect())
    # rolled files are named as Spark names them: the task's stem, then -c001, -c002, ...
    assert any(p.stem.endswith("-c001") for p in _files(ours))


def test_nothing_left_for_the_files_is_refused(spark: Any, tmp_path: Path) -> None:
    df = spark.range(0, 10).selectExpr("id % 2 as k")
    with pytest.raises(WriteOptionError, match="every column is a partition column"):
        write(df, f"file://{tmp_path}/out", committer="fenced", encoder="spark",
              partition_by="k")
    assert not (tmp_path / "out").exists()


def test_format_zerorename_with_encoder_spark_is_refused_before_writing(
        spark: Any, tmp_path: Path) -> None:
    df = spark.range(0, 10).selectExpr("id")
    with pytest.raises(Exception) as caught:
        (df.write.format("zerorename").option("encoder", "spark").option("committer", "fenced")
         .mode("append").save(f"file://{tmp_path}/out"))
    assert "zerorename.spark.write" in str(caught.value)
    assert WriteOptionError.__name__ in str(caught.value)
    assert not (tmp_path / "out").exists() or not _files(tmp_path / "out")
