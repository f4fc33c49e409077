"""The staging committers' local directories (``fs.s3a.buffer.dir``): many task attempts of a
job share one host and one job directory, each with its own attempt directory, and a key's
local file must never depend on the key's shape."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import zerorename as zr
from zerorename.committers.staging import BUFFER_DIR_OPTION

from .conftest_helpers import Env, options, run_job

pytestmark = pytest.mark.usefixtures("no_leaked_threads")

STAGING = ("directory", "partitioned")


def _job(committer: str, env: Env, buffer: Path, job_id: str = "job-local"
         ) -> tuple[zr.JobContext, zr.BaseCommitter]:
    job = zr.JobContext(env.dest(), job_id=job_id,
                        options=options(**{BUFFER_DIR_OPTION: str(buffer)}))
    driver = zr.create_committer(committer, env.store, job)
    driver.setup_job()
    return job, driver


def _set_up(committer: str, env: Env, job: zr.JobContext, task_id: int,
            attempt: int = 0) -> zr.BaseCommitter:
    tc = zr.create_committer(committer, env.store, job, task=job.task(task_id, attempt))
    tc.setup_task()
    return tc


@pytest.mark.parametrize("committer", STAGING)
def test_setup_task_survives_a_sibling_emptying_the_job_directory(
        committer: str, local_env: Env, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The interleaving behind the failure, forced: task 1 has created the job's local
    directory and is about to create its attempt directory inside it when task 2 (set up
    again, or aborted) deletes its own attempt directory and finds the job directory empty.
    Task 1's set-up must still succeed, with its directory in place."""
    buffer = tmp_path / "buffer"
    job, _driver = _job(committer, local_env, buffer)
    sibling = _set_up(committer, local_env, job, 2)
    sibling.abort_task()  # the job directory is gone: task 1 must create it
    job_dir = buffer / job.id
    assert not job_dir.exists()
    injected: list[str] = []
    real_mkdir: Callable[..., Any] = os.mkdir

    def mkdir(path: Any, *args: Any, **kwargs: Any) -> None:
        target = Path(os.fsdecode(path))
        if not injected and target.parent == job_dir and job_dir.is_dir():
            injected.append(str(target))
            sibling.abort_task()  # rmdir of the (for now) empty job directory
        real_mkdir(path, *args, **kwargs)

    monkeypatch.setattr(os, "mkdir", mkdir)
    task = zr.create_committer(committer, local_env.store, job, task=job.task(1))
    task.setup_task()
    monkeypatch.undo()
    assert injected, "the interleaving was not reached"
    task.write("part-1", b"1")
    local = task.local_work_dir  # type: ignore[attr-defined]
    assert isinstance(local, Path) and local.is_dir()
    task.commit_task()


@pytest.mark.parametrize("committer", STAGING)
def test_concurrent_task_setups_on_one_host(committer: str, local_env: Env,
                                            tmp_path: Path) -> None:
    """16 threads set up (and abort) 400 task attempts of one job on one host: every set-up
    succeeds, although each abort removes the job directory whenever it is empty."""
    job, _driver = _job(committer, local_env, tmp_path / "buffer")
    errors: list[BaseException] = []
    lock = threading.Lock()
    start = threading.Barrier(16)

    def worker(thread: int) -> None:
        start.wait()
        for n in range(25):
            try:
                tc = zr.create_committer(committer, local_env.store, job,
                                         task=job.task(thread * 100 + n))
                tc.setup_task()
                tc.abort_task()
            except BaseException as exc:  # collected: the test reports every failure
                with lock:
                    errors.append(exc)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == [], f"{len(errors)} of 400 set-ups failed, first: {errors[0]!r}"


@pytest.mark.parametrize("area", ["magic", "fenced"])
def test_directory_replace_keeps_every_other_committers_job_area(area: str,
                                                                 moto_env: Env) -> None:
    """Conflict mode ``replace`` deletes the destination before publishing, but never another
    job's committer area: a ``magic`` or ``fenced`` job writing to the same destination keeps
    every record it has saved (marker, task records), and commits its output after ours with
    Hadoop's protocol, which finds its committed tasks by listing those records."""
    dest = moto_env.dest()
    moto_env.put(dest, "old/part-0", b"old")
    other = run_job(area, moto_env.store, dest, {0: {"other/part": b"o"}}, commit=False)
    records = {k for k in moto_env.objects(dest) if k.startswith(f"__{area}_job-")}
    assert records, "the other job has saved records"
    run_job("directory", moto_env.store, dest, {0: {"new/part": b"n"}},
            opts=options(**{"fs.s3a.committer.staging.conflict-mode": "replace"}))
    assert records <= set(moto_env.objects(dest)), "the other job's records were deleted"
    assert moto_env.output(dest) == {"new/part": b"n"}
    other.driver.commit_job(None)
    assert moto_env.output(dest) == {"new/part": b"n", "other/part": b"o"}
