"""A small local SparkSession that works on the first try, for tests, the demo and benchmarks.

Why a helper: three things make a bare ``SparkSession.builder.getOrCreate()`` fail or mislead
on a developer machine or CI (measured on PySpark 4.3):

* Spark starts Python workers with ``python3`` from ``PATH`` unless ``PYSPARK_PYTHON`` says
  otherwise; that interpreter usually lacks pyarrow and zerorename, and every write task then
  fails with ``No module named 'pyarrow'``.  We point workers at ``sys.executable``.
* ``local[N]`` allows one attempt per task; task retries need ``local[N,F]``.  Callers pass
  the master they need (``local[2,3]``, ``local-cluster[2,1,1024]``).
* A default session has 200 shuffle partitions, a web UI and a console progress bar, which
  cost seconds and flood logs in small jobs.

Environment variables are set with ``setdefault`` so a user's explicit choice wins, and before
the JVM starts, because executors and Python workers inherit the environment at launch.

Why a warm-up (:func:`warm_up`): a session's first write through a Python data source starts
three Python daemons one after the other — the planner's (``writer()``), the executors' and
the commit's — each importing pyarrow, boto3 and zerorename: 7 s on an idle 2-core machine
(and 25 s on a busy one) before the first row is written, against about 1 s for later writes.
``local_session`` starts them in the background, with a one-row write to a temporary local
directory, while the caller builds its DataFrame.
"""

from __future__ import annotations

import logging
import os
import shutil
import sys
import tempfile
import threading
from collections.abc import Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

#: Settings that keep small local jobs fast and quiet; a caller's ``conf`` overrides them.
DEFAULT_CONF: dict[str, str] = {
    "spark.sql.shuffle.partitions": "4",
    "spark.default.parallelism": "4",
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.sql.execution.arrow.pyspark.enabled": "true",
    "spark.driver.host": "127.0.0.1",
    "spark.driver.bindAddress": "127.0.0.1",
    # workers fork from a daemon that has already imported pyarrow, boto3 and zerorename
    "spark.python.daemon.module": "zerorename.spark.daemon",
}

log = logging.getLogger("zerorename.spark")


def prepare_environment() -> None:
    """Make Python workers use this interpreter and bind to loopback (before the JVM starts)."""
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")


def local_session(
    master: str = "local[2]",
    app_name: str = "zerorename",
    *,
    conf: Mapping[str, str] | None = None,
    log_level: str = "ERROR",
    register: bool = True,
    warm: bool = True,
) -> SparkSession:
    """A SparkSession for ``master`` with the zerorename data source registered.

    If a session with another master is already running in this process it is stopped first:
    a JVM holds one SparkContext at a time, and silently reusing a ``local[2]`` context when
    the caller asked for ``local[2,3]`` would quietly disable the task retries a test relies on.
    ``warm`` (with ``register``) starts the Python workers a write needs in the background
    (:func:`warm_up`).
    """
    prepare_environment()
    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    if active is not None and active.sparkContext.master != master:
        active.stop()
    builder = SparkSession.builder.master(master).appName(app_name)
    for key, value in {**DEFAULT_CONF, **(conf or {})}.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel(log_level)
    if register:
        from zerorename.spark import register as register_source

        register_source(spark)
        if warm:
            warm_up(spark)
    return spark


def warm_up(spark: SparkSession) -> threading.Thread:
    """Start, in a background thread, the Python workers a zerorename write needs.

    A small write through ``fenced`` into a fresh temporary directory (removed afterwards)
    starts the planner's, the executors' and the commit's daemons, and one worker per
    executor slot (:func:`warm_up_frame`); Spark keeps them for the session, so the caller's
    first write finds them running.  A failure is logged, never
    raised: the caller's own write will start what it needs (and report its own errors).
    """

    def run() -> None:
        from zerorename.spark import write

        # Spark looks Python data sources up in the thread's active session, and a new
        # thread has none: without this the write fails with DATA_SOURCE_NOT_FOUND
        spark._jvm.SparkSession.setActiveSession(spark._jsparkSession)  # type: ignore[union-attr]
        scratch = tempfile.mkdtemp(prefix="zerorename-warm-up-")
        try:
            write(warm_up_frame(spark), f"file://{scratch}/out", committer="fenced",
                  abort_grace_seconds=0)
        except Exception as error:  # a stopped session, a full disk: the real write says
            log.debug("zerorename: warming up the Python workers failed: %s", error)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)

    thread = threading.Thread(target=run, name="zerorename-warm-up", daemon=True)
    thread.start()
    return thread


def warm_up_frame(spark: SparkSession) -> DataFrame:
    """What the warm-up writes: ``spark.default.parallelism`` tasks (by default one per
    executor slot; at least one per slot in its sessions), a few hundred rows of the common
    column types each.

    Why every slot: the caller's first write runs a task on each slot at once, and each
    needs its own Python worker; a one-task warm-up started one, and the first write still
    paid for the others (measured on 2 cores under load: about 6 s over a warm write with
    one warm-up task, about 2 s with one per slot).  Why the types: each column type has its
    own Arrow converter in the JVM and its own encoder in pyarrow, loaded on first use.
    """
    slots = max(1, spark.sparkContext.defaultParallelism)
    return spark.range(0, 256 * slots, 1, slots).selectExpr(
        "id", "cast(id as int) as i", "id / 3.0d as x", "cast(id as string) as s",
        "timestamp_seconds(id) as t", "date_from_unix_date(cast(id as int)) as d",
        "cast(id as decimal(18, 2)) as m", "id % 2 = 0 as b")
