"""What scripts/check-clean-install.sh runs inside a fresh virtualenv that holds the
``zerorename[spark]`` wheel alone (plus moto, installed separately as test tooling).

It checks that the production distribution works without the research tower: the research
packages are not importable, a committer round trip on moto publishes, a small Spark write
(``local[1]``, to a ``file://`` destination) reads back whole, the Spark writer refuses the
research-only fault options with a message naming what to install, and ``zerorename check``
answers with one line naming the distribution to install.  Each step prints one line with its
time; any failure raises (exit status 1).  It uses only the standard library, zerorename,
pyspark and moto: nothing from the repository is on its import path.
"""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

RESEARCH_PACKAGES = ("zerorename_model", "zerorename_bridge")
#: the research distribution's own dependencies: none may come with zerorename[spark]
RESEARCH_ONLY_DEPENDENCIES = ("hypothesis", "greenlet", "networkx")


def step(name: str, check: Callable[[], str]) -> None:
    started = time.monotonic()
    detail = check()
    print(f"[clean install] {name}: ok in {time.monotonic() - started:.1f} s ({detail})",
          flush=True)


def no_research_tower() -> str:
    here = [name for name in (*RESEARCH_PACKAGES, *RESEARCH_ONLY_DEPENDENCIES)
            if importlib.util.find_spec(name) is not None]
    assert here == [], f"importable in a zerorename[spark] install: {here}"
    return f"{', '.join(RESEARCH_PACKAGES + RESEARCH_ONLY_DEPENDENCIES)} not importable"


def committer_round_trip_on_moto() -> str:
    from moto import mock_aws

    import zerorename as zr

    with mock_aws():
        client = zr.make_s3_client(region="us-east-1")
        client.create_bucket(Bucket="clean-install")
        store = zr.S3Store(client)
        job = zr.JobContext(dest="s3://clean-install/out")
        driver = zr.create_committer("magic", store, job)
        driver.setup_job()
        messages = []
        for task_id in range(2):
            task = zr.create_committer("magic", store, job, task=job.task(task_id))
            task.setup_task()
            with task.open(f"part={task_id}/data-{task_id}.bin") as out:
                out.write(b"x" * (task_id + 1))
            messages.append(task.commit_task())
        driver.commit_job(messages)
        visible = sorted(info.url for info in zr.list_dir(store, "s3://clean-install/out"))
        success = zr.read_success(store, "s3://clean-install/out")
    expected = ["s3://clean-install/out/_SUCCESS", "s3://clean-install/out/part=0/data-0.bin",
                "s3://clean-install/out/part=1/data-1.bin"]
    assert visible == expected, visible
    assert success.committer == "magic", success
    return "magic: 2 tasks committed, _SUCCESS read back"


def spark_write_and_read_back() -> str:
    import zerorename.spark as zrs
    from zerorename.spark.hooks import TaskHookOptionError
    from zerorename.spark.session import local_session

    spark = local_session("local[1]", app_name="zerorename-clean-install", log_level="ERROR")
    tmp = Path(tempfile.mkdtemp(prefix="zerorename-clean-spark-"))
    try:
        dest = f"file://{tmp}/events"
        df = spark.range(0, 60, 1, 2).selectExpr("id", "cast(id % 3 as int) as part")
        success = zrs.write(df, dest, committer="magic", partition_by=["part"])
        back = sorted((row.id, row.part) for row in spark.read.parquet(dest).collect())
        assert back == [(i, i % 3) for i in range(60)], back[:5]
        assert success is not None and success.committer == "magic"
        try:
            zrs.write(df, f"file://{tmp}/faulty", committer="magic",
                      **{"zerorename.fault.raise_after_write": "0@0"})
        except TaskHookOptionError as error:
            assert "zerorename-research" in str(error), error
        else:
            raise AssertionError("a fault option was accepted without its provider")
    finally:
        spark.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    return "60 rows through magic to file://, read back; fault options refused"


def check_names_the_research_distribution() -> str:
    command = Path(sys.executable).parent / "zerorename"
    result = subprocess.run([str(command), "check", "--target", "reference"],
                            capture_output=True, text=True, timeout=120, check=False)
    lines = result.stderr.splitlines()
    assert result.returncode == 2, (result.returncode, result.stderr)
    assert len(lines) == 1 and "zerorename-research" in lines[0], lines
    assert "pip install -e ./model" in lines[0], lines
    assert result.stdout == "", result.stdout
    listed = subprocess.run([str(command), "uploads", "--help"], capture_output=True,
                            text=True, timeout=120, check=False)
    assert listed.returncode == 0, listed.stderr
    return lines[0]


def main() -> int:
    step("no research tower", no_research_tower)
    step("committer round trip on moto", committer_round_trip_on_moto)
    step("zerorename check", check_names_the_research_distribution)
    step("Spark write, local[1]", spark_write_and_read_back)
    return 0


if __name__ == "__main__":
    sys.exit(main())
