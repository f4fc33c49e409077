"""bench/spark_native.py's ratios and bench/spark_render.py's README block (no Spark needed)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))

import spark_native  # noqa: E402
import spark_render  # noqa: E402


def _run(round_: int, strategy: str, seconds: float, size: int | None) -> dict[str, object]:
    return {"round": round_, "strategy": strategy, "seconds": seconds, "bytes": size,
            "cpu_seconds": 2 * seconds, "load_average": 1.0}


def test_ratios_pair_each_round_with_native_s_own() -> None:
    # round 0 is twice as slow for everyone (load): paired ratios stay 1.5x and 0.5x
    runs = [_run(0, "native", 2.0, 100), _run(0, "zr-local", 3.0, 104),
            _run(0, "spark-scan", 1.0, None),
            _run(1, "native", 1.0, 100), _run(1, "zr-local", 1.5, 104),
            _run(1, "spark-scan", 0.5, None)]
    rows = {r["strategy"]: r for r in spark_native.summarise(runs, rows=3_000)}
    assert rows["zr-local"]["time_ratio"] == 1.5 and rows["zr-local"]["bytes_ratio"] == 1.04
    assert rows["spark-scan"]["time_ratio"] == 0.5 and rows["spark-scan"]["bytes_ratio"] is None
    assert rows["native"]["seconds"] == 1.5 and rows["native"]["rows_per_second"] == 2_000
    assert rows["zr-local"]["cpu_ratio"] == 1.5 and rows["native"]["cpu_seconds"] == 3.0


def test_tree_cpu_seconds_counts_a_child_that_has_exited() -> None:
    import os
    import subprocess

    before = spark_native.tree_cpu_seconds(os.getpid())
    subprocess.run([sys.executable, "-c", "sum(i * i for i in range(3_000_000))"], check=True)
    after = spark_native.tree_cpu_seconds(os.getpid())
    assert before is not None and after is not None and after - before > 0.05


def test_readme_block_is_what_the_results_render_to() -> None:
    report = json.loads(spark_render.RESULTS.read_text())
    block = spark_render._section(spark_render.README.read_text())
    assert block is not None, "README.md lost its spark-write markers"
    assert block == spark_render.readme_block(report), \
        "stale: run .venv/bin/python bench/spark_render.py"
    ours = next(r for r in report["cells"][0]["summary"] if r["strategy"] == "zr-local")
    ours["time_ratio"] = 9.99
    assert spark_render.readme_block(report) != block
