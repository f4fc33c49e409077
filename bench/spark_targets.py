"""Where ``bench/spark_write.py --versus-native`` writes: its targets (stores, buckets, S3A
committers) and the one Spark session that reaches them all.

Split from :mod:`spark_native` (what is measured) by concern: this module sets the routes up.
Spark's own writer to ``s3a://`` runs through S3A's ``magic`` and ``directory`` committers on
their buckets (S3A's defaults), and through zerorename's JVM ``fenced`` and the benchmark's
``minimal`` committer (``zerorename.bench.MinimalCommitter``, in the research jar: the lower
bound, each file's upload completed by the driver and ``_SUCCESS``, nothing else) on buckets
whose filesystems keep S3A's magic commits in memory.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

#: S3A's committers in the anchor rows (``partitioned`` is ``directory`` with a per-partition
#: conflict check: the same requests for a fresh destination)
S3A_COMMITTERS = ("magic", "directory")
#: and zerorename's committer inside the same writer (the JVM ``fenced``, zerorename's jar),
#: on moto and on Ceph RGW (which fences its PUTs; its complete ignores the condition, so the
#: committer checks with a HEAD before each complete there, as the Python store does)
JVM_COMMITTERS = ("fenced",)
#: the benchmark's own committer inside the same writer, the lower bound of the JVM rows
#: (research jar; its _SUCCESS names it, and is not zerorename's)
BENCH_COMMITTERS = ("minimal",)
#: the JVM rows' own buckets: their filesystems keep S3A's magic commits in memory (as
#: ``zerorename.spark.s3a.configure(..., "fenced")`` sets it), while S3A's ``magic`` rows keep
#: S3A's default (a ``.pending`` object per file) on the other buckets
JVM_BUCKET_MOTO = "bench-s3a-fenced-moto"
JVM_BUCKET_RGW = "bench-s3a-fenced-rgw"
#: Spark's commit-protocol settings: its defaults (``native``) and the cloud binding (S3A)
PROTOCOL_KEY = "spark.sql.sources.commitProtocolClass"
PARQUET_COMMITTER_KEY = "spark.sql.parquet.output.committer.class"
SPARK_PROTOCOL = "org.apache.spark.sql.execution.datasources.SQLHadoopMapReduceCommitProtocol"
SPARK_PARQUET_COMMITTER = "org.apache.parquet.hadoop.ParquetOutputCommitter"
#: the minimal committer's protocol and factory (one write's settings, as ``fenced``'s)
MINIMAL_PROTOCOL = "zerorename.bench.MinimalCommitProtocol"
MINIMAL_FACTORY = "zerorename.bench.MinimalCommitterFactory"


@dataclass(frozen=True)
class Target:
    """Where a strategy writes: a URL prefix and the options zerorename needs to reach it.

    ``kind`` ``s3a``: Spark's own writer to ``prefix`` (``s3a://bucket``) through S3A's
    ``committer``; ``options`` then only serve to list what it wrote.  ``counts`` reads the
    server's request counts (None: nobody counts, e.g. the local disk)."""

    name: str
    prefix: str
    options: dict[str, str]
    committer: str = "fenced"
    kind: str = "zr"
    counts: Callable[[], dict[str, int]] | None = field(default=None, compare=False)

    @property
    def listing_prefix(self) -> str:
        """The prefix as zerorename's stores name it (``s3a://`` is S3 to them)."""
        return "s3://" + self.prefix[len("s3a://"):] if self.kind == "s3a" else self.prefix


@dataclass
class Routes:
    """What :func:`set_up` made: the targets by strategy name, and the S3A endpoints by
    bucket (the session's per-bucket options)."""

    targets: dict[str, Target]
    s3a_endpoints: dict[str, Any] = field(default_factory=dict)


def write_settings(committer: str) -> tuple[str, dict[str, str]]:
    """The commit protocol and the write options of Spark's writer through ``committer``:
    as ``zerorename.spark.s3a`` gives users for S3A's and zerorename's, the research jar's
    for ``minimal``."""
    from zerorename.spark.s3a import FACTORY_KEY, committer_conf, committer_options

    if committer in BENCH_COMMITTERS:
        return MINIMAL_PROTOCOL, {FACTORY_KEY: MINIMAL_FACTORY}
    return committer_conf(committer)[PROTOCOL_KEY], committer_options(committer)


