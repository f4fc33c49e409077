"""PySpark's worker daemon, with zerorename's dependencies imported once, before it forks.

Spark starts one daemon per executor (``pyspark.daemon``) and forks a Python worker from it
for each task; a worker that dies — and fault tests kill many — is replaced by a fresh fork
that must import pyarrow, boto3 and zerorename again (seconds on a busy 2-core machine).
Importing them in the daemon makes every fork start with them loaded (copy-on-write).  Only
modules are imported: no client, thread or connection exists before the fork.

Enabled by :func:`zerorename.spark.session.local_session` through
``spark.python.daemon.module=zerorename.spark.daemon``; any session may set it.
"""

from __future__ import annotations

import boto3  # noqa: F401
import pyarrow.compute  # type: ignore[import-untyped]
import pyarrow.parquet  # type: ignore[import-untyped]  # noqa: F401
from pyspark import daemon

import zerorename.spark.datasource  # noqa: F401

if __name__ == "__main__":
    daemon.manager()
