"""The one place where store URLs are parsed, joined and compared.

URLs are ``s3://bucket/key``, ``file:///abs/path`` or a model scheme such as ``mem://bucket/key``.
Directory semantics are explicit: ``out`` contains ``out/x`` but never ``out10/x``; every prefix
comparison in zerorename goes through :func:`is_under` or :func:`dir_prefix` for that reason
(Section XIV of the zero-rename paper: cleanup by string prefix aborted an adjacent job's work).
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass
from urllib.parse import unquote

from zerorename.errors import BadURLError, DestinationEscapeError

KNOWN_SCHEMES = ("s3", "s3a", "file", "mem", "hdfs", "gs", "abfs")


@dataclass(frozen=True)
class StoreURL:
    """A parsed URL: scheme, bucket (empty for ``file``) and key (no leading slash)."""

    scheme: str
    bucket: str
    key: str

    def __str__(self) -> str:
        if self.scheme == "file":
            return f"file:///{self.key}"
        return f"{self.scheme}://{self.bucket}/{self.key}"


def parse_url(url: str) -> StoreURL:
    """Split ``url`` into scheme, bucket and key, rejecting anything ambiguous."""
    if "://" not in url:
        raise BadURLError(url, "not a URL: expected scheme://bucket/key (s3://, file:///)")
    scheme, rest = url.split("://", 1)
    scheme = scheme.lower()
    if scheme not in KNOWN_SCHEMES:
        raise BadURLError(url, f"unknown scheme {scheme!r}; expected one of {KNOWN_SCHEMES}")
    if scheme == "file":
        if not rest.startswith("/"):
            raise BadURLError(url, "file URLs must be absolute: file:///path")
        return StoreURL("file", "", rest.lstrip("/"))
    bucket, _, key = rest.partition("/")
    if not bucket:
        raise BadURLError(url, "missing bucket name")
    return StoreURL(scheme, bucket, key)


def user_url(url: str) -> str:
    """A location as a user gave it, in the form every store and committer works with.

    zerorename's URLs carry keys and paths exactly as the store names them (``file:///tmp/a b``,
    ``s3://b/100%``), so a URL built by :func:`join` is never decoded again.  A ``file:`` URI
    produced by a program, though, is RFC 8089: ``Path("/tmp/out dir#1").as_uri()`` is
    ``file:///tmp/out%20dir%231``.  Such a URI is percent-decoded here, once, where it enters
    (a job's destination), so no committer writes into a directory literally named
    ``out%20dir%231``.  Bytes that are not UTF-8 decode as :func:`os.fsdecode` would
    (``surrogateescape``), so the result names the same file as the ``Path``.  Object-store
    URLs are returned unchanged: ``%`` is an ordinary character of an S3 key.
    """
    parsed = parse_url(url)  # raises BadURLError naming the URL
    if parsed.scheme != "file" or "%" not in url:
        return url
    path = unquote(url.split("://", 1)[1], errors="surrogateescape")
    if "\x00" in path:
        raise BadURLError(url, "the decoded path holds a NUL byte (%00)")
    return f"file://{path}"


def join(base: str, relative: str) -> str:
    """Join a relative path under ``base``; refuse anything that escapes it."""
    rel = relative.replace("\\", "/")
    if rel.startswith("/") or "://" in rel:
        raise DestinationEscapeError(relative, f"absolute path is not relative to {base}")
    normal = posixpath.normpath(rel) if rel else ""
    if normal in (".", ""):
        return base.rstrip("/")
    if normal == ".." or normal.startswith("../"):
        raise DestinationEscapeError(relative, f"escapes the destination {base}")
    return base.rstrip("/") + "/" + normal


def dir_prefix(url: str) -> str:
    """``url`` as a directory prefix (with one trailing slash), for listing and cleanup."""
    return url.rstrip("/") + "/"


def is_under(url: str, directory: str) -> bool:
    """True if ``url`` is ``directory`` itself or inside it (``out`` never contains ``out10``)."""
    return url.rstrip("/") == directory.rstrip("/") or url.startswith(dir_prefix(directory))


def relative_to(url: str, directory: str) -> str:
    """The path of ``url`` below ``directory``; raises if it is not under it."""
    if not is_under(url, directory):
        raise DestinationEscapeError(url, f"not under {directory}")
    return url[len(dir_prefix(directory)):] if url.rstrip("/") != directory.rstrip("/") else ""


def is_hidden(relative_path: str) -> bool:
    """Hadoop's rule: a path with any component starting with ``_`` or ``.`` is not output."""
    return any(part.startswith(("_", ".")) for part in relative_path.split("/") if part)
