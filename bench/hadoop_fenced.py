"""zerorename's JVM ``fenced`` committer explored under the model's harness in the quick scopes
(``zerorename check --target hadoop --quick``, S3A and the committer's own S3 client on moto),
every property the Hadoop target decides, beside the model's ``fenced`` verdicts on s3
(paper/results/verdicts.json).

    .venv/bin/python bench/hadoop_fenced.py [--runs 40] [--traces DIR]

Writes bench/results/hadoop_fenced.{md,json}.  The same run from the command line:

    zerorename check --target hadoop --store s3 --quick \\
        --committer hadoop:io.zerorename.committer.FencedCommitter \\
        --jar reference/zerorename/spark/jars/zerorename-spark.jar
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from zerorename.spark.jvm import packaged_jar
from zerorename_bridge.hadoop import check
from zerorename_model.experiments.explored import Held

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results"
FENCED = "hadoop:io.zerorename.committer.FencedCommitter"


def model_verdicts() -> dict[tuple[str, str], str]:
    """The model's ``fenced`` on s3: (property, protocol) -> verdict."""
    cells = json.loads((ROOT / "paper/results/verdicts.json").read_text())["cells"]
    found: dict[tuple[str, str], str] = {}
    for cell in cells:
        if cell["committer"] == "fenced" and cell["store"] == "s3" and not cell.get("bug"):
            key = (cell["property"], cell["protocol"])
            # a property decided by several families: violated anywhere is violated
            if found.get(key) != "violated":
                found[key] = cell["verdict"]
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=check.QUICK_RUNS,
                        help="runs per scope (the quick budget by default)")
    parser.add_argument("--traces", default=None, help="where violations' witnesses go")
    args = parser.parse_args()
    start = time.monotonic()
    cells = check.run_check([FENCED], ["s3"], list(check.PROPERTIES), quick=True,
                            traces=args.traces, jars=[str(packaged_jar())],
                            max_runs=args.runs, progress=lambda line: print(line, flush=True))
    seconds = time.monotonic() - start
    model = model_verdicts()
    rows = []
    for cell in cells:
        explored = cell.explored
        rows.append({
            "property": cell.prop, "protocol": str(cell.protocol), "jvm": cell.shown,
            "verdict": str(cell.verdict), "model": model.get((cell.prop, str(cell.protocol)), "-"),
            "runs": explored.runs if isinstance(explored, Held) else None,
            "complete": explored.complete if isinstance(explored, Held) else None,
            "trace": cell.trace})
    report = {"committer": FENCED, "store": "s3 (moto)", "runs_per_scope": args.runs,
              "seconds": round(seconds), "cells": rows}
    lines = [f"# The JVM fenced committer under the model's harness ({args.runs} runs per "
             f"scope, {round(seconds)} s)", "",
             "| property | protocol | JVM fenced | runs | model fenced (s3) |",
             "|---|---|---|---|---|"]
    lines += [f"| {r['property']} | {r['protocol']} | {r['jvm']} | {r['runs'] or '-'} | "
              f"{r['model']} |" for r in rows]
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "hadoop_fenced.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (RESULTS / "hadoop_fenced.json").write_text(json.dumps(report, indent=1) + "\n",
                                                encoding="utf-8")
    print("\n".join(lines))
    return 0 if all(r["verdict"] != "violated" for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
