"""The jars a Spark session needs for Hadoop's S3A connector and its committers.

PySpark's wheel ships Hadoop's client jars but not ``hadoop-aws`` (the ``s3a://`` filesystem
and its committers), the AWS SDK it calls, nor Spark's cloud binding (``PathOutputCommitProtocol``,
``BindingParquetOutputCommitter``, without which Spark's writers bypass the S3A committers).  A
session gets them one of two ways:

* **A folder of jars** (:func:`s3a_jars`): the project's build (``scripts/jvm-build.sh``, run
  by the README's set-up) resolves them with Maven into the cache
  (``$ZERORENAME_CACHE_DIR``, default ``~/.cache/zerorename``, under ``jvm/s3a-<key>/``), or
  the user names a folder of their own with ``ZERORENAME_S3A_JARS`` (the jars already on a
  cluster, or copied from a machine that has them).  Hand them to Spark with ``spark.jars``.
* **Maven coordinates** (:data:`S3A_PACKAGES` with :data:`S3A_EXCLUDES`): for
  ``spark.jars.packages`` / ``--packages``, where Spark's own resolver (Ivy) fetches them from
  Maven Central at every JVM start.  Without the exclusions it brings a second copy of what
  PySpark ships (Hadoop, netty, Jackson, httpclient) and ``spark-hadoop-cloud``'s Azure, GCS
  and Huawei connectors.

The set is the one ``jvm/s3a/pom.xml`` declares (a test holds the two equal): ``hadoop-aws``
of PySpark's Hadoop (3.5.0), the AWS SDK v2 modules it was released with (2.35.4) instead of
the 0.5 GB ``bundle``, and ``spark-hadoop-cloud_2.13`` 4.1.2 (Spark 4.3.0's own is not
published; 4.1.2's classes work in PySpark 4.3.0).
"""

from __future__ import annotations

import os
from pathlib import Path

from zerorename.errors import CommitError

__all__ = ["S3A_EXCLUDES", "S3A_JARS_ENV", "S3A_PACKAGES", "S3AJarsMissingError",
           "cache_dir", "s3a_jars"]

#: names a folder of S3A jars to use instead of the build's cache
S3A_JARS_ENV = "ZERORENAME_S3A_JARS"
#: the cache root of ``scripts/jvm-build.sh`` (default ``~/.cache/zerorename``)
CACHE_ENV = "ZERORENAME_CACHE_DIR"

HADOOP_VERSION = "3.5.0"
AWS_SDK_VERSION = "2.35.4"
SPARK_CLOUD_VERSION = "4.1.2"

#: Maven coordinates for ``spark.jars.packages`` / ``--packages`` (the direct dependencies of
#: ``jvm/s3a/pom.xml``)
S3A_PACKAGES: tuple[str, ...] = (
    f"org.apache.hadoop:hadoop-aws:{HADOOP_VERSION}",
    f"software.amazon.awssdk:s3:{AWS_SDK_VERSION}",
    f"software.amazon.awssdk:s3-transfer-manager:{AWS_SDK_VERSION}",
    f"software.amazon.awssdk:apache-client:{AWS_SDK_VERSION}",
    f"software.amazon.awssdk:netty-nio-client:{AWS_SDK_VERSION}",
    f"software.amazon.awssdk:sts:{AWS_SDK_VERSION}",
    f"org.apache.spark:spark-hadoop-cloud_2.13:{SPARK_CLOUD_VERSION}",
)

#: ``groupId:artifactId`` patterns for ``spark.jars.excludes``: what PySpark already ships, the
#: SDK's 0.5 GB bundle, and the other clouds' connectors ``spark-hadoop-cloud`` depends on.
#: Spark applies them to the whole resolution (``*`` is a wildcard).
S3A_EXCLUDES: tuple[str, ...] = (
    # Hadoop itself (PySpark ships hadoop-client-api/-runtime) and the other clouds
    "org.apache.hadoop:hadoop-client-api",
    "org.apache.hadoop:hadoop-client-runtime",
    "org.apache.hadoop:hadoop-common",
    "org.apache.hadoop:hadoop-azure",
    "org.apache.hadoop:hadoop-huaweicloud",
    "org.apache.hadoop:hadoop-cloud-storage",
    "com.google.cloud.bigdataoss:*",
    "software.amazon.awssdk:bundle",
    # spark-hadoop-cloud's other dependencies
    "org.eclipse.jetty:*",
    "com.squareup.okhttp3:*",
    "com.squareup.okio:*",
    "joda-time:*",
    # in PySpark's jars, in newer versions
    "com.fasterxml.jackson.core:*",
    "com.fasterxml.jackson.dataformat:*",
    "org.apache.httpcomponents:*",
    "io.netty:*",
    "org.slf4j:*",
    "commons-codec:*",
    "commons-logging:*",
)


class S3AJarsMissingError(CommitError):
    """The S3A jars (hadoop-aws, the AWS SDK, spark-hadoop-cloud) are not where they were
    looked for; the message names the place and the fix."""


def cache_dir() -> Path:
    """The cache root that ``scripts/jvm-build.sh`` writes to."""
    named = os.environ.get(CACHE_ENV)
    return Path(named) if named else Path.home() / ".cache" / "zerorename"


_FIX = (f"in a checkout, run scripts/jvm-build.sh (the README's set-up does); elsewhere set "
        f"{S3A_JARS_ENV} to a folder holding the jars, or let Spark fetch them: "
        f"spark.jars.packages / --packages (python -m zerorename.spark.jvm --packages prints "
        f"the coordinates and exclusions)")


def s3a_jars() -> list[Path]:
    """The S3A jars, sorted by name: from the folder ``ZERORENAME_S3A_JARS`` names, else from
    the build's cache.  Raises :class:`S3AJarsMissingError` naming the folder and the fix
    when they are not there (a folder without ``hadoop-aws`` counts as not there)."""
    named = os.environ.get(S3A_JARS_ENV)
    if named:
        folder = Path(named)
        where = f"{folder} (from {S3A_JARS_ENV})"
    else:
        pointer = cache_dir() / "jvm" / "s3a-current"
        try:
            folder = Path(pointer.read_text(encoding="utf-8").strip())
        except OSError:
            raise S3AJarsMissingError(str(pointer), f"no S3A jars have been fetched into the "
                                      f"cache; {_FIX}") from None
        if not (folder / ".complete").is_file():
            raise S3AJarsMissingError(str(folder), f"the cached S3A jars are incomplete or "
                                      f"gone; {_FIX}")
        where = str(folder)
    if not folder.is_dir():
        raise S3AJarsMissingError(where, f"not a folder; {_FIX}")
    jars = sorted(folder.glob("*.jar"), key=lambda p: p.name)
    if not any(p.name.startswith("hadoop-aws-") for p in jars):
        raise S3AJarsMissingError(where, f"holds no hadoop-aws jar ({len(jars)} jars); {_FIX}")
    return jars
