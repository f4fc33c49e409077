"""A Spark session whose own writers commit to ``s3a://`` through Hadoop's S3A committers.

This is the route beside zerorename's: Spark's ``df.write.parquet("s3a://…")`` with S3A's
``magic``, ``directory`` or ``partitioned`` committer, against AWS S3 or a store of your own
(a moto server, Ceph RGW, MinIO).  It needs the S3A jars (:mod:`zerorename.spark.jars`) on the
session's class path *before the JVM starts*, Spark's cloud binding selected for the session,
and S3A pointed at the endpoint::

    from pyspark.sql import SparkSession
    from zerorename.spark.s3a import S3AEndpoint, configure

    endpoint = S3AEndpoint("http://127.0.0.1:9000", access_key="…", secret_key="…")
    spark = configure(SparkSession.builder.master("local[2]"), endpoint).getOrCreate()
    df.write.parquet("s3a://bucket/out")              # the magic committer

**Switching committers in one session.**  The commit protocol (Spark's
``PathOutputCommitProtocol``, or zerorename's subclass of it for ``fenced``/``auto``) is chosen
per session; the S3A committer is chosen per job, from
the job's Hadoop configuration, which Spark builds from the session's Hadoop configuration and
the write's options.  So one session serves all three: pass :func:`committer_options` to a
write (``df.write.options(**committer_options("directory"))``), or change the session's default
with :func:`use_committer`.

**zerorename's own committers** run inside the same writers: ``committer="fenced"`` binds
zerorename's JVM ``fenced`` committer (``io.zerorename.committer.FencedCommitterFactory``, in
the jar the wheel carries): every commit decision one conditional PUT, the records and
``_SUCCESS`` of the Python ``fenced``, dynamic partition overwrite.  ``committer="auto"`` takes
``fenced`` where the store fences and S3A's magic committer (set not to abort other jobs'
uploads) where it does not, with the reason in the driver's log and in ``_SUCCESS``.

**What each committer promises** is the subject of the README's committer matrix; this module
only wires them up.  ``conditional_writes`` is S3A's own overwrite check at ``close()``
(``fs.s3a.create.conditional.enabled``); its job commit sends no condition either way.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from zerorename import options as O
from zerorename.errors import CommitError

from .jars import S3A_EXCLUDES, S3A_PACKAGES, S3AJarsMissingError, s3a_jars

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = ["COMMITTERS", "CONFLICT_MODES", "ZERORENAME_COMMITTERS",
           "ZERORENAME_PROTOCOL_CLASS", "S3AEndpoint", "S3AOptionError", "committer_conf",
           "committer_options", "configure", "endpoint_conf", "jar_conf", "require_s3a",
           "s3a_conf", "use_committer", "zerorename_jar"]

#: S3A's committers that write to S3 without renames (``file``, its default, renames)
COMMITTERS = ("magic", "directory", "partitioned")
#: zerorename's committers for Spark's writers (the JVM ``fenced``, and ``auto``)
ZERORENAME_COMMITTERS = ("fenced", "auto")
#: what the staging committers (``directory``, ``partitioned``) do with existing output
CONFLICT_MODES = ("append", "replace", "fail")

PROTOCOL_CLASS = "org.apache.spark.internal.io.cloud.PathOutputCommitProtocol"
#: Spark's cloud commit protocol whose task commit messages carry the ``fenced`` committer's
#: task records to the job commit (no listing, no reading back); any other committer runs
#: under it as under :data:`PROTOCOL_CLASS`.  In zerorename's jar; set for ``fenced``/``auto``
ZERORENAME_PROTOCOL_CLASS = "io.zerorename.spark.FencedCommitProtocol"
PARQUET_COMMITTER_CLASS = "org.apache.spark.internal.io.cloud.BindingParquetOutputCommitter"
FACTORY_CLASS = "org.apache.hadoop.fs.s3a.commit.S3ACommitterFactory"
FILESYSTEM_CLASS = "org.apache.hadoop.fs.s3a.S3AFileSystem"
ZERORENAME_FACTORY_CLASS = "io.zerorename.committer.FencedCommitterFactory"
FACTORY_KEY = "mapreduce.outputcommitter.factory.scheme.s3a"
#: zerorename's option naming its committer (``fenced`` or ``auto``)
ZERORENAME_COMMITTER = "fs.zerorename.committer"
CREDENTIALS_PROVIDER = "org.apache.hadoop.fs.s3a.SimpleAWSCredentialsProvider"

#: Hadoop option names (S3A 3.5.0)
COMMITTER_NAME = "fs.s3a.committer.name"
CONFLICT_MODE = O.CONFLICT_MODE.name
MAGIC_ENABLED = O.MAGIC_ENABLED.name
#: S3A keeps each magic file's upload in the writing JVM (set for ``fenced``/``auto``)
MAGIC_IN_MEMORY = O.MAGIC_IN_MEMORY.name


class S3AOptionError(CommitError, ValueError):
    """An S3A committer name, conflict mode or endpoint that this helper cannot use."""


@dataclass(frozen=True)
class S3AEndpoint:
    """Where S3A sends its requests, and how."""

    url: str                      # http://127.0.0.1:PORT or https://...
    access_key: str
    secret_key: str
    region: str = "us-east-1"
    path_style: bool = True
    truststore: Path | None = None          # JKS holding a self-signed server certificate (TLS)
    truststore_password: str = "changeit"
    conditional_writes: bool = True         # fs.s3a.create.conditional.enabled

    def __post_init__(self) -> None:
        if not self.url.startswith(("http://", "https://")):
            raise S3AOptionError(self.url, "an S3A endpoint is an http:// or https:// URL")
        if self.truststore is not None and not self.url.startswith("https://"):
            raise S3AOptionError(self.url, f"a truststore ({self.truststore}) is for an "
                                 f"https:// endpoint")

    @property
    def tls(self) -> bool:
        return self.url.startswith("https://")


def _hadoop(conf: dict[str, str]) -> dict[str, str]:
    """Hadoop keys as Spark conf keys."""
    return {f"spark.hadoop.{key}": value for key, value in conf.items()}


def _flag(value: bool) -> str:
    return "true" if value else "false"


def committer_options(committer: str = "magic", *,
                      conflict_mode: str | None = None) -> dict[str, str]:
    """The Hadoop options that choose S3A's committer for one job: pass them to a write
    (``df.write.options(**…)``) or set them in the session's Hadoop configuration
    (:func:`use_committer`).  ``conflict_mode`` (``append``, ``replace``, ``fail``) is for the
    staging committers (``directory``, ``partitioned``).  ``fenced`` and ``auto`` are
    zerorename's (their options also name zerorename's committer factory)."""
    if committer in ZERORENAME_COMMITTERS:
        if conflict_mode is not None:
            raise S3AOptionError(conflict_mode, f"a conflict mode is for S3A's staging "
                                 f"committers (directory, partitioned), not {committer}")
        return {ZERORENAME_COMMITTER: committer, FACTORY_KEY: ZERORENAME_FACTORY_CLASS}
    if committer not in COMMITTERS:
        raise S3AOptionError(committer, f"not an S3A committer this helper binds; choose one "
                             f"of {', '.join(COMMITTERS + ZERORENAME_COMMITTERS)}")
    options = {COMMITTER_NAME: committer}
    if committer == "magic":
        options[MAGIC_ENABLED] = "true"
    if conflict_mode is not None:
        if committer == "magic":
            raise S3AOptionError(conflict_mode, "a conflict mode is for the staging "
                                 "committers (directory, partitioned), not magic")
        if conflict_mode not in CONFLICT_MODES:
            raise S3AOptionError(conflict_mode, f"not a conflict mode; choose one of "
                                 f"{', '.join(CONFLICT_MODES)}")
        options[CONFLICT_MODE] = conflict_mode
    return options


def committer_conf(committer: str = "magic", *,
                   conflict_mode: str | None = None) -> dict[str, str]:
    """The session's Spark conf that routes Spark's file writers to ``s3a://`` through S3A's
    committer ``committer`` (Spark's cloud commit protocol, its Parquet binding, the
    committer factory for the ``s3a`` scheme: S3A's, or zerorename's for ``fenced``/``auto``).
    For ``fenced``/``auto`` the protocol is zerorename's subclass of Spark's
    (:data:`ZERORENAME_PROTOCOL_CLASS`): each task's commit message carries its record to the
    job commit, which then lists and reads none; S3A's committers run under it unchanged, so
    such a session still switches committers per write.

    For ``fenced``/``auto`` it also turns on S3A's in-memory magic tracking
    (:data:`MAGIC_IN_MEMORY`): a task's files then leave no ``.pending`` object and no marker
    in the store, and the task commit reads their uploads from the task's JVM.  It is a
    session setting, never a write's option: S3A reads it from the filesystem's own
    configuration (made once per bucket), the magic committer ``auto`` may pick reads it from
    the job's, and the two must agree.  Without it ``fenced`` reads the ``.pending`` objects."""
    zerorename = committer in ZERORENAME_COMMITTERS
    conf = {
        "spark.sql.sources.commitProtocolClass":
            ZERORENAME_PROTOCOL_CLASS if zerorename else PROTOCOL_CLASS,
        "spark.sql.parquet.output.committer.class": PARQUET_COMMITTER_CLASS,
        f"spark.hadoop.{FACTORY_KEY}": FACTORY_CLASS,
        **_hadoop(committer_options(committer, conflict_mode=conflict_mode)),
    }
    if zerorename:
        conf[f"spark.hadoop.{MAGIC_IN_MEMORY}"] = "true"
    return conf


