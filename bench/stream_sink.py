"""Structured Streaming into zerorename's sink and into Spark's built-in Parquet file sink, side by
side on the local filesystem, at equal data: the same input files, one per micro-batch.

For each sink, in one invocation:

1. **clean run** — the query processes every input file (``maxFilesPerTrigger=1``,
   ``availableNow``); seconds per batch are Spark's own ``triggerExecution`` durations,
   reported for the first batch (which starts the Python workers a Python sink needs: the
   planner, the task workers and the commit runner, each importing pyspark, pyarrow and
   zerorename) apart from the later ones (median), with Spark's breakdown (``addBatch``:
   tasks and the sink's commit);
2. **killed run** — a fresh destination; the query's process group is killed with SIGKILL at
   the first moment its tasks have written and the sink has not committed (for the file sink:
   a data file no ``_spark_metadata`` entry names is in the destination; for zerorename: an
   upload is pending whose batch has no record), then the query is restarted from its
   checkpoint and runs to the end.

After each run it counts, against the input: rows lost and rows duplicated as the sink's own
reader sees them (``spark.read.parquet``, which reads ``_spark_metadata``; zerorename's
batch records), the same for a plain listing reader (every visible Parquet file, as pyarrow or
a Hive table would list them), and the files that listing shows.

Each query runs in its own process (``--child``), so a kill is a real driver death.

    python bench/stream_sink.py                     # writes bench/results/stream_sink/
    python bench/stream_sink.py --files 3 --rows 20000 --out /tmp/x   # a quick run
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import signal
import statistics
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SINKS = ("zerorename", "spark-parquet")


# -- child: one start of one query ------------------------------------------------------------


def child(sink: str, source: str, dest: str, checkpoint: str, progress: str) -> None:
    from zerorename.spark.session import local_session

    spark = local_session("local[2]", app_name=f"stream-bench-{sink}")
    df = (spark.readStream.schema("id long, part long, payload string")
          .option("maxFilesPerTrigger", 1).parquet(source))
    if sink == "zerorename":
        writer = df.writeStream.format("zerorename").option("partition_by", "part")
        target = f"file://{dest}"
    else:
        writer = df.writeStream.format("parquet").partitionBy("part")
        target = dest
    query = (writer.option("checkpointLocation", checkpoint).trigger(availableNow=True)
             .start(target))
    query.awaitTermination()
    durations = [{k: v / 1000 for k, v in p["durationMs"].items()}
                 for p in query.recentProgress if p["numInputRows"]]
    Path(progress).write_text(json.dumps(durations))
    spark.stop()


# -- parent -----------------------------------------------------------------------------------


def make_input(directory: Path, files: int, rows: int) -> Counter[int]:
    import pyarrow as pa  # type: ignore[import-untyped]
    import pyarrow.parquet as pq  # type: ignore[import-untyped]

    directory.mkdir(parents=True)
    for n in range(files):
        ids = list(range(n * rows, (n + 1) * rows))
        pq.write_table(pa.table({"id": ids, "part": [i % 4 for i in ids],
                                 "payload": [f"event-{i:012d}" * 4 for i in ids]}),
                       directory / f"in-{n:03d}.parquet")
        time.sleep(0.01)  # distinct modification times: the source reads them in order
    return Counter(range(files * rows))


def _visible_parquet(dest: Path) -> list[Path]:
    return sorted(p for p in dest.rglob("*.parquet")
                  if not any(part.startswith(("_", ".")) for part in p.relative_to(dest).parts))


def _ids(files: list[Path], unreadable: list[str] | None = None) -> Counter[int]:
    """Row ids in ``files``; a file that is not valid Parquet (a killed task's partial file)
    goes to ``unreadable`` (a reader like pyarrow's dataset fails on it)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    ids: Counter[int] = Counter()
    for f in files:
        try:
            ids.update(pq.read_table(f, columns=["id"]).column("id").to_pylist())
        except pa.ArrowInvalid:
            if unreadable is None:
                raise
            unreadable.append(str(f))
    return ids


def sink_reader_ids(sink: str, dest: Path) -> Counter[int]:
    """Rows as the sink's own reader sees them."""
    if sink == "zerorename":
        import zerorename as zr
        from zerorename.table_log import table_files

        return _ids([Path(f.url[len("file://"):]) for f in
                     table_files(zr.LocalStore(), f"file://{dest}")])
    logged: list[Path] = []
    for entry in sorted((dest / "_spark_metadata").iterdir()):
        if entry.name.split(".")[0].isdigit() and not entry.name.endswith(".tmp"):
            for line in entry.read_text().splitlines()[1:]:
                path = json.loads(line)["path"]
                logged.append(Path(path.removeprefix("file:")))
    return _ids(logged)


def uncommitted_output(sink: str, dest: Path) -> bool:
    """The kill point: tasks of some batch wrote, and the sink has not committed it."""
    if not dest.exists():
        return False
    if sink == "zerorename":
        import zerorename as zr

        log = dest / "_zerorename_log"
        recorded = {p.stem.lstrip("0") or "0" for p in log.glob("*.json")}
        for u in zr.LocalStore().list_multipart_uploads(f"file://{dest}/"):
            batch = u.url.rsplit("-b", 1)[-1].split(".")[0].split("-")[0]
            if batch not in recorded:
                return True
        return False
    meta = dest / "_spark_metadata"
    named = set()
    if meta.exists():
        for entry in meta.iterdir():
            if entry.name.isdigit():
                named |= {json.loads(line)["path"].removeprefix("file:")
                          for line in entry.read_text().splitlines()[1:]}
    return any(str(f) not in named for f in _visible_parquet(dest))


def start(sink: str, work: Path, progress: Path) -> subprocess.Popen[bytes]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(ROOT / "reference"), str(ROOT / "model"), os.environ.get("PYTHONPATH", "")])}
    return subprocess.Popen(
        [sys.executable, __file__, "--child", sink, str(work / "in"), str(work / "out"),
         str(work / "checkpoint"), str(progress)],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)


