"""The smoke test of the zerorename wheel installed alone (no extra, nothing of the repository
on the import path), run by scripts/check-clean-install.sh inside that virtualenv.

Usage: ``clean_install_smoke.py SDIST WHEEL``.  Checks, one line each: the package imports and
says the version its metadata and file names carry; ``py.typed`` ships in the wheel and the
sdist; zerorename's jar is in the wheel, built at the wheel's version; ``zerorename --help``
lists the production commands and ``zerorename --version`` prints the version; a job of two
tasks written to ``LocalStore`` through ``fenced`` publishes both files and a ``_SUCCESS`` that
``zerorename success`` reads back.  Only the standard library and zerorename are used (and the
step printer of clean_install_probe.py beside it).
"""

from __future__ import annotations

import subprocess
import sys
import tarfile
import tempfile
import zipfile
from importlib.metadata import version
from pathlib import Path

from clean_install_probe import step  # beside this file: sys.path[0] when run as a script


def main(sdist: Path, wheel: Path) -> int:
    import zerorename as zr

    assert "/site-packages/" in zr.__file__, f"not the installed package: {zr.__file__}"
    command = str(Path(sys.executable).parent / "zerorename")

    def versions() -> str:
        assert zr.__version__ == version("zerorename"), (zr.__version__, version("zerorename"))
        assert f"-{zr.__version__}" in wheel.name and f"-{zr.__version__}." in sdist.name
        return zr.__version__

    def typed() -> str:
        with zipfile.ZipFile(wheel) as z:
            assert "zerorename/py.typed" in z.namelist()
        with tarfile.open(sdist) as t:
            names = t.getnames()
        assert any(n.endswith("zerorename/py.typed") for n in names), names[:10]
        assert any(n.endswith("zerorename/_version.py") for n in names)
        return "py.typed in the wheel and the sdist"

    def jar() -> str:
        """zerorename's jar (Spark's Parquet encoder) travels in the wheel, built at the
        wheel's version (the Maven build's pom.properties inside it), and is installed."""
        inside = "zerorename/spark/jars/zerorename-spark.jar"
        with zipfile.ZipFile(wheel) as z:
            assert inside in z.namelist(), [n for n in z.namelist() if "jar" in n]
            data = z.read(inside)
        with tempfile.TemporaryDirectory(prefix="zerorename-smoke-") as tmp:
            copy = Path(tmp) / "zerorename-spark.jar"
            copy.write_bytes(data)
            with zipfile.ZipFile(copy) as jar_file:
                props = jar_file.read("META-INF/maven/io.zerorename/zerorename-spark/"
                                      "pom.properties").decode()
        assert f"version={zr.__version__}\n" in props, props
        installed = Path(zr.__file__).parent / "spark" / "jars" / "zerorename-spark.jar"
        assert installed.read_bytes() == data
        return f"{inside} at version {zr.__version__}"

    def cli() -> str:
        helped = subprocess.run([command, "--help"], capture_output=True, text=True,
                                timeout=60, check=True).stdout
        assert "uploads" in helped and "success" in helped, helped
        said = subprocess.run([command, "--version"], capture_output=True, text=True,
                              timeout=60, check=True).stdout.strip()
        assert said == f"zerorename {zr.__version__}", said
        return said

    def local_write() -> str:
        with tempfile.TemporaryDirectory(prefix="zerorename-smoke-") as tmp:
            dest = f"file://{tmp}/out"
            store = zr.LocalStore()
            job = zr.JobContext(dest=dest)
            driver = zr.create_committer("fenced", store, job)
            driver.setup_job()
            messages = []
            for task_id in range(2):
                task = zr.create_committer("fenced", store, job, task=job.task(task_id))
                task.setup_task()
                with task.open(f"part={task_id}/data.csv") as out:
                    out.write(b"id\n%d\n" % task_id)
                messages.append(task.commit_task())
            driver.commit_job(messages)
            files = sorted(p.relative_to(tmp).as_posix() for p in Path(tmp).rglob("*")
                           if p.is_file() and "/__" not in f"/{p.relative_to(tmp)}")
            # (``__fenced_job-<id>/commit.json``, the job's commit record, stays: not output)
            assert files == ["out/_SUCCESS", "out/part=0/data.csv", "out/part=1/data.csv"], files
            summary = subprocess.run([command, "success", dest], capture_output=True, text=True,
                                     timeout=60, check=True).stdout
            assert "fenced" in summary and "2 committed" in summary, summary
        return "fenced: 2 tasks to file://, _SUCCESS read back by `zerorename success`"

    step("import and version", versions)
    step("py.typed", typed)
    step("zerorename's jar in the wheel", jar)
    step("zerorename --help and --version", cli)
    step("a job written to LocalStore", local_write)
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]), Path(sys.argv[2])))
