"""The generated blocks of tla/README.md: text between a begin and an end marker, which the
tools (``expected_table.py``, ``compare_model.py``) regenerate and the tests compare."""

from __future__ import annotations

from pathlib import Path

README = Path(__file__).resolve().parent.parent / "README.md"


def readme_block(text: str, begin: str, end: str) -> str:
    """The block from ``begin`` to ``end`` (both included) in ``text``."""
    start, stop = text.index(begin), text.index(end) + len(end)
    return text[start:stop]


def write_block(block: str, begin: str, end: str, path: Path = README) -> None:
    """Replace the block between the markers in ``path`` by ``block`` (which holds them)."""
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace(readme_block(text, begin, end), block), encoding="utf-8")
