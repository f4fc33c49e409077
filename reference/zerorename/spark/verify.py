"""Check a finished write against its input: what the demo reports and the tests assert.

Every verdict is computed from the input and the store, never typed in:

* :class:`InputSnapshot` collects the input once, with the Spark partition of every row, so the
  exact set of files a committed write must produce is known: one file per (task, partition
  directory) pair the data really has, named ``part-<task>-<job uuid>.parquet``.
* :func:`compare` tells completeness (every input row is visible) from exclusivity (nothing
  else is: no duplicate, foreign or extra row, and exactly the expected files).
* :func:`leftovers` lists what a commit or an abort must not leave: hidden objects other than
  ``_SUCCESS`` and incomplete multipart uploads.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from zerorename.store import Store, list_all, list_dir
from zerorename.urls import dir_prefix, is_hidden, relative_to

from .parquet import partition_dir

#: Where S3Store's once-per-endpoint capability probe writes (and deletes) its objects.
PROBE_PREFIX = ".zerorename-probe/"


class InputSnapshot:
    """The input of a write, collected once: rows (as tuples of ``columns``) and layout."""

    def __init__(self, df: Any, columns: Sequence[str],
                 partition_by: Sequence[str] = ()) -> None:
        from pyspark.sql.functions import spark_partition_id

        collected = df.withColumn("_zr_task", spark_partition_id()).collect()
        self.columns = tuple(columns)
        self.partition_by = tuple(partition_by)
        self.rows = sorted(tuple(r[c] for c in self.columns) for r in collected)
        self._keys = {(r["_zr_task"], tuple(r[c] for c in self.partition_by))
                      for r in collected}

    def files(self, job_id: str) -> set[str]:
        """Relative paths of the files a committed write of this input must produce."""
        out = set()
        for task, values in self._keys:
            name = f"part-{task:05d}-{job_id}.parquet"
            out.add(f"{partition_dir(self.partition_by, values)}/{name}"
                    if self.partition_by else name)
        return out

    def rows_of(self, df: Any) -> list[tuple[Any, ...]]:
        """``df``'s rows in this snapshot's column order, sorted (for comparison)."""
        return sorted(tuple(r[c] for c in self.columns)
                      for r in df.select(*self.columns).collect())


@dataclass(frozen=True)
class Comparison:
    """Output versus input: the differences that decide completeness and exclusivity."""

    missing_rows: int
    extra_rows: int
    missing_files: list[str]
    extra_files: list[str]

    @property
    def complete(self) -> bool:
        """Every input row is visible (and every file that should hold rows exists)."""
        return self.missing_rows == 0 and not self.missing_files

    @property
    def exclusive(self) -> bool:
        """Nothing but the input is visible: no duplicate, foreign or extra rows or files."""
        return self.extra_rows == 0 and not self.extra_files


def compare(expected_rows: Sequence[tuple[Any, ...]], got_rows: Sequence[tuple[Any, ...]],
            expected_files: set[str], got_files: set[str]) -> Comparison:
    want, have = Counter(expected_rows), Counter(got_rows)
    return Comparison(
        missing_rows=sum((want - have).values()),
        extra_rows=sum((have - want).values()),
        missing_files=sorted(expected_files - got_files),
        extra_files=sorted(got_files - expected_files),
    )


def visible_files(store: Store, dest: str) -> dict[str, int]:
    """Visible output under ``dest`` (relative path → size), by Hadoop's hidden-name rule."""
    out = {}
    for obj in list_dir(store, dest):
        rel = relative_to(obj.url, dest)
        if not is_hidden(rel):
            out[rel] = obj.size
    return out


@dataclass(frozen=True)
class Leftovers:
    """What remains that should not: hidden objects (not ``_SUCCESS``) and pending uploads."""

    objects: list[str]
    uploads: list[str]

    @property
    def clean(self) -> bool:
        return not self.objects and not self.uploads


def leftovers(store: Store, dest: str, scope: str | None = None) -> Leftovers:
    """Objects under ``scope`` (default: ``dest``) that are neither visible output of
    ``dest`` nor its ``_SUCCESS``, and incomplete uploads under ``scope``.

    Pass the bucket root (``s3://bucket/``) as ``scope`` to catch staging written *outside*
    the destination too; the capability probe's prefix is ignored there.
    """
    area = dir_prefix(scope or dest)
    extra = []
    for obj in list_all(store, area):
        if obj.url.startswith(area + PROBE_PREFIX):
            continue
        if obj.url.startswith(dir_prefix(dest)):
            rel = relative_to(obj.url, dest)
            if rel == "_SUCCESS" or not is_hidden(rel):
                continue
        extra.append(obj.url)
    uploads = [u.url for u in store.list_multipart_uploads(area)]
    return Leftovers(sorted(extra), sorted(uploads))
