"""bench/spark_native.py's ratios and bench/spark_render.py's README block (no Spark needed)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))

import spark_native  # noqa: E402
import spark_render  # noqa: E402
import spark_summary  # noqa: E402


def _run(round_: int, strategy: str, seconds: float, size: int | None) -> dict[str, object]:
    return {"round": round_, "strategy": strategy, "seconds": seconds, "bytes": size,
            "cpu_seconds": 2 * seconds, "load_average": 1.0}


def test_ratios_pair_each_round_with_native_s_own() -> None:
    # round 0 is twice as slow for everyone (load): paired ratios stay 1.5x and 0.5x
    runs = [_run(0, "native", 2.0, 100), _run(0, "zr-local", 3.0, 104),
            _run(0, "spark-scan", 1.0, None),
            _run(1, "native", 1.0, 100), _run(1, "zr-local", 1.5, 104),
            _run(1, "spark-scan", 0.5, None)]
    rows = {r["strategy"]: r for r in spark_summary.summarise(runs, rows=3_000)}
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


def _s3a_run(round_: int, strategy: str, seconds: float, per_file: float) -> dict[str, object]:
    return {**_run(round_, strategy, seconds, 100), "requests_per_file": per_file, "files": 4}


def test_fenced_ratios_to_the_faster_s3a_and_the_minimal_pair_each_round() -> None:
    """The JVM fenced's time / the faster S3A committer's and time and requests per file /
    the minimal's, each the median of same-round ratios: round 0 is twice as slow for all
    (load), which an unpaired ratio of medians would charge unevenly."""
    runs = [_run(0, "native", 2.0, 100), _run(1, "native", 1.0, 100),
            _s3a_run(0, "s3a-magic-moto", 4.0, 26.75), _s3a_run(1, "s3a-magic-moto", 1.5, 26.75),
            _s3a_run(0, "s3a-directory-moto", 3.0, 7.0),
            _s3a_run(1, "s3a-directory-moto", 2.0, 7.0),
            _s3a_run(0, "s3a-fenced-moto", 2.2, 6.0), _s3a_run(1, "s3a-fenced-moto", 1.0, 6.0),
            _s3a_run(0, "s3a-minimal-moto", 2.0, 4.0), _s3a_run(1, "s3a-minimal-moto", 1.0, 5.0)]
    rows = {r["strategy"]: r for r in spark_summary.summarise(runs, rows=3_000)}
    fenced = rows["s3a-fenced-moto"]
    # directory is the faster by its median (2.5 s against 2.75 s); 2.2/3.0 and 1.0/2.0
    assert fenced["faster_s3a"] == "s3a-directory-moto"
    assert fenced["faster_s3a_time_ratio"] == 0.617
    # 2.2/2.0 and 1.0/1.0 (unpaired: 1.6/1.5 = 1.067); 6/4 and 6/5
    assert fenced["minimal_time_ratio"] == 1.05
    assert fenced["minimal_requests_ratio"] == 1.35
    assert "minimal_time_ratio" not in rows["s3a-minimal-moto"]
    block = "\n".join(spark_render._s3a_table(
        {"cells": [{"rows": 3_000, "partitioned": False, "summary": list(rows.values())}]}))
    assert ("| `minimal` in Spark's writer | `fenced` / faster S3A, time "
            "| `fenced` / `minimal`, time, requests per file |") in block
    assert ("| 3,000 | no | moto | 1.75x, 26.8 req/file | 1.75x, 7.0 req/file "
            "| 1.05x, 6.0 req/file | 1.00x, 4.5 req/file | 0.62x (`directory`) "
            "| 1.05x, 1.35x |  |") in block


def test_the_fenced_ratios_show_how_far_the_rounds_stray() -> None:
    """Where the cell kept its runs, each of fenced's paired time ratios comes with the lowest
    and highest same-round ratio (the median alone hides a round 1.4x off)."""
    runs = [_run(r, "native", 1.0, 100) for r in range(3)] + [
        _s3a_run(0, "s3a-magic-moto", 3.0, 26.75), _s3a_run(1, "s3a-magic-moto", 3.0, 26.75),
        _s3a_run(2, "s3a-magic-moto", 3.0, 26.75),
        _s3a_run(0, "s3a-directory-moto", 2.0, 7.0), _s3a_run(1, "s3a-directory-moto", 2.0, 7.0),
        _s3a_run(2, "s3a-directory-moto", 2.0, 7.0),
        _s3a_run(0, "s3a-fenced-moto", 1.0, 6.0), _s3a_run(1, "s3a-fenced-moto", 1.4, 6.0),
        _s3a_run(2, "s3a-fenced-moto", 1.2, 6.0),
        _s3a_run(0, "s3a-minimal-moto", 1.0, 4.0), _s3a_run(1, "s3a-minimal-moto", 1.0, 4.0),
        _s3a_run(2, "s3a-minimal-moto", 1.0, 4.0)]
    assert spark_summary.paired_range(runs, "s3a-fenced-moto", "seconds",
                                      "s3a-minimal-moto") == (1.0, 1.4, 3)
    assert spark_summary.round_ratios(runs, "s3a-fenced-moto", "seconds",
                                      "s3a-minimal-moto") == [1.0, 1.4, 1.2]
    summary = spark_summary.summarise(runs, rows=3_000)
    cell = {"rows": 3_000, "partitioned": False, "summary": summary}
    without = "\n".join(spark_render._s3a_table({"cells": [cell]}))
    assert "| 0.60x (`directory`) | 1.20x, 1.50x |" in without
    block = "\n".join(spark_render._s3a_table({"cells": [{**cell, "runs": runs}]}))
    assert ("| 0.60x (`directory`; rounds 0.50\u20130.70) "
            "| 1.20x (rounds 1.00\u20131.40), 1.50x |") in block
