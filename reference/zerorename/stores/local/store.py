"""``LocalStore``: the store protocol on a POSIX file system, for ``file:///`` URLs.

It plays HDFS's part in the verdict matrix: atomic file *and* directory rename, create-no-
overwrite, consistent listing.  Every write is "write a temp file in the same directory, then
one atomic system call" (``os.replace`` to overwrite, ``os.link`` for If-None-Match), so a reader
never sees a half-written file and a crash leaves at most a hidden temp file.

Things that differ from a real file system on purpose, to keep S3's object semantics:

* Only regular files are objects.  Directories are implicit: listing never reports them, and
  an empty directory is invisible.  Deleting (or renaming away) the last file of a directory
  leaves the directory — we cannot know where the "bucket root" is, so pruning parents could
  remove a user's folder — *except* inside a committer's working area (a path element
  ``_temporary``, ``__magic…``, ``__staging_job-…``, ``__fenced_job-…``: the names the
  committers reserve), where empty directories are removed up to and including the area, so
  a finished job leaves no directories behind.  Writers re-create a directory that such a
  removal took away under them.
* ETags are the MD5 hex of the content (what S3 returns for single-part objects); they are
  computed on demand and cached by (inode, size, mtime).
* Multipart uploads live under ``<root>/.zerorename-uploads/<upload-id>/`` (``root`` defaults to
  the system temp dir, so every process on the machine shares them).  Listings skip any
  ``.zerorename-uploads`` directory and any ``.zerorename-tmp-*`` temp file, so neither shows
  up as output.  Completing concatenates the parts into a temp file beside the destination and
  publishes it atomically.  There is no 5 MiB minimum part size (S3 has one).

Conditional writes: If-None-Match uses ``os.link`` (fails atomically when the name exists).
If-Match, and every overwrite of an existing file, holds ``flock`` on the current inode while it
checks and replaces, so two conditional writers in any processes serialise.

The store is assembled from one mixin per concern over :class:`~.files.LocalFiles` (paths,
ETags, atomic publication): :class:`~.listing.LocalListing` and
:class:`~.multipart.LocalMultipart`; this module adds the object calls.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Sequence

from zerorename.errors import NotFoundError, StoreError
from zerorename.store import ObjectInfo, StoreCapabilities
from zerorename.stores.common import DeleteManyError, md5_hex
from zerorename.stores.local.files import (
    MKDIR_ATTEMPTS,
    make_dirs,
    os_error,
    prune_empty_dirs,
)
from zerorename.stores.local.listing import LocalListing
from zerorename.stores.local.multipart import LocalMultipart
from zerorename.urls import is_under

__all__ = ["LocalStore"]


class LocalStore(LocalListing, LocalMultipart):
    """The store protocol on the local file system (``file:///abs/path`` URLs).

    ``root`` is where emulated multipart uploads are kept (``<root>/.zerorename-uploads``);
    every process that must see the same uploads (task and driver) must use the same root.
    ``durable=True`` fsyncs each temp file before publishing it (off by default: the tests and
    benchmarks need speed, and a process crash, unlike a power cut, loses nothing without it).
    """


    def capabilities(self, url: str | None = None) -> StoreCapabilities:
        """A POSIX file system: atomic rename of files and directories, conditional writes."""
        return StoreCapabilities(
            rename=True,
            atomic_dir_rename=True,
            conditional_put=True,
            conditional_complete=True,
            conditional_complete_if_match=True,
            consistent_listing=True,
            multipart=True,
        )
    # -- objects --------------------------------------------------------------------------

    def put(
        self, url: str, data: bytes, *, if_none_match: bool = False, if_match: str | None = None
    ) -> str:
        """Atomic write: temp file + ``os.replace`` (or ``os.link`` for If-None-Match)."""
        self._counter.add("put")
        path = self._file_path(url)
        etag = md5_hex(data)
        tmp = self._write_temp(url, os.path.dirname(path), data)
        written = os.stat(tmp)
        self._publish(url, tmp, path, if_none_match=if_none_match, if_match=if_match)
        self._remember_etag(path, written, etag)
        self._counter.add_bytes(written=len(data))
        return etag

    def get(self, url: str) -> bytes:
        self._counter.add("get")
        path = self._file_path(url)
        try:
            with open(path, "rb") as f:
                data = f.read()
        except (FileNotFoundError, IsADirectoryError, NotADirectoryError) as exc:
            raise NotFoundError(url, "no such object") from exc
        self._counter.add_bytes(read=len(data))
        return data

    def head(self, url: str) -> ObjectInfo | None:
        self._counter.add("head")
        path = self._path(url)
        try:
            st = os.stat(path)
        except (FileNotFoundError, NotADirectoryError):
            return None
        if not stat.S_ISREG(st.st_mode) or path.endswith("/"):
            return None
        return ObjectInfo(url=self._url(path), size=st.st_size, etag=self._etag(path, st),
                          mtime=st.st_mtime)

    def delete(self, url: str) -> None:
        """Remove a file; a missing file or a directory is a no-op (S3: no such key)."""
        self._counter.add("delete")
        path = self._path(url)
        try:
            os.unlink(path)
        except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
            return
        except PermissionError as exc:
            if os.path.isdir(path):
                return
            raise os_error(url, exc) from exc
        prune_empty_dirs(os.path.dirname(path))

    def delete_many(self, urls: Sequence[str]) -> None:
        self._counter.add("delete_many")
        failures: dict[str, StoreError] = {}
        emptied: set[str] = set()
        for url in urls:
            try:
                path = self._path(url)
                os.unlink(path)
            except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
                continue
            except StoreError as exc:
                failures[url] = exc
            except OSError as exc:
                failures[url] = os_error(url, exc)
            else:
                emptied.add(os.path.dirname(path))
        for directory in sorted(emptied, key=len, reverse=True):  # the deepest first
            prune_empty_dirs(directory)
        if failures:
            raise DeleteManyError(failures, len(urls))

    def copy(self, src: str, dst: str) -> str:
        """Server-side copy: bytes through a temp file beside ``dst``, published atomically."""
        self._counter.add("copy")
        s = self._file_path(src)
        d = self._file_path(dst)
        try:
            tmp = self._write_temp(dst, os.path.dirname(d), None, [s])
        except (FileNotFoundError, IsADirectoryError, NotADirectoryError) as exc:
            raise NotFoundError(src, f"copy source missing (copy to {dst})") from exc
        try:
            etag = self._etag(tmp, os.stat(tmp))
        except BaseException:
            os.unlink(tmp)
            raise
        self._publish(dst, tmp, d, if_none_match=False, if_match=None)
        return etag

    def rename(self, src: str, dst: str) -> None:
        """Atomic ``os.rename`` of a file or a whole directory, creating ``dst``'s parents.

        A file replaces an existing file (POSIX); a directory replaces only an *empty*
        directory, and renaming onto a non-empty one raises :class:`StoreError`
        (``DirectoryNotEmpty``, 409), atomically: nothing is moved.
        """
        self._counter.add("rename")
        s = self._path(src).rstrip("/") or "/"
        d = self._path(dst).rstrip("/") or "/"
        if s == d:
            return
        if is_under(d, s):
            raise StoreError(src, f"cannot rename into itself ({dst})", "InvalidRequest", 400)
        for attempt in range(MKDIR_ATTEMPTS):
            if not os.path.lexists(s):
                raise NotFoundError(src, f"rename source missing (rename to {dst})")
            try:
                make_dirs(dst, os.path.dirname(d))
                os.rename(s, d)
                break
            except FileNotFoundError:
                if attempt + 1 == MKDIR_ATTEMPTS:
                    raise os_error(src, OSError(errno.ENOENT, "rename target directory "
                                                 "keeps disappearing")) from None
                continue  # the target's directory was pruned meanwhile: create it again
            except OSError as exc:
                if exc.errno in (errno.ENOTEMPTY, errno.EEXIST):
                    raise StoreError(src, f"rename target {dst} is a non-empty directory",
                                     "DirectoryNotEmpty", 409) from exc
                if exc.errno in (errno.EISDIR, errno.ENOTDIR):
                    raise StoreError(src, f"rename target {dst} is of another type (file vs "
                                          "dir)", "TypeMismatch", 409) from exc
                raise os_error(src, exc) from exc
        prune_empty_dirs(os.path.dirname(s))