def endpoint_conf(endpoint: S3AEndpoint) -> dict[str, str]:
    """The Spark conf that points S3A at ``endpoint``: URL, region, addressing, static keys,
    TLS, the checksum settings stores other than AWS need, S3A's conditional overwrite check."""
    conf = _hadoop({
        "fs.s3a.endpoint": endpoint.url,
        "fs.s3a.endpoint.region": endpoint.region,
        "fs.s3a.path.style.access": _flag(endpoint.path_style),
        "fs.s3a.connection.ssl.enabled": _flag(endpoint.tls),
        "fs.s3a.aws.credentials.provider": CREDENTIALS_PROVIDER,
        "fs.s3a.access.key": endpoint.access_key,
        "fs.s3a.secret.key": endpoint.secret_key,
        # AWS SDK >= 2.30 sends CRC32 checksums (trailers) that other stores reject; S3A 3.5.0
        # keeps them off by default, said here so a site-wide default cannot turn them on
        "fs.s3a.checksum.generation": "false",
        "fs.s3a.checksum.validation": "false",
        "fs.s3a.request.md5.header": "true",
        O.CONDITIONAL_ENABLED.name: _flag(endpoint.conditional_writes),
    })
    if endpoint.truststore is not None:
        trust = (f"-Djavax.net.ssl.trustStore={endpoint.truststore} "
                 f"-Djavax.net.ssl.trustStorePassword={endpoint.truststore_password}")
        conf["spark.driver.extraJavaOptions"] = trust
        conf["spark.executor.extraJavaOptions"] = trust
    return conf


