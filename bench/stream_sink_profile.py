"""Where a micro-batch's time goes in zerorename's stream sink: Spark's own breakdown of each
batch (``durationMs``), the time spent inside the sink's task ``write()`` and driver
``commit()`` (measured by a subclass of the sink that times them, in whichever Spark process
runs them), and the CPU a fresh Python process spends importing what those processes import.

    python bench/stream_sink_profile.py          # writes bench/results/stream_sink/profile.*
    python bench/stream_sink_profile.py --files 3 --rows 20000 --out /tmp/x

The same input as ``bench/stream_sink.py`` (one file per micro-batch), local filesystem,
``local[2]``; one query start, so its first batch includes starting Spark's Python workers.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))

import stream_sink  # noqa: E402  (the input generator of the side-by-side bench)

#: what each Spark Python process imports before it can run the sink, timed in a fresh one
IMPORTS = {
    "pyspark.sql.datasource + pyarrow": "import pyspark.sql.datasource, pyarrow, pyarrow.parquet",
    "boto3": "import boto3",
    "zerorename (after boto3)": "import zerorename.spark.streaming_writer",
}


def import_cpu() -> dict[str, float]:
    """CPU seconds of each import step, in one fresh process, in order."""
    steps = "\n".join(f"t = time.process_time(); {code}; out[{name!r}] = "
                      f"round(time.process_time() - t, 3)" for name, code in IMPORTS.items())
    script = f"import json, time\nout = {{}}\n{steps}\nprint(json.dumps(out))"
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          check=True, env=_env())
    return json.loads(done.stdout)  # type: ignore[no-any-return]


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(ROOT / "reference"), str(Path(__file__).resolve().parent),
         os.environ.get("PYTHONPATH", "")])}


def child(source: str, dest: str, checkpoint: str, timings: str, progress: str) -> None:
    import stream_sink_timing
    from pyspark import cloudpickle

    from zerorename.spark.session import local_session

    cloudpickle.register_pickle_by_value(stream_sink_timing)
    os.environ["ZR_STREAM_TIMINGS"] = timings
    spark = local_session("local[2]", app_name="stream-profile")
    spark.dataSource.register(stream_sink_timing.TimingSource)
    df = (spark.readStream.schema("id long, part long, payload string")
          .option("maxFilesPerTrigger", 1).parquet(source))
    query = (df.writeStream.format("zerorename_timing").option("partition_by", "part")
             .option("timings", timings).option("checkpointLocation", checkpoint)
             .trigger(availableNow=True).start(f"file://{dest}"))
    query.awaitTermination()
    Path(progress).write_text(json.dumps(
        [{"batch": p["batchId"], **{k: v / 1000 for k, v in p["durationMs"].items()}}
         for p in query.recentProgress if p["numInputRows"]]))
    spark.stop()


def main() -> int:
    parser = stream_sink.bench_arguments(
        __doc__, ("IN", "OUT", "CKPT", "TIMINGS", "PROGRESS"), files=5, rows=100_000,
        work=Path("/tmp/zerorename-stream-profile"))
    args = parser.parse_args()
    if args.child:
        child(*args.child)
        return 0
    shutil.rmtree(args.work, ignore_errors=True)
    stream_sink.make_input(args.work / "in", args.files, args.rows)
    timings, progress = args.work / "timings.jsonl", args.work / "progress.json"
    subprocess.run([sys.executable, __file__, "--child", str(args.work / "in"),
                    str(args.work / "out"), str(args.work / "checkpoint"), str(timings),
                    str(progress)], env=_env(), check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    notes = [json.loads(line) for line in timings.read_text().splitlines()]
    batches = []
    for p in json.loads(progress.read_text()):
        b = p["batch"]
        batches.append({**p, "sink_task_write_s": round(sum(
            n["s"] for n in notes if n["what"] == "write" and n["batch"] == b), 3),
            "sink_driver_commit_s": round(sum(
                n["s"] for n in notes if n["what"] == "commit" and n["batch"] == b), 3)})
    report = {"files": args.files, "rows_per_file": args.rows, "batches": batches,
              "import_cpu_s": import_cpu(),
              "python_processes_running_sink_code": len({n["pid"] for n in notes})}
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "profile.json").write_text(json.dumps(report, indent=2) + "\n")
    (args.out / "profile.md").write_text(render(report))
    print(render(report))
    return 0


def render(report: dict[str, Any]) -> str:
    lines = [f"# Where a batch's time goes: zerorename's stream sink ({report['files']} "
             f"micro-batches of {report['rows_per_file']:,} rows, local filesystem, local[2])",
             "", "| batch | triggerExecution s | addBatch s | sink task write() s | "
             "sink driver commit() s | walCommit s | commitOffsets s |",
             "|---|---|---|---|---|---|---|"]
    for b in report["batches"]:
        lines.append(f"| {b['batch']} | {b.get('triggerExecution')} | {b.get('addBatch')} | "
                     f"{b['sink_task_write_s']} | {b['sink_driver_commit_s']} | "
                     f"{b.get('walCommit')} | {b.get('commitOffsets')} |")
    lines += ["", "CPU seconds to import, in a fresh Python process (each of Spark's Python "
              "processes that runs the sink pays it once):", "",
              "| import | CPU s |", "|---|---|"]
    lines += [f"| {k} | {v} |" for k, v in report["import_cpu_s"].items()]
    lines += ["", f"Python processes that ran sink code: "
              f"{report['python_processes_running_sink_code']}.  `write()` includes reading "
              "the batch's rows from Spark (Arrow) and writing Parquet; `commit()` is the "
              "driver's whole commit (epoch check, batch record, completes, cleanup).", "",
              "Produced by `python bench/stream_sink_profile.py`."]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())
