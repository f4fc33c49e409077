"""The verdict matrix as the paper's tables."""

from __future__ import annotations

from collections import Counter
from typing import Any

from zrpaper.cells import index, kind, mark


def render_matrix(results: dict[str, Any]) -> str:
    props = results["properties"]
    cells = index(results)
    lines = ["| committer | store | " + " | ".join(props) + " |",
             "|---|---|" + "---|" * len(props)]
    for committer in results["committers"]:
        for store in results["stores"]:
            row = [mark(cells[(committer, store, p)]) if (committer, store, p) in cells else ""
                   for p in props]
            lines.append(f"| {committer} | {store} | " + " | ".join(row) + " |")
    counts = Counter(kind(c) for c in results["cells"])
    lines += [
        "",
        f"{len(results['cells'])} cells: {counts['violated']} violated, {counts['holds']} hold "
        f"(proved within the scopes), {counts['holds*']} hold as far as the budget reached "
        f"(`holds*`), {counts['n/a']} not applicable.",
        "",
        "Where each violation was found (the scope of its witness, and the length of the "
        "shrunk schedule in steps):",
        "",
        "| committer | property | scope | stores (steps) |",
        "|---|---|---|---|",
    ]
    found: dict[tuple[str, str, str], list[str]] = {}
    for cell in results["cells"]:
        if cell["verdict"] == "violated":
            key = (cell["committer"], cell["property"], cell["explored"]["scope"])
            found.setdefault(key, []).append(f"{cell['store']} ({cell['explored']['steps']})")
    for (committer, prop, scope), stores in found.items():
        lines.append(f"| {committer} | {prop} | {scope} | {', '.join(stores)} |")
    return "\n".join(lines)


