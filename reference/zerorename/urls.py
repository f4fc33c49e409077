"""The one place where store URLs are parsed, joined and compared.

URLs are ``s3://bucket/key``, ``file:///abs/path`` or a model scheme such as ``mem://bucket/key``.
Directory semantics are explicit: ``out`` contains ``out/x`` but never ``out10/x``; every prefix
comparison in zerorename goes through :func:`is_under` or :func:`dir_prefix` for that reason
(Section XIV of the zero-rename paper: cleanup by string prefix aborted an adjacent job's work).
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass

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
