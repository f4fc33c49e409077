"""How a Parquet file is encoded, chosen so a reader cannot tell our files from Spark's.

Spark's writer (parquet-mr) and pyarrow's differ in defaults that change sizes and types:

* **row groups** — rows from Spark arrive in batches of
  ``spark.sql.execution.arrow.maxRecordsPerBatch`` (10,000) rows, and pyarrow's
  ``write_batch`` makes each one a row group: a dictionary page and a page per column every
  10,000 rows made files a third larger than Spark's, and slower to write and to read.  The
  writer buffers a row group's worth (:attr:`ParquetSettings.row_group_bytes`, Spark's
  ``parquet.block.size``, 128 MiB) first.
* **dictionary fallback** — parquet-mr drops dictionary encoding for a column whose first page
  does not get smaller with it (``FallbackValuesWriter``: dictionary plus indices not below the
  plain size); pyarrow keeps the dictionary until it reaches 1 MiB.  For unique values (ids,
  random doubles) in files of less than a few hundred thousand rows that cost up to 40% more
  bytes per column.  :func:`dictionary_columns` makes the same decision from the first rows.
* **physical types** — decimals of precision <= 9 / <= 18 as INT32 / INT64, lists in three
  levels named ``element``, timestamps as INT64 microseconds (Spark's
  ``outputTimestampType=TIMESTAMP_MICROS``; its default, INT96, is deprecated by Parquet and
  pyarrow cannot write it for ``timestamp`` columns alone, which would turn ``timestamp_ntz``
  columns into ``timestamp``), and no ``ARROW:schema`` footer entry (Spark writes none).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pyarrow as pa  # type: ignore[import-untyped]
import pyarrow.compute as pc  # type: ignore[import-untyped]

from .spec import ROW_GROUP_BYTES

#: Codec names Spark accepts that pyarrow spells differently.
_CODECS = {"uncompressed": "none", "lz4_raw": "lz4"}
#: The rows a column's dictionary decision looks at: about parquet-mr's first page (1 MiB of
#: 8-byte values); a later dictionary that outgrows 1 MiB falls back in both writers.
SAMPLE_ROWS = 131_072


@dataclass(frozen=True)
class ParquetSettings:
    """Codec, row-group size and rows per file of the files one task writes.

    ``row_group_bytes`` bounds the Arrow bytes buffered per row group; Arrow's in-memory size
    is an upper bound on the encoded size, so a row group is at most about that on disk, as
    with Spark's ``parquet.block.size``.  ``max_records_per_file`` (0: no limit) rolls to a new
    file, as Spark's ``maxRecordsPerFile`` does.
    """

    compression: str = "snappy"
    row_group_bytes: int = ROW_GROUP_BYTES
    max_records_per_file: int = 0

    def writer_options(self, first_rows: Any) -> dict[str, Any]:
        """pyarrow ``ParquetWriter`` options for a file whose first row group is ``first_rows``
        (a ``pyarrow.Table``): Spark's physical types, and dictionaries where they pay."""
        return {"compression": _CODECS.get(self.compression, self.compression),
                "coerce_timestamps": "us", "allow_truncated_timestamps": True,
                "store_decimal_as_integer": True, "use_compliant_nested_type": True,
                "store_schema": False, "use_dictionary": dictionary_columns(first_rows)}


def dictionary_columns(table: Any) -> list[str]:
    """The leaf column paths of ``table`` worth dictionary-encoding, as parquet-mr decides.

    A top-level primitive column keeps its dictionary when, over its first
    :data:`SAMPLE_ROWS` rows, distinct values plus bit-packed indices take fewer bytes than
    the plain values; nested columns always keep theirs (as pyarrow's default; parquet-mr
    decides per leaf, which costs a flatten per leaf to imitate).  Booleans are never
    dictionary-encoded (neither writer does).
    """
    sample = table.slice(0, SAMPLE_ROWS)
    keep: list[str] = []
    for name, column in zip(sample.column_names, sample.columns, strict=True):
        kind = column.type
        if pa.types.is_boolean(kind):
            continue
        if pa.types.is_nested(kind):
            keep.extend(_leaf_paths(name, kind))
        elif _dictionary_pays(column, kind):
            keep.append(name)
    return keep


def _dictionary_pays(column: Any, kind: Any) -> bool:
    values = len(column) - column.null_count
    if values == 0:
        return True
    if pa.types.is_binary(kind) or pa.types.is_string(kind) or pa.types.is_large_string(kind) \
            or pa.types.is_large_binary(kind):
        width = 4 + pc.sum(pc.binary_length(column)).as_py() / values  # length prefix + bytes
    else:
        width = kind.bit_width / 8
    # ``unique`` builds one hash table over the chunks; ``count_distinct`` merges one per
    # chunk, and a partition's rows arrive in hundreds of small slices (measured: 2-4x slower)
    distinct = len(pc.unique(column)) - (1 if column.null_count else 0)
    index_bytes = values * max(1, math.ceil(math.log2(max(distinct, 2)))) / 8
    return bool(distinct * width + index_bytes < values * width)


def _leaf_paths(name: str, kind: Any) -> Iterator[str]:
    """Parquet column paths under ``name`` (compliant nesting: ``list.element``,
    ``key_value.key``/``value``)."""
    if pa.types.is_list(kind) or pa.types.is_large_list(kind) or \
            pa.types.is_fixed_size_list(kind):
        yield from _leaf_paths(f"{name}.list.element", kind.value_type)
    elif pa.types.is_map(kind):
        yield from _leaf_paths(f"{name}.key_value.key", kind.key_type)
        yield from _leaf_paths(f"{name}.key_value.value", kind.item_type)
    elif pa.types.is_struct(kind):
        for i in range(kind.num_fields):
            yield from _leaf_paths(f"{name}.{kind.field(i).name}", kind.field(i).type)
    elif not pa.types.is_boolean(kind):
        yield name