def jar_conf(source: Literal["local", "packages"] = "local") -> dict[str, str]:
    """How the session gets the S3A jars: ``local``, the folder :func:`s3a_jars` finds
    (``spark.jars``; :class:`S3AJarsMissingError` when there is none), or ``packages``, Maven
    coordinates Spark resolves at start-up (``spark.jars.packages`` with the exclusions)."""
    if source == "local":
        return {"spark.jars": ",".join(str(p) for p in s3a_jars())}
    if source == "packages":
        return {"spark.jars.packages": ",".join(S3A_PACKAGES),
                "spark.jars.excludes": ",".join(S3A_EXCLUDES)}
    raise S3AOptionError(str(source), "the S3A jars come from 'local' (a folder) or "
                         "'packages' (Maven coordinates)")


def s3a_conf(endpoint: S3AEndpoint, committer: str = "magic", *,
             conflict_mode: str | None = None,
             jars: Literal["local", "packages"] = "local") -> dict[str, str]:
    """Every Spark conf key a session needs to write through S3A's ``committer`` to
    ``endpoint``: the jars (:func:`jar_conf`), the committer binding (:func:`committer_conf`)
    and the endpoint (:func:`endpoint_conf`).  Set them before the session's JVM starts."""
    conf = {**jar_conf(jars), **committer_conf(committer, conflict_mode=conflict_mode),
            **endpoint_conf(endpoint)}
    if committer in ZERORENAME_COMMITTERS:
        conf["spark.jars"] = ",".join(
            [str(zerorename_jar()), *filter(None, [conf.get("spark.jars", "")])])
    return conf


def zerorename_jar() -> Path:
    """zerorename's jar (its committers for ``fenced``/``auto``), shipped in the wheel."""
    from .jvm import packaged_jar

    return packaged_jar()


def configure(builder: SparkSession.Builder, endpoint: S3AEndpoint, committer: str = "magic",
              *, conflict_mode: str | None = None,
              jars: Literal["local", "packages"] = "local") -> SparkSession.Builder:
    """``builder`` with :func:`s3a_conf` set.  The jars reach the driver only when this
    builder starts the JVM: in a Python process that already ran a session without them,
    ``s3a://`` stays unknown (:func:`require_s3a` says so)."""
    for key, value in s3a_conf(endpoint, committer, conflict_mode=conflict_mode,
                               jars=jars).items():
        builder = builder.config(key, value)
    return builder


def use_committer(spark: SparkSession, committer: str, *,
                  conflict_mode: str | None = None) -> None:
    """Make ``committer`` the S3A committer of the session's next jobs (a write's own
    :func:`committer_options` still win).  Clears a conflict mode not given."""
    options = committer_options(committer, conflict_mode=conflict_mode)
    hadoop = spark.sparkContext._jsc.hadoopConfiguration()
    if CONFLICT_MODE not in options:
        hadoop.unset(CONFLICT_MODE)
    if FACTORY_KEY not in options:  # S3A's: its factory again (a fenced session switched)
        options = {**options, FACTORY_KEY: FACTORY_CLASS}
    for key, value in options.items():
        hadoop.set(key, value)


def require_s3a(spark: SparkSession) -> None:
    """Raise :class:`S3AJarsMissingError` unless the session's driver can load S3A's
    filesystem and Spark's cloud commit protocol."""
    jvm = spark.sparkContext._jvm
    assert jvm is not None
    missing = [name for name in (FILESYSTEM_CLASS, PROTOCOL_CLASS)
               if not jvm.org.apache.spark.util.Utils.classIsLoadable(name)]
    if missing:
        raise S3AJarsMissingError(", ".join(missing), "not loadable in this session's JVM: "
                                  "the S3A jars must be set (spark.jars or spark.jars.packages, "
                                  "zerorename.spark.s3a.configure) before the first session "
                                  "of the Python process starts its JVM; restart the process")
