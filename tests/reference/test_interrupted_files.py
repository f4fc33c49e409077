"""A file whose writing is interrupted leaves no upload once its task attempt is aborted.

An interrupt is a ``BaseException`` that is not an ``Exception`` (``KeyboardInterrupt``; a
task killed by its driver).  Inside ``with committer.open(...)`` it sends nothing more to the
store (no abort request from the ``with`` exit: the process may be going away), but the file
stays open in its committer, so ``commit_task`` refuses the attempt and ``abort_task`` aborts
the upload.  Before this was fixed the ``with`` exit marked the file closed: ``abort_task``
skipped it, no record named it, and while another job was active under the destination
``abort_job`` left it too (docs/research/fenced-spark-messages.md).
"""

from __future__ import annotations

from typing import Any

import pytest

import zerorename as zr
from zerorename.errors import CommitError
from zerorename.store import Store

from .conftest_helpers import PART, Env, FaultyStore, options

pytestmark = pytest.mark.usefixtures("no_leaked_threads")

#: the committers whose files stream parts to a multipart upload while they are written
#: (directory and partitioned stage on local disk: their abort_task deletes the directory)
STREAMING = ("fenced", "magic", "v1", "v2", "manifest")
ON_MOTO = ("fenced", "magic", "manifest")  # v1/v2 need rename
#: two whole parts are sent before the block ends, whatever the committer buffers
DATA = b"x" * (PART * 2 + 5)


def _params() -> list[Any]:
    return [pytest.param(name, backend, id=f"{name}-{backend}")
            for name in STREAMING for backend in ("local", "moto")
            if backend == "local" or name in ON_MOTO]


class InterruptedStore(FaultyStore):
    """Raises ``KeyboardInterrupt`` at the ``nth`` UploadPart (before sending it), once."""

    def __init__(self, inner: Store, nth: int) -> None:
        super().__init__(inner)
        self.nth = nth
        self.parts = 0

    def upload_part(self, url: str, upload_id: str, part_number: int, data: bytes) -> str:
        self.parts += 1
        if self.parts == self.nth:
            raise KeyboardInterrupt
        return super().upload_part(url, upload_id, part_number, data)


def _task(name: str, store: Store, dest: str) -> zr.BaseCommitter:
    job = zr.JobContext(dest, options=options())
    zr.create_committer(name, store, job).setup_job()
    task = zr.create_committer(name, store, job, task=job.task(0))
    task.setup_task()
    return task


@pytest.mark.parametrize(("committer", "backend"), _params())
def test_interrupt_inside_with_then_abort_task_leaves_no_upload(
        committer: str, backend: str, backend_env: Env) -> None:
    env = backend_env
    dest = env.dest()
    task = _task(committer, env.store, dest)
    with pytest.raises(KeyboardInterrupt), task.open("part-0") as f:
        f.write(DATA)
        raise KeyboardInterrupt
    assert len(env.uploads(dest)) == 1  # the with exit sent nothing
    with pytest.raises(CommitError, match="still open"):
        task.commit_task()  # the interrupted file is not committed, partial
    task.abort_task()
    assert env.uploads(dest) == []


@pytest.mark.parametrize(("committer", "backend"), _params())
def test_interrupt_while_closing_keeps_the_file_from_commit_and_abort_task_aborts_it(
        committer: str, backend: str, backend_env: Env) -> None:
    """Interrupted at close (its last part's upload): the file is neither committed nor
    forgotten — before, the task committed without it, or its upload was left."""
    env = backend_env
    dest = env.dest()
    store = InterruptedStore(env.store, nth=3)  # parts 1 and 2 at write, 3 at close
    task = _task(committer, store, dest)
    with pytest.raises(KeyboardInterrupt), task.open("part-0") as f:
        f.write(DATA)
        f.close()
    with pytest.raises(CommitError, match="still open"):
        task.commit_task()
    task.abort_task()
    assert env.uploads(dest) == []


@pytest.mark.parametrize("backend", ["local", "moto"])
def test_fenced_interrupted_upload_is_aborted_while_another_job_is_active(
        backend: str, backend_env: Env) -> None:
    """The reproduction of the research note: a file open in a ``with`` block, the attempt
    interrupted, ``abort_task``, ``abort_job`` with another fenced job active under the
    destination (so abort_job cannot take unrecorded uploads for its own), then a listing
    of pending uploads: only the other job's upload is left."""
    env = backend_env
    dest = env.dest()
    other = _task("fenced", env.store, dest)
    kept = other.open("other-0")
    kept.write(b"o" * 10)
    job = zr.JobContext(dest, options=options())
    driver = zr.create_committer("fenced", env.store, job)
    driver.setup_job()
    task = zr.create_committer("fenced", env.store, job, task=job.task(0))
    task.setup_task()
    with pytest.raises(KeyboardInterrupt), task.open("part-0") as f:
        f.write(b"p" * 10)
        raise KeyboardInterrupt
    task.abort_task()
    driver.abort_job()
    assert [u.url for u in env.uploads(dest)] == [f"{dest}/other-0"]
    kept.abort()
