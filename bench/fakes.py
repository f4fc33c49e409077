"""``MemoryStore``: a small, strict, in-memory store for benchmarks that must not measure a server.

Why a fake: the memory benchmark drives a job commit over 10,000 tasks; on moto that would take
minutes and the figure would be dominated by the server's objects living in the same process.
This store keeps plain ``bytes`` in a dict plus one sorted key list, so what tracemalloc sees
during a job commit is the committer's memory (plus a few dozen bytes of bookkeeping per object
the commit creates, which the benchmark reports separately).

Why strict: a fake that forgives mistakes lets a committer bug look like a fast, cheap commit.
So every call is checked the way S3 would check it — unknown scheme or empty key is refused,
an upload ID must belong to the key it is used with, parts must be listed in ascending order
with the ETags the store returned, a listing asks for at most 1000 keys, a completed or aborted
upload is gone — and the matching :mod:`zerorename.errors` class is raised (NoSuchKey,
NoSuchUpload, InvalidPart, PreconditionFailed…).

Semantics: S3 with strongly consistent listing and conditional writes (If-None-Match ``*`` on
PUT and complete, If-Match on PUT); ``rename`` only when constructed with ``rename=True``
(HDFS-like: atomic file rename, directory rename of every key under ``src/``).
URLs are ``mem://bucket/key``.
"""

from __future__ import annotations

import bisect
import hashlib
import threading
import uuid
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from zerorename.errors import (
    BadURLError,
    NotFoundError,
    PreconditionFailedError,
    StoreError,
    UnsupportedOperationError,
)
from zerorename.store import ListPage, ObjectInfo, StoreCapabilities, UploadInfo
from zerorename.urls import parse_url

__all__ = ["MemoryStore"]

MAX_KEYS = 1000
MAX_PART = 10000


@dataclass
class _Upload:
    url: str
    parts: dict[int, tuple[bytes, str]] = field(default_factory=dict)


def _md5(data: bytes) -> str:
    return hashlib.md5(data, usedforsecurity=False).hexdigest()


