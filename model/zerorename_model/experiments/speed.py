"""Exploration speed, measured the same way before and after a change to the explorer.

``python -m zerorename_model.experiments.speed`` explores a fixed set of (scope, committer, store)
cells at the FULL run budget (4,000 runs) and prints, per cell and in total, runs, distinct states,
wall and CPU time
(``time.process_time``: the machine's cores are shared, so CPU seconds are the steadier figure)
and whether the scope was exhausted.  ``--matrix quick`` adds the wall and CPU time of the whole
quick matrix (as ``check --quick`` runs it, with the saved seeds when the source tree has them),
``--matrix quick-no-seeds`` the same by exploration alone; both compare their violated cells
with the committed full results (``paper/results/verdicts.json``) when present.
``--matrix full-s3-2018`` gives the number of cells left incomplete at the FULL budget on
``s3-2018``.  ``--json`` writes every figure, so docs/research/exploration.md can cite one file.
``--baseline FILE`` is the A/B: another version of ``explore.py`` (``git show
REV:model/zerorename_model/check/explore.py > FILE``) is loaded beside this one and every cell is
explored by both, one after the other, so that both see the same load.

Each cell is explored with ``stop_when_all_violated=False``: a violated cell would otherwise stop
at its first finding, and runs/s would measure how soon bugs are found, not how fast the engine
is.  Which engine runs is :func:`zerorename_model.check.explore.explore`'s default, or
``--reduction``.
"""

from __future__ import annotations

import argparse
import inspect
import json
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from zerorename_model.check.explore import explore
from zerorename_model.engine.scenario import Faults, Scenario
from zerorename_model.experiments.cells import Cell, Verdict, typed_cells
from zerorename_model.experiments.explored import Violation
from zerorename_model.experiments.matrix import matrix
from zerorename_model.experiments.seeds import default_directory
from zerorename_model.systems.protocols import get

OUTPUT = ("completeness", "exclusivity", "consistency")
#: the measured scopes, as ``verdicts.SCOPES`` defined them when the first figures were taken
#: (kept here, so that later changes to the matrix's scopes do not change what is measured):
#: name -> (driver, faults, tasks, properties checked)
MEASURED: dict[str, tuple[str, Faults, int, tuple[str, ...]]] = {
    "crash-hadoop": ("hadoop", Faults(crash=1), 2, OUTPUT),
    "duplicate-spark": ("spark", Faults(speculate=1), 2, OUTPUT),
    "partition-hadoop": ("hadoop", Faults(partition=1), 2, (*OUTPUT, "continuity")),
    "abort-crash": ("spark", Faults(crash=1, fail_job=1), 1, ("abortability",)),
}
SCOPE_NAMES = tuple(MEASURED)
COMMITTERS = ("directory", "magic", "v1")
STORES = ("s3", "s3-2018")


@dataclass
class Figure:
    """One explored cell: what was covered, in how long."""

    scope: str
    committer: str
    store: str
    runs: int
    states: int
    complete: bool
    wall: float
    cpu: float

    @property
    def runs_per_cpu_second(self) -> float:
        return self.runs / self.cpu if self.cpu else 0.0

    @property
    def states_per_cpu_second(self) -> float:
        return self.states / self.cpu if self.cpu else 0.0


