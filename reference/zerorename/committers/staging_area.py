"""Where a staging committer's task output waits for task commit: a directory on the local
file system (:class:`DiskArea`, the default, ``fs.s3a.buffer.dir``) or an injected store
(:class:`StoreArea`, the simulation harness's per-actor disk).  Kept apart from the committers
(:mod:`zerorename.committers.staging`): how bytes are held locally is one concern, what task
and job commit do with them another."""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any, Protocol

from zerorename import options as O
from zerorename.committers.output import OutputFile
from zerorename.errors import CommitError, DuplicateDestinationError
from zerorename.store import Store, list_dir
from zerorename.urls import dir_prefix

__all__ = ["BUFFER_DIR_OPTION", "Area", "DiskArea", "StoreArea", "local_base", "local_name",
           "make_dirs"]

BUFFER_DIR_OPTION = O.BUFFER_DIR.name


class Area(Protocol):
    """Where a staging task's files wait for task commit."""

    url: str

    def open(self, rel: str, on_done: Any) -> OutputFile: ...
    def files(self) -> list[tuple[str, int]]: ...
    def read_parts(self, rel: str, part_size: int) -> Iterator[bytes]: ...
    def delete(self) -> None: ...


#: A task attempt's local directory holds two: ``output`` is ``local_work_dir``, where a file
#: written directly is named by its path; ``staged`` holds the files opened through the
#: committer, each named by the SHA-256 of its path, with the path in ``<digest>.key`` beside
#: it.  A key's local name therefore never depends on the key's shape: S3 allows 1,024-byte
#: keys and path elements of any length, a local file system 255-byte names.
OUTPUT_DIR = "output"
STAGED_DIR = "staged"
KEY_SUFFIX = ".key"
#: How often a directory is re-created when a concurrent cleanup keeps removing its parent.
_MKDIR_ATTEMPTS = 100


def local_name(rel: str) -> str:
    """The fixed-length local file name of ``rel`` in the ``staged`` directory."""
    return hashlib.sha256(rel.encode("utf-8")).hexdigest()


def make_dirs(path: Path) -> None:
    """``mkdir -p`` that tolerates a concurrent removal of an empty parent: the tasks of a job
    share its local directory, and a task cleaning up removes it whenever it is empty — which
    it is, for a moment, between another task creating it and creating its own inside."""
    for _ in range(_MKDIR_ATTEMPTS):
        try:
            path.mkdir(parents=True, exist_ok=True)
            return
        except FileNotFoundError:
            continue  # a parent was removed between two of mkdir's steps: create it again
        except FileExistsError:
            # mkdir found the name taken, then no directory there: removed in between, unless
            # a file is in the way
            blocker = next((p for p in (path, *path.parents)
                            if p.exists() and not p.is_dir()), None)
            if blocker is not None:
                raise CommitError(str(blocker), "a file is where the local staging "
                                                f"directory {path} must go") from None
    raise CommitError(str(path), f"could not create the local directory: a parent was "
                                 f"removed {_MKDIR_ATTEMPTS} times while creating it")


class DiskFile(OutputFile):
    """A file opened through the committer: its path goes to ``<digest>.key`` first, then the
    bytes to ``<digest>``, so a data file is never found without its name."""

    def __init__(self, directory: Path, rel: str, on_done: Any) -> None:
        name = local_name(rel)
        self.path = directory / name
        self.name_path = directory / f"{name}{KEY_SUFFIX}"
        super().__init__("file://" + str(self.path))
        make_dirs(directory)
        self.name_path.write_text(rel, "utf-8")
        self._f: IO[bytes] = open(self.path, "wb")  # noqa: SIM115 - closed in _finish/_abort
        self._on_done = on_done

    def _write(self, data: bytes) -> None:
        self._f.write(data)

    def _finish(self) -> None:
        self._f.close()
        self._on_done(False)

    def _abort(self) -> None:
        self._f.close()
        self.path.unlink(missing_ok=True)
        self.name_path.unlink(missing_ok=True)
        self._on_done(True)


