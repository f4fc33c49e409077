"""Files a reader cannot tell apart from Spark's: every Spark SQL type, and Spark's options.

One DataFrame holds a column of every Spark SQL type Parquet stores (with nulls, NaN and
infinities, decimals of each physical range, nested arrays, maps and structs).  It is written
twice to the local disk — by ``df.write.parquet`` (with ``outputTimestampType``
``TIMESTAMP_MICROS``: Spark's default INT96 is deprecated, see
``zerorename/spark/encoding.py``) and through zerorename — and the two must agree:

* Parquet's own schema, leaf by leaf (path, physical type, logical type, repetition);
* Spark's reader: the same schema and the same rows;
* pyarrow's reader: the same Arrow schema and the same values.

Then the options a Parquet user sets: ``compression`` (the codec in every column chunk),
``maxRecordsPerFile`` (rows per file, as Spark's) and ``parquet.block.size`` (several row
groups when set small).  One session, several assertions per test (Spark tests are heavy).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from zerorename.spark import write

pytestmark = [pytest.mark.spark, pytest.mark.slow]

#: Spark SQL for a row of every type; row 2 is all nulls (and NaN where a float can be).
COLUMNS = {
    "b": ("true", "false", "null"),
    "i8": ("cast(-7 as tinyint)", "cast(127 as tinyint)", "null"),
    "i16": ("cast(-300 as smallint)", "cast(32767 as smallint)", "null"),
    "i32": ("cast(-70000 as int)", "2147483647", "null"),
    "i64": ("cast(-5000000000 as bigint)", "9223372036854775807", "null"),
    "f32": ("cast('NaN' as float)", "cast(1.5 as float)", "null"),
    "f64": ("cast('NaN' as double)", "cast('-Infinity' as double)", "null"),
    "d_int": ("cast(123.45 as decimal(5,2))", "cast(-999.99 as decimal(5,2))", "null"),
    "d_long": ("cast(12345678901.2345 as decimal(15,4))", "cast(-1 as decimal(15,4))",
               "null"),
    "d_fixed": ("cast('12345678901234567890.1234567890' as decimal(30,10))",
                "cast(0 as decimal(30,10))", "null"),
    "s": ("'zerorename'", "'ünïcödé ✓'", "null"),
    "bin": ("unhex('00FF10')", "cast('' as binary)", "null"),
    "dt": ("date'1970-01-01'", "date'2024-02-29'", "null"),
    "ts": ("timestamp'2024-03-10 01:59:59.123456'", "timestamp'1900-01-01 00:00:00'", "null"),
    "ts_ntz": ("timestamp_ntz'2024-03-10 02:30:00.000001'",
               "timestamp_ntz'9999-12-31 23:59:59'", "null"),
    "arr": ("array(1, null, 3)", "cast(array() as array<int>)", "null"),
    "arr_s": ("array('a', null)", "array(cast(null as string))", "null"),
    "m": ("map('k', 1, 'j', null)", "cast(map() as map<string,int>)", "null"),
    "st": ("named_struct('x', 1, 'y', 'one')", "named_struct('x', null, 'y', null)", "null"),
    "nested": ("array(named_struct('k', 'a', 'v', array(1.5d)))",
               "array(cast(null as struct<k:string,v:array<double>>))", "null"),
    "m_nested": ("map(1, named_struct('z', array(date'2020-01-01')))",
                 "cast(map() as map<int,struct<z:array<date>>>)", "null"),
}


def _every_type(spark: Any) -> Any:
    rows = [" union all select " + ", ".join(f"{v[r]} as {k}" for k, v in COLUMNS.items())
            for r in range(3)]
    return spark.sql("select 0 as r, " + ", ".join(
        f"{v[0]} as {k}" for k, v in COLUMNS.items()) + "".join(
        rows[r].replace("select ", f"select {r} as r, ", 1) for r in (1, 2)))


def _leaves(path: Path) -> list[tuple[str, str, str, int, int]]:
    schema = pq.ParquetFile(path).schema
    return [(c.path, c.physical_type, str(c.logical_type), c.max_definition_level,
             c.max_repetition_level) for c in (schema.column(i) for i in range(len(schema)))]


def _files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*.parquet") if not p.name.startswith((".", "_")))


def _canonical(value: Any) -> Any:
    """NaN equal to NaN; dict/list/Row compared by content."""
    if isinstance(value, float) and math.isnan(value):
        return "NaN"
    if isinstance(value, dict):
        return sorted((k, _canonical(v)) for k, v in value.items())
    if isinstance(value, list | tuple):
        return [_canonical(v) for v in value]
    if hasattr(value, "asDict"):
        return _canonical(value.asDict())
    return value


def test_every_spark_type_reads_back_as_from_spark_s_writer(spark: Any, tmp_path: Path) -> None:
    spark.conf.set("spark.sql.parquet.outputTimestampType", "TIMESTAMP_MICROS")
    try:
        df = _every_type(spark).coalesce(1)
        native, ours = tmp_path / "native", tmp_path / "ours"
        df.write.parquet(str(native))
        write(df, f"file://{ours}", committer="fenced")
    finally:
        spark.conf.unset("spark.sql.parquet.outputTimestampType")
    (native_file,), (our_file,) = _files(native), _files(ours)

    assert _leaves(our_file) == _leaves(native_file)

    theirs_df, ours_df = spark.read.parquet(str(native)), spark.read.parquet(str(ours))
    assert ours_df.schema == theirs_df.schema  # both read every column as nullable
    assert [f.dataType for f in ours_df.schema.fields] == [f.dataType for f in df.schema.fields]
    assert _canonical(sorted(ours_df.collect())) == _canonical(sorted(theirs_df.collect()))
    assert len(ours_df.collect()) == 3

    theirs_pa, ours_pa = pq.read_table(native_file), pq.read_table(our_file)
    assert ours_pa.schema == theirs_pa.schema
    assert _canonical(ours_pa.sort_by("r").to_pylist()) == \
        _canonical(theirs_pa.sort_by("r").to_pylist())


def test_compression_max_records_and_row_groups_as_spark_s(spark: Any, tmp_path: Path) -> None:
    df = spark.range(0, 25_000, 1, 2).selectExpr("id", "cast(id % 7 as string) as s",
                                                 "rand(3) as x")
    for codec, expected in (("zstd", "ZSTD"), ("uncompressed", "UNCOMPRESSED"),
                            ("gzip", "GZIP")):
        ours = tmp_path / f"ours-{codec}"
        write(df, f"file://{ours}", committer="fenced", compression=codec)
        native = tmp_path / f"native-{codec}"
        df.write.option("compression", codec).parquet(str(native))
        for root in (ours, native):
            meta = pq.ParquetFile(_files(root)[0]).metadata
            assert {meta.row_group(0).column(c).compression
                    for c in range(meta.num_columns)} == {expected}, (codec, root)

    ours, native = tmp_path / "ours-max", tmp_path / "native-max"
    write(df, f"file://{ours}", committer="fenced", maxRecordsPerFile=5_000)
    df.write.option("maxRecordsPerFile", 5_000).parquet(str(native))
    rows = [[pq.ParquetFile(f).metadata.num_rows for f in _files(root)]
            for root in (ours, native)]
    assert sorted(rows[0]) == sorted(rows[1]) and max(rows[0]) == 5_000 and len(rows[0]) == 6
    assert spark.read.parquet(str(ours)).count() == 25_000

    ours = tmp_path / "ours-block"
    write(df, f"file://{ours}", committer="fenced", **{"parquet.block.size": 64 * 1024})
    metas = [pq.ParquetFile(f).metadata for f in _files(ours)]
    assert min(m.num_row_groups for m in metas) > 1
    assert max(m.row_group(i).total_byte_size for m in metas
               for i in range(m.num_row_groups)) <= 64 * 1024
    assert sum(m.num_rows for m in metas) == 25_000