def run(sink: str, work: Path, want: Counter[int], kill: bool, timeout: float
        ) -> dict[str, Any]:
    progress = work / "progress.json"
    started = time.monotonic()
    killed_at = None
    proc = start(sink, work, progress)
    if kill:
        while proc.poll() is None and time.monotonic() - started < timeout:
            if uncommitted_output(sink, work / "out"):
                os.killpg(proc.pid, signal.SIGKILL)
                killed_at = round(time.monotonic() - started, 2)
                break
            time.sleep(0.005)
        proc.wait()
        proc = start(sink, work, progress)  # the restart, from the checkpoint
    proc.wait(timeout=timeout)
    wall = time.monotonic() - started
    dest = work / "out"
    sink_ids, listed = sink_reader_ids(sink, dest), _visible_parquet(dest)
    unreadable: list[str] = []
    list_ids = _ids(listed, unreadable)
    breakdown = json.loads(progress.read_text()) if progress.exists() else []
    durations = [b.get("triggerExecution", 0.0) for b in breakdown]
    later = breakdown[1:]
    return {
        "sink": sink, "killed": kill, "killed_after_s": killed_at, "exit": proc.returncode,
        "wall_s": round(wall, 2),
        "batches_in_last_start": len(durations),
        "seconds_per_batch": round(sum(durations) / len(durations), 3) if durations else None,
        "first_batch_s": round(durations[0], 3) if durations else None,
        "later_batches_median_s": (round(statistics.median(durations[1:]), 3)
                                   if len(durations) > 1 else None),
        "later_batches_median_breakdown_s": {
            k: round(statistics.median(b.get(k, 0.0) for b in later), 3)
            for k in sorted({k for b in later for k in b})} if later else {},
        "sink_reader": {"lost": sum((want - sink_ids).values()),
                        "duplicated": sum((sink_ids - want).values())},
        "listing_reader": {"lost": sum((want - list_ids).values()),
                           "duplicated": sum((list_ids - want).values()),
                           "files": len(listed), "unreadable_files": len(unreadable)},
    }


def bench_arguments(doc: str, child: tuple[str, ...], *, files: int, rows: int,
                    work: Path) -> argparse.ArgumentParser:
    """The command line both streaming benches share (this one and ``stream_sink_profile``):
    the same input generator sized the same way, a scratch directory, the results directory,
    and ``--child`` for the query process each run starts (``child`` names its arguments)."""
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    parser.add_argument("--child", nargs=len(child), metavar=child)
    parser.add_argument("--files", type=int, default=files, help="input files = micro-batches")
    parser.add_argument("--rows", type=int, default=rows, help="rows per input file")
    parser.add_argument("--work", type=Path, default=work)
    parser.add_argument("--out", type=Path, default=ROOT / "bench/results/stream_sink")
    return parser


def main() -> int:
    parser = bench_arguments(__doc__, ("SINK", "IN", "OUT", "CKPT", "PROGRESS"), files=6,
                             rows=200_000, work=Path("/tmp/zerorename-stream-bench"))
    parser.add_argument("--timeout", type=float, default=900)
    args = parser.parse_args()
    if args.child:
        child(*args.child)
        return 0
    shutil.rmtree(args.work, ignore_errors=True)
    source = args.work / "input"
    want = make_input(source, args.files, args.rows)
    results = []
    for kill in (False, True):
        for sink in SINKS:
            work = args.work / f"{sink}-{'killed' if kill else 'clean'}"
            work.mkdir(parents=True)
            (work / "in").symlink_to(source)
            result = run(sink, work, want, kill, args.timeout)
            print(json.dumps(result), flush=True)
            results.append(result)
    args.out.mkdir(parents=True, exist_ok=True)
    report = {"files": args.files, "rows_per_file": args.rows,
              "machine": {"python": platform.python_version(), "cpus": os.cpu_count()},
              "runs": results}
    (args.out / "results.json").write_text(json.dumps(report, indent=2) + "\n")
    (args.out / "results.md").write_text(render(report))
    return 0


def render(report: dict[str, Any]) -> str:
    lines = [f"# Streaming sinks side by side ({report['files']} micro-batches of "
             f"{report['rows_per_file']:,} rows, local filesystem, local[2])", "",
             "| sink | run | s/batch (mean) | first batch s | later batches s (median) | "
             "of which addBatch | sink reader lost / dup | listing lost / dup | "
             "listed files (not Parquet) |", "|---|---|---|---|---|---|---|---|---|"]
    for r in report["runs"]:
        run_name = (f"killed at {r['killed_after_s']} s, restarted" if r["killed"]
                    else "clean")
        lines.append(f"| {r['sink']} | {run_name} | {r['seconds_per_batch']} | "
                     f"{r['first_batch_s']} | {r['later_batches_median_s']} | "
                     f"{r['later_batches_median_breakdown_s'].get('addBatch')} | "
                     f"{r['sink_reader']['lost']} / {r['sink_reader']['duplicated']} | "
                     f"{r['listing_reader']['lost']} / {r['listing_reader']['duplicated']} | "
                     f"{r['listing_reader']['files']} "
                     f"({r['listing_reader']['unreadable_files']}) |")
    lines += ["", "Seconds are Spark's `triggerExecution` per micro-batch; in a killed run, "
              "those of the restarted query.  The first batch of each query includes starting "
              "its Python workers (a Python sink's planner, task workers and commit runner).",
              "", "Produced by `python bench/stream_sink.py` (one invocation, both sinks)."]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())