def _s3a_routes(routes: Routes, store: str, options: dict[str, str],
                counts: Callable[[], dict[str, int]] | None, committers: Sequence[str],
                bucket: str, jvm_bucket: str) -> None:
    for committer in committers:
        name = f"s3a-{committer}-{store}"
        own = committer in JVM_COMMITTERS + BENCH_COMMITTERS
        routes.targets[name] = Target(name, f"s3a://{jvm_bucket if own else bucket}", options,
                                      committer, "s3a", counts)


def set_up(report: dict[str, Any], scratch: Path, moto: Any, rgw: Any, no_moto: bool,
           s3a_jars: list[Path] | None, research_jar: Path | None) -> Routes:
    """Every route of the run: the local disk, moto, a Ceph RGW (``rgw``: a server, a reason
    it did not start, or None), S3A's and the JVM committers' when their jars are built; notes
    on what is not measured go into ``report``."""
    from servers import RGWRequestLog

    routes = Routes({"zr-local": Target("zr-local", f"file://{scratch}/zr", {}),
                     "zr-local-spark-encoder": Target("zr-local-spark-encoder",
                                                      f"file://{scratch}/zr-se",
                                                      {"encoder": "spark"})})
    committers = S3A_COMMITTERS + JVM_COMMITTERS
    if research_jar is not None:
        committers += BENCH_COMMITTERS
    if isinstance(rgw, str):
        report["rgw"] = f"not measured: {rgw}"
    elif rgw is not None:
        os.environ["AWS_ACCESS_KEY_ID"] = rgw.access_key  # moto accepts any key
        os.environ["AWS_SECRET_ACCESS_KEY"] = rgw.secret_key
        log = RGWRequestLog.of(rgw)
        url = rgw.url if rgw.tls is None else rgw.tls.url
        if rgw.tls is not None:  # boto3, here and in the Python workers (started later)
            os.environ["AWS_CA_BUNDLE"] = rgw.tls.ca_bundle
        rgw_options = {"endpoint_url": url, "checksums": "when_required"}
        rgw_counts = log.counts if log is not None else None
        routes.targets["zr-rgw"] = Target("zr-rgw", "s3://bench-rgw", rgw_options, "magic",
                                          counts=rgw_counts)
        report["rgw"] = rgw.note + (", over HTTPS" if rgw.tls is not None else "")
        if s3a_jars is not None:
            if rgw.tls is None:
                report["s3a_rgw"] = ("not measured: this RGW serves no HTTPS, and S3A "
                                     "cannot write empty objects to it over http")
            else:
                from zerorename.spark.s3a import S3AEndpoint

                truststore = Path(rgw.tls.truststore) if rgw.tls.truststore else None
                routes.s3a_endpoints["bench-s3a-rgw"] = S3AEndpoint(
                    url, rgw.access_key, rgw.secret_key, truststore=truststore,
                    truststore_password=rgw.tls.truststore_password,
                    conditional_writes=False)  # RGW 16.2 ignores conditional complete
                # the JVM fenced needs S3A's conditional writes on (its own store check
                # decides what RGW honours)
                routes.s3a_endpoints[JVM_BUCKET_RGW] = S3AEndpoint(
                    url, rgw.access_key, rgw.secret_key, truststore=truststore,
                    truststore_password=rgw.tls.truststore_password)
                _s3a_routes(routes, "rgw", rgw_options, rgw_counts, committers,
                            "bench-s3a-rgw", JVM_BUCKET_RGW)
    os.environ.setdefault("AWS_ACCESS_KEY_ID", "testing")
    os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "testing")
    os.environ.setdefault("AWS_DEFAULT_REGION", "us-east-1")
    if not no_moto:
        moto_options = {"endpoint_url": moto.endpoint()}
        routes.targets["zr-moto"] = Target("zr-moto", "s3://bench-moto", moto_options,
                                           counts=moto.counts)
        if s3a_jars is not None:
            from zerorename.spark.s3a import S3AEndpoint

            routes.s3a_endpoints["bench-s3a-moto"] = S3AEndpoint(
                moto.endpoint(), os.environ["AWS_ACCESS_KEY_ID"],
                os.environ["AWS_SECRET_ACCESS_KEY"])
            routes.s3a_endpoints[JVM_BUCKET_MOTO] = routes.s3a_endpoints["bench-s3a-moto"]
            _s3a_routes(routes, "moto", moto_options, moto.counts, committers,
                        "bench-s3a-moto", JVM_BUCKET_MOTO)
    return routes


