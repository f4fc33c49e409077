"""Checks of one field of a parsed JSON record, each raising a
:class:`~zerorename.errors.FormatError` that names the file and the field.

Shared by every format: job commit acts on what these records say, so a wrong type, a
missing required field or an unsupported version must stop it with the same kind of message
whatever the record.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from zerorename.errors import FormatError

__all__ = ["int_field", "mapping_of", "stats_field", "str_field", "str_map_field",
           "version_field"]


def mapping_of(value: Any, path: str, what: str) -> Mapping[str, Any]:
    """``value`` if it is a JSON object; ``what`` names the record (or entry) in the error."""
    if not isinstance(value, Mapping):
        raise FormatError(path, f"{what} is not a JSON object")
    return value


def str_field(data: Mapping[str, Any], key: str, path: str, *, required: bool = True,
              non_empty: bool = False) -> str:
    """A string field; absent is ``""`` unless it is required to be non-empty."""
    value = data.get(key)
    if value is None:
        if required and non_empty:
            raise FormatError(path, f"missing field {key!r}")
        return ""
    if not isinstance(value, str):
        raise FormatError(path, f"field {key!r} is not a string: {value!r}")
    if non_empty and not value:
        raise FormatError(path, f"field {key!r} is empty")
    return value


def int_field(data: Mapping[str, Any], key: str, path: str, *, default: int | None = None,
              minimum: int | None = None) -> int:
    """An integer field (a JSON boolean is not one); absent is ``default``, or an error."""
    value = data.get(key, default)
    if value is None:
        raise FormatError(path, f"missing field {key!r}")
    if isinstance(value, bool) or not isinstance(value, int):
        raise FormatError(path, f"field {key!r} is not an integer: {value!r}")
    if minimum is not None and value < minimum:
        raise FormatError(path, f"field {key!r} is {value}, must be >= {minimum}")
    return value


def str_map_field(value: Any, path: str, key: str) -> dict[str, str]:
    """A string-to-string object (``extraData``, ``diagnostics``); absent is empty."""
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise FormatError(path, f"field {key!r} is not a JSON object")
    out: dict[str, str] = {}
    for k, v in value.items():
        if not isinstance(k, str) or not isinstance(v, str):
            raise FormatError(path, f"field {key!r} must map strings to strings: {k!r}: {v!r}")
        out[k] = v
    return out


def stats_field(value: Any, path: str) -> dict[str, Any]:
    """The ``iostatistics`` object, kept as it is (absent is empty)."""
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise FormatError(path, "field 'iostatistics' is not a JSON object")
    return dict(value)


def version_field(data: Mapping[str, Any], path: str, expected: int, what: str) -> int:
    """The ``version`` field, which must be ``expected``: a newer file is refused, not guessed
    at."""
    version = data.get("version")
    if version is None:
        raise FormatError(path, f"missing field 'version' (not a {what})")
    if isinstance(version, bool) or not isinstance(version, int):
        raise FormatError(path, f"field 'version' is not an integer: {version!r}")
    if version != expected:
        raise FormatError(path, f"{what} version {version} is not supported (expected {expected})")
    return version