def load_engine(path: str) -> Any:
    """Another version of ``explore.py``, loaded as its own module (on this harness)."""
    import importlib.util
    import sys

    spec = importlib.util.spec_from_file_location("zerorename_speed_baseline", path)
    if spec is None or spec.loader is None:
        raise SystemExit(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while it loads
    spec.loader.exec_module(module)
    return module.explore


def measure(scope_name: str, committer: str, store: str, max_runs: int,
            reduction: str | None = None, engine: Any = None) -> Figure:
    """Explore one cell at ``max_runs`` and time it (with ``engine``, another ``explore``)."""
    engine = engine or explore
    driver, faults, tasks, props = MEASURED[scope_name]
    scenario = Scenario(committer, store=store, tasks=tasks, files=("part-{task:05d}",),
                        max_attempts=2, driver=driver, faults=faults)
    extra: dict[str, Any] = {}
    if reduction is not None:
        if "reduction" not in inspect.signature(engine).parameters:
            raise SystemExit("this explorer has no --reduction choice")
        extra["reduction"] = reduction
    wall, cpu = time.monotonic(), time.process_time()
    report = engine(scenario, get(committer), list(props), max_runs=max_runs,
                    stop_when_all_violated=False, **extra)
    return Figure(scope_name, committer, store, report.runs, report.states, report.complete,
                  time.monotonic() - wall, time.process_time() - cpu)


def matrix_quick(seeded: bool = True) -> dict[str, Any]:
    """Wall and CPU time of the whole quick matrix (what ``zerorename check --quick`` runs,
    variants included), and how its violated cells compare with the committed full results."""
    import os

    directory = default_directory() if seeded else None
    wall, before = time.monotonic(), os.times()
    cells = matrix(quick=True, variants=True, seeds=str(directory) if directory else None)
    after = os.times()
    cpu = (after.user + after.system + after.children_user + after.children_system
           - before.user - before.system - before.children_user - before.children_system)
    violated = {_key(c) for c in cells if c.verdict is Verdict.VIOLATED}
    report: dict[str, Any] = {
        "wall": round(time.monotonic() - wall, 1), "cpu": round(cpu, 1), "cells": len(cells),
        "seeds": str(directory) if directory else None, "violated": len(violated),
        "found_by_seed": sum(1 for c in cells if isinstance(c.explored, Violation)
                             and c.explored.found_by.startswith("seed")),
        "incomplete": sum(1 for c in cells if c.undecided)}
    committed = _committed_violations()
    if committed is not None:
        asked = {_key(c) for c in cells}
        report["missed"] = sorted("/".join(k) for k in committed & asked - violated)
        report["beyond_committed"] = sorted("/".join(k) for k in violated - committed)
    return report


def _key(cell: Cell) -> tuple[str, ...]:
    return (cell.committer, cell.store, cell.prop, str(cell.protocol), cell.bug or "")


def _committed_violations() -> set[tuple[str, ...]] | None:
    """The violated cells of the committed full results (None outside the source tree)."""
    path = Path(__file__).resolve().parents[3] / "paper" / "results" / "verdicts.json"
    if not path.is_file():
        return None
    cells = typed_cells(json.loads(path.read_text(encoding="utf-8")))
    return {_key(c) for c in cells if c.verdict is Verdict.VIOLATED}


def matrix_full_store(store: str) -> dict[str, Any]:
    """The FULL-budget matrix on one store: wall time and the cells left incomplete."""
    wall = time.monotonic()
    cells = matrix(stores=[store], quick=False)
    return {"wall": round(time.monotonic() - wall, 1), "cells": len(cells),
            "violated": sorted(f"{c.committer}/{c.store}/{c.prop}"
                               for c in cells if c.verdict is Verdict.VIOLATED),
            "incomplete": sorted(f"{c.committer}/{c.store}/{c.prop}"
                                 for c in cells if c.undecided)}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--max-runs", type=int, default=4_000)
    parser.add_argument("--reduction", default=None,
                        help="the explorer's reduction mode (default: its default)")
    parser.add_argument("--scope", action="append", help="only these scopes")
    parser.add_argument("--committer", action="append", help="only these committers")
    parser.add_argument("--store", action="append", help="only these stores")
    parser.add_argument("--matrix", action="append", default=[],
                        choices=["quick", "quick-no-seeds", "full-s3-2018"],
                        help="also time a whole matrix")
    parser.add_argument("--json", help="write every figure to this file")
    parser.add_argument("--baseline", metavar="FILE",
                        help="an explore.py to compare with, cell by cell (A/B)")
    args = parser.parse_args(argv)
    figures: list[Figure] = []
    baseline = load_engine(args.baseline) if args.baseline else None
    before: list[Figure] = []
    print(f"{'scope':<17} {'committer':<10} {'store':<8} {'runs':>6} {'states':>7} "
          f"{'done':>5} {'wall s':>7} {'cpu s':>7} {'runs/s':>7} {'states/s':>8}", flush=True)
    for scope in args.scope or SCOPE_NAMES:
        for committer in args.committer or COMMITTERS:
            for store in args.store or STORES:
                if baseline is not None:
                    b = measure(scope, committer, store, args.max_runs, args.reduction,
                                baseline)
                    before.append(b)
                    print(f"{'  baseline':<17} {'':<10} {'':<8} {b.runs:>6} {b.states:>7} "
                          f"{'yes' if b.complete else 'no':>5} {b.wall:>7.1f} {b.cpu:>7.1f} "
                          f"{b.runs_per_cpu_second:>7.0f} {b.states_per_cpu_second:>8.0f}",
                          flush=True)
                f = measure(scope, committer, store, args.max_runs, args.reduction)
                figures.append(f)
                print(f"{scope:<17} {committer:<10} {store:<8} {f.runs:>6} {f.states:>7} "
                      f"{'yes' if f.complete else 'no':>5} {f.wall:>7.1f} {f.cpu:>7.1f} "
                      f"{f.runs_per_cpu_second:>7.0f} {f.states_per_cpu_second:>8.0f}",
                      flush=True)
    runs, states = sum(f.runs for f in figures), sum(f.states for f in figures)
    cpu, wall = sum(f.cpu for f in figures), sum(f.wall for f in figures)
    done = sum(f.complete for f in figures)
    print(f"total: {runs} runs, {states} states, {done}/{len(figures)} complete, "
          f"{wall:.1f} s wall, {cpu:.1f} s CPU: {runs / cpu:.0f} runs/s, "
          f"{states / cpu:.0f} states/s (CPU)", flush=True)
    report: dict[str, Any] = {
        "max_runs": args.max_runs, "reduction": args.reduction,
        "cells": [asdict(f) for f in figures],
        "total": {"runs": runs, "states": states, "complete": done, "cells": len(figures),
                  "wall": round(wall, 1), "cpu": round(cpu, 1)}}
    for which in args.matrix:
        report[which] = (matrix_quick(which == "quick") if which.startswith("quick")
                         else matrix_full_store("s3-2018"))
        print(f"{which}: {json.dumps(report[which])}", flush=True)
    if before:
        bcpu = sum(f.cpu for f in before)
        bstates = sum(f.states for f in before)
        print(f"baseline: {sum(f.runs for f in before)} runs, {bstates} states, "
              f"{bcpu:.1f} s CPU: {bstates / bcpu:.0f} states/s (CPU)", flush=True)
        report["baseline"] = {"file": args.baseline, "cells": [asdict(f) for f in before]}
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
