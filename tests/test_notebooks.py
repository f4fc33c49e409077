"""Every notebook in ``notebooks/`` runs from top to bottom without a cell error, on the venv's
own ``python3`` kernel, as a reader would run it; and each is stored *with* its outputs (so a
reader browsing the repository sees the plots) that are fresh: executing it again prints the
same text and draws as many figures.  ``python notebooks/run.py`` refreshes them."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from jupyter_client.kernelspec import KernelSpecManager

from notebooks.run import NOTEBOOKS, execute, text_outputs

EXPECTED = {"01_explore_a_trace", "02_verdict_matrix", "03_table_v", "04_production_bugs",
            "05_reference_under_faults", "06_performance"}


def _images(notebook: nbformat.NotebookNode) -> int:
    return sum("image/png" in output.get("data", {}) for cell in notebook.cells
               if cell.cell_type == "code" for output in cell.outputs)


def test_the_six_notebooks_are_there() -> None:
    assert {p.stem for p in NOTEBOOKS} == EXPECTED


def test_the_python3_kernel_is_available() -> None:
    assert "python3" in KernelSpecManager().find_kernel_specs(), (
        "no python3 kernel: install the dev extra (ipykernel) into the venv")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_is_stored_with_outputs_and_figures(path: Path) -> None:
    notebook = nbformat.read(path, as_version=4)
    nbformat.validate(notebook)
    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    assert code and all(cell.execution_count for cell in code), (
        f"{path.name} is stored unexecuted: run python notebooks/run.py")
    assert _images(notebook) >= 1, f"{path.name} shows no figure"


@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_executes_and_its_stored_outputs_are_fresh(path: Path) -> None:
    stored = nbformat.read(path, as_version=4)
    fresh = execute(path)  # raises CellExecutionError, naming the cell, on any error
    errors = [out for cell in fresh.cells if cell.cell_type == "code" for out in cell.outputs
              if out.output_type == "error"]
    assert not errors, errors
    assert text_outputs(fresh) == text_outputs(stored), (
        f"{path.name}: stored outputs are stale: run python notebooks/run.py {path.name}")
    assert _images(fresh) == _images(stored)
