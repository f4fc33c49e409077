"""The matrix's cells as ``zerorename check --json`` writes them, for tests that assert on that
JSON (the public form of a verdict), and the typed view of such a JSON cell back."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from zerorename_model.experiments.cells import Cell
from zerorename_model.experiments.explored import JsonObject


def as_json(cells: Iterable[Cell]) -> list[JsonObject]:
    return [cell.to_json() for cell in cells]


def typed(cell: Mapping[str, object]) -> Cell:
    return Cell.from_json(cell)


def shown(cell: Mapping[str, object]) -> str:
    """The verdict as the matrix shows it (``holds*`` where a scope was only sampled)."""
    return typed(cell).shown


def lag_bound(cell: Mapping[str, object]) -> int | None:
    return typed(cell).max_lag
