"""What a result records about where it was measured: the committers' commit and the machine.

Split out of :mod:`commit_costs` (which re-exports both) because every benchmark's JSON
carries it, and a wall time means nothing without the load and versions beside it.
"""

from __future__ import annotations

import importlib.metadata
import os
import platform
import subprocess
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]


def reference_commit() -> str:
    """HEAD's short hash, ``+changes`` when ``reference/`` differs from it: which committers
    a row measured.  ``ZR_REFERENCE_COMMIT`` names it instead, for a run from an exported
    tree of that commit (``git archive``: no repository to ask, and no other work in progress
    of a shared working tree in what is measured)."""
    named = os.environ.get("ZR_REFERENCE_COMMIT")
    if named:
        return named
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO,
                              capture_output=True, text=True, timeout=30, check=True).stdout
        dirty = subprocess.run(["git", "status", "--porcelain", "--", "reference/zerorename"],
                               cwd=REPO, capture_output=True, text=True, timeout=30,
                               check=True).stdout
    except (OSError, subprocess.SubprocessError):
        return "?"
    return head.strip() + ("+changes" if dirty.strip() else "")


def environment() -> dict[str, Any]:
    env: dict[str, Any] = {"python": platform.python_version(), "machine": platform.machine(),
                           "platform": platform.platform(), "cpus": os.cpu_count(),
                           "load_average_at_start": [round(x, 2) for x in os.getloadavg()],
                           "reference_commit": reference_commit()}
    for dist in ("boto3", "botocore", "moto"):  # metadata only: importing moto takes seconds
        try:
            env[dist] = importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:  # pragma: no cover - reported only
            env[dist] = "?"
    return env