def make_buckets(targets: dict[str, Target]) -> None:
    from zerorename.stores import make_s3_client

    buckets = {t.listing_prefix[len("s3://"):]: t.options["endpoint_url"]
               for t in targets.values() if t.listing_prefix.startswith("s3://")}
    for bucket, endpoint_url in buckets.items():
        client = make_s3_client(endpoint_url=endpoint_url, checksums="when_required")
        client.create_bucket(Bucket=bucket)


def s3a_jar_set(report: dict[str, Any]) -> list[Path] | None:
    """The S3A jar set, or None (and why, in the report) when it is not built."""
    from zerorename.spark.jars import S3AJarsMissingError, s3a_jars

    try:
        return list(s3a_jars())
    except S3AJarsMissingError as exc:
        report["s3a"] = f"not measured: {exc}"
        return None


def research_jar(report: dict[str, Any]) -> Path | None:
    """The research jar (the minimal committer), or None (and why, in the report)."""
    from zerorename_bridge.hadoop.session import RESEARCH_JAR

    if RESEARCH_JAR.is_file():
        return RESEARCH_JAR
    report["minimal"] = (f"not measured: {RESEARCH_JAR} is not built "
                         f"(bash scripts/jvm-build.sh)")
    return None


def s3a_session_conf(endpoints: dict[str, Any], jars: Sequence[Path],
                     in_memory: Sequence[str] = (),
                     research: Path | None = None) -> dict[str, str]:
    """Spark conf for S3A writes to several endpoints from one session: ``jars``, S3A's
    committer factory for ``s3a://``, each endpoint's options for its bucket only
    (``fs.s3a.bucket.<bucket>.*``), a JVM trust store for an HTTPS one, and Spark's default
    commit protocol, which :func:`spark_native.s3a_write` switches for its writes alone.  The
    buckets ``in_memory`` keep S3A's magic commits in memory (only the JVM committers write
    there: they ask the bucket's filesystem; S3A's magic committer would ask the job).
    ``research``: the research jar too (the minimal committer)."""
    from zerorename.spark.s3a import (
        FACTORY_CLASS,
        MAGIC_IN_MEMORY,
        endpoint_conf,
        zerorename_jar,
    )

    # zerorename's jar first: its committer factory for the JVM fenced rows (a write's option)
    first = [zerorename_jar()] + ([research] if research is not None else [])
    conf = {"spark.jars": ",".join(str(p) for p in [*first, *jars]),
            "spark.hadoop.mapreduce.outputcommitter.factory.scheme.s3a": FACTORY_CLASS,
            # fail rather than fall back to Spark's renaming committer if the binding breaks
            "spark.hadoop.pathoutputcommit.reject.fileoutput": "true",
            PROTOCOL_KEY: SPARK_PROTOCOL, PARQUET_COMMITTER_KEY: SPARK_PARQUET_COMMITTER}
    hadoop = "spark.hadoop.fs.s3a."
    for bucket, endpoint in endpoints.items():
        for key, value in endpoint_conf(endpoint).items():
            if key.startswith(hadoop):
                conf[f"{hadoop}bucket.{bucket}.{key[len(hadoop):]}"] = value
            elif key in conf and conf[key] != value:
                raise ValueError(f"{key}: two endpoints need different values "
                                 f"({conf[key]!r}, {value!r})")
            else:
                conf[key] = value
    for bucket in in_memory:
        conf[f"{hadoop}bucket.{bucket}.{MAGIC_IN_MEMORY[len('fs.s3a.'):]}"] = "true"
    return conf
