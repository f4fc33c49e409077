"""Reading parsed JSON without ``Any``: a trace line or a verdict cell read back from a file
holds whatever the file holds, so its readers take ``Mapping[str, object]`` and convert each
field where they use it, through these (a tuple reads as an array: a live run's scenario has
tuples where a file has lists)."""

from __future__ import annotations

from collections.abc import Mapping


def json_list(value: object) -> list[object]:
    """A JSON array's items; anything else (missing, null) reads as no items."""
    return list(value) if isinstance(value, list | tuple) else []


def json_bool(value: object) -> bool:
    """A JSON boolean; anything else is not what the reader expects."""
    if not isinstance(value, bool):
        raise TypeError(f"expected a JSON boolean, got {type(value).__name__}")
    return value


def json_int(value: object) -> int:
    """A JSON integer (a choice's index); anything else is not what the reader expects."""
    if not isinstance(value, int):
        raise TypeError(f"expected a JSON integer, got {type(value).__name__}")
    return value


def json_number(value: object) -> float:
    """A JSON number (a benchmark's measurement); anything else is not what the reader
    expects."""
    if not isinstance(value, int | float):
        raise TypeError(f"expected a JSON number, got {type(value).__name__}")
    return float(value)


def json_object(value: object) -> dict[str, object]:
    """A JSON object's fields; anything else is not what the reader expects."""
    if not isinstance(value, Mapping):
        raise TypeError(f"expected a JSON object, got {type(value).__name__}")
    return {str(k): v for k, v in value.items()}
