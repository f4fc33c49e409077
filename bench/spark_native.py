"""zerorename's Spark write path against Spark's own ``df.write.parquet``, side by side.

What a data engineer switching from ``df.write.parquet(path)`` to zerorename pays in the write
itself.  One invocation, one ``local[2]`` SparkSession, one cached DataFrame per size (long,
double, string of 100,000 distinct values, int, timestamp; ``month`` with 12 values for the
partitioned cells), 4 tasks:

* **strategies** — ``native`` (Spark's Parquet writer to the local disk, its default
  committer and codec, snappy), ``zr-local`` (zerorename ``fenced`` to the local disk),
  ``zr-local-spark-encoder`` (the same with ``encoder='spark'``: Spark's Parquet encoder in
  the tasks' JVM, only the finished bytes handed to Python),
  ``zr-moto`` (``fenced`` to a moto server in a child process), ``zr-rgw`` (when a Ceph RGW
  starts; ``magic``, RGW cannot fence; over HTTPS when the server serves it, as S3A's rows),
  **the anchor** — Spark's own Parquet writer to ``s3a://`` through Hadoop's S3A committers,
  ``s3a-magic-moto``, ``s3a-directory-moto``, ``s3a-magic-rgw``, ``s3a-directory-rgw`` (RGW
  over HTTPS: S3A cannot write empty objects to it over http; unless ``--no-s3a``, and when
  the S3A jars are built), and zerorename's JVM ``fenced`` in the same writer,
  ``s3a-fenced-moto`` and ``s3a-fenced-rgw``, and its lower bound, the benchmark's minimal
  committer (``zerorename.bench.MinimalCommitter``, research jar: the tasks' uploads completed
  by the driver, then ``_SUCCESS``, nothing else), ``s3a-minimal-moto`` and
  ``s3a-minimal-rgw`` (routes and session: :mod:`spark_targets`) — and with ``--stages`` two
  that split the write into
  its parts: ``spark-scan`` (Spark's ``noop`` format: reading the cached rows) and
  ``arrow-drain`` (a Python data source whose tasks only iterate the Arrow batches: the
  transfer from the JVM to the Python workers);
* **cells** — (rows, partitioned or not); in each cell every strategy runs once per round,
  in the balanced order of :func:`interleave.round_order`, to a fresh destination;
* **figures** — wall time of the write (Spark job and job commit), rows/s, bytes of the
  Parquet files written, the requests the S3 server received during the write (counted at
  the server, whoever sent them: S3A in the JVM, zerorename's Python workers) per Parquet
  file, and once per cell (untimed) the bytes of Spark's files with
  zerorename's timestamp type (INT64 microseconds; Spark's default, INT96, is larger);
  **ratios** to ``native`` are the median over rounds of the same-round ratio (seconds
  apart, about the same load), and so are the JVM ``fenced`` rows' to the faster S3A
  committer and to the minimal of the same store (:mod:`spark_summary`);
* **first write** — before anything else, the session's first zerorename write (Python
  workers started, imports made) and the same write again, warm; then the same for each S3A
  strategy (its first write loads S3A and the AWS SDK, or makes the bucket's filesystem).

The session serves both kinds of writer: Spark's commit protocol is a SQL setting, left at
Spark's default for ``native`` and switched to Spark's cloud protocol for the S3A writes only;
the S3A committer is each write's option; moto and RGW are two buckets, each with its own
endpoint (S3A's per-bucket options).

    python bench/spark_write.py --versus-native                  # 1M and 5M rows, 4 rounds
    python bench/spark_write.py --versus-native --rows 200000 --repeats 2 --out /tmp/x
    python bench/spark_write.py --versus-native --rgw --rows 1000000 3000000 --repeats 4
    python bench/spark_write.py --versus-native --only s3a-magic-moto s3a-directory-moto \
        s3a-fenced-moto --rows 1000000 3000000 --repeats 3 --out /tmp/x   # some routes only
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import nullcontext
from pathlib import Path
from typing import Any

from interleave import round_order
from runinfo import environment
from spark_summary import BASE, summarise
from spark_targets import (
    BENCH_COMMITTERS,
    JVM_BUCKET_MOTO,
    JVM_BUCKET_RGW,
    JVM_COMMITTERS,
    PARQUET_COMMITTER_KEY,
    PROTOCOL_KEY,
    SPARK_PARQUET_COMMITTER,
    SPARK_PROTOCOL,
    Target,
    make_buckets,
    research_jar,
    s3a_jar_set,
    s3a_session_conf,
    set_up,
    write_settings,
)

HERE = Path(__file__).resolve().parent
OUT = HERE / "results" / "spark_native"
TASKS = 4
def dataset(spark: Any, rows: int) -> Any:
    """The issue's frame: 5 columns a pipeline has, plus ``month`` to partition by."""
    return spark.range(0, rows, 1, TASKS).selectExpr(
        "id", "rand(1) as x", "concat('s', cast(id % 100000 as string)) as s",
        "cast(id % 1000 as int) as i", "timestamp_seconds(1700000000 + id) as t",
        "cast(id % 12 + 1 as int) as month")


