"""Spark's own Parquet encoder, loaded into the session's JVM for :func:`zerorename.spark.write`.

Why the JVM: a Python data source receives its rows as Arrow batches, and that hand-off alone
costs more CPU than Spark's whole ``df.write.parquet`` (``bench/results/spark_native``).  The
small Java class ``io.zerorename.spark.ParquetChunks`` runs inside the tasks, encodes the rows with
Spark's own Parquet write support and settings, and hands the Python tasks only the finished
bytes, which they stream through the committer (:mod:`zerorename.spark.chunks`).  The files are
the ones Spark's writer makes.

The class is built by the project's Maven build (``jvm/spark``, against PySpark's own jars) into
``zerorename-spark.jar``, which ships inside this package (``zerorename/spark/jars/``, at the
wheel's version): a user needs neither Maven nor a compiler.  It is added to a session with its
``ADD JAR`` mechanism (executors fetch it); a session started with the jar on its class path
(``--jars``, ``spark.jars``; ``python -m zerorename.spark.jvm --classpath`` prints it) needs
neither.  Where none of that is possible (a checkout whose Java was never built, Spark Connect),
a write with ``encoder='spark'`` fails before anything is written, naming the reason.

Why it is not the default: measured against pyarrow in the Python workers
(``bench/results/spark_native``), Spark's encoder is no faster for unpartitioned writes and
slower for partitioned ones (parquet-mr tries a dictionary for every column of every file,
pyarrow's settings decide per column from the first rows, :mod:`zerorename.spark.encoding`).
Choose it for files byte-for-byte like Spark's: INT96 timestamps for old readers, Spark's
encodings and metadata.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import threading
import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from zerorename import options as O
from zerorename.errors import CommitError

from .spec import WriteOptionError, WriteSpec

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

log = logging.getLogger("zerorename.spark")

CLASS_NAME = "io.zerorename.spark.ParquetChunks"
#: zerorename's jar, put into the package by the Maven build (``scripts/jvm-build.sh``)
JAR = Path(__file__).with_name("jars") / "zerorename-spark.jar"
#: Bytes per chunk handed to Python: large enough that a chunk is one cheap Arrow value, small
#: enough that a file's bytes start moving before it is finished when it spans row groups.
CHUNK_BYTES = 8 << 20


class EncoderUnavailableError(CommitError):
    """``encoder=spark`` was asked for, and Spark's Parquet encoder cannot be loaded here."""


def jar_path() -> Path:
    """Where zerorename's jar is in this installation (it may be missing in a checkout whose
    Java was never built: ``scripts/jvm-build.sh``)."""
    return JAR


def packaged_jar() -> Path:
    """zerorename's jar, or :class:`EncoderUnavailableError` naming why it is not here."""
    if not JAR.is_file():
        raise EncoderUnavailableError(str(JAR), "zerorename's jar is not in this installation "
                                      "(a source checkout builds it with scripts/jvm-build.sh, "
                                      "which the README's commands run; a wheel carries it)")
    return JAR


@dataclass(frozen=True)
class EncodeSettings:
    """What the encoder needs besides the rows (Spark's names for the writer options)."""

    partition_by: Sequence[str]
    compression: str
    row_group_bytes: int | None
    max_records_per_file: int
    max_open_files: int

    def spark_options(self) -> dict[str, str]:
        options = {O.W_COMPRESSION.name: self.compression}
        if self.row_group_bytes is not None:  # Spark's name and ours are the same
            options[O.W_ROW_GROUP_SIZE.name] = str(self.row_group_bytes)
        return options


def encode_settings(spec: WriteSpec) -> EncodeSettings:
    """The encoder's settings for a write: Spark's row-group size unless the user set one."""
    return EncodeSettings(partition_by=spec.partition_by, compression=spec.compression,
                          row_group_bytes=spec.row_group_bytes if spec.row_group_bytes_set
                          else None,
                          max_records_per_file=spec.max_records_per_file,
                          max_open_files=spec.max_open_files)


class SparkParquetEncoder:
    """The encoder class as loaded into one session's JVM."""

    #: by SparkContext (Python object): a stopped context's entry goes with it, and a new
    #: context never finds an old one's method
    _sessions: ClassVar[weakref.WeakKeyDictionary[Any, SparkParquetEncoder]] = \
        weakref.WeakKeyDictionary()
    _lock = threading.Lock()

    def __init__(self, spark: SparkSession, method: Any) -> None:
        self._spark = spark
        self._method = method

    @classmethod
    def for_session(cls, spark: SparkSession) -> SparkParquetEncoder:
        """The session's encoder, loading (and if need be building) it on first use.

        Raises :class:`EncoderUnavailableError` with the reason when it cannot be loaded.
        """
        jsession = getattr(spark, "_jsparkSession", None)
        if jsession is None:
            raise EncoderUnavailableError("<session>", "not a classic SparkSession (Spark "
                                          "Connect has no JVM in this process)")
        key = spark.sparkContext
        with cls._lock:
            loaded = cls._sessions.get(key)
            if loaded is None:
                loaded = cls(spark, _load_method(jsession))
                cls._sessions[key] = loaded
            return loaded

    def encode(self, df: DataFrame, settings: EncodeSettings, dest: str) -> DataFrame:
        """``df`` as chunk rows of Spark-encoded Parquet files (see ``ParquetChunks.java``)."""
        from pyspark.sql import DataFrame as PySparkFrame
        from pyspark.sql import functions as F

        data = [c for c in df.columns if c not in settings.partition_by]
        if not data:
            raise WriteOptionError(dest, f"every column is a partition column "
                                   f"({list(settings.partition_by)}): the files would have "
                                   f"none (Spark's writer refuses this too)")
        ordered = df.select(*[F.col(_quoted(c)) for c in data],
                            *[F.col(_quoted(p)).cast("string").alias(p)
                              for p in settings.partition_by])
        gateway: Any = self._spark.sparkContext._gateway
        jvm = gateway.jvm
        columns = gateway.new_array(jvm.java.lang.String, len(settings.partition_by))
        for i, name in enumerate(settings.partition_by):
            columns[i] = name
        options = jvm.java.util.HashMap()
        for name, value in settings.spark_options().items():
            options.put(name, value)
        args = gateway.new_array(jvm.java.lang.Object, 7)
        for i, value in enumerate((ordered._jdf, len(data), columns, options, CHUNK_BYTES,
                                   settings.max_records_per_file, settings.max_open_files)):
            args[i] = value
        return PySparkFrame(self._method.invoke(None, args), self._spark)


