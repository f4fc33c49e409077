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
  starts; ``magic``, RGW cannot fence), and with ``--stages`` two that split the write into
  its parts: ``spark-scan`` (Spark's ``noop`` format: reading the cached rows) and
  ``arrow-drain`` (a Python data source whose tasks only iterate the Arrow batches: the
  transfer from the JVM to the Python workers);
* **cells** — (rows, partitioned or not); in each cell every strategy runs once per round,
  in the balanced order of :func:`interleave.round_order`, to a fresh destination;
* **figures** — wall time of the write (Spark job and job commit), rows/s, bytes of the
  Parquet files written, and once per cell (untimed) the bytes of Spark's files with
  zerorename's timestamp type (INT64 microseconds; Spark's default, INT96, is larger);
  **ratios** to ``native`` are the median over rounds of the same-round ratio (seconds
  apart, about the same load);
* **first write** — before anything else, the session's first zerorename write (Python
  workers started, imports made) and the same write again, warm.

    python bench/spark_write.py --versus-native                  # 1M and 5M rows, 4 rounds
    python bench/spark_write.py --versus-native --rows 200000 --repeats 2 --out /tmp/x
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
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from interleave import round_order
from runinfo import environment

HERE = Path(__file__).resolve().parent
OUT = HERE / "results" / "spark_native"
BASE = "native"
TASKS = 4


@dataclass(frozen=True)
class Target:
    """Where a strategy writes: a URL prefix and the options zerorename needs to reach it."""

    name: str
    prefix: str
    options: dict[str, str]
    committer: str = "fenced"


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


def _store_bytes(dest: str, options: dict[str, str]) -> int:
    from zerorename.spark.core import make_store, spec_from_options
    from zerorename.spark.verify import visible_files

    spec = spec_from_options({"path": dest, **options})
    return sum(size for url, size in visible_files(make_store(spec), dest).items()
               if url.endswith(".parquet"))


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


def run_one(spark: Any, df: Any, strategy: str, partitioned: bool, targets: dict[str, Target],
            scratch: Path, tag: str) -> dict[str, Any]:
    """One write of ``df`` by ``strategy``; its time and bytes."""
    from zerorename.spark import write

    data = df if partitioned else df.drop("month")
    load = os.getloadavg()[0]
    pid = jvm_pid(spark)
    cpu_before = tree_cpu_seconds(pid)
    started = time.monotonic()
    size: int | None = None
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
        target = targets[strategy]
        dest = f"{target.prefix}/{tag}"
        write(data, dest, committer=target.committer,
              partition_by="month" if partitioned else None, **target.options)
        wall = time.monotonic() - started
        size = _store_bytes(dest, target.options)
        if dest.startswith("file://"):
            shutil.rmtree(dest[len("file://"):], ignore_errors=True)
    cpu_after = tree_cpu_seconds(pid)
    cpu = None if cpu_before is None or cpu_after is None else round(cpu_after - cpu_before, 2)
    return {"strategy": strategy, "seconds": round(wall, 3), "bytes": size,
            "cpu_seconds": cpu, "load_average": round(load, 2)}


def cached_partitions(spark: Any) -> list[list[int]]:
    """[cached, total] partitions of every cached frame: a frame no longer whole in memory
    was partly recomputed by some write, whose time then says nothing about its writer."""
    infos = spark.sparkContext._jsc.sc().getRDDStorageInfo()
    return [[info.numCachedPartitions(), info.numPartitions()] for info in infos]


def paired(runs: Sequence[dict[str, Any]], strategy: str, key: str) -> float | None:
    """Median over rounds of ``strategy``'s ``key`` / ``native``'s in the same round."""
    by_round: dict[int, dict[str, dict[str, Any]]] = {}
    for r in runs:
        by_round.setdefault(r["round"], {})[r["strategy"]] = r
    values = [rnd[strategy][key] / rnd[BASE][key] for rnd in by_round.values()
              if strategy in rnd and BASE in rnd and rnd[BASE].get(key)
              and rnd[strategy].get(key) is not None]
    return round(statistics.median(values), 3) if values else None


