"""The two ways in: ``format("zerorename")`` in a fresh session, and ``zrs.write``'s errors."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

import zerorename as zr
import zerorename.spark as zrs

from .helpers import events, leftovers

pytestmark = [pytest.mark.spark, pytest.mark.slow]

#: What the README shows, verbatim apart from the destination and the session's settings
#: (loopback, no UI: a test machine), run in a new interpreter: the package's own session
#: has the source registered already, so only a fresh process shows what a user meets.
FRESH_SESSION = textwrap.dedent("""\
    import sys
    import zerorename.spark  # makes format("zerorename") work in any session
    from pyspark.sql import SparkSession

    spark = (SparkSession.builder.master("local[2]")
             .config("spark.ui.enabled", "false")
             .config("spark.driver.host", "127.0.0.1")
             .config("spark.driver.bindAddress", "127.0.0.1")
             .getOrCreate())
    dest = sys.argv[1]
    df = spark.range(0, 40, 1, 2).selectExpr("id", "cast(id % 3 as int) as part")
    (df.write.format("zerorename")
       .option("committer", "magic").option("partition_by", "part")
       .mode("append")
       .save(dest))
    back = spark.read.format("zerorename").load(dest).toPandas()  # pandas: the spark extra
    print(sorted(zip(back["id"].tolist(), back["part"].tolist(), strict=True)))
    spark.stop()
    """)


def test_format_works_in_a_fresh_session_created_after_the_import(tmp_path: Path) -> None:
    dest = f"file://{tmp_path}/events"
    result = subprocess.run([sys.executable, "-c", FRESH_SESSION, dest], capture_output=True,
                            text=True, timeout=300, check=False, env=dict(os.environ))
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip().splitlines()[-1] == str([(i, i % 3) for i in range(40)])
    success = zr.read_success(zr.LocalStore(), dest)
    assert success.committer == "magic"


def test_a_failed_write_is_a_commit_error_that_leads_with_the_cause(
        spark: Any, s3: Any, bucket: str) -> None:
    """``v1`` refuses S3 (it would copy every byte) inside Spark's ``writer()`` worker: the
    caller gets a CommitError that starts with that reason, not Spark's traceback."""
    dest = f"s3://{bucket}/events"
    with pytest.raises(zr.CommitError) as caught:
        zrs.write(events(spark, rows=20), dest, committer="v1", endpoint_url=s3.endpoint)
    error = caught.value
    assert isinstance(error, zrs.SparkJobError)
    assert error.cause_type == "zerorename.errors.CommitError"
    assert str(error).startswith(f"{dest}: CommitError: {dest}: the v1 committer publishes")
    assert len(str(error)) < 400 and len(str(error.spark_error)) > len(str(error))
    assert leftovers(s3, bucket, "events") == ([], [])
