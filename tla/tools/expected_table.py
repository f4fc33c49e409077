"""Print the README table of expected results from tla/expected.json.

    python tla/tools/expected_table.py            # print the table
    python tla/tools/expected_table.py --write    # replace it in tla/README.md

tests/test_tla.py checks that README.md holds exactly this output between the
``<!-- expected-table:begin -->`` and ``<!-- expected-table:end -->`` markers.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))  # a script beside its helpers
import readme_block as _blocks

TLA_DIR = Path(__file__).resolve().parent.parent
BEGIN = "<!-- expected-table:begin -->"
END = "<!-- expected-table:end -->"


def load() -> list[dict[str, Any]]:
    with open(TLA_DIR / "expected.json", encoding="utf-8") as fh:
        configs: list[dict[str, Any]] = json.load(fh)["configs"]
    return configs


def model_cell(entry: dict[str, Any]) -> str:
    m = entry.get("model")
    if not m:
        return "—"
    if m["committer"] is None:
        return f"store profile `{m['store']}`"
    cell = f"`{m['committer']}` / `{m['store']}` / `{m['property']}`"
    if entry.get("faults") and "no partition" in entry["faults"]:
        cell += " (no partition)"
    return cell


def result(entry: dict[str, Any]) -> str:
    if entry["expect"] == "holds":
        return "holds"
    return f"**violates {entry['violates']}**"


def table(entries: list[dict[str, Any]]) -> str:
    rows = ["| config | checks | expected | model cell | why |",
            "|---|---|---|---|---|"]
    for e in entries:
        checks = ", ".join(e["invariants"] + e.get("properties", []))
        rows.append(f"| `{e['config']}` | {checks} | {result(e)} | "
                    f"{model_cell(e)} | {e['why']} |")
    return "\n".join(rows)


def block() -> str:
    return f"{BEGIN}\n{table(load())}\n{END}"


def readme_block(text: str) -> str:
    return _blocks.readme_block(text, BEGIN, END)


def main(argv: list[str]) -> int:
    if "--write" in argv:
        _blocks.write_block(block(), BEGIN, END)
    else:
        print(block())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