def summarise(cell_runs: Sequence[dict[str, Any]], rows: int) -> list[dict[str, Any]]:
    """One row per strategy of a cell: median seconds, rows/s, bytes, ratios to native."""
    out = []
    for strategy in dict.fromkeys(r["strategy"] for r in cell_runs):
        mine = [r for r in cell_runs if r["strategy"] == strategy]
        seconds = statistics.median(r["seconds"] for r in mine)
        size = mine[0]["bytes"]
        cpus = [r["cpu_seconds"] for r in mine if r.get("cpu_seconds") is not None]
        out.append({"strategy": strategy, "seconds": round(seconds, 3),
                    "cpu_seconds": round(statistics.median(cpus), 2) if cpus else None,
                    "cpu_ratio": paired(cell_runs, strategy, "cpu_seconds"),
                    "rows_per_second": round(rows / seconds),
                    "bytes": size, "time_ratio": paired(cell_runs, strategy, "seconds"),
                    "bytes_ratio": paired(cell_runs, strategy, "bytes"),
                    "repeats": len(mine),
                    "load_range": [min(r["load_average"] for r in mine),
                                   max(r["load_average"] for r in mine)]})
    return out


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
    """The session's first zerorename write, then the same write warm (median of repeats)."""
    from zerorename.spark import write

    def once(tag: str) -> float:
        started = time.monotonic()
        write(df, f"{target.prefix}/{tag}", committer=target.committer, **target.options)
        return time.monotonic() - started

    warming = any(t.name == "zerorename-warm-up" and t.is_alive()
                  for t in threading.enumerate())
    first = once("first")
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
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)

    from servers import MotoServer, rgw_server

    from zerorename.spark.session import local_session

    env = environment()
    scratch = Path(tempfile.mkdtemp(prefix="zr-spark-native-"))
    targets = {"zr-local": Target("zr-local", f"file://{scratch}/zr", {}),
               "zr-local-spark-encoder": Target("zr-local-spark-encoder",
                                                f"file://{scratch}/zr-se", {"encoder": "spark"})}
    report: dict[str, Any] = {"benchmark": "spark_native", "environment": env,
                              "tasks": TASKS, "repeats": args.repeats, "cells": []}
    with MotoServer() as moto, rgw_server() if args.rgw else nullcontext() as rgw:
        if isinstance(rgw, str):
            report["rgw"] = f"not measured: {rgw}"
        elif rgw is not None:
            os.environ["AWS_ACCESS_KEY_ID"] = rgw.access_key  # moto accepts any key
            os.environ["AWS_SECRET_ACCESS_KEY"] = rgw.secret_key
            targets["zr-rgw"] = Target("zr-rgw", "s3://bench-rgw", {
                "endpoint_url": rgw.url, "checksums": "when_required"}, "magic")
            report["rgw"] = rgw.note
        os.environ.setdefault("AWS_ACCESS_KEY_ID", "testing")
        os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "testing")
        os.environ.setdefault("AWS_DEFAULT_REGION", "us-east-1")
        if not args.no_moto:
            targets["zr-moto"] = Target("zr-moto", "s3://bench-moto",
                                        {"endpoint_url": moto.endpoint()})
        _make_buckets(targets)
        # 4 GiB: with Spark's default 1 GiB the sorts of Spark's partitioned writes evicted
        # the cached frames, and whichever write came next paid for recomputing them (the
        # same write took 1.2 s or 2.3 s by its place in the round)
        spark = local_session("local[2]", app_name="zerorename-bench-native",
                              conf={"spark.driver.memory": "4g"})
        try:
            spark.dataSource.register(_drain_source())
            report["versions"] = {"pyspark": spark.version}
            frames = {rows: dataset(spark, rows).cache() for rows in args.rows}
            for frame in frames.values():
                frame.count()
            smallest = frames[min(frames)].drop("month")
            report["first_write"] = first_write(spark, smallest, targets["zr-local"])
            print(f"[bench] first write: {report['first_write']}", flush=True)
            strategies = [BASE, *targets] + (["spark-scan", "arrow-drain"] if args.stages
                                             else [])
            # every strategy once, untimed: the JVM compiles each write path on its first
            # large job, and the first cell would otherwise charge that to whoever came first
            for strategy in strategies:
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


def _make_buckets(targets: dict[str, Target]) -> None:
    from zerorename.stores import make_s3_client

    for target in targets.values():
        if target.prefix.startswith("s3://"):
            client = make_s3_client(endpoint_url=target.options["endpoint_url"],
                                    checksums="when_required")
            client.create_bucket(Bucket=target.prefix[len("s3://"):])
