"""Checks on the paths a task writes and the URLs a record names: inside the destination,
outside the committers' areas, within S3's key length.

Every path a caller gives and every URL read back from a record passes here before a
request uses it, so a bad path fails with a :class:`~zerorename.errors.CommitError` naming it
— not as a store error halfway through a commit, and never as a write outside the job.
"""

from __future__ import annotations

import functools

from zerorename.committers.layout import RESERVED_FIRST_ELEMENTS, RESERVED_PREFIXES
from zerorename.errors import CommitError, DestinationEscapeError, KeyTooLongError
from zerorename.urls import parse_url

__all__ = [
    "MAX_KEY_BYTES",
    "check_destination",
    "check_key_length",
    "check_relpath",
    "dest_url",
    "same_scheme",
]


def check_relpath(rel: str, *, where: str | None = None) -> str:
    """Validate a path relative to the destination: no escape, no reserved committer area.

    Rejected: empty; absolute or with a scheme; empty, ``.`` or ``..`` elements; a first
    element reserved for committer data (``_temporary``, ``__magic…``, ``__staging_job-…``)
    or for the job's marker (``_SUCCESS``, and anything under ``_SUCCESS/``).
    """
    name = where or rel
    if not isinstance(rel, str) or not rel:
        raise DestinationEscapeError(str(name), "empty path")
    if "\x00" in rel:
        raise DestinationEscapeError(name, "NUL byte in path")
    if rel.startswith("/") or "://" in rel:
        raise DestinationEscapeError(name, "absolute path; expected a path relative to the "
                                           "job destination")
    parts = rel.split("/")
    if any(p in ("", ".", "..") for p in parts):
        raise DestinationEscapeError(name, f"path {rel!r} has an empty, '.' or '..' element")
    first = parts[0]
    if first in RESERVED_FIRST_ELEMENTS:
        raise DestinationEscapeError(name, f"path {rel!r}: {first!r} "
                                           f"{RESERVED_FIRST_ELEMENTS[first]}")
    if first.startswith(RESERVED_PREFIXES):
        raise DestinationEscapeError(name, f"path {rel!r}: {first!r} is reserved for "
                                           "committer data (a committer's job directory)")
    return rel


_SCHEME_ALIASES = {"s3a": "s3", "s3n": "s3"}


#: a job checks every file's URL against one destination: parse it once
_parsed_dest = functools.lru_cache(maxsize=64)(parse_url)


def check_destination(url: str, dest: str, path: str) -> str:
    """The path of ``url`` below the job destination ``dest``; a
    :class:`DestinationEscapeError` naming ``path`` (the record) if it lies anywhere else
    (another bucket or scheme, a sibling like ``dest10``, ``..``, a reserved area)."""
    try:
        u = parse_url(url)
    except CommitError as exc:
        raise DestinationEscapeError(path, f"destination {url!r} is not a URL: {exc.reason}") \
            from None
    d = _parsed_dest(dest)
    same_store = same_scheme(u.scheme, d.scheme) and u.bucket == d.bucket
    prefix = d.key.rstrip("/") + "/" if d.key.strip("/") else ""
    if not same_store or not u.key.startswith(prefix):
        raise DestinationEscapeError(path, f"destination {url} is outside the job "
                                           f"destination {dest}")
    rel = u.key[len(prefix):]
    try:
        return check_relpath(rel)
    except DestinationEscapeError as exc:
        raise DestinationEscapeError(path, f"destination {url}: {exc.reason}") from None


def dest_url(dest: str, rel: str) -> str:
    """``dest/rel`` for a validated ``rel`` (no normalisation: keys are kept exactly)."""
    return f"{dest.rstrip('/')}/{rel}"


#: S3's limit on a key: 1,024 bytes of UTF-8 (RGW, GCS and R2 have the same or larger).
MAX_KEY_BYTES = 1024


def check_key_length(url: str, rel: str) -> str:
    """``url`` (the final URL of ``rel``) if its key fits S3's limit; else a
    :class:`KeyTooLongError` naming ``rel``, so a bad path fails when opened, not as a raw
    store error halfway through a commit."""
    size = len(parse_url(url).key.encode("utf-8"))
    if size > MAX_KEY_BYTES:
        raise KeyTooLongError(rel, f"its key {url} is {size} bytes of UTF-8; S3 keys are at "
                                   f"most {MAX_KEY_BYTES}")
    return url


def same_scheme(a: str, b: str) -> bool:
    """Do URL schemes ``a`` and ``b`` name one kind of store (``s3a``/``s3n`` are ``s3``)?"""
    return _SCHEME_ALIASES.get(a, a) == _SCHEME_ALIASES.get(b, b)
