"""The values a model store keeps: a stored object, a pending visibility event and a multipart
upload in progress.  Plain frozen values where they can be, so that the state's fingerprint
(:meth:`.state.StoreState.digest`) and the harness's pruning can compare them."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass


@dataclass(frozen=True)
class Obj:
    data: bytes
    etag: str


@dataclass(frozen=True)
class Visibility:
    """A pending visibility event: ``kind`` is list-add, list-del, read (stale read ends)."""

    kind: str
    url: str

    def __str__(self) -> str:
        return f"{self.kind} {self.url}"


@dataclass
class Upload:
    url: str
    parts: dict[int, bytes]
    initiated: int


def etag_of(data: bytes) -> str:
    """The ETag the model gives ``data`` (its MD5, hex): equal bytes, equal ETag, so a part or
    an object can be checked against the ETag a client was given."""
    return hashlib.md5(data).hexdigest()
