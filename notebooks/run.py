"""Execute the notebooks top to bottom and store them with their outputs.

    python notebooks/run.py            # refresh every notebook's outputs in place
    python notebooks/run.py 01_*.ipynb # one or more

The notebooks are committed *with* outputs, so a reader browsing the repository sees the plots
without running anything.  ``tests/test_notebooks.py`` executes each one again and checks that
its text outputs are the ones stored, so a stored output can never go stale unnoticed.
"""

from __future__ import annotations

import re
import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from nbformat import NotebookNode

HERE = Path(__file__).resolve().parent
NOTEBOOKS = sorted(HERE.glob("[0-9][0-9]_*.ipynb"))

#: what may differ between two executions of the same notebook: object addresses, durations
_VOLATILE = (re.compile(r"0x[0-9a-f]{6,}"), re.compile(r"\d+(\.\d+)? ?(s|ms)\b"),
             re.compile(r"(?<=job )[0-9a-f]{32}\b"))  # a fresh job ID, in the committers' log


def execute(path: Path, timeout: int = 600) -> NotebookNode:
    """Run every cell of ``path`` on the ``python3`` kernel, in the notebooks directory; raise
    ``CellExecutionError`` (naming the cell) on the first failing cell."""
    notebook = nbformat.read(path, as_version=4)
    NotebookClient(notebook, kernel_name="python3", timeout=timeout,
                   resources={"metadata": {"path": str(HERE)}}).execute()
    for cell in notebook.cells:
        cell.metadata.pop("execution", None)  # timestamps: would change on every refresh
    return notebook


def text_outputs(notebook: NotebookNode) -> list[list[str]]:
    """Each code cell's printed and displayed text (images left out), volatile parts masked."""
    found = []
    for cell in notebook.cells:
        if cell.cell_type != "code":
            continue
        texts = []
        for output in cell.outputs:
            if output.output_type == "stream":
                texts.append(output.text)
            elif output.output_type in ("execute_result", "display_data"):
                data = output.get("data", {})
                texts.append(data.get("text/markdown") or
                             ("" if "image/png" in data else data.get("text/plain", "")))
            elif output.output_type == "error":
                texts.append(f"{output.ename}: {output.evalue}")
        text = "".join(texts)
        for pattern in _VOLATILE:
            text = pattern.sub("…", text)
        found.append(text.splitlines())
    return found


def main(argv: list[str]) -> int:
    paths = [HERE / name for name in argv] if argv else NOTEBOOKS
    for path in paths:
        started = time.monotonic()
        print(f"executing {path.name} …", file=sys.stderr, flush=True)
        nbformat.write(execute(path), path)
        print(f"  stored with outputs ({time.monotonic() - started:.0f} s)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
