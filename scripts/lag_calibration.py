"""Would a staleness bound have hidden a violation the unbounded search found?

For every violated ``s3-2018`` cell of ``paper/results/verdicts.json`` (run from the repository
root, with the model installed), with ``N`` the bound (default 4, the matrix's third pass):

* its witness trace is replayed while counting the visibility events pending at once; if that
  never exceeds ``N``, the bounded store would have taken the very same run (it forces a settle
  only when one more event would exceed the bound), so the violation is found with the bound;
* otherwise the witness's scope is explored with ``Faults.max_lag = N`` until that property is
  violated (or 200,000 runs / 600 s pass), and the line says whether it was.

docs/research/HISTORY.md (Round 9) has the result.
Usage: ``python scripts/lag_calibration.py [N]``.
"""

from __future__ import annotations

import json
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from zerorename_model.check.explore import explore
from zerorename_model.engine.stores.records import Visibility
from zerorename_model.engine.stores.store import ModelStore
from zerorename_model.experiments.scopes import scope_named
from zerorename_model.experiments.trace import read_trace, run_recorded
from zerorename_model.systems.protocols import get, load_all

PAPER = Path("paper")


def most_pending(cell: dict[str, Any]) -> int:
    """The most visibility events pending at once along the cell's witness trace."""
    most = 0
    original = ModelStore._lag

    def counting(store: ModelStore, event: Visibility) -> None:
        nonlocal most
        original(store, event)
        most = max(most, len(store.pending))

    ModelStore._lag = counting  # type: ignore[method-assign]
    try:
        run_recorded(read_trace(PAPER / cell["trace"]), get(cell["committer"]),
                     source=cell["trace"])
    finally:
        ModelStore._lag = original  # type: ignore[method-assign]
    return most


def main(bound: int) -> None:
    load_all()
    cells = json.loads((PAPER / "results" / "verdicts.json").read_text())["cells"]
    violated = [c for c in cells if c["store"] == "s3-2018" and c["verdict"] == "violated"]
    within = found = missed = 0
    for cell in violated:
        name = f"{cell['committer']} {cell['property']} ({cell['protocol']}, {cell.get('bug')})"
        most = most_pending(cell)
        if most <= bound:
            within += 1
            continue
        scope = cell["explored"]["scope"]
        scenario = scope_named(scope).make(cell["committer"], "s3-2018")
        scenario = replace(scenario, faults=replace(scenario.faults, max_lag=bound))
        started = time.process_time()
        report = explore(scenario, get(cell["committer"]), [cell["property"]],
                         max_runs=200_000, seconds=600)
        hit = cell["property"] in report.violations
        found, missed = found + hit, missed + (not hit)
        print(f"{name}: witness had {most} pending; with at most {bound} in {scope}: "
              f"{'found' if hit else 'NOT found'} after {report.runs} runs "
              f"({time.process_time() - started:.0f} CPU s)", flush=True)
    print(f"{len(violated)} violated s3-2018 cells: {within} witnesses within the bound, "
          f"{found} found again with it, {missed} not found")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 4)
