"""Object files on a POSIX file system: URL to path, ETags, and atomic publication.

Every write is "write a temp file in the same directory, then one atomic system call"
(``os.replace`` to overwrite, ``os.link`` for If-None-Match), so a reader never sees a
half-written file and a crash leaves at most a hidden temp file.  If-Match, and every
overwrite of an existing file, holds ``flock`` on the current inode while it checks and
replaces, so two conditional writers in any processes serialise.

:class:`LocalFiles` is the base of :class:`~zerorename.stores.local.store.LocalStore` and of
its parts (:mod:`.listing`, :mod:`.multipart`), which all publish through it.  The pruning of
empty directories inside a committer's working area lives here too: every call that removes a
file calls it, and every write must survive it (:func:`make_dirs`).
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import os
import shutil
import tempfile
import threading
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

from zerorename.errors import BadURLError, NotFoundError, PreconditionFailedError, StoreError
from zerorename.stores.common import CountedRequests, RequestCounter, bare_etag
from zerorename.urls import parse_url

__all__ = [
    "COMMITTER_AREA_NAMES",
    "COMMITTER_AREA_PREFIXES",
    "COPY_CHUNK",
    "MKDIR_ATTEMPTS",
    "TMP_PREFIX",
    "UPLOADS_DIR",
    "LocalFiles",
    "is_a_directory",
    "make_dirs",
    "os_error",
    "prune_empty_dirs",
]

#: Hidden directory (under the store's root) holding emulated multipart uploads.
UPLOADS_DIR = ".zerorename-uploads"
#: Name prefix of in-flight temp files; never listed.
TMP_PREFIX = ".zerorename-tmp-"
#: Path elements naming a committer's working area (the committers reserve them as the first
#: element of a destination-relative path; tests check the two lists agree).
COMMITTER_AREA_NAMES = ("_temporary",)
COMMITTER_AREA_PREFIXES = ("__magic", "__staging_job-", "__fenced_job-")
#: How often a write re-creates its directory when a concurrent prune keeps removing it.
MKDIR_ATTEMPTS = 100
COPY_CHUNK = 1 << 20


def _in_committer_area(name: str) -> bool:
    return name in COMMITTER_AREA_NAMES or name.startswith(COMMITTER_AREA_PREFIXES)


def prune_empty_dirs(directory: str) -> None:
    """Remove ``directory`` and its parents while they are empty and inside a committer's
    working area (never the area's parent: the destination).  ``os.rmdir`` removes only an
    empty directory, atomically, so a file being created concurrently is never lost; the
    writer re-creates a directory removed between its ``makedirs`` and its ``open``."""
    parts = directory.rstrip("/").split("/")
    top = next((i for i, name in enumerate(parts) if _in_committer_area(name)), None)
    if top is None:
        return
    for end in range(len(parts), top, -1):
        try:
            os.rmdir("/".join(parts[:end]))
        except OSError:  # not empty, already gone, or not ours to remove
            return


class LocalFiles(CountedRequests):
    """Files behind ``file:///`` URLs, written atomically (the constructor's arguments are
    those of :class:`~zerorename.stores.local.store.LocalStore`).

    ``root`` is where emulated multipart uploads are kept (``<root>/.zerorename-uploads``);
    every process that must see the same uploads (task and driver) must use the same root.
    ``durable=True`` fsyncs each temp file before publishing it (off by default: the tests and
    benchmarks need speed, and a process crash, unlike a power cut, loses nothing without it).
    """

    def __init__(
        self,
        root: str | os.PathLike[str] | None = None,
        *,
        name: str = "local",
        durable: bool = False,
    ) -> None:
        self.name = name
        self.root = Path(root) if root is not None else Path(tempfile.gettempdir())
        self.uploads_dir = self.root / UPLOADS_DIR
        self.durable = durable
        self._counter = RequestCounter()
        self._etags: dict[str, tuple[int, int, int, str]] = {}
        self._etag_lock = threading.Lock()

    def __repr__(self) -> str:
        return f"LocalStore(root={str(self.root)!r}, name={self.name!r})"

    # -- paths ----------------------------------------------------------------------------

    @staticmethod
    def _path(url: str) -> str:
        u = parse_url(url)
        if u.scheme != "file":
            raise BadURLError(url, "LocalStore serves file:/// URLs only")
        if "\x00" in u.key:
            raise BadURLError(url, "NUL byte in path")
        return "/" + u.key

    @staticmethod
    def _url(path: str) -> str:
        return "file://" + path

    def _file_path(self, url: str) -> str:
        path = self._path(url)
        if path.endswith("/"):
            raise StoreError(url, "an object URL cannot end with '/'", "InvalidArgument", 400)
        return path

    def _etag(self, path: str, st: os.stat_result, *, cached_as: str | None = None) -> str:
        """The MD5 of the file's bytes, from the cache while the file is the same inode, size
        and modification time, else read and hashed (and cached).  ``cached_as``: the name
        the file was cached under before a rename (which keeps all three)."""
        key = (st.st_ino, st.st_size, st.st_mtime_ns)
        with self._etag_lock:
            hit = self._etags.get(cached_as or path)
            if hit is not None and hit[:3] == key:
                return hit[3]
        h = hashlib.md5(usedforsecurity=False)
        with open(path, "rb") as f:
            for chunk in iter(lambda: f.read(COPY_CHUNK), b""):
                h.update(chunk)
        etag = h.hexdigest()
        self._remember_etag(path, st, etag)
        return etag

    def _remember_etag(self, path: str, st: os.stat_result, etag: str) -> None:
        """Cache the MD5 of bytes this store has just hashed while writing them, so that
        completing an upload and the next HEAD do not read the file again to hash it.

        ``st`` is the file as written (the temp file before it is linked or renamed into
        place: both keep its inode and times), so if anything else replaces ``path``
        afterwards its inode differs and the entry is not used."""
        with self._etag_lock:
            if len(self._etags) > 50_000:
                self._etags.clear()
            self._etags[path] = (st.st_ino, st.st_size, st.st_mtime_ns, etag)

    def _write_temp(
        self, url: str, directory: str, data: bytes | None, src: Sequence[str] = (),
        digest: Digest | None = None,
    ) -> str:
        """A temp file in ``directory`` holding ``data`` (or the concatenation of ``src``);
        ``digest`` (a hashlib object), if given, is updated with the concatenated bytes as
        they are copied, which saves reading them a second time to hash them."""
        tmp = os.path.join(directory, f"{TMP_PREFIX}{uuid.uuid4().hex}")
        for attempt in range(MKDIR_ATTEMPTS):
            try:
                make_dirs(url, directory)
                f = open(tmp, "wb")  # noqa: SIM115 - closed below
            except FileNotFoundError:
                if attempt + 1 == MKDIR_ATTEMPTS:
                    raise
                continue  # pruned as empty while we created it or before open: again
            with f:
                if data is not None:
                    f.write(data)
                for part in src:
                    with open(part, "rb") as p:
                        if digest is None:
                            shutil.copyfileobj(p, f, COPY_CHUNK)
                        else:
                            for chunk in iter(lambda: p.read(COPY_CHUNK), b""):
                                digest.update(chunk)
                                f.write(chunk)
                if self.durable:
                    f.flush()
                    os.fsync(f.fileno())
            break
        return tmp

    def _publish(
        self, url: str, tmp: str, path: str, *, if_none_match: bool, if_match: str | None
    ) -> None:
        """Move ``tmp`` to ``path`` atomically, honouring the preconditions; removes ``tmp``."""
        try:
            if if_none_match:
                self._link_exclusive(url, tmp, path)
            else:
                want = None if if_match is None else bare_etag(if_match)
                self._replace_locked(url, tmp, path, want)
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)

    def _link_exclusive(self, url: str, tmp: str, path: str) -> None:
        try:
            os.link(tmp, path)
        except FileExistsError as exc:
            raise PreconditionFailedError(url, "object exists (If-None-Match: *)") from exc
        except OSError as exc:
            if exc.errno not in (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EXDEV):
                raise os_error(url, exc) from exc
            # No hard links here (some FUSE/FAT): O_EXCL still refuses an existing name,
            # but readers may see the file while it is being copied.
            try:
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            except FileExistsError as exc2:
                raise PreconditionFailedError(url, "object exists (If-None-Match: *)") from exc2
            with os.fdopen(fd, "wb") as out, open(tmp, "rb") as src:
                shutil.copyfileobj(src, out, COPY_CHUNK)

    def _replace_locked(self, url: str, tmp: str, path: str, want: str | None) -> None:
        """os.replace, holding flock on the inode being replaced (checking If-Match if given)."""
        while True:
            try:
                fd = os.open(path, os.O_RDONLY)
            except FileNotFoundError as exc:
                if want is not None:
                    raise NotFoundError(url, "If-Match on a missing object") from exc
                try:
                    os.replace(tmp, path)
                except IsADirectoryError as exc2:
                    raise is_a_directory(url) from exc2
                return
            except IsADirectoryError as exc:
                raise is_a_directory(url) from exc
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)
                try:
                    current = os.stat(path)
                except FileNotFoundError:
                    continue
                held = os.fstat(fd)
                if (held.st_ino, held.st_dev) != (current.st_ino, current.st_dev):
                    continue  # replaced while we waited for the lock: lock the new inode
                if want is not None:
                    have = self._etag(path, current)
                    if have != want:
                        raise PreconditionFailedError(
                            url, f"ETag is {have}, If-Match wanted {want}"
                        )
                os.replace(tmp, path)
                return
            finally:
                os.close(fd)


class Digest(Protocol):
    """What :meth:`LocalFiles._write_temp` feeds copied bytes to (a ``hashlib`` object)."""

    def update(self, data: bytes, /) -> None: ...


def make_dirs(url: str, directory: str) -> None:
    """``os.makedirs``; a file where a directory must be is a 409 naming ``url``.  A parent
    pruned concurrently surfaces as FileNotFoundError, which the callers retry (makedirs
    reports "exists" when the name it found taken is gone when it checks: that too)."""
    try:
        os.makedirs(directory, exist_ok=True)
    except (FileExistsError, NotADirectoryError) as exc:
        path = directory.rstrip("/")
        while path and not os.path.lexists(path):
            path = os.path.dirname(path)
        if os.path.isdir(path):  # nothing in the way: a directory was pruned meanwhile
            raise FileNotFoundError(errno.ENOENT, "pruned while being created",
                                    directory) from exc
        raise StoreError(url, f"a parent of {directory} is a file", "NotADirectory", 409) \
            from exc


def is_a_directory(url: str) -> StoreError:
    return StoreError(url, "a directory has this name", "IsADirectory", 409)


def os_error(url: str, exc: OSError) -> StoreError:
    """An OSError as a StoreError naming the URL; the errno name becomes the code."""
    code = errno.errorcode.get(exc.errno or 0, "OSError")
    # status 0 for the rest: a local I/O error is not something a retry loop should repeat
    status = 403 if isinstance(exc, PermissionError) else 0
    if exc.errno in (errno.ENOSPC, errno.EDQUOT, errno.EROFS):
        status = 507
    return StoreError(url, f"{exc.strerror or exc}", code, status)

