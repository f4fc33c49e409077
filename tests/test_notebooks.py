"""Every notebook in ``notebooks/`` runs from top to bottom without a cell error, on the venv's
own ``python3`` kernel (ipykernel comes with the ``dev`` extra), as a reader would run it; and
notebooks are committed without outputs, so the repository holds code, not stale results."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from jupyter_client.kernelspec import KernelSpecManager
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))


def test_there_are_notebooks() -> None:
    assert NOTEBOOKS, "notebooks/ holds no .ipynb: nothing would be executed"


def test_the_python3_kernel_is_available() -> None:
    assert "python3" in KernelSpecManager().find_kernel_specs(), (
        "no python3 kernel: install the dev extra (ipykernel) into the venv")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_is_stored_without_outputs(path: Path) -> None:
    notebook = nbformat.read(path, as_version=4)
    nbformat.validate(notebook)
    for index, cell in enumerate(notebook.cells):
        if cell.cell_type == "code":
            assert not cell.outputs, f"{path.name} cell {index} has outputs: clear them"
            assert cell.execution_count is None, f"{path.name} cell {index} was executed"


@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_executes_without_errors(path: Path, tmp_path: Path) -> None:
    notebook = nbformat.read(path, as_version=4)
    client = NotebookClient(notebook, kernel_name="python3", timeout=300,
                            resources={"metadata": {"path": str(tmp_path)}})
    client.execute()  # raises CellExecutionError, naming the cell, on any error
    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    assert code and all(cell.execution_count for cell in code), "a code cell did not run"
    errors = [out for cell in code for out in cell.outputs if out.output_type == "error"]
    assert not errors, errors