class DiskArea:
    """A directory on the local file system (the default; ``fs.s3a.buffer.dir``)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.url = "file://" + str(path)
        self.output = path / OUTPUT_DIR
        self.staged = path / STAGED_DIR

    def create(self) -> None:
        make_dirs(self.output)

    def open(self, rel: str, on_done: Any) -> OutputFile:
        return DiskFile(self.staged, rel, on_done)

    def _staged_files(self) -> dict[str, Path]:
        """Path → data file of every file opened through the committer and not aborted."""
        found: dict[str, Path] = {}
        if not self.staged.is_dir():
            return found
        for name_path in self.staged.glob(f"*{KEY_SUFFIX}"):
            data = name_path.with_name(name_path.name[: -len(KEY_SUFFIX)])
            if data.is_file():
                found[name_path.read_text("utf-8")] = data
        return found

    def _source(self, rel: str) -> Path:
        staged = self.staged / local_name(rel)
        return staged if staged.is_file() else self.output / rel

    def files(self) -> list[tuple[str, int]]:
        found = {rel: path.stat().st_size for rel, path in self._staged_files().items()}
        if self.output.is_dir():
            for top, _dirs, names in os.walk(self.output):
                for name in names:
                    full = Path(top) / name
                    rel = full.relative_to(self.output).as_posix()
                    if rel in found:
                        raise DuplicateDestinationError(
                            "file://" + str(full), f"{rel!r} was both opened through the "
                            "committer and written directly into local_work_dir")
                    found[rel] = full.stat().st_size
        return sorted(found.items())

    def read_parts(self, rel: str, part_size: int) -> Iterator[bytes]:
        with open(self._source(rel), "rb") as f:
            first = True
            while True:
                chunk = f.read(part_size)
                if not chunk and not first:
                    return
                yield chunk
                first = False
                if len(chunk) < part_size:
                    return

    def delete(self) -> None:
        shutil.rmtree(self.path, ignore_errors=True)
        with contextlib.suppress(OSError):
            # the job's directory, once its last attempt is gone; a task creating its own
            # directory in it meanwhile re-creates it (make_dirs)
            self.path.parent.rmdir()


class StoreFile(OutputFile):
    """A local file held in memory and PUT to the local store on close (harness use)."""

    def __init__(self, store: Store, url: str, on_done: Any) -> None:
        super().__init__(url)
        self.store = store
        self._buf = bytearray()
        self._on_done = on_done

    def _write(self, data: bytes) -> None:
        self._buf += data

    def _finish(self) -> None:
        self.store.put(self.url, bytes(self._buf))
        self._on_done(False)

    def _abort(self) -> None:
        self._buf = bytearray()
        self._on_done(True)


class StoreArea:
    """A staging area on an injected store, e.g. the simulation harness's per-actor disk."""

    def __init__(self, store: Store, url: str) -> None:
        self.store = store
        self.url = url

    def open(self, rel: str, on_done: Any) -> OutputFile:
        return StoreFile(self.store, f"{self.url}/{rel}", on_done)

    def files(self) -> list[tuple[str, int]]:
        base = dir_prefix(self.url)
        return sorted((o.url[len(base):], o.size) for o in list_dir(self.store, self.url))

    def read_parts(self, rel: str, part_size: int) -> Iterator[bytes]:
        data = self.store.get(f"{self.url}/{rel}")
        yield data[:part_size]
        for start in range(part_size, len(data), part_size):
            yield data[start : start + part_size]

    def delete(self) -> None:
        urls = [o.url for o in list_dir(self.store, self.url)]
        if urls:
            self.store.delete_many(urls)


def local_base(options_value: str) -> Path:
    """The first directory of ``fs.s3a.buffer.dir`` (comma-separated, trimmed); only local
    paths are allowed (Hadoop: "Wrong FS")."""
    for item in options_value.split(","):
        item = item.strip()
        if not item:
            continue
        if item.startswith("file://"):
            item = item[len("file://"):]
        elif item.startswith("file:"):
            item = item[len("file:"):]
        if "://" in item:
            raise CommitError(item, f"Wrong FS: {BUFFER_DIR_OPTION} must be on the local file "
                                    "system")
        return Path(item)
    return Path(tempfile.gettempdir()) / "zerorename-staging"