def _quoted(column: str) -> str:
    """A column name as Spark's parser reads it literally (dots, spaces, backticks)."""
    return "`" + column.replace("`", "``") + "`"


def _load_method(jsession: Any) -> Any:
    """``ParquetChunks.encode`` through the session's jar class loader, adding the jar first
    when the class is not already on the class path."""
    from py4j.protocol import Py4JJavaError  # type: ignore[import-untyped]

    loader = jsession.sharedState().jarClassLoader()
    try:
        found = loader.loadClass(CLASS_NAME)
    except Py4JJavaError:
        jar = packaged_jar()
        jsession.sessionState().resourceLoader().addJar(str(jar))
        found = loader.loadClass(CLASS_NAME)
    for method in found.getMethods():
        if method.getName() == "encode":
            return method
    raise EncoderUnavailableError(CLASS_NAME, "the loaded class has no encode method")


def chunks_or_rows(df: DataFrame, encoder: str, settings: EncodeSettings,
                   dest: str) -> tuple[DataFrame, bool]:
    """What a write hands the data source: Spark-encoded chunks (``encoder='spark'``), or
    ``df`` itself (``'python'``), and whether it is chunks.  Raises
    :class:`EncoderUnavailableError` naming ``dest`` and the reason when Spark's encoder was
    asked for and cannot be loaded: nothing has been written then."""
    if encoder != "spark":
        return df, False
    try:
        return SparkParquetEncoder.for_session(df.sparkSession).encode(df, settings,
                                                                      dest), True
    except EncoderUnavailableError as error:
        raise EncoderUnavailableError(dest, f"encoder='spark': {error.reason}") from None


def _cli_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m zerorename.spark.jvm",
        description="Print the jars (or settings) a Spark session needs for zerorename's "
                    "encoder and, with --s3a, for Hadoop's S3A connector and committers. "
                    "Without an action: the path of zerorename's jar.")
    action = parser.add_mutually_exclusive_group()
    action.add_argument("--classpath", action="store_true",
                        help="the jars joined with the path separator (--driver-class-path, "
                             "spark.driver.extraClassPath)")
    action.add_argument("--jars", action="store_true",
                        help="the jars joined with commas (--jars, spark.jars)")
    action.add_argument("--packages", action="store_true",
                        help="the S3A jars' Maven coordinates and exclusions, as --packages "
                             "and --exclude-packages arguments (Spark fetches them)")
    action.add_argument("--conf", choices=["s3a", "fenced", "auto"],
                        help="spark-defaults.conf lines: the jars and the committer binding "
                             "(s3a: S3A's --committer; fenced, auto: zerorename's JVM "
                             "committers); add your endpoint and credentials")
    parser.add_argument("--s3a", action="store_true",
                        help="with --classpath/--jars: the S3A jars too (from the build's "
                             "cache or $ZERORENAME_S3A_JARS)")
    parser.add_argument("--committer", default="magic",
                        help="with --conf s3a: the S3A committer (magic, directory, "
                             "partitioned; default magic)")
    return parser


def _session_jars(s3a: bool) -> list[Path]:
    from .jars import s3a_jars

    return [packaged_jar(), *(s3a_jars() if s3a else [])]


def _conf_lines(committer: str) -> list[str]:
    from .jars import S3AJarsMissingError
    from .s3a import ZERORENAME_COMMITTERS, committer_conf, jar_conf

    try:
        jars = jar_conf("local")
    except S3AJarsMissingError:
        jars = jar_conf("packages")
    if committer in ZERORENAME_COMMITTERS:
        jars["spark.jars"] = ",".join(
            [str(packaged_jar()), *filter(None, [jars.get("spark.jars", "")])])
        title = f"zerorename's JVM {committer} committer"
    else:
        title = "S3A's committers"
    lines = [f"# zerorename: Spark's writers to s3a:// through {title}",
             "# add fs.s3a.endpoint, credentials etc. (docs/user/spark.md)"]
    for key, value in {**jars, **committer_conf(committer)}.items():
        lines.append(f"{key} {value}")
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m zerorename.spark.jvm``: print zerorename's jar, the jars or the settings a
    session needs (``--help``)."""
    parser = _cli_parser()
    args = parser.parse_args(argv)
    if args.s3a and not (args.classpath or args.jars):
        parser.error("--s3a goes with --classpath or --jars")
    try:
        if args.packages:
            from .jars import S3A_EXCLUDES, S3A_PACKAGES

            print(f"--packages {','.join(S3A_PACKAGES)} "
                  f"--exclude-packages {','.join(S3A_EXCLUDES)}")
        elif args.conf:
            committer = args.conf if args.conf != "s3a" else args.committer
            print("\n".join(_conf_lines(committer)))
        elif args.classpath or args.jars:
            separator = os.pathsep if args.classpath else ","
            print(separator.join(str(p) for p in _session_jars(args.s3a)))
        else:
            print(packaged_jar())
    except CommitError as error:
        print(f"zerorename: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
