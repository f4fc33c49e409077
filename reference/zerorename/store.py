"""The store protocol: the one interface where committers meet stores.

Reference committers run on :class:`zerorename.S3Store` and :class:`zerorename.LocalStore`;
the research distribution's model stores satisfy the same protocol, so every committer, model
or reference, can run on every store, model or real.  The protocol is deliberately the
object-store vocabulary (S3's operations), with ``rename`` present only where a store's
:class:`StoreCapabilities` say so.

This module is the seam between the two towers, so it holds only types and two listing
helpers, and imports nothing but the standard library: the value types (:class:`ObjectInfo`,
:class:`ListPage`, :class:`UploadInfo`, :class:`StoreCapabilities`) are defined here once, and
the model builds its answers with these very classes (the one import the model makes from this
package; ``tests/test_towers.py`` holds it to that).

Conventions shared by every implementation:

* Locations are URLs (``s3://bucket/key``, ``file:///path``), parsed by :mod:`zerorename.urls`.
* Directories are implicit: a "directory" is a prefix ending in ``/``; ``list_page`` takes a raw
  prefix exactly as S3 does, so callers pass :func:`zerorename.urls.dir_prefix` for directories.
* A missing object is ``None`` from :meth:`Store.head` and :class:`NotFoundError` from
  :meth:`Store.get`; ``delete`` of a missing object succeeds (S3 semantics).
* Errors are :class:`zerorename.errors.StoreError` subclasses carrying the store's code.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable


@dataclass(frozen=True)
class ObjectInfo:
    """One object as LIST or HEAD reports it."""

    url: str
    size: int
    etag: str
    mtime: float | None = None


@dataclass(frozen=True)
class ListPage:
    """One page of a listing: objects, common prefixes (with a delimiter) and a continuation."""

    objects: list[ObjectInfo]
    prefixes: list[str] = field(default_factory=list)
    token: str | None = None


@dataclass(frozen=True)
class UploadInfo:
    """An incomplete multipart upload; ``initiated`` is epoch seconds when the store knows it."""

    url: str
    upload_id: str
    initiated: float | None = None


@dataclass(frozen=True)
class StoreCapabilities:
    """What a store can do, so committers can check before relying on it.

    ``rename``: files can be renamed; ``atomic_dir_rename``: a directory rename is one atomic
    step (HDFS, ABFS; not GCS, never S3); ``conditional_put``: PUT honours If-None-Match/If-Match;
    ``conditional_complete``: complete-multipart honours If-None-Match;
    ``conditional_complete_if_match``: complete-multipart honours If-Match (no committer relies
    on it: ``zerorename probe`` measures it for users who would); ``consistent_listing``:
    LIST reflects every completed write and delete; ``multipart_etags``: a completed multipart
    upload's ETag is always S3's ``md5(part MD5s)-N`` (N: its part count), so an object whose
    ETag has no ``-N`` was not completed from an upload (False, the default: nothing is
    assumed of the ETags, and ``fenced`` recognises its own object by its size alone).
    Multipart limits, checked by committers
    against ``fs.s3a.multipart.size`` when they are built: ``min_part_size`` (every part but
    the last), ``max_part_size`` and ``max_parts`` (None: no limit).
    """

    rename: bool = False
    atomic_dir_rename: bool = False
    conditional_put: bool = False
    conditional_complete: bool = False
    conditional_complete_if_match: bool = False
    consistent_listing: bool = True
    multipart: bool = True
    min_part_size: int = 1
    max_part_size: int | None = None
    max_parts: int | None = None
    multipart_etags: bool = False


#: S3's multipart limits (AWS, "Amazon S3 multipart upload limits"): every part but the last
#: at least 5 MiB, none over 5 GiB, at most 10,000 parts.
S3_MIN_PART_SIZE = 5 << 20
S3_MAX_PART_SIZE = 5 << 30
S3_MAX_PARTS = 10_000


@runtime_checkable
class Store(Protocol):
    """Object-store operations used by committers.  See the module docstring for conventions."""

    name: str

    def capabilities(self) -> StoreCapabilities: ...

    def put(
        self, url: str, data: bytes, *, if_none_match: bool = False, if_match: str | None = None
    ) -> str:
        """Write ``data`` at ``url``; return its ETag.  Conditional flags raise
        :class:`PreconditionFailedError` when they do not hold."""
        ...

    def get(self, url: str) -> bytes: ...

    def head(self, url: str) -> ObjectInfo | None: ...

    def list_page(
        self, prefix: str, *, delimiter: str | None = None, token: str | None = None,
        max_keys: int = 1000,
    ) -> ListPage: ...

    def delete(self, url: str) -> None: ...

    def delete_many(self, urls: Sequence[str]) -> None: ...

    def copy(self, src: str, dst: str) -> str: ...

    def rename(self, src: str, dst: str) -> None:
        """Rename a file, or every object under directory ``src/`` to ``dst/``.  Raises
        :class:`UnsupportedOperationError` where ``capabilities().rename`` is False."""
        ...

    def create_multipart(self, url: str) -> str: ...

    def upload_part(self, url: str, upload_id: str, part_number: int, data: bytes) -> str: ...

    def complete_multipart(
        self, url: str, upload_id: str, parts: Sequence[tuple[int, str]], *,
        if_none_match: bool = False, if_match: str | None = None,
    ) -> str:
        """Complete the upload at ``url``; return the object's ETag.  ``if_none_match`` (no
        object there) and ``if_match`` (the object has this ETag) raise
        :class:`PreconditionFailedError` when they do not hold, as for :meth:`put`."""
        ...

    def abort_multipart(self, url: str, upload_id: str) -> None: ...

    def list_multipart_uploads(self, prefix: str) -> list[UploadInfo]:
        """Every incomplete upload whose key starts with ``prefix`` (all pages)."""
        ...

    def request_counts(self) -> dict[str, int]:
        """Requests issued so far, by operation name (``put``, ``list_page``…)."""
        ...


def list_all(store: Store, prefix: str, *, max_keys: int = 1000) -> Iterator[ObjectInfo]:
    """Every object whose URL starts with ``prefix``, following continuation tokens."""
    token: str | None = None
    while True:
        page = store.list_page(prefix, token=token, max_keys=max_keys)
        yield from page.objects
        if page.token is None:
            return
        token = page.token


def list_dir(store: Store, directory: str) -> Iterator[ObjectInfo]:
    """Every object under ``directory`` treated as a directory (``out/`` never ``out10/``)."""
    return list_all(store, directory.rstrip("/") + "/")
