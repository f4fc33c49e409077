"""Destinations a job cannot own, refused before any request that changes the store.

A committer deletes, aborts and replaces inside its destination on the belief that the
destination is its job's: a table's directory.  Two kinds of destination break that belief:

* **a bucket root** (``s3://bucket``): the whole bucket is "the destination", so an
  overwrite, a ``replace`` conflict mode or a destination-wide abort of uploads would delete
  every other team's data in it.  Hadoop's S3A refuses to delete a root path and HDFS refuses
  to delete ``/``; zerorename refuses every mode that deletes at a root (appending is allowed:
  it deletes nothing it did not write);
* **a path with ``.``, ``..`` or empty elements** (``s3://b/../x``, ``s3://b/./x``,
  ``s3://b/a//x``): S3 keys are not normalised, so ``s3://b/../x`` writes keys that begin
  with ``../x/`` — a second name for nothing a reader would look for — and two spellings of
  one table would let two jobs each believe it owns it.  Refused for every mode.
"""

from __future__ import annotations

from zerorename.errors import BadURLError
from zerorename.urls import parse_url

__all__ = ["UnownableDestinationError", "check_destination_shape", "check_may_delete_at",
           "is_store_root"]


class UnownableDestinationError(BadURLError):
    """The destination cannot be owned by a job: a bucket (or file system) root for a mode
    that deletes, or a path with ``.``, ``..`` or empty elements.  Raised before any request
    that changes the store; the message says what to write instead."""


def is_store_root(dest: str) -> bool:
    """Is ``dest`` a bucket root (``s3://bucket``, ``s3://bucket/``) or the file system root?"""
    return not parse_url(dest).key.strip("/")


def check_destination_shape(dest: str) -> str:
    """Refuse ``.``, ``..`` and empty path elements in ``dest`` (a trailing slash is fine)."""
    parsed = parse_url(dest)
    parts = parsed.key.rstrip("/").split("/") if parsed.key.rstrip("/") else []
    bad = [p for p in parts if p in ("", ".", "..")]
    if bad:
        clean = "/".join(_resolved(parts)) or "<table>"
        what = "an empty path element (//)" if "" in bad else f"a {bad[0]!r} path element"
        raise UnownableDestinationError(
            dest, f"the destination has {what}: object stores do not resolve them, so the job "
                  f"would write keys named literally so.  Write the path without them "
                  f"(e.g. {_spelled(dest, parsed.bucket, clean)})")
    return dest


def check_may_delete_at(dest: str, what: str) -> str:
    """Refuse ``what`` (a mode that deletes in the destination) at a bucket root."""
    if is_store_root(dest):
        raise UnownableDestinationError(
            dest, f"{what} would delete in the whole bucket, other data included: it is "
                  "refused at a bucket root.  Write to a directory of the bucket "
                  f"(e.g. {dest.rstrip('/')}/<table>), or append instead")
    return dest


def _resolved(parts: list[str]) -> list[str]:
    """``parts`` as a file system would resolve them: ``a/../x`` is ``x``, and a ``..`` at
    the top goes nowhere (so the suggested spelling never has one)."""
    kept: list[str] = []
    for part in parts:
        if part == "..":
            if kept:
                kept.pop()
        elif part not in ("", "."):
            kept.append(part)
    return kept


def _spelled(dest: str, bucket: str, key: str) -> str:
    scheme = dest.split("://", 1)[0]
    if scheme == "file":
        return f"file:///{key}"
    return f"{scheme}://{bucket}/{key}"
