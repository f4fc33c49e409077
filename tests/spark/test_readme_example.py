"""The README's PySpark example, verbatim but for its destination, in a fresh interpreter (as a
user runs it: the import first, then a session with no master set), writing to ``file://``."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import zerorename as zr

pytestmark = [pytest.mark.spark, pytest.mark.slow]

README = Path(__file__).resolve().parents[2] / "README.md"


def test_the_readmes_pyspark_example_runs(tmp_path: Path) -> None:
    # the section's first python block (a paragraph on the JVM route may stand before it)
    block = re.search(r"## From PySpark\n(?:(?!\n## ).)*?```python\n(.*?)```", README.read_text(),
                      re.S)
    assert block, "README.md lost its PySpark example"
    dest = f"file://{tmp_path}/events"
    code = block.group(1).replace("s3://bucket/events", dest)
    assert dest in code and "s3://" not in code
    env = {**os.environ, "PYSPARK_SUBMIT_ARGS":
           "--master local[2] --conf spark.ui.enabled=false --conf spark.driver.host=127.0.0.1 "
           "--conf spark.driver.bindAddress=127.0.0.1 pyspark-shell",
           "PYSPARK_PYTHON": sys.executable, "PYSPARK_DRIVER_PYTHON": sys.executable}
    result = subprocess.run([sys.executable, "-c", code + "\nspark.stop()\n"], cwd=tmp_path,
                            capture_output=True, text=True, timeout=600, check=False, env=env)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "_SUCCESS of job" in result.stdout  # print(success): the one-line summary
    success = zr.read_success(zr.LocalStore(), dest)
    assert success.committer == "magic"  # the overwrite, second, through format("zerorename")
    assert success.counter("committer_files_committed") > 0
