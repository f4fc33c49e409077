"""What every persistent format shares: the JSON record base class, parsing that names the
file in every error, encoded URIs and timestamps.

Apart from the formats themselves so that each format family (:mod:`.uploads`,
:mod:`.manifest`, :mod:`.success`) depends on one small module and not on the others, and so
that readers of a format see its fields, not the plumbing.
"""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime
from typing import Any, ClassVar, TypeVar
from urllib.parse import quote, unquote

from zerorename.errors import FormatError
from zerorename.store import Store
from zerorename.urls import parse_url

__all__ = ["JsonRecord", "date_text", "decode_uri", "encode_url", "load", "now_millis",
           "parse_json"]

F = TypeVar("F", bound="JsonRecord")


def now_millis() -> int:
    return int(time.time() * 1000)


def date_text(millis: int) -> str:
    """The readable date written beside a timestamp.  Only people read it, so a timestamp no
    calendar date can show (after 9999-12-31, which a reader accepts) is written as its number
    rather than making the record impossible to write back or print."""
    try:
        return datetime.fromtimestamp(millis / 1000, tz=UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    except (ValueError, OverflowError, OSError):
        return f"{millis} ms after the epoch"


def encode_url(url: str) -> str:
    """``url`` with its key percent-encoded, as Hadoop's ``Path.toUri()`` would print it."""
    u = parse_url(url)
    key = quote(u.key, safe="/")
    return f"file:///{key}" if u.scheme == "file" else f"{u.scheme}://{u.bucket}/{key}"


def decode_uri(uri: str) -> str:
    return unquote(uri)


def parse_json(data: bytes, path: str) -> Any:
    """JSON from ``data``, or a :class:`FormatError` saying what is wrong with ``path``."""
    if not data:
        raise FormatError(path, "empty file (0 bytes): truncated, or not written by a committer")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise FormatError(path, f"not UTF-8 text (byte {exc.start}): corrupt") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise FormatError(
            path, f"corrupt or truncated JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"
        ) from None
    except RecursionError:
        # no committer writes nesting this deep: the file is corrupt or hostile, and the
        # parser's own error must not escape as something other than a FormatError
        raise FormatError(path, "JSON nested too deeply: corrupt, or not written by a "
                          "committer") from None



class JsonRecord:
    """Shared (de)serialisation: ``to_json`` → dict, ``to_bytes`` → UTF-8 JSON.

    Records that machines read back (``.pending``, ``.pendingset``, manifests, intents) are
    written compact: a pendingset of 10,000 files is a third smaller than indented, and job
    commit reads thousands of them.  ``_SUCCESS``, which people read, is indented as Hadoop
    writes it.  Readers accept either: whitespace is not part of the format.
    """

    WHAT: ClassVar[str] = "file"
    #: ``json.dumps`` indentation; None = compact
    INDENT: ClassVar[int | None] = None

    def to_json(self) -> dict[str, Any]:
        raise NotImplementedError

    def to_bytes(self) -> bytes:
        if self.INDENT is None:
            text = json.dumps(self.to_json(), ensure_ascii=False, separators=(",", ":"))
        else:
            text = json.dumps(self.to_json(), indent=self.INDENT, ensure_ascii=False)
        return text.encode("utf-8")

    @classmethod
    def from_json(cls: type[F], data: Any, path: str = "<json>") -> F:
        raise NotImplementedError

    @classmethod
    def from_bytes(cls: type[F], data: bytes, path: str) -> F:
        return cls.from_json(parse_json(data, path), path)


def load(store: Store, url: str, cls: type[F]) -> F:
    """GET ``url`` and parse it as ``cls``; a missing file is
    :class:`~zerorename.errors.NotFoundError`, anything unreadable a FormatError."""
    return cls.from_bytes(store.get(url), url)