class MemoryStore:
    """The store protocol in memory.  See the module docstring."""

    def __init__(self, *, rename: bool = False, name: str = "memory") -> None:
        self.name = name
        self._rename = rename
        self._objects: dict[str, tuple[bytes, str]] = {}  # url -> (data, etag)
        self._keys: list[str] = []  # every object URL, sorted (listing is a bisect)
        self._uploads: dict[str, _Upload] = {}
        self._counts: Counter[str] = Counter()
        self._lock = threading.RLock()  # committers call from their thread pools

    def __repr__(self) -> str:
        return f"MemoryStore(objects={len(self._objects)}, uploads={len(self._uploads)})"

    # -- bookkeeping ----------------------------------------------------------------------

    def request_counts(self) -> dict[str, int]:
        with self._lock:
            return dict(self._counts)

    def capabilities(self, url: str | None = None) -> StoreCapabilities:
        return StoreCapabilities(rename=self._rename, atomic_dir_rename=self._rename,
                                 conditional_put=True, conditional_complete=True,
                                 consistent_listing=True, multipart=True)

    def snapshot(self) -> tuple[Any, ...]:
        """The store's content (not its counters), for :meth:`restore`: lets a benchmark run
        two job commits on the same state.  Cheap: the bytes themselves are shared."""
        with self._lock:
            uploads = {uid: _Upload(u.url, dict(u.parts)) for uid, u in self._uploads.items()}
            return dict(self._objects), list(self._keys), uploads

    def restore(self, snapshot: tuple[Any, ...]) -> None:
        objects, keys, uploads = snapshot
        with self._lock:
            self._objects = dict(objects)
            self._keys = list(keys)
            self._uploads = {uid: _Upload(u.url, dict(u.parts)) for uid, u in uploads.items()}

    def object_count(self) -> int:
        return len(self._objects)

    def upload_count(self) -> int:
        return len(self._uploads)

    def _count(self, op: str) -> None:
        self._counts[op] += 1

    @staticmethod
    def _check(url: str, *, key_required: bool = True) -> str:
        u = parse_url(url)
        if u.scheme != "mem":
            raise BadURLError(url, "MemoryStore serves mem://bucket/key URLs only")
        if key_required and (not u.key or u.key.endswith("/")):
            raise BadURLError(url, "an object URL needs a key that does not end in '/'")
        return url

    def _store(self, url: str, data: bytes, etag: str | None = None) -> str:
        etag = etag or _md5(data)
        if url not in self._objects:
            bisect.insort(self._keys, url)
        self._objects[url] = (data, etag)
        return etag

    def _remove(self, url: str) -> None:
        if self._objects.pop(url, None) is not None:
            i = bisect.bisect_left(self._keys, url)
            del self._keys[i]

    # -- objects --------------------------------------------------------------------------

    def put(
        self, url: str, data: bytes, *, if_none_match: bool = False, if_match: str | None = None
    ) -> str:
        self._check(url)
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise TypeError(f"put {url}: data must be bytes, not {type(data).__name__}")
        with self._lock:
            self._count("put")
            current = self._objects.get(url)
            if if_none_match and current is not None:
                raise PreconditionFailedError(url, "If-None-Match: object exists")
            if if_match is not None:
                if current is None:
                    raise NotFoundError(url, "If-Match on a missing object")
                if current[1] != if_match.strip('"'):
                    raise PreconditionFailedError(url, "If-Match: ETag differs")
            return self._store(url, bytes(data))

    def get(self, url: str) -> bytes:
        self._check(url)
        with self._lock:
            self._count("get")
            current = self._objects.get(url)
            if current is None:
                raise NotFoundError(url, "no such key")
            return bytes(memoryview(current[0]))  # a fresh body, as a real GET allocates one

    def head(self, url: str) -> ObjectInfo | None:
        self._check(url, key_required=False)
        with self._lock:
            self._count("head")
            current = self._objects.get(url)
            return None if current is None else ObjectInfo(url, len(current[0]), current[1])

    def list_page(
        self, prefix: str, *, delimiter: str | None = None, token: str | None = None,
        max_keys: int = MAX_KEYS,
    ) -> ListPage:
        self._check(prefix, key_required=False)
        if not 1 <= max_keys <= MAX_KEYS:
            raise StoreError(prefix, f"max_keys {max_keys} outside 1..{MAX_KEYS}",
                             code="InvalidArgument", status=400)
        if token is not None and not token.startswith(prefix):
            raise StoreError(prefix, f"continuation token {token!r} is not from this listing",
                             code="InvalidArgument", status=400)
        with self._lock:
            self._count("list_page")
            start = bisect.bisect_right(self._keys, token) if token else \
                bisect.bisect_left(self._keys, prefix)
            objects: list[ObjectInfo] = []
            prefixes: list[str] = []
            last: str | None = None
            i = start
            while i < len(self._keys) and len(objects) + len(prefixes) < max_keys:
                url = self._keys[i]
                if not url.startswith(prefix):
                    break
                rest = url[len(prefix):]
                if delimiter and delimiter in rest:
                    common = prefix + rest.split(delimiter, 1)[0] + delimiter
                    prefixes.append(common)
                    # skip every key under this common prefix
                    i = bisect.bisect_left(self._keys, common + "\U0010ffff")
                    last = self._keys[i - 1]
                    continue
                data, etag = self._objects[url]
                objects.append(ObjectInfo(url, len(data), etag))
                last = url
                i += 1
            more = i < len(self._keys) and self._keys[i].startswith(prefix)
            return ListPage(objects=objects, prefixes=prefixes, token=last if more else None)

    def delete(self, url: str) -> None:
        self._check(url)
        with self._lock:
            self._count("delete")
            self._remove(url)

    def delete_many(self, urls: Sequence[str]) -> None:
        for url in urls:
            self._check(url)
        with self._lock:
            for start in range(0, len(urls), MAX_KEYS):  # S3: 1000 keys per DeleteObjects
                self._count("delete_many")
                for url in urls[start:start + MAX_KEYS]:
                    self._remove(url)

    def copy(self, src: str, dst: str) -> str:
        self._check(src)
        self._check(dst)
        with self._lock:
            self._count("copy")
            current = self._objects.get(src)
            if current is None:
                raise NotFoundError(src, f"copy source missing (copy to {dst})")
            return self._store(dst, current[0])  # CopyObject: a new single-part ETag

    def rename(self, src: str, dst: str) -> None:
        """File rename (replaces a file), or directory rename of every key under ``src/``
        onto a ``dst/`` that holds nothing; atomic because it holds the lock."""
        self._check(src, key_required=False)
        self._check(dst, key_required=False)
        with self._lock:
            self._count("rename")
            if not self._rename:
                raise UnsupportedOperationError(src, f"this store has no rename (to {dst})")
            if src.rstrip("/") in self._objects:
                data, etag = self._objects[src.rstrip("/")]
                self._remove(src.rstrip("/"))
                self._store(dst.rstrip("/"), data, etag)
                return
            src_dir, dst_dir = src.rstrip("/") + "/", dst.rstrip("/") + "/"
            if dst_dir.startswith(src_dir):
                raise StoreError(src, f"cannot rename into itself ({dst})",
                                 code="InvalidRequest", status=400)
            lo = bisect.bisect_left(self._keys, src_dir)
            hi = bisect.bisect_left(self._keys, src_dir + "\U0010ffff")
            moving = self._keys[lo:hi]
            if not moving:
                raise NotFoundError(src, f"rename source missing (rename to {dst})")
            i = bisect.bisect_left(self._keys, dst_dir)
            if dst.rstrip("/") in self._objects or (
                    i < len(self._keys) and self._keys[i].startswith(dst_dir)):
                raise StoreError(src, f"rename target {dst} exists", code="DirectoryNotEmpty",
                                 status=409)
            for url in moving:
                data, etag = self._objects[url]
                self._remove(url)
                self._store(dst_dir + url[len(src_dir):], data, etag)

    # -- multipart ------------------------------------------------------------------------

    def _upload(self, url: str, upload_id: str) -> _Upload:
        upload = self._uploads.get(upload_id)
        if upload is None or upload.url != url:
            raise NotFoundError(url, f"no such upload {upload_id!r} for this key",
                                code="NoSuchUpload")
        return upload

    def create_multipart(self, url: str) -> str:
        self._check(url)
        with self._lock:
            self._count("create_multipart")
            upload_id = uuid.uuid4().hex
            self._uploads[upload_id] = _Upload(url)
            return upload_id

    def upload_part(self, url: str, upload_id: str, part_number: int, data: bytes) -> str:
        self._check(url)
        if not 1 <= part_number <= MAX_PART:
            raise StoreError(url, f"part number {part_number} outside 1..{MAX_PART}",
                             code="InvalidArgument", status=400)
        with self._lock:
            self._count("upload_part")
            upload = self._upload(url, upload_id)
            etag = _md5(data)
            upload.parts[part_number] = (bytes(data), etag)
            return etag

    def complete_multipart(
        self, url: str, upload_id: str, parts: Sequence[tuple[int, str]], *,
        if_none_match: bool = False, if_match: str | None = None,
    ) -> str:
        self._check(url)
        with self._lock:
            self._count("complete_multipart")
            upload = self._upload(url, upload_id)
            numbers = [n for n, _ in parts]
            if not parts or numbers != sorted(set(numbers)):
                raise StoreError(url, f"parts must be a non-empty ascending list: {numbers}",
                                 code="InvalidPartOrder", status=400)
            chunks: list[bytes] = []
            for number, etag in parts:
                have = upload.parts.get(number)
                if have is None or have[1] != etag.strip('"'):
                    raise StoreError(url, f"part {number} with ETag {etag!r} was not uploaded",
                                     code="InvalidPart", status=400)
                chunks.append(have[0])
            if if_none_match and url in self._objects:
                raise PreconditionFailedError(url, "If-None-Match: object exists")
            current = self._objects.get(url)
            if if_match is not None and (current is None
                                         or current[1] != if_match.strip('"')):
                raise PreconditionFailedError(url, "If-Match: the ETag changed")
            del self._uploads[upload_id]
            digest = hashlib.md5(b"".join(bytes.fromhex(e.strip('"')) for _, e in parts),
                                 usedforsecurity=False).hexdigest()
            return self._store(url, b"".join(chunks), f"{digest}-{len(parts)}")

    def abort_multipart(self, url: str, upload_id: str) -> None:
        self._check(url)
        with self._lock:
            self._count("abort_multipart")
            self._upload(url, upload_id)
            del self._uploads[upload_id]

    def list_multipart_uploads(self, prefix: str) -> list[UploadInfo]:
        self._check(prefix, key_required=False)
        with self._lock:
            self._count("list_multipart_uploads")
            return sorted((UploadInfo(u.url, uid) for uid, u in self._uploads.items()
                           if u.url.startswith(prefix)), key=lambda u: (u.url, u.upload_id))
