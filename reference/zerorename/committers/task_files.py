"""Opening a task attempt's files: each destination path at most once per attempt, and
only while the attempt is set up.

Apart from the task side because files are opened and closed from many writer threads while
the task's phase changes under the same lock: the set of opened paths (a second ``open`` of
one path would make two uploads race for one destination) and the set of open files (a task
commit with a file still open would lose it, and an abort must discard them) are kept here.
The subclass supplies ``_open``, which returns the :class:`~.output.OutputFile`.
"""

from __future__ import annotations

from zerorename.committers.output import OutputFile
from zerorename.committers.paths import check_relpath, dest_url
from zerorename.committers.state import CommitterState
from zerorename.context import TaskContext
from zerorename.errors import DuplicateDestinationError

__all__ = ["TaskFiles"]


class TaskFiles(CommitterState):
    """``open``/``write`` of a task attempt's files and the bookkeeping of their closing."""

    def open(self, relpath: str) -> OutputFile:
        """Open ``relpath`` (relative to the destination) for writing by this task attempt."""
        self._require_task()
        rel = check_relpath(relpath)
        with self._state_lock:
            task = self._require_task_set_up("open", dest_url(self.dest, rel))
            if rel in self._opened:
                raise DuplicateDestinationError(
                    dest_url(self.dest, rel), f"task attempt {task.attempt_id} already "
                    "opened this path: one task may write each destination once")
            self._opened.add(rel)
        try:
            handle = self._open(task, rel)
        except BaseException:
            with self._state_lock:
                self._opened.discard(rel)
            raise
        with self._state_lock:
            self._open_files[rel] = handle
        return handle

    def _open(self, task: TaskContext, rel: str) -> OutputFile:
        raise NotImplementedError

    def _file_closed(self, rel: str, *, reopenable: bool = False) -> None:
        """A file is closed; ``reopenable`` (it was aborted) lets the task write it again."""
        with self._state_lock:
            self._open_files.pop(rel, None)
            if reopenable:
                self._opened.discard(rel)

    def write(self, relpath: str, data: bytes) -> None:
        """Write a whole file in one call (``open`` + ``write`` + ``close``)."""
        with self.open(relpath) as f:
            f.write(data)
