"""Writer options are checked, and a failed Spark write surfaces as a CommitError — no Spark.

These run without a SparkSession (and without the ``spark`` mark): the checks live in pure
functions that :func:`zerorename.spark.write` and the Data Source both call.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from typing import Any

import pytest

import zerorename as zr
import zerorename.spark as zrs
from zerorename.spark.core import (
    OPTION_NAMES,
    SparkJobError,
    WriteOptionError,
    spark_job_error,
    spec_from_options,
)

DEST = "s3://bucket/events"


@pytest.mark.parametrize(("options", "named"), [
    ({"comitter": "directory"}, "comitter"),           # a typo must not silently mean magic
    ({"partitionBy": "year", "colour": "red"}, "colour"),
    ({"spark.sql.files.maxRecordsPerFile": "10"}, "spark.sql.files.maxrecordsperfile"),
])
def test_unknown_options_are_refused_naming_the_valid_ones(options: dict[str, Any],
                                                           named: str) -> None:
    with pytest.raises(WriteOptionError) as caught:
        spec_from_options({"path": DEST, **options})
    message = str(caught.value)
    assert isinstance(caught.value, zr.CommitError)
    assert caught.value.path == DEST
    assert repr(named) in message
    assert all(name in message for name in ("committer", "partition_by", "endpoint_url"))


@pytest.mark.parametrize(("option", "value", "expected"), [
    ("format", "csv", "parquet"),                      # Parquet is all the writer produces
    ("committer", "directroy", "partitioned"),
    ("compression", "lzma", "zstd"),
    ("checksums", "always", "when_required"),
    ("mode", "upsert", "overwrite"),
    ("max_open_files", "many", "integer"),
    ("abort_grace_seconds", "soon", "number"),
])
def test_unsupported_option_values_are_refused_naming_the_valid_ones(
        option: str, value: str, expected: str) -> None:
    with pytest.raises(WriteOptionError) as caught:
        spec_from_options({"path": DEST, option: value})
    assert repr(value) in str(caught.value) and expected in str(caught.value)
    assert caught.value.path == DEST


def test_valid_options_pass_including_hadoop_names_and_parquet_format() -> None:
    spec = spec_from_options({"path": DEST, "format": "PARQUET", "committer": "Directory",
                              "compression": "zstd", "fs.s3a.committer.threads": "4",
                              "mapreduce.manifest.committer.io.threads": "2",
                              "checksums": "default", "partitionby": "year"})
    assert spec.committer == "directory" and spec.compression == "zstd"
    assert spec.partition_by == ("year",)
    assert spec.committer_options["fs.s3a.committer.threads"] == "4"
    assert {"committer", "format", "partition_by"} <= OPTION_NAMES


def test_write_checks_options_before_touching_spark() -> None:
    """``zrs.write`` refuses a typo in the caller's process, typed, before any Spark call
    (the DataFrame here is not even a DataFrame)."""
    with pytest.raises(zr.CommitError, match="comitter"):
        zrs.write(object(), DEST, comitter="directory")  # type: ignore[arg-type]
    with pytest.raises(zr.CommitError, match="csv"):
        zrs.write(object(), DEST, format="csv")  # type: ignore[arg-type]


#: The shape of what PySpark 4.3 raises when the Data Source's ``writer()`` fails: Spark's
#: headline, the worker's Python traceback, then the JVM's stack (abridged here).
SPARK_MESSAGE = textwrap.dedent("""\
    An error occurred while calling o123.save.
    : org.apache.spark.sql.AnalysisException: [PYTHON_DATA_SOURCE_ERROR] Failed to create \
    Python data source writer: Traceback (most recent call last):
      File "/venv/lib/python3.11/site-packages/pyspark/sql/worker/write_into_data_source.py", \
    line 194, in main
        writer = data_source.writer(schema, overwrite)
      File "/work/reference/zerorename/spark/datasource.py", line 83, in writer
        spec = JobDriver(spec).setup()
    zerorename.errors.CommitError: s3://bucket/events: the v1 committer publishes by rename, \
    and this store cannot rename
     SQLSTATE: 38000
    \tat org.apache.spark.sql.errors.QueryCompilationErrors$.pythonDataSourceError(...)
    """) + "\tat org.apache.spark.sql.Dataset.ofRows(Dataset.scala:100)\n" * 40


def test_a_spark_failure_becomes_a_commit_error_with_the_zerorename_cause_first() -> None:
    spark_error = RuntimeError(SPARK_MESSAGE)
    error = spark_job_error(DEST, spark_error)
    assert isinstance(error, SparkJobError) and isinstance(error, zr.CommitError)
    assert error.path == DEST and error.spark_error is spark_error
    assert error.cause_type == "zerorename.errors.CommitError"
    assert str(error).startswith(
        f"{DEST}: CommitError: s3://bucket/events: the v1 committer publishes by rename")
    assert len(str(error)) < 300  # the cause, not Spark's 2,000-character trace


def test_a_spark_failure_without_a_python_cause_keeps_sparks_headline() -> None:
    spark_error = RuntimeError("An error occurred while calling o9.save.\n: "
                               "java.lang.OutOfMemoryError: Java heap space\n\tat x.y(z)\n")
    error = spark_job_error(DEST, spark_error)
    assert error.cause_type is None
    assert "java.lang.OutOfMemoryError: Java heap space" in str(error)
    assert "\tat x.y" not in str(error)


def test_importing_zerorename_spark_without_pyarrow_names_the_extra() -> None:
    """``None`` in ``sys.modules`` makes ``import pyarrow`` fail as if it were not installed."""
    probe = "import sys; sys.modules['pyarrow'] = None; import zerorename.spark"
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                            timeout=120, check=False)
    assert result.returncode != 0
    last_line = result.stderr.strip().splitlines()[-1]
    assert last_line.startswith("ImportError:")
    assert "pyarrow" in last_line and '"./reference[spark]"' in last_line
