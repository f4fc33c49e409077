"""How one verdict cell reads in the paper: its kind, its mark, the link to its trace."""

from __future__ import annotations

from typing import Any


def kind(cell: dict[str, Any]) -> str:
    """``violated``, ``holds`` (proved within the scopes), ``holds*`` (sampled) or ``n/a``."""
    if cell["verdict"] == "holds" and not cell["explored"].get("complete", True):
        return "holds*"
    return str(cell["verdict"])


def link(text: str, path: str | None) -> str:
    return f"[{text}]({path})" if path else text


def mark(cell: dict[str, Any]) -> str:
    mark = kind(cell)
    if mark == "violated":
        return link("**violated**", cell["trace"])
    return mark.replace("*", "\\*")


def index(results: dict[str, Any]) -> dict[tuple[str, str, str], dict[str, Any]]:
    return {(c["committer"], c["store"], c["property"]): c for c in results["cells"]}


def scope_runs(results: dict[str, Any]) -> dict[tuple[str, str, str], dict[str, Any]]:
    """(committer, store, scope) -> that exploration's summary (cells share explorations)."""
    found: dict[tuple[str, str, str], dict[str, Any]] = {}
    for cell in results["cells"]:
        explored = cell["explored"]
        for summary in explored.get("scopes", [explored] if "scope" in explored else []):
            found[(cell["committer"], cell["store"], summary["scope"])] = summary
    return found


def show_bool(value: bool | None) -> str:
    return "" if value is None else str(value)


def runs_text(n: int) -> str:
    return f"{n} run" if n == 1 else f"{n} runs"


def search_outcome(explored: dict[str, Any]) -> str:
    """How a Table V search ended: it found its schedule, covered every one, or was cut off."""
    if explored["found"]:
        return "found"
    return "every schedule" if explored["complete"] else "run budget hit"


