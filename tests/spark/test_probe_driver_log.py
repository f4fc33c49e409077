"""``df.write.format("zerorename")`` called directly (not through ``zerorename.spark.write``):
``auto`` is decided in the data source's ``writer()``, which Spark runs in a planning Python
worker on the driver host, and the decision must reach the *driver's* log, not only
``_SUCCESS``.  The driver is a child process here so that its whole stderr (the JVM's, and the
driver-side workers' that Spark copies into it) is what the test reads; its own Python logging
is left unconfigured, as in a user's script, so the line can only come from the worker.  The
job commit runs in such a worker too: its per-stage lines must reach the driver's log as well."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

DRIVER = """
import sys
from zerorename.spark.session import local_session

spark = local_session("local[2]", warm=False)
spark.range(20).toDF("x").write.format("zerorename").mode("append").save(sys.argv[1])
spark.stop()
"""


@pytest.mark.spark
@pytest.mark.slow
def test_a_direct_format_write_says_autos_decision_in_the_drivers_log(tmp_path: Path) -> None:
    script = tmp_path / "driver.py"
    script.write_text(DRIVER)
    dest = tmp_path / "out"
    path = [str(REPO / "reference"), str(REPO / "model"), os.environ.get("PYTHONPATH", "")]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in path if p),
               PYSPARK_PYTHON=sys.executable, PYSPARK_DRIVER_PYTHON=sys.executable)
    done = subprocess.run([sys.executable, str(script), f"file://{dest}"], env=env,
                          capture_output=True, text=True, timeout=540, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    reason = json.loads((dest / "_SUCCESS").read_text())["diagnostics"]["committer.choice"]
    said = [line for line in done.stderr.splitlines() if "auto chose" in line]
    assert said, done.stderr[-3000:]
    assert reason in said[0] and said[0].endswith(f"writing file://{dest} with fenced")
    assert reason.startswith("auto chose fenced")
    # the job's stages (set up and committed in driver-side workers) reach the driver's log,
    # one line each; the tasks' stage lines (DEBUG) stay in the workers
    stages = [line for line in done.stderr.splitlines() if "zerorename.committer:" in line]
    assert any("setup done" in line for line in stages), done.stderr[-3000:]
    assert any("job commit done" in line and " files, " in line for line in stages), stages
    assert not [line for line in stages if ": task " in line], stages
