"""What a new user's first pass found (issue 43), checked without Spark: misspelt options under
zerorename's namespaces refused, Hadoop's endpoint option honoured, ``-0.0``/``0.0`` and
``null``/``""`` partitions named as Spark names them, the CLI refusing what the committers
refuse, and user pages that agree with the code."""

from __future__ import annotations

import contextlib
import io
import math
import re
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import zerorename as zr
from zerorename.committers.destinations import UnownableDestinationError, check_destination_shape
from zerorename.errors import OptionValueError
from zerorename.spark.core import spark_job_error
from zerorename.spark.parquet import NULL_PARTITION, PartitionedParquetWriter
from zerorename.spark.reader import DataFile, read_file
from zerorename.spark.spec import WriteOptionError, spec_from_options

REPO = Path(__file__).resolve().parents[2]


# -- every option is checked ------------------------------------------------------------------

@pytest.mark.parametrize(("name", "meant"), [
    ("fs.s3a.comitter.threads", "fs.s3a.committer.threads"),
    ("zerorename.comitter.threads", "zerorename.committer.threads"),
    ("fs.zerorename.fenced.store-chek", "fs.zerorename.fenced.store-check"),
])
def test_a_misspelt_option_fails_in_jobcontext_and_in_the_writer(name: str, meant: str) -> None:
    with pytest.raises(OptionValueError) as raised:
        zr.JobContext("s3://bkt/out", options={name: "4"})
    assert isinstance(raised.value, zr.CommitError) and raised.value.path == name
    assert f"did you mean {meant!r}" in str(raised.value)
    assert "fs.s3a.multipart.size" in str(raised.value)  # the valid names are listed
    with pytest.raises(WriteOptionError) as refused:
        spec_from_options({"path": "s3://bkt/out", name: "4"})
    assert name in str(refused.value) and meant in str(refused.value)


def test_known_and_foreign_names_still_pass() -> None:
    job = zr.JobContext("s3://bkt/out", options={
        "fs.s3a.committer.threads": "4", "zerorename.committer.threads": "4",
        "mapreduce.manifest.committer.io.threads": "4", "spark.app.name": "x"})
    assert job.opts.get_int("fs.s3a.committer.threads") == 4
    spec = spec_from_options({"path": "s3://bkt/out", "fs.s3a.committer.threads": "4",
                              "fs.s3a.committer.staging.conflict-mode": "append"})
    assert spec.committer_options["fs.s3a.committer.threads"] == "4"


def test_hadoops_endpoint_option_points_the_writer_at_it() -> None:
    spec = spec_from_options({"path": "s3://bkt/out", "fs.s3a.endpoint": "http://127.0.0.1:9",
                              "fs.s3a.endpoint.region": "eu-west-1"})
    assert (spec.endpoint_url, spec.region) == ("http://127.0.0.1:9", "eu-west-1")
    assert "fs.s3a.endpoint" not in spec.committer_options  # not a committer option
    bare = spec_from_options({"path": "s3://bkt/out", "fs.s3a.endpoint": "minio.lan:9000"})
    assert bare.endpoint_url == "https://minio.lan:9000"  # S3A's default scheme
    both = spec_from_options({"path": "s3://bkt/out", "fs.s3a.endpoint": "http://a:1",
                              "endpoint_url": "http://b:2"})
    assert both.endpoint_url == "http://b:2"


def test_jobcontext_refuses_an_endpoint_option_and_says_how_to_set_one() -> None:
    with pytest.raises(OptionValueError) as raised:
        zr.JobContext("s3://bkt/out", options={"fs.s3a.endpoint": "http://127.0.0.1:9"})
    assert "AWS_ENDPOINT_URL" in str(raised.value) and "endpoint_url" in str(raised.value)


# -- partition values as Spark names them -----------------------------------------------------

class Files:
    """An opener keeping each file's bytes; refuses to open one path twice (as committers do)."""

    def __init__(self) -> None:
        self.files: dict[str, bytes] = {}

    @contextlib.contextmanager
    def open(self, relpath: str) -> Iterator[io.BytesIO]:
        if relpath in self.files:
            raise zr.DuplicateDestinationError(relpath, "already opened this path")
        self.files[relpath] = b""
        buf = io.BytesIO()
        yield buf
        self.files[relpath] = buf.getvalue()

    def rows(self, relpath: str) -> list[Any]:
        return list(pq.read_table(io.BytesIO(self.files[relpath]))["x"].to_pylist())


def test_minus_zero_and_zero_are_two_partitions_even_alternating() -> None:
    out = Files()
    batches = [pa.record_batch({"d": pa.array(d, pa.float64()), "x": x}) for d, x in (
        ([0.0, -0.0, 0.0, -0.0], [1, 2, 3, 4]), ([-0.0, 0.0], [5, 6]))]
    PartitionedParquetWriter(out.open, "p", partition_by=("d",)).write_all(batches)
    assert set(out.files) == {"d=0.0/p.parquet", "d=-0.0/p.parquet"}
    assert sorted(out.rows("d=-0.0/p.parquet")) == [2, 4, 5]
    assert sorted(out.rows("d=0.0/p.parquet")) == [1, 3, 6]
    schema = pa.schema([pa.field("x", pa.int64()), pa.field("d", pa.float64())])

    class Bytes:  # read_file needs a store only to fetch the file's bytes
        def get(self, url: str) -> bytes:
            return out.files[url]

    back = pa.Table.from_batches(list(read_file(Bytes(), DataFile(  # type: ignore[arg-type]
        "d=-0.0/p.parquet", 0, (("d", "-0.0"),)), schema)))
    assert all(math.copysign(1.0, v) < 0 for v in back["d"].to_pylist())


