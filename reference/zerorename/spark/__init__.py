"""PySpark integration: write DataFrames and RDDs through zerorename committers, no renames.

Two routes, both pure Python (Spark cannot load a Python ``commitProtocolClass``):

* :func:`write` / ``df.write.format("zerorename")`` — the Python Data Source API (Spark >= 4):
  tasks stream Parquet through the task committer, the driver commits exactly the winning
  attempts' task messages.
* :func:`zerorename.spark.rdd.write_rdd` — ``mapPartitionsWithIndex`` + ``collect`` + driver
  commit, for code built on RDDs.

Importing this module is all a session needs for ``format("zerorename")``: see
:func:`register`.  See ``docs/user/spark.md`` for options, save modes and failure behaviour.
"""

from __future__ import annotations

import functools
import threading
import weakref
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

#: The one install line that works from a clone (zerorename is not on PyPI).
SPARK_EXTRA_HINT = ('install the "spark" extra from a zerorename checkout\'s top directory: '
                    'pip install -e "./reference[spark]"')

try:
    import pyarrow  # type: ignore[import-untyped]  # noqa: F401
    import pyspark  # noqa: F401
except ImportError as missing:  # say which extra, not just which module
    raise ImportError(f"zerorename.spark needs {missing.name or missing}, which is not "
                      f"installed; {SPARK_EXTRA_HINT} (pyspark, pyarrow, pandas)",
                      name=missing.name) from missing

import zerorename as zr  # noqa: E402  (after the check above, on purpose)

from .core import (  # noqa: E402
    JobDriver,
    OverwriteIncompleteError,
    SparkJobError,
    WriteOptionError,
    WriteSpec,
    make_store,
    output_exists,
    resolve_committer,
    spark_job_error,
    spec_from_options,
)
from .datasource import NAME, ZeroRenameDataSource  # noqa: E402

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

    from .jvm import EncoderUnavailableError


def __getattr__(name: str) -> Any:
    # ``.jvm`` loads on first use, not with the package: ``python -m zerorename.spark.jvm``
    # must find it unloaded (runpy warns otherwise)
    if name == "EncoderUnavailableError":
        from .jvm import EncoderUnavailableError

        return EncoderUnavailableError
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

__all__ = [
    "NAME",
    "EncoderUnavailableError",
    "JobDriver",
    "OverwriteIncompleteError",
    "SparkJobError",
    "WriteOptionError",
    "WriteSpec",
    "ZeroRenameDataSource",
    "register",
    "write",
]

#: Sessions this process has registered the data source with (a session object per
#: ``SparkSession``; a new session, e.g. ``spark.newSession()``, has its own registry).
_REGISTERED: weakref.WeakSet[SparkSession] = weakref.WeakSet()
_REGISTERING = threading.Lock()


def register(spark: SparkSession) -> None:
    """Register the ``zerorename`` data source with ``spark`` (once per session).

    Rarely needed by hand: importing :mod:`zerorename.spark` makes ``format("zerorename")``
    register the source with the reader's or writer's session on first use (see
    :func:`_register_on_format`), whenever that session was created.
    """
    with _REGISTERING:  # threads of one session may call format() at once
        if spark in _REGISTERED:
            return
        spark.dataSource.register(ZeroRenameDataSource)
        _REGISTERED.add(spark)


def _register_on_format() -> None:
    """Make ``format`` of the batch and streaming readers and writers register this source.

    A Python data source lives in one session's registry, so registering at import time
    cannot help a session created later — the usual order in a script.  PySpark's other
    route, discovery of ``pyspark_*`` modules by a worker's ``pkgutil.iter_modules()``, does
    not see packages of an editable install (they are served by an import hook, not a path
    entry).  So the registration happens where the name is used: ``format(NAME)`` (also
    what ``save(format=…)``, ``load(format=…)`` and ``start(format=…)`` call) registers the
    source with that reader's or writer's session first (:func:`_prepare`).  Other formats
    pass straight through.
    """
    from pyspark.sql.readwriter import DataFrameReader, DataFrameWriter
    from pyspark.sql.streaming.readwriter import DataStreamReader, DataStreamWriter

    for cls in (DataFrameReader, DataFrameWriter, DataStreamReader, DataStreamWriter):
        original: Callable[..., Any] = cls.format
        if getattr(original, "_zerorename_registers", False):
            continue  # already wrapped (module reloaded)

        @functools.wraps(original)
        def format(self: Any, source: str, _original: Callable[..., Any] = original) -> Any:
            if not (isinstance(source, str) and source.strip().lower() == NAME):
                return _original(self, source)
            _prepare(self._spark)
            result = _original(self, source)
            for key, value in session_options(self._spark).items():
                result = result.option(key, value)  # a later .option(...) overrides them
            return result

        format._zerorename_registers = True  # type: ignore[attr-defined]
        cls.format = format  # type: ignore[method-assign]


