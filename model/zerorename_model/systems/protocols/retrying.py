"""The model committers' retry loop: what they do when a request's outcome is ambiguous.

A request whose answer was lost (a read timeout, a reset connection) may or may not have taken
effect; a conditional request that met a concurrent one on its key answers 409
``ConditionalRequestConflict`` and did not.  The reference committers repeat both in their one
retry loop (``zerorename.retry``), and after a *repeated* request failed they ask whether an
earlier attempt landed: a conditional PUT that meets 412 landed if the object holds exactly its
bytes (``put_landed``); a complete that meets ``NoSuchUpload`` landed if the object is the
one its parts make (``complete_landed``).  :class:`RetryingStore` is that loop, written again
for the model (the model imports nothing of the reference but its store types), around the
stepped store: every attempt is a harness step of its own, so exploration places other
actors' requests between an attempt and its repeat.

Only the ambiguous outcomes are repeated (a transport error, a 409): a 503 stays an error, as
the model's throttle scopes (Table V) have always read it.  ``landed=False`` is the loop
without the two checks, for the variant that shows why they are needed.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from zerorename.store import ListPage, ObjectInfo, Store, StoreCapabilities, UploadInfo
from zerorename_model.engine.errors import ModelStoreError

T = TypeVar("T")

#: codes whose request may be repeated: the answer was lost, or a 409 that took no effect
AMBIGUOUS = frozenset({"ReadTimeout", "ConditionalRequestConflict"})


@dataclass(frozen=True)
class Retry:
    """How a model committer repeats an ambiguous request: at most ``attempts`` requests per
    operation; ``landed``: after a repeat fails, check whether an earlier attempt took effect."""

    attempts: int = 3
    landed: bool = True


class RetryingStore:
    """``inner`` (a :class:`~zerorename.store.Store`) with every operation in the retry loop of
    ``retry``.  Other attributes (``unstepped``, ``name``) are the inner store's."""

    def __init__(self, inner: Store, retry: Retry) -> None:
        self._inner = inner
        self._retry = retry
        self.name = inner.name

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def _call(self, fn: Callable[[], T], landed: Callable[[ModelStoreError], T | None] | None,
              ) -> T:
        attempt = 1
        while True:
            try:
                return fn()
            except ModelStoreError as error:
                if error.code in AMBIGUOUS and attempt < self._retry.attempts:
                    attempt += 1
                    continue
                if attempt > 1 and landed is not None and self._retry.landed:
                    result = landed(error)
                    if result is not None:
                        return result
                raise

    # -- the store protocol -------------------------------------------------------------------

    def capabilities(self) -> StoreCapabilities:
        return self._inner.capabilities()

    def request_counts(self) -> dict[str, int]:
        return self._inner.request_counts()

    def put(self, url: str, data: bytes, *, if_none_match: bool = False,
            if_match: str | None = None) -> str:
        def landed(error: ModelStoreError) -> str | None:
            """A repeated conditional PUT met 412: ours landed if the object is our bytes."""
            if error.code != "PreconditionFailed":
                return None
            mine = hashlib.md5(data, usedforsecurity=False).hexdigest()
            found = self.head(url)
            return mine if found is not None and found.etag.strip('"') == mine else None

        return self._call(lambda: self._inner.put(url, data, if_none_match=if_none_match,
                                                  if_match=if_match),
                          landed if (if_none_match or if_match) else None)

    def get(self, url: str) -> bytes:
        return self._call(lambda: self._inner.get(url), None)

    def head(self, url: str) -> ObjectInfo | None:
        return self._call(lambda: self._inner.head(url), None)

    def list_page(self, prefix: str, *, delimiter: str | None = None,
                  token: str | None = None, max_keys: int = 1000) -> ListPage:
        return self._call(lambda: self._inner.list_page(prefix, delimiter=delimiter,
                                                        token=token, max_keys=max_keys), None)

    def delete(self, url: str) -> None:
        self._call(lambda: self._inner.delete(url), None)

    def delete_many(self, urls: Sequence[str]) -> None:
        self._call(lambda: self._inner.delete_many(urls), None)

    def copy(self, src: str, dst: str) -> str:
        return self._call(lambda: self._inner.copy(src, dst), None)

    def rename(self, src: str, dst: str) -> None:
        def landed(error: ModelStoreError) -> bool | None:
            """A repeated rename that failed (its source missing, or its destination there)
            while its source is gone and its destination there: the first one landed (HDFS's
            NameNode answers a repeated rename from its retry cache, HDFS-4942)."""
            if error.code not in ("NoSuchKey", "DestinationExists") or self._exists(src):
                return None
            return True if self._exists(dst) else None

        self._call(lambda: self._inner.rename(src, dst), landed)

    def _exists(self, url: str) -> bool:
        if self.head(url) is not None:
            return True
        page = self.list_page(url.rstrip("/") + "/", max_keys=1)
        return bool(page.objects or page.prefixes)

    def create_multipart(self, url: str) -> str:
        return self._call(lambda: self._inner.create_multipart(url), None)

    def upload_part(self, url: str, upload_id: str, part_number: int, data: bytes) -> str:
        return self._call(lambda: self._inner.upload_part(url, upload_id, part_number, data),
                          None)

    def complete_multipart(self, url: str, upload_id: str, parts: Sequence[tuple[int, str]],
                           *, if_none_match: bool = False, if_match: str | None = None) -> str:
        def landed(error: ModelStoreError) -> str | None:
            """A repeated complete met NoSuchUpload: ours landed if the object is the one its
            parts make.  The model's stores give an object the MD5 of its bytes, which the
            part ETags predict for one part only: with several, the error stands."""
            if error.code != "NoSuchUpload" or len(parts) != 1:
                return None
            found = self.head(url)
            expected = parts[0][1].strip('"')
            return expected if found is not None and found.etag.strip('"') == expected else None

        return self._call(lambda: self._inner.complete_multipart(
            url, upload_id, parts, if_none_match=if_none_match, if_match=if_match), landed)

    def abort_multipart(self, url: str, upload_id: str) -> None:
        self._call(lambda: self._inner.abort_multipart(url, upload_id), None)

    def list_multipart_uploads(self, prefix: str) -> list[UploadInfo]:
        return self._call(lambda: self._inner.list_multipart_uploads(prefix), None)