def test_null_and_empty_string_share_the_default_partition_in_one_task() -> None:
    out = Files()
    batch = pa.record_batch({"s": pa.array(["", None, "a", ""]), "x": [1, 2, 3, 4]})
    PartitionedParquetWriter(out.open, "p", partition_by=("s",)).write_all(
        [batch, pa.record_batch({"s": pa.array([None, ""]), "x": [5, 6]})])
    assert set(out.files) == {f"s={NULL_PARTITION}/p.parquet", "s=a/p.parquet"}
    assert sorted(out.rows(f"s={NULL_PARTITION}/p.parquet")) == [1, 2, 4, 5, 6]


# -- errors that say the cause ----------------------------------------------------------------

def test_a_worker_without_zerorename_gets_the_pyspark_python_hint() -> None:
    text = ("An exception was thrown from the Python worker.\nTraceback (most recent call "
            "last):\n  File \"x.py\", line 1\nModuleNotFoundError: No module named "
            "'zerorename'\n\tat org.apache.spark.api.python.X")
    error = spark_job_error("s3://bkt/out", RuntimeError(text))
    assert "PYSPARK_PYTHON" in str(error) and "zerorename[spark] is installed" in str(error)
    other = spark_job_error("s3://bkt/out", RuntimeError("Traceback (most recent call last):\n"
                                                         "ValueError: bad"))
    assert "PYSPARK_PYTHON" not in str(other)


@pytest.mark.parametrize(("dest", "suggested"), [
    ("s3://bucket/../x", "s3://bucket/x"), ("s3://bucket/a/../x", "s3://bucket/x"),
    ("s3://bucket/a/./b", "s3://bucket/a/b"), ("s3://bucket/..", "s3://bucket/<table>")])
def test_the_dotdot_refusal_suggests_a_path_without_dotdot(dest: str, suggested: str) -> None:
    with pytest.raises(UnownableDestinationError) as raised:
        check_destination_shape(dest)
    assert f"(e.g. {suggested})" in str(raised.value)
    assert ".." not in str(raised.value).split("(e.g. ", 1)[1]


# -- the CLI refuses what the committers refuse -----------------------------------------------

def test_the_cli_refuses_a_bucket_root_abort_and_dotdot_before_any_request(
        capsys: pytest.CaptureFixture[str]) -> None:
    from zerorename.cli import main

    for argv in (["uploads", "abort", "s3://bucket"], ["uploads", "abort", "s3://bucket/"],
                 ["uploads", "list", "s3://bucket/../x"]):
        assert main(argv) == 2, argv
        err = capsys.readouterr().err
        assert "UnownableDestinationError" in err or "refused" in err or "path element" in err
    help_text = io.StringIO()
    with contextlib.redirect_stdout(help_text), pytest.raises(SystemExit):
        main(["uploads", "--help"])
    assert re.search(r"--older-than DURATION\s+only uploads initiated", help_text.getvalue())


# -- packaging and docs agree with the code ---------------------------------------------------

def test_the_spark_extra_asks_for_the_pyspark_the_stream_sink_needs() -> None:
    extra = tomllib.loads((REPO / "reference" / "pyproject.toml").read_text())[
        "project"]["optional-dependencies"]["spark"]
    pin = next(r for r in extra if r.startswith("pyspark"))
    low = tuple(int(p) for p in re.findall(r">=\s*([\d.]+)", pin)[0].split("."))
    import pyspark.sql.datasource as ds

    assert hasattr(ds, "DataSourceStreamArrowWriter")  # what streaming_writer imports
    assert low >= (4, 1), f"{pin}: DataSourceStreamArrowWriter is new in PySpark 4.1"


def test_every_job_id_source_is_documented() -> None:
    api = (REPO / "docs" / "user" / "api.md").read_text()
    sources = {zr.JobContext("s3://b/o", job_id="j").job_id_source,
               zr.JobContext("s3://b/o", options={"fs.s3a.committer.uuid": "u"}).job_id_source,
               zr.JobContext("s3://b/o", options={
                   "spark.sql.sources.writeJobUUID": "s"}).job_id_source,
               zr.JobContext("s3://b/o").job_id_source}
    assert len(sources) == 4
    for source in sources:
        assert f"`{source}`" in api, source


def test_stores_prose_agrees_with_its_generated_fenced_row() -> None:
    """The hand-written text beside the generated probe table must not call a store unable to
    fence where the table (and so ``auto`` and ``zerorename probe``) calls ``fenced`` safe."""
    page = (REPO / "docs" / "user" / "stores.md").read_text()
    begin, end = page.index("<!-- probe:begin"), page.index("<!-- probe:end -->")
    table = page[begin:end]
    header = next(line for line in table.splitlines() if line.startswith("| measurement |"))
    row = next(line for line in table.splitlines() if line.startswith("| **`fenced`"))
    columns = [c.strip() for c in header.strip("|").split("|")][1:]
    verdicts = [c.strip() for c in row.strip("|").split("|")][1:]
    safe = {name.split()[0].lower(): verdict.startswith("safe")
            for name, verdict in zip(columns, verdicts, strict=True)}
    prose = page[:begin] + page[end:]
    claims = re.compile(r"(cannot|unable to|never) fence|as a store that cannot")
    for sentence in re.split(r"(?<=[.!?])\s+", prose.replace("\n", " ")):
        if not claims.search(sentence):
            continue
        for store, is_safe in safe.items():
            if re.search(rf"\b{re.escape(store)}\b", sentence, re.I):
                assert not is_safe, f"stores.md says {store} cannot fence; its table: safe: " \
                                    f"{sentence!r}"