def _prepare(spark: SparkSession) -> None:
    """Register the source with ``spark``, and make ``spark`` the JVM's active session of the
    calling thread: PySpark (4.3) looks a Python data source up through the *thread's* active
    session, which a thread other than the one that built the session does not have, so a
    write from a thread pool failed with ``DATA_SOURCE_NOT_FOUND`` after ``register``."""
    from pyspark.sql import SparkSession as _Session

    _Session._get_j_spark_session_class(spark._jvm).setActiveSession(
        spark._jsparkSession)
    register(spark)  # after: the JVM checks the name against the active session's registry


#: The session's Hadoop settings the source honours (``--conf spark.hadoop.fs.s3a.endpoint``),
#: passed on as the options of the same name, below any option the user sets.
_SESSION_SETTINGS = tuple(f"spark.hadoop.{name}" for name in ("fs.s3a.endpoint",
                                                               "fs.s3a.endpoint.region"))


def session_options(spark: SparkSession) -> dict[str, str]:
    """``fs.s3a.endpoint``/``fs.s3a.endpoint.region`` from ``spark``'s configuration
    (``spark.hadoop.*``), where set: the store then goes to that endpoint, as S3A's would."""
    found = {}
    for setting in _SESSION_SETTINGS:
        value = spark.conf.get(setting, None)
        if value:
            found[setting.removeprefix("spark.hadoop.")] = value
    return found


_register_on_format()


def write(
    df: DataFrame,
    dest: str,
    committer: str = "auto",
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
    ``encoder`` (``python``, or ``spark``: Spark's own Parquet encoder in the tasks' JVM,
    :mod:`zerorename.spark.jvm`),
    and any Hadoop-named committer option (``fs.s3a.committer.…``).  Credentials come from
    boto3's chain only.

    Errors are :class:`zerorename.CommitError` subclasses: a bad option
    (:class:`WriteOptionError`) before Spark runs, ``ConflictError`` for ``mode="error"``
    over existing output, and :class:`SparkJobError` — the worker's zerorename error first —
    when the Spark job fails (``cause_type`` names :class:`OverwriteIncompleteError` when an
    overwrite published its output but could not delete every older file).
    """
    given = {"path": dest, "committer": committer, "mode": mode, "format": format,
             "partition_by": partition_by or ()}
    spec = spec_from_options({**options, **given})  # every option checked before Spark is
    session = session_options(df.sparkSession)      # asked anything
    if session:  # spark.hadoop.fs.s3a.endpoint…, below the options given
        options = {**session, **options}
        spec = spec_from_options({**options, **given})
    _prepare(df.sparkSession)
    store = make_store(spec)
    if spec.mode in ("error", "ignore") and output_exists(store, spec.dest):
        if spec.mode == "ignore":
            return None  # decided here, so no Spark job runs at all
        raise zr.ConflictError(spec.dest, "output already exists and mode is 'error' "
                               "(use mode='append' or 'overwrite')")
    # ``auto`` decided here, in the driver, so that its reason is in the driver's log; the
    # Data Source's workers get the decided committer and the reason (for _SUCCESS)
    spec = resolve_committer(spec, store)
    from .jvm import chunks_or_rows, encode_settings

    data, chunked = chunks_or_rows(df, spec.encoder, encode_settings(spec), spec.dest)
    writer = data.write.format(NAME).mode("overwrite" if spec.mode == "overwrite" else "append")
    for key, value in {**options, **spec.committer_options}.items():
        writer = writer.option(key, str(value))
    writer = writer.option("encoder", "spark" if chunked else "python")
    if spec.partition_by:
        writer = writer.option("partition_by", ",".join(spec.partition_by))
    try:
        (writer.option("committer", spec.committer).option("mode", spec.mode)
         .option("job_id", spec.job_id).save(spec.dest))
    except Exception as spark_error:
        if not _is_spark_failure(spark_error):
            raise
        error = spark_job_error(spec.dest, spark_error)
        error.add_note("Spark's own error and traceback: the exception's .spark_error")
        raise error from None  # the cause leads, not Spark's few thousand characters
    return zr.read_success(store, spec.dest)


def _is_spark_failure(error: BaseException) -> bool:
    """Spark's errors (captured JVM exceptions, PySpark's own) and py4j's JVM errors."""
    from py4j.protocol import Py4JError  # type: ignore[import-untyped]
    from pyspark.errors import PySparkException

    return isinstance(error, PySparkException | Py4JError)
