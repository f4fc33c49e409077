"""PySpark integration: write DataFrames and RDDs through zerorename committers, no renames.

Two routes, both pure Python (Spark cannot load a Python ``commitProtocolClass``):

* :func:`write` / ``df.write.format("zerorename")`` — the Python Data Source API (Spark >= 4):
  tasks stream Parquet through the task committer, the driver commits exactly the winning
  attempts' task messages.
* :func:`zerorename.spark.rdd.write_rdd` — ``mapPartitionsWithIndex`` + ``collect`` + driver
  commit, for code built on RDDs.

See ``docs/spark.md`` for options, save modes and failure behaviour.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from .core import JobDriver, WriteSpec, make_store, output_exists, spec_from_options
from .datasource import NAME, ZeroRenameDataSource

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

__all__ = [
    "NAME",
    "JobDriver",
    "WriteSpec",
    "ZeroRenameDataSource",
    "register",
    "write",
]


def register(spark: SparkSession) -> None:
    """Register the ``zerorename`` data source with ``spark`` (idempotent)."""
    spark.dataSource.register(ZeroRenameDataSource)


def write(
    df: DataFrame,
    dest: str,
    committer: str = "magic",
    partition_by: Sequence[str] | str | None = None,
    mode: str = "append",
    format: str = "parquet",
    **options: Any,
) -> Any:
    """Write ``df`` to ``dest`` through ``committer``; return the parsed ``_SUCCESS``.

    ``mode``: ``append``, ``overwrite`` (conflict mode ``replace``; with the ``partitioned``
    committer only the partitions written are replaced), ``error`` (fail if output exists,
    before any task runs) or ``ignore`` (write nothing if output exists; returns ``None``).
    ``options``: ``endpoint_url``, ``region``, ``checksums`` (``when_required`` for non-AWS
    stores), ``part_size``, ``threads``, ``job_id``, ``compression``, ``abort_grace_seconds``,
    and any Hadoop-named committer option (``fs.s3a.committer.…``).  Credentials come from
    boto3's chain only.
    """
    if format != "parquet":
        raise ValueError(f"format {format!r}: zerorename.spark writes parquet only")
    register(df.sparkSession)
    spec = spec_from_options({**options, "path": dest, "committer": committer, "mode": mode,
                              "partition_by": partition_by or ()})
    store = make_store(spec)
    if spec.mode == "ignore" and output_exists(store, spec.dest):
        return None  # decided here, so no Spark job runs at all
    writer = df.write.format(NAME).mode("overwrite" if spec.mode == "overwrite" else "append")
    for key, value in options.items():
        writer = writer.option(key, str(value))
    if spec.partition_by:
        writer = writer.option("partition_by", ",".join(spec.partition_by))
    (writer.option("committer", committer).option("mode", spec.mode)
     .option("job_id", spec.job_id).save(spec.dest))
    import zerorename as zr

    return zr.read_success(store, spec.dest)
