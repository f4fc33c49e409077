"""PySpark writes of 200 MB through ``magic``, ``directory`` and a rename-by-copy baseline.

The question: what does publishing cost when the store has no rename?  Each run writes the
same DataFrame — 8 tasks x ~25 MB of incompressible Parquet, one file per task — to a fresh
destination on an embedded S3 (moto's ThreadedMotoServer on 127.0.0.1), and records:

* wall time of the write (Spark job + job commit) and the job commit time from ``_SUCCESS``;
* requests by S3 operation, counted by the server across every process (tasks, the commit
  worker), so the numbers include everything a committer really sends;
* bytes copied server-side (CopyObject/UploadPartCopy), looked up by the server.

The baseline is the ``manifest`` committer on S3: tasks write to a temporary prefix
(``_temporary/<job>/…``) and job commit "renames" each file into place, which on S3 is a
server-side copy plus a delete — exactly what classic committers do there.  ``magic`` and
``directory`` complete multipart uploads instead and must copy 0 bytes; the script exits 1 if
they do not.  Wall times depend on the 2-core machine (client, server and Spark share it);
request counts and bytes copied do not.

    python bench/spark_write.py                  # 8 x 25 MB, writes bench/results/spark_write.json
    python bench/spark_write.py --mb-per-task 2  # a quick smoke run (not saved unless --out)

``--versus-native`` measures something else: the write path against Spark's own
``df.write.parquet`` (time, rows/s, bytes, requests per file) and, as the anchor, Spark's own
writer through Hadoop's S3A ``magic`` and ``directory`` committers on the same servers, see
``bench/spark_native.py``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "reference"))
sys.path.insert(0, str(REPO / "model"))  # EmbeddedS3: zerorename_bridge (zerorename-research)

from zerorename.spark import write  # noqa: E402
from zerorename.spark.session import local_session  # noqa: E402
from zerorename.spark.verify import visible_files  # noqa: E402
from zerorename.stores import S3Store  # noqa: E402
from zerorename_bridge.embedded_s3 import EmbeddedS3  # noqa: E402

OUT = REPO / "bench" / "results" / "spark_write.json"
RUNS = (("magic", "magic"), ("directory", "directory"),
        ("baseline: temp prefix + rename-by-copy (manifest)", "manifest"))
ZERO_COPY = ("magic", "directory")
ROW_BYTES = 4 * 32  # four 32-byte random binary columns per row


def dataset(spark: Any, tasks: int, mb_per_task: float) -> Any:
    """``tasks`` partitions of random binary columns (SHA-256 digests: Parquet cannot
    compress them, so bytes written ~ bytes generated)."""
    rows_per_task = int(mb_per_task * 1_000_000 / ROW_BYTES)
    return spark.range(0, rows_per_task * tasks, 1, tasks).selectExpr(
        "id",
        *[f"unhex(sha2(cast(id * {k + 1} as string), 256)) as c{k}" for k in range(4)])


def run(spark: Any, server: EmbeddedS3, df: Any, label: str, committer: str,
        dest: str) -> dict[str, Any]:
    counts, copied = server.snapshot()
    load = os.getloadavg()[0]  # the machine is shared: say how busy it was
    started = time.monotonic()
    success = write(df, dest, committer=committer, endpoint_url=server.endpoint)
    wall = time.monotonic() - started
    after, copied_after = server.snapshot()
    files = visible_files(S3Store(server.client()), dest)
    means = success.iostatistics.get("meanstatistics", {})
    mean = means.get("committer_commit_job.mean", {})
    stages = {k[len("job_stage_"):-len(".mean")]: v.get("sum") for k, v in sorted(means.items())
              if k.startswith("job_stage_") and isinstance(v, dict)}
    requests = {op: n - counts.get(op, 0) for op, n in sorted(after.items())
                if n - counts.get(op, 0)}
    return {
        "label": label,
        "committer": committer,
        "wall_s": round(wall, 2),
        "load_average_1m_at_start": round(load, 2),
        "commit_job_ms": mean.get("sum"),
        "commit_stages_ms": stages,
        "files": len(files),
        "bytes": sum(files.values()),
        "requests_total": sum(requests.values()),
        "requests": requests,
        "bytes_copied_server_side": copied_after - copied,
    }


def main() -> int:
    if "--versus-native" in sys.argv[1:]:
        sys.path.insert(0, str(REPO / "bench"))
        from spark_native import main as versus_native

        return versus_native([a for a in sys.argv[1:] if a != "--versus-native"])
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tasks", type=int, default=8)
    parser.add_argument("--mb-per-task", type=float, default=25.0)
    parser.add_argument("--repeat", type=int, default=2,
                        help="rounds; the committer order rotates each round (load varies)")
    parser.add_argument("--out", type=Path, default=None,
                        help=f"JSON output (default {OUT.relative_to(REPO)} for the full run)")
    args = parser.parse_args()
    out = args.out or (OUT if (args.tasks, args.mb_per_task) == (8, 25.0) else None)
    load = os.getloadavg()
    server = EmbeddedS3().start()
    server.create_bucket("bench")
    try:
        spark = local_session("local[2]", app_name="zerorename-bench",
                              conf={"spark.sql.execution.arrow.maxRecordsPerBatch": "20000"})
        df = dataset(spark, args.tasks, args.mb_per_task).cache()
        df.count()  # generate once, outside the timed writes
        # warm the Python workers (imports, clients) so the first timed run is not penalised
        write(dataset(spark, 2, 0.05), "s3://bench/warmup", committer="magic",
              endpoint_url=server.endpoint)
        results = []
        for round_ in range(args.repeat):
            shift = round_ % len(RUNS)
            for label, committer in RUNS[shift:] + RUNS[:shift]:
                print(f"[bench] round {round_ + 1}: {label}: writing {args.tasks} x "
                      f"{args.mb_per_task} MB", flush=True)
                dest = f"s3://bench/{committer}-{round_}"
                results.append({"round": round_ + 1,
                                **run(spark, server, df, label, committer, dest)})
                print(json.dumps(results[-1]), flush=True)
        spark.stop()
    finally:
        server.stop()
    import moto
    import pyarrow  # type: ignore[import-untyped]
    import pyspark

    report = {
        "benchmark": "spark_write",
        "description": f"PySpark DataFrame write of {args.tasks} tasks x {args.mb_per_task} MB "
                       "(one Parquet file per task) to moto ThreadedMotoServer on 127.0.0.1, "
                       "local[2]; requests and bytes copied counted by the server",
        "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "versions": {"python": platform.python_version(), "pyspark": pyspark.__version__,
                     "pyarrow": pyarrow.__version__, "moto": moto.__version__,
                     "cpus": os.cpu_count()},
        "load_average_at_start": list(load),
        "runs": results,
    }
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(report, indent=2) + "\n")
        print(f"[bench] wrote {out}")
    copying = [r["label"] for r in results
               if r["committer"] in ZERO_COPY and r["bytes_copied_server_side"]]
    if copying:
        print(f"[bench] FAIL: {copying} copied bytes server-side", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
