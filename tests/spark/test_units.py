"""Fast checks of the Spark integration's pure-Python parts (no SparkSession needed)."""

from __future__ import annotations

import contextlib
import io
from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from zerorename.spark.core import (
    CONFLICT_MODE,
    output_exists,
    spec_from_options,
)
from zerorename.spark.parquet import (
    NULL_PARTITION,
    PartitionedParquetWriter,
    escape_partition_value,
    partition_dir,
)
from zerorename.spark.reader import list_data_files, read_table
from zerorename.stores import LocalStore
from zerorename_bridge.embedded_s3 import classify
from zerorename_bridge.spark_faults import matches


def test_save_modes_map_to_conflict_modes() -> None:
    modes = {m: spec_from_options({"path": "s3://b/o", "mode": m}).job_options()[CONFLICT_MODE]
             for m in ("append", "overwrite", "error", "errorifexists", "ignore")}
    assert modes == {"append": "append", "overwrite": "replace", "error": "fail",
                     "errorifexists": "fail", "ignore": "fail"}
    assert spec_from_options({"path": "s3://b/o"}, overwrite=True).mode == "overwrite"
    assert spec_from_options({"path": "s3://b/o", "mode": "error"}, overwrite=True).mode == \
        "error"


def test_options_are_parsed_and_forwarded_but_secrets_refused() -> None:
    spec = spec_from_options({"Path": "s3://b/o/", "partition_by": "year, month",
                              "threads": 4, "part_size": "8M", "fs.s3a.committer.uuid": "y",
                              "zerorename.fault.exit_after_write": "1@0"})
    assert spec.dest == "s3://b/o" and spec.partition_by == ("year", "month")
    assert spec.committer_options == {"fs.s3a.committer.threads": "4",
                                      "fs.s3a.multipart.size": "8M",
                                      "fs.s3a.committer.uuid": "y"}
    assert spec.faults == {"exit_after_write": "1@0"}
    assert spec.abort_grace_seconds == 3.0
    assert spec_from_options({"path": "s3://b/o", "abort_grace_seconds": "0.5"}
                             ).abort_grace_seconds == 0.5
    assert spec.job_id and spec.job_id != spec_from_options({"path": "s3://b/o"}).job_id
    with pytest.raises(ValueError, match="credentials"):
        spec_from_options({"path": "s3://b/o", "secret_key": "hunter2"})
    with pytest.raises(ValueError, match="user:password"):
        spec_from_options({"path": "s3://b/o", "endpoint_url": "http://u:p@host:9000"})
    with pytest.raises(ValueError, match="unknown fault"):
        spec_from_options({"path": "s3://b/o", "zerorename.fault.typo": "1@0"})
    with pytest.raises(ValueError, match="partition@attempt"):
        spec_from_options({"path": "s3://b/o", "zerorename.fault.exit_after_write": "one"})
    with pytest.raises(ValueError, match="no destination"):
        spec_from_options({})


def test_fault_rules_match_partition_and_attempt() -> None:
    assert matches("1@0", 1, 0) == ""
    assert matches("1@0", 1, 1) is None
    assert matches("2@*:0.5", 2, 5) == "0.5"
    assert matches("0@0,3@1", 3, 1) == ""
    assert matches(None, 0, 0) is None


def test_partition_values_are_escaped_like_spark() -> None:
    assert escape_partition_value(None) == NULL_PARTITION
    assert escape_partition_value(True) == "true"
    assert escape_partition_value("a/b=c") == "a%2Fb%3Dc"
    assert partition_dir(("year", "m"), (2024, "x:y")) == "year=2024/m=x%3Ay"


def test_requests_are_classified_as_s3_operations() -> None:
    assert classify("PUT", "/b/k", "", None) == "PutObject"
    assert classify("PUT", "/b/k", "", "/b/src") == "CopyObject"
    assert classify("PUT", "/b/k", "partNumber=1&uploadId=u", None) == "UploadPart"
    assert classify("POST", "/b/k", "uploads", None) == "CreateMultipartUpload"
    assert classify("POST", "/b/k", "uploadId=u", None) == "CompleteMultipartUpload"
    assert classify("DELETE", "/b/k", "uploadId=u", None) == "AbortMultipartUpload"
    assert classify("GET", "/b", "list-type=2&prefix=x", None) == "ListObjectsV2"
    assert classify("GET", "/b", "uploads&prefix=x", None) == "ListMultipartUploads"
    assert classify("POST", "/b", "delete", None) == "DeleteObjects"
    assert classify("GET", "/moto-api/data.json", "", None) is None


