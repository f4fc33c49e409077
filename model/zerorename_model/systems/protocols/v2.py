"""Hadoop FileOutputCommitter, algorithm v2 (paper Section III.C).

Task commit merges the attempt's files straight into the destination, one rename per file
(``merge_paths_v2``); job commit only writes ``_SUCCESS``.  Task commit is therefore not atomic:
an attempt that fails or is partitioned part-way leaves some of its files in the destination,
where a retried attempt's files mix with them (MAPREDUCE-7282), and an aborted job leaves every
committed task's output visible.

Same layout as v1; Hadoop declares recovery supported for both algorithms, v2's
``recover_task`` having nothing to do because committed output is already in place.
"""

from __future__ import annotations

from zerorename_model.engine.scenario import TaskSpec
from zerorename_model.systems.protocols import register
from zerorename_model.systems.protocols.common import (
    SUCCESS,
    delete_recursive,
    join,
    list_children,
    name_of,
    rename_or_copy,
    stat,
    task_id,
)
from zerorename_model.systems.protocols.v1 import V1Committer


@register("v2", supports_recovery=True, visible_before_job_commit=True,
          takes_messages=False)
class V2Committer(V1Committer):
    def commit_task(self) -> dict[str, str]:
        """Procedure commitTask (v2): if the attempt path exists, ``mergePathsV2(fs,
        taskAttemptPath, destPath)``: every file is promoted now, visible at once."""
        assert self.task is not None
        if self._attempt_exists():
            self.merge_paths_v2(self.task_attempt_path, self.dest, src_is_dir=True)
        return {"task": task_id(self.task), "attempt": self.task.attempt_id}

    def merge_paths_v2(self, src: str, dest: str, *, src_is_dir: bool) -> None:
        """Procedure mergePathsV2: like v1, but a directory is never renamed whole, because
        other tasks may be merging into the same tree: files are renamed one at a time, and
        ``mkdirs`` is a no-op on implicit directories."""
        kind = stat(self.fs, dest)
        if not src_is_dir:
            if kind is not None:
                delete_recursive(self.fs, dest)
            rename_or_copy(self.fs, src, dest)
            return
        if kind == "file":
            delete_recursive(self.fs, dest)
        files, dirs = list_children(self.fs, src)
        for f in files:
            self.merge_paths_v2(f.url, join(dest, name_of(f.url)), src_is_dir=False)
        for d in dirs:
            self.merge_paths_v2(d, join(dest, name_of(d)), src_is_dir=True)

    def commit_job(self, messages: list[object] | None) -> None:
        """Procedure v2 commitJob: ``touch(destPath/_SUCCESS)``, ``delete(_temporary)``."""
        self.fs.put(join(self.dest, SUCCESS), b"")
        self.cleanup_job()

    def recover_task(self, task: TaskSpec) -> None:
        """v2 recoverTask: a committed task's output is already in the destination."""
