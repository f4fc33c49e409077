"""IBM's Stocator (paper Section XII.B): write straight to the destination, under names that
carry the task attempt ID, so that attempts can be told apart and cleaned up.

* ``write``: ``part-00000.csv`` becomes ``part-00000-attempt_<job>_<jattempt>_m_<task>_<n>.csv``
  in the destination itself, visible at once (the attempt ID is inserted before the extension,
  which keeps the sort order of the parts).
* task commit: a no-op (Stocator turns the classic committer's rename into nothing); it only
  returns the attempt ID, so under Spark's protocol the driver knows which attempts won.
* task abort: delete the files this attempt wrote.
* job commit: list the destination; a file whose name carries an attempt ID of this job counts
  as committed when that attempt is one of the committed attempts; the others are deleted (the
  paper's "failed and aborted tasks ... cleaned up by their successors"), then a JSON
  ``_SUCCESS`` manifest of the committed files is PUT, atomically.
* Under Hadoop's protocol (``commit_job(None)``) there is no record of which attempt committed
  (the task commit wrote nothing): every attempt of this job found in the listing counts.  This
  is the price of a no-op task commit and is left visible rather than papered over.

What it cannot do, and the model shows: output of an attempt that is still running (slow,
speculative or partitioned) is visible as soon as it is written, including after the job commit.
"""

from __future__ import annotations

import re

from zerorename_model.engine.scenario import CommitterEnv, JobSpec, TaskSpec
from zerorename_model.systems.protocols import ModelCommitter, register
from zerorename_model.systems.protocols.common import (
    SUCCESS,
    TaskReport,
    hidden,
    join,
    list_files,
    relative,
    success_data,
)


def published_name(relpath: str, task: TaskSpec) -> str:
    """Where ``relpath`` written by ``task`` lands: the attempt ID inserted before the
    extension of the last path component (``a/part-1.csv`` -> ``a/part-1-attempt_….csv``)."""
    head, _, name = relpath.rpartition("/")
    dot = name.find(".", 1)  # a leading dot is part of the stem, not an extension
    stem, ext = (name, "") if dot < 0 else (name[:dot], name[dot:])
    renamed = f"{stem}-{task.attempt_id}{ext}"
    return f"{head}/{renamed}" if head else renamed


def attempt_pattern(job_id: str) -> re.Pattern[str]:
    """Matches the attempt ID Stocator inserted for any attempt of ``job_id``."""
    return re.compile(rf"-(attempt_{re.escape(job_id)}_\d+_m_\d+_\d+)(?:\.|$)")


class StocatorReport(TaskReport):
    """Stocator's task commit message: the attempt, its task and the files it wrote."""

    task: int


@register("stocator", visible_before_job_commit=True)
class StocatorCommitter(ModelCommitter):
    #: the checkers map a written relative path to the name a reader sees (see properties.py)
    published_name = staticmethod(published_name)

    def __init__(self, env: CommitterEnv, job: JobSpec, task: TaskSpec | None,
                 options: dict[str, str]) -> None:
        self.fs = env.store
        self.job = job
        self.task = task
        self.dest = job.dest
        self.wrote: list[str] = []

    # -- task side -------------------------------------------------------------------------------

    def setup_task(self) -> None:
        pass

    def write(self, relpath: str, data: bytes) -> None:
        assert self.task is not None
        url = join(self.dest, published_name(relpath, self.task))
        self.fs.put(url, data)  # visible at once, under an attempt-unique name
        self.wrote.append(url)

    def needs_task_commit(self) -> bool:
        return True  # the classic committer it runs under always has an attempt to commit

    def commit_task(self) -> StocatorReport:
        """No store operation: the files are already in place under their final names."""
        assert self.task is not None
        return {"attempt": self.task.attempt_id, "task": self.task.task_id,
                "files": [relative(u, self.dest) for u in self.wrote]}

    def abort_task(self) -> None:
        if self.wrote:
            self.fs.delete_many(list(self.wrote))

    # -- job side --------------------------------------------------------------------------------

    def setup_job(self) -> None:
        pass

    def commit_job(self, messages: list[StocatorReport | None] | None) -> None:
        pattern = attempt_pattern(self.job.job_id)
        ours = self._files_of_this_job(pattern)
        if messages is None:
            committed = {attempt for attempt, _ in ours.values()}
        else:
            committed = {m["attempt"] for m in messages if m}
        keep = sorted(rel for rel, (attempt, _) in ours.items() if attempt in committed)
        drop = sorted(url for rel, (attempt, url) in ours.items() if attempt not in committed)
        if drop:
            self.fs.delete_many(drop)
        self.fs.put(join(self.dest, SUCCESS), success_data("stocator", self.job.job_id, keep))

    def abort_job(self) -> None:
        ours = self._files_of_this_job(attempt_pattern(self.job.job_id))
        if ours:
            self.fs.delete_many(sorted(url for _attempt, url in ours.values()))

    def cleanup_job(self) -> None:
        pass  # nothing temporary: every file is in the destination or already deleted

    def _files_of_this_job(self, pattern: re.Pattern[str]) -> dict[str, tuple[str, str]]:
        """relpath -> (attempt ID, url) for every listed output file of this job."""
        found: dict[str, tuple[str, str]] = {}
        for obj in list_files(self.fs, self.dest):
            rel = relative(obj.url, self.dest)
            match = pattern.search(rel.rsplit("/", 1)[-1])
            if match and not hidden(rel):
                found[rel] = (match.group(1), obj.url)
        return found