def _drain_source() -> Any:
    """A Python data source whose tasks iterate the Arrow batches and write nothing."""
    from pyspark.sql.datasource import DataSource, DataSourceArrowWriter, WriterCommitMessage

    class DrainWriter(DataSourceArrowWriter):
        def write(self, iterator: Iterator[Any]) -> WriterCommitMessage:
            for _ in iterator:
                pass
            return WriterCommitMessage()

        def commit(self, messages: Any) -> None:
            pass

        def abort(self, messages: Any) -> None:
            pass

    class Drain(DataSource):
        @classmethod
        def name(cls) -> str:
            return "zr_bench_drain"

        def writer(self, schema: Any, overwrite: bool) -> DrainWriter:
            return DrainWriter()

    return Drain


def _local_bytes(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*.parquet") if not f.name.startswith("."))


def _store(dest: str, options: dict[str, str]) -> Any:
    from zerorename.spark.core import make_store, spec_from_options

    return make_store(spec_from_options({"path": dest, **options}))


def _store_files(dest: str, options: dict[str, str]) -> tuple[int, int]:
    """(bytes, count) of the Parquet files a reader sees under ``dest``."""
    from zerorename.spark.verify import visible_files

    sizes = [size for url, size in visible_files(_store(dest, options), dest).items()
             if url.endswith(".parquet")]
    return sum(sizes), len(sizes)


def _remove(dest: str, options: dict[str, str]) -> None:
    """Delete everything under ``dest`` (RGW's memstore and moto hold every byte in memory)."""
    if dest.startswith("file://"):
        shutil.rmtree(dest[len("file://"):], ignore_errors=True)
        return
    from zerorename.store import list_all

    store = _store(dest, options)
    for obj in list_all(store, dest.rstrip("/") + "/"):
        store.delete(obj.url)


def _check_s3a_success(dest: str, target: Target) -> None:
    """The write was S3A's ``committer``'s (its ``_SUCCESS`` says so), not a silent fallback
    to Spark's rename-based committer."""
    import zerorename as zr

    success = zr.read_success(_store(dest, target.options), dest)
    # zerorename's classes (io.zerorename.committer.*; the minimal's zerorename.bench.*)
    zerorenames = target.committer in JVM_COMMITTERS + BENCH_COMMITTERS
    if success.committer != target.committer or success.written_by_zerorename != zerorenames:
        raise RuntimeError(f"{dest}: _SUCCESS names committer {success.committer!r}, not "
                           f"{target.committer!r}")


def tree_cpu_seconds(root: int | None) -> float | None:
    """CPU seconds (user + system) of process ``root`` and every process under it, including
    children already reaped (their time is in their parent's ``cutime``/``cstime``): the JVM
    of a local session with its Python daemons and workers.  ``None`` without ``/proc``.

    Why: on a shared 2-core machine wall time follows the other users' load; the CPU a write
    costs does much less, and when every core is busy it is what bounds the wall time.
    """
    if root is None or not Path("/proc/self/stat").exists():
        return None
    parent: dict[int, int] = {}
    ticks: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:  # gone since listed
            continue
        pid = int(entry.name)
        parent[pid] = int(fields[1])
        ticks[pid] = sum(int(f) for f in fields[11:15])  # utime stime cutime cstime
    tree, frontier = {root}, [root]
    while frontier:
        pid = frontier.pop()
        children = [c for c, p in parent.items() if p == pid and c not in tree]
        tree.update(children)
        frontier.extend(children)
    return sum(ticks.get(pid, 0) for pid in tree) / os.sysconf("SC_CLK_TCK")


def jvm_pid(spark: Any) -> int | None:
    """The pid of the session's JVM (PySpark's launcher execs ``java`` in place)."""
    gateway = getattr(spark.sparkContext, "_gateway", None)
    proc = getattr(gateway, "proc", None)
    return getattr(proc, "pid", None)


def s3a_write(spark: Any, data: Any, dest: str, committer: str, partitioned: bool) -> None:
    """Spark's own Parquet writer to ``dest`` (``s3a://``) through S3A's ``committer``: Spark's
    cloud commit protocol for this write only (zerorename's subclass of it for ``fenced``, as
    ``zerorename.spark.s3a.configure`` sets it; the research jar's for ``minimal``), the
    committer as the write's option (:func:`spark_targets.write_settings`)."""
    from zerorename.spark.s3a import PARQUET_COMMITTER_CLASS

    protocol, options = write_settings(committer)
    spark.conf.set(PROTOCOL_KEY, protocol)
    spark.conf.set(PARQUET_COMMITTER_KEY, PARQUET_COMMITTER_CLASS)
    try:
        writer = data.write.options(**options)
        (writer.partitionBy("month") if partitioned else writer).parquet(dest)
    finally:
        spark.conf.set(PROTOCOL_KEY, SPARK_PROTOCOL)
        spark.conf.set(PARQUET_COMMITTER_KEY, SPARK_PARQUET_COMMITTER)


def _requests(before: dict[str, int] | None, after: dict[str, int] | None
              ) -> dict[str, int] | None:
    if before is None or after is None:
        return None
    return {op: n - before.get(op, 0) for op, n in sorted(after.items())
            if n - before.get(op, 0)}


def run_one(spark: Any, df: Any, strategy: str, partitioned: bool, targets: dict[str, Target],
            scratch: Path, tag: str) -> dict[str, Any]:
    """One write of ``df`` by ``strategy``; its time, bytes and the server's requests."""
    from zerorename.spark import write

    data = df if partitioned else df.drop("month")
    target = targets.get(strategy)
    counts = target.counts if target is not None else None
    before = counts() if counts is not None else None
    load = os.getloadavg()[0]
    pid = jvm_pid(spark)
    cpu_before = tree_cpu_seconds(pid)
    started = time.monotonic()
    size: int | None = None
    files: int | None = None
    if strategy == BASE:
        path = scratch / tag
        writer = data.write.partitionBy("month") if partitioned else data.write
        writer.parquet(str(path))
        wall = time.monotonic() - started
        size = _local_bytes(path)
        shutil.rmtree(path, ignore_errors=True)
    elif strategy == "spark-scan":
        data.write.format("noop").mode("overwrite").save()
        wall = time.monotonic() - started
    elif strategy == "arrow-drain":
        data.write.format("zr_bench_drain").mode("append").save()
        wall = time.monotonic() - started
    else:
        assert target is not None, strategy
        dest = f"{target.prefix}/{tag}"
        if target.kind == "s3a":
            s3a_write(spark, data, dest, target.committer, partitioned)
        else:
            write(data, dest, committer=target.committer,
                  partition_by="month" if partitioned else None, **target.options)
        wall = time.monotonic() - started
    cpu_after = tree_cpu_seconds(pid)
    requests = _requests(before, counts() if counts is not None else None)
    if target is not None:  # untimed: what was written, then make room for the next write
        listed = f"{target.listing_prefix}/{tag}"
        size, files = _store_files(listed, target.options)
        if target.kind == "s3a":
            _check_s3a_success(listed, target)
        _remove(listed, target.options)
    cpu = None if cpu_before is None or cpu_after is None else round(cpu_after - cpu_before, 2)
    run: dict[str, Any] = {"strategy": strategy, "seconds": round(wall, 3), "bytes": size,
                           "cpu_seconds": cpu, "load_average": round(load, 2)}
    if requests is not None:
        total = sum(requests.values())
        run.update(files=files, requests=requests, requests_total=total,
                   requests_per_file=round(total / files, 2) if files else None)
    return run


def cached_partitions(spark: Any) -> list[list[int]]:
    """[cached, total] partitions of every cached frame: a frame no longer whole in memory
    was partly recomputed by some write, whose time then says nothing about its writer."""
    infos = spark.sparkContext._jsc.sc().getRDDStorageInfo()
    return [[info.numCachedPartitions(), info.numPartitions()] for info in infos]


def native_micros_bytes(spark: Any, df: Any, partitioned: bool, scratch: Path,
                        tag: str) -> int | None:
    """Bytes of Spark's files with the timestamp type zerorename writes (INT64 microseconds;
    Spark's default is INT96, 4 bytes more per value): the like-for-like size (untimed)."""
    spark.conf.set("spark.sql.parquet.outputTimestampType", "TIMESTAMP_MICROS")
    try:
        run = run_one(spark, df, BASE, partitioned, {}, scratch, f"{tag}-micros")
        size: int | None = run["bytes"]
        return size
    finally:
        spark.conf.unset("spark.sql.parquet.outputTimestampType")


def first_write(spark: Any, df: Any, target: Target, warm_repeats: int = 2) -> dict[str, Any]:
    """The session's first write by ``target`` (zerorename's, or S3A's), then the same write
    warm (median of ``warm_repeats``; none: the first write only)."""
    from zerorename.spark import write

    def once(tag: str) -> float:
        dest = f"{target.prefix}/first-{target.name}-{tag}"
        started = time.monotonic()
        if target.kind == "s3a":
            s3a_write(spark, df, dest, target.committer, partitioned=False)
        else:
            write(df, dest, committer=target.committer, **target.options)
        return time.monotonic() - started

    warming = any(t.name == "zerorename-warm-up" and t.is_alive()
                  for t in threading.enumerate())
    first = once("first")
    if warm_repeats < 1:
        return {"first_seconds": round(first, 3), "warm_seconds": None,
                "over_warm_seconds": None, "warm_up_still_running_at_first_write": warming}
    warm = statistics.median(once(f"warm-{i}") for i in range(warm_repeats))
    return {"first_seconds": round(first, 3), "warm_seconds": round(warm, 3),
            "over_warm_seconds": round(first - warm, 3),
            "warm_up_still_running_at_first_write": warming}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, nargs="+", default=[1_000_000, 5_000_000])
    parser.add_argument("--repeats", type=int, default=4, help="rounds per cell (even: "
                        "each order is followed by its reverse)")
    parser.add_argument("--no-moto", action="store_true")
    parser.add_argument("--rgw", action="store_true", help="also a throw-away Ceph RGW")
    parser.add_argument("--stages", action="store_true",
                        help="add spark-scan and arrow-drain (where the time goes)")
    parser.add_argument("--no-s3a", action="store_true",
                        help="leave out Spark's own writer through S3A's committers")
    parser.add_argument("--only", nargs="+", metavar="STRATEGY",
                        help="measure only these strategies (e.g. s3a-magic-moto "
                             "s3a-directory-moto s3a-fenced-moto), and native, the base of "
                             "every ratio")
    parser.add_argument("--warm-repeats", type=int, default=2, help="warm writes after "
                        "each route's first (0: the first write only; a smoke run's saving)")
    parser.add_argument("--no-untimed", action="store_true", help="skip the untimed write "
                        "by each strategy before the cells (a smoke run's saving)")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)

    from servers import MotoServer, rgw_server

    from zerorename.spark.session import local_session

    env = environment()
    scratch = Path(tempfile.mkdtemp(prefix="zr-spark-native-"))
    report: dict[str, Any] = {"benchmark": "spark_native", "environment": env,
                              "tasks": TASKS, "repeats": args.repeats, "cells": []}
    s3a_jars = None if args.no_s3a else s3a_jar_set(report)
    research = None if s3a_jars is None else research_jar(report)
    with MotoServer() as moto, rgw_server() if args.rgw else nullcontext() as rgw:
        routes = set_up(report, scratch, moto, rgw, args.no_moto, s3a_jars, research)
        targets, s3a_endpoints = routes.targets, routes.s3a_endpoints
        if args.only:
            known = {BASE, *targets, "spark-scan", "arrow-drain"}
            unknown = sorted(set(args.only) - known)
            if unknown:
                parser.error(f"--only: not a strategy of this run: {', '.join(unknown)} "
                             f"(choose from {', '.join(sorted(known))})")
            targets = {name: t for name, t in targets.items() if name in args.only}
            report["only"] = sorted(set(args.only) | {BASE})
        make_buckets(targets)
        # 4 GiB: with Spark's default 1 GiB the sorts of Spark's partitioned writes evicted
        # the cached frames, and whichever write came next paid for recomputing them (the
        # same write took 1.2 s or 2.3 s by its place in the round)
        conf = {"spark.driver.memory": "4g"}
        if s3a_endpoints:
            assert s3a_jars is not None
            conf.update(s3a_session_conf(s3a_endpoints, s3a_jars,
                                         in_memory=[JVM_BUCKET_MOTO, JVM_BUCKET_RGW],
                                         research=research))
        spark = local_session("local[2]", app_name="zerorename-bench-native", conf=conf)
        try:
            spark.dataSource.register(_drain_source())
            report["versions"] = {"pyspark": spark.version}
            if s3a_endpoints:
                from zerorename.spark.s3a import require_s3a

                require_s3a(spark)
            frames = {rows: dataset(spark, rows).cache() for rows in args.rows}
            for frame in frames.values():
                frame.count()
            smallest = frames[min(frames)].drop("month")
            if "zr-local" in targets:
                report["first_write"] = first_write(spark, smallest, targets["zr-local"],
                                                   args.warm_repeats)
                print(f"[bench] first write: {report['first_write']}", flush=True)
            # S3A's: the first loads S3A and the SDK (moto's bucket), the next ones make
            # their bucket's filesystem or their committer's classes
            report["first_write_s3a"] = {
                name: first_write(spark, smallest, target, args.warm_repeats)
                for name, target in targets.items() if target.kind == "s3a"}
            for name, first in report["first_write_s3a"].items():
                print(f"[bench] first write {name}: {first}", flush=True)
            strategies = [BASE, *targets] + (["spark-scan", "arrow-drain"] if args.stages
                                             else [])
            if args.only:
                strategies = [s for s in strategies if s == BASE or s in args.only]
            # every strategy once, untimed: the JVM compiles each write path on its first
            # large job, and the first cell would otherwise charge that to whoever came first
            for strategy in [] if args.no_untimed else strategies:
                run_one(spark, frames[min(frames)], strategy, False, targets, scratch,
                        f"untimed-{strategy}")
            for rows, frame in frames.items():
                for partitioned in (False, True):
                    runs = []
                    for repeat in range(args.repeats):
                        for position, strategy in enumerate(round_order(strategies, repeat)):
                            tag = f"{rows}-{int(partitioned)}-{repeat}-{strategy}"
                            run = run_one(spark, frame, strategy, partitioned, targets,
                                          scratch, tag)
                            run.update(round=repeat, position=position)
                            runs.append(run)
                            print(f"[bench] {rows} rows partitioned={partitioned} {run}",
                                  flush=True)
                    report["cells"].append({
                        "rows": rows, "partitioned": partitioned,
                        "cached_partitions": cached_partitions(spark),
                        "summary": summarise(runs, rows), "runs": runs,
                        "native_int64_timestamps_bytes": native_micros_bytes(
                            spark, frame, partitioned, scratch, f"{rows}-{int(partitioned)}")})
        finally:
            spark.stop()
            shutil.rmtree(scratch, ignore_errors=True)
    report["load_average_at_end"] = [round(x, 2) for x in os.getloadavg()]
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "results.json").write_text(json.dumps(report, indent=2) + "\n")
    from spark_render import markdown

    (args.out / "results.md").write_text(markdown(report))
    print(f"[bench] wrote {args.out}/results.json and results.md", flush=True)
    return 0