class MemoryFiles:
    """An opener that keeps closed files in a dict, and drops files closed by an error."""

    def __init__(self) -> None:
        self.files: dict[str, bytes] = {}
        self.discarded: list[str] = []

    @contextlib.contextmanager
    def open(self, relpath: str) -> Iterator[io.BytesIO]:
        buf = io.BytesIO()
        try:
            yield buf
        except BaseException:
            self.discarded.append(relpath)
            raise
        self.files[relpath] = buf.getvalue()


def _batch(ids: list[int]) -> pa.RecordBatch:
    return pa.record_batch({"id": ids, "year": [2020 + i % 2 for i in ids],
                            "tag": [None if i % 5 == 0 else f"t{i % 3}" for i in ids]})


def test_writer_splits_by_partition_and_drops_partition_columns() -> None:
    out = MemoryFiles()
    writer = PartitionedParquetWriter(out.open, "part-00001-job", partition_by=("year",))
    written = writer.write_all([_batch(list(range(10))), _batch(list(range(10, 16)))])
    assert sorted(out.files) == ["year=2020/part-00001-job.parquet",
                                 "year=2021/part-00001-job.parquet"]
    assert sum(f.rows for f in written) == 16
    even = pq.read_table(io.BytesIO(out.files["year=2020/part-00001-job.parquet"]))
    assert even.column_names == ["id", "tag"]
    assert sorted(even["id"].to_pylist()) == list(range(0, 16, 2))
    assert {f.size for f in written} == {len(v) for v in out.files.values()}


def test_writer_rolls_files_beyond_max_open_and_handles_nulls() -> None:
    out = MemoryFiles()
    writer = PartitionedParquetWriter(out.open, "p", partition_by=("tag",), max_open_files=1)
    writer.write_all([_batch(list(range(15))), _batch(list(range(15, 30)))])
    names = sorted(out.files)
    assert f"tag={NULL_PARTITION}/p.parquet" in names
    assert any(n.endswith("p-c001.parquet") for n in names)  # a key reopened after eviction
    total = sum(pq.read_table(io.BytesIO(v)).num_rows for v in out.files.values())
    assert total == 30


def test_writer_keeps_nan_and_null_partition_rows() -> None:
    """NaN equals nothing, not even itself: a split by comparison would drop those rows."""
    out = MemoryFiles()
    keys = [1.0, float("nan"), None, 1.0, float("nan"), float("inf")]
    batch = pa.record_batch({"k": pa.array(keys, pa.float64()), "v": list(range(6))})
    PartitionedParquetWriter(out.open, "p", partition_by=("k",)).write_all([batch])
    rows = {name.split("/")[0]: sorted(pq.read_table(io.BytesIO(data))["v"].to_pylist())
            for name, data in out.files.items()}
    assert rows == {"k=1.0": [0, 3], "k=NaN": [1, 4], f"k={NULL_PARTITION}": [2],
                    "k=Infinity": [5]}


def test_writer_discards_open_files_when_the_input_fails() -> None:
    out = MemoryFiles()

    def failing() -> Iterator[pa.RecordBatch]:
        yield _batch([1, 2, 3])
        raise RuntimeError("upstream failed")

    writer = PartitionedParquetWriter(out.open, "p", partition_by=("year",))
    with pytest.raises(RuntimeError, match="upstream"):
        writer.write_all(failing())
    assert out.files == {} and sorted(out.discarded) == ["year=2020/p.parquet",
                                                         "year=2021/p.parquet"]


def test_reader_skips_hidden_names_and_infers_partition_types(tmp_path: Path) -> None:
    store = LocalStore()
    dest = f"file://{tmp_path}/out"
    out = MemoryFiles()
    PartitionedParquetWriter(out.open, "p", partition_by=("year",)).write_all(
        [_batch(list(range(8)))])
    for rel, data in out.files.items():
        store.put(f"{dest}/{rel}", data)
    store.put(f"{dest}/_SUCCESS", b"{}")
    store.put(f"{dest}/.staging/x.parquet", b"not parquet")
    store.put(f"{dest}/year=2020/_temporary/y.parquet", b"not parquet")
    assert len(list_data_files(store, dest)) == 2
    table = read_table(store, dest)
    assert table.schema.field("year").type == pa.int32()
    assert sorted(zip(table["id"].to_pylist(), table["year"].to_pylist(), strict=True)) == \
        [(i, 2020 + i % 2) for i in range(8)]
    assert output_exists(store, dest)
    assert not output_exists(store, f"file://{tmp_path}/none")
