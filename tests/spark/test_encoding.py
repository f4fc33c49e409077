"""The Parquet encoding of the Spark write path, without a SparkSession: row groups of
``parquet.block.size`` (not one per Arrow batch), ``maxRecordsPerFile``, parquet-mr's
dictionary decision and Spark's physical types."""

from __future__ import annotations

import contextlib
import io
from collections.abc import Iterator
from decimal import Decimal

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from zerorename.spark.core import parquet_settings, spec_from_options
from zerorename.spark.encoding import ParquetSettings, dictionary_columns
from zerorename.spark.parquet import PartitionedParquetWriter
from zerorename.spark.spec import ROW_GROUP_BYTES, WriteOptionError


class Files:
    """An opener keeping each closed file's bytes by name."""

    def __init__(self) -> None:
        self.files: dict[str, bytes] = {}

    @contextlib.contextmanager
    def open(self, relpath: str) -> Iterator[io.BytesIO]:
        buf = io.BytesIO()
        yield buf
        self.files[relpath] = buf.getvalue()

    def meta(self, relpath: str) -> pq.FileMetaData:
        return pq.ParquetFile(io.BytesIO(self.files[relpath])).metadata


def _batches(n: int, rows: int) -> list[pa.RecordBatch]:
    return [pa.record_batch({"id": list(range(i * rows, (i + 1) * rows)),
                             "tag": [f"t{j % 3}" for j in range(rows)]}) for i in range(n)]


def test_arrow_batches_become_one_row_group_not_one_each() -> None:
    out = Files()
    PartitionedParquetWriter(out.open, "p").write_all(_batches(8, 1_000))
    meta = out.meta("p.parquet")
    assert (meta.num_row_groups, meta.num_rows) == (1, 8_000)


def test_row_groups_stay_within_parquet_block_size() -> None:
    out = Files()
    limit = 16 * 1024
    PartitionedParquetWriter(out.open, "p", settings=ParquetSettings(
        row_group_bytes=limit)).write_all(_batches(4, 5_000))
    meta = out.meta("p.parquet")
    sizes = [meta.row_group(i).total_byte_size for i in range(meta.num_row_groups)]
    assert meta.num_rows == 20_000 and len(sizes) > 4 and max(sizes) <= limit


def test_max_records_per_file_rolls_files_as_spark_does() -> None:
    out = Files()
    batches = [b.append_column("year", pa.array([2020 + (i % 2)] * b.num_rows))
               for i, b in enumerate(_batches(5, 1_000))]
    PartitionedParquetWriter(out.open, "p", partition_by=("year",), settings=ParquetSettings(
        max_records_per_file=1_200)).write_all(batches)
    rows = {name: out.meta(name).num_rows for name in out.files}
    assert rows == {"year=2020/p.parquet": 1_200, "year=2020/p-c001.parquet": 1_200,
                    "year=2020/p-c002.parquet": 600, "year=2021/p.parquet": 1_200,
                    "year=2021/p-c001.parquet": 800}


def test_dictionary_only_where_it_pays_as_parquet_mr_decides() -> None:
    n = 20_000
    table = pa.table({
        "unique": pa.array(range(n), pa.int64()),
        "few": pa.array([f"value-{i % 10}" for i in range(n)]),
        "flag": pa.array([i % 2 == 0 for i in range(n)]),
        "nested": pa.array([{"k": [i % 4], "m": [("a", 1)]} for i in range(n)],
                           pa.struct([("k", pa.list_(pa.int32())),
                                      ("m", pa.map_(pa.string(), pa.int8()))])),
    })
    assert dictionary_columns(table) == ["few", "nested.k.list.element",
                                         "nested.m.key_value.key", "nested.m.key_value.value"]
    out = Files()
    PartitionedParquetWriter(out.open, "p").write_all(table.to_batches())
    chunks = out.meta("p.parquet").row_group(0)
    encodings = {chunks.column(i).path_in_schema: chunks.column(i).encodings
                 for i in range(chunks.num_columns)}
    assert "RLE_DICTIONARY" not in encodings["unique"]
    assert "RLE_DICTIONARY" in encodings["few"]


def test_spark_s_physical_types_and_no_arrow_schema_blob() -> None:
    table = pa.table({"d9": pa.array([Decimal("1.25")], pa.decimal128(9, 2)),
                      "d18": pa.array([Decimal("1.25")], pa.decimal128(18, 2)),
                      "d30": pa.array([Decimal("1.25")], pa.decimal128(30, 2)),
                      "ts": pa.array([1], pa.timestamp("us", "UTC")),
                      "ntz": pa.array([1], pa.timestamp("us"))})
    out = Files()
    PartitionedParquetWriter(out.open, "p").write_all(table.to_batches())
    parquet = pq.ParquetFile(io.BytesIO(out.files["p.parquet"]))
    schema = parquet.schema
    assert [schema.column(i).physical_type for i in range(5)] == \
        ["INT32", "INT64", "FIXED_LEN_BYTE_ARRAY", "INT64", "INT64"]
    assert "isAdjustedToUTC=true" in str(schema.column(3).logical_type)
    assert "isAdjustedToUTC=false" in str(schema.column(4).logical_type)
    assert b"ARROW:schema" not in (parquet.metadata.metadata or {})


def test_spark_s_option_names_reach_the_writer() -> None:
    spec = spec_from_options({"path": "s3://b/o", "maxRecordsPerFile": "1000",
                              "parquet.block.size": "1048576", "compression": "uncompressed"})
    assert parquet_settings(spec) == ParquetSettings("uncompressed", 1 << 20, 1000)
    default = parquet_settings(spec_from_options({"path": "s3://b/o"}))
    assert default == ParquetSettings("snappy", ROW_GROUP_BYTES, 0)
    for bad in ({"maxRecordsPerFile": "-1"}, {"parquet.block.size": "0"},
                {"parquet.block.size": "big"}):
        with pytest.raises(WriteOptionError, match=next(iter(bad))):
            spec_from_options({"path": "s3://b/o", **bad})
