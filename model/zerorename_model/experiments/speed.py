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
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path

from zerorename_model.check.explore import Exploration, explore
from zerorename_model.engine.scenario import Faults, Scenario
from zerorename_model.experiments.cells import Cell, Verdict, typed_cells
from zerorename_model.experiments.explored import JsonObject, Violation
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

#: an ``explore`` (this one, or another version loaded by :func:`load_engine`); its keywords
#: are those of the version loaded, so only its result is typed
Engine = Callable[..., Exploration]


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


def load_engine(path: str) -> Engine:
    """Another version of ``explore.py``, loaded as its own module (on this harness)."""
    import importlib.util
    import sys

    spec = importlib.util.spec_from_file_location("zerorename_speed_baseline", path)
    if spec is None or spec.loader is None:
        raise SystemExit(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while it loads
    spec.loader.exec_module(module)
    engine: Engine = module.explore
    return engine


def measure(scope_name: str, committer: str, store: str, max_runs: int,
            reduction: str | None = None, engine: Engine | None = None) -> Figure:
    """Explore one cell at ``max_runs`` and time it (with ``engine``, another ``explore``)."""
    run: Engine = engine or explore
    driver, faults, tasks, props = MEASURED[scope_name]
    scenario = Scenario(committer, store=store, tasks=tasks, files=("part-{task:05d}",),
                        max_attempts=2, driver=driver, faults=faults)
    extra: dict[str, str] = {}
    if reduction is not None:
        if "reduction" not in inspect.signature(run).parameters:
            raise SystemExit("this explorer has no --reduction choice")
        extra["reduction"] = reduction
    wall, cpu = time.monotonic(), time.process_time()
    report = run(scenario, get(committer), list(props), max_runs=max_runs,
                    stop_when_all_violated=False, **extra)
    return Figure(scope_name, committer, store, report.runs, report.states, report.complete,
                  time.monotonic() - wall, time.process_time() - cpu)


@dataclass(frozen=True)
class QuickMatrix:
    """The quick matrix timed: wall and CPU seconds, its cells, the seeds it used, how many
    cells it found violated (and how many of those a seed found first), how many it left
    undecided; beside the committed full results (when present), the violations it missed and
    those beyond them."""

    wall: float
    cpu: float
    cells: int
    seeds: str | None
    violated: int
    found_by_seed: int
    incomplete: int
    missed: list[str] | None = None
    beyond_committed: list[str] | None = None

    def to_json(self) -> JsonObject:
        report: JsonObject = {
            "wall": self.wall, "cpu": self.cpu, "cells": self.cells, "seeds": self.seeds,
            "violated": self.violated, "found_by_seed": self.found_by_seed,
            "incomplete": self.incomplete}
        if self.missed is not None:
            report["missed"] = self.missed
        if self.beyond_committed is not None:
            report["beyond_committed"] = self.beyond_committed
        return report


@dataclass(frozen=True)
class FullStoreMatrix:
    """The FULL-budget matrix on one store: wall seconds, its cells, and the cells it found
    violated and left incomplete (``committer/store/property``)."""

    wall: float
    cells: int
    violated: list[str]
    incomplete: list[str]

    def to_json(self) -> JsonObject:
        return {"wall": self.wall, "cells": self.cells, "violated": self.violated,
                "incomplete": self.incomplete}


def matrix_quick(seeded: bool = True) -> QuickMatrix:
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
    report = QuickMatrix(
        wall=round(time.monotonic() - wall, 1), cpu=round(cpu, 1), cells=len(cells),
        seeds=str(directory) if directory else None, violated=len(violated),
        found_by_seed=sum(1 for c in cells if isinstance(c.explored, Violation)
                          and c.explored.found_by.startswith("seed")),
        incomplete=sum(1 for c in cells if c.undecided))
    committed = _committed_violations()
    if committed is None:
        return report
    asked = {_key(c) for c in cells}
    return replace(report, missed=sorted("/".join(k) for k in committed & asked - violated),
                   beyond_committed=sorted("/".join(k) for k in violated - committed))


def _key(cell: Cell) -> tuple[str, ...]:
    return (cell.committer, cell.store, cell.prop, str(cell.protocol), cell.bug or "")


def _committed_violations() -> set[tuple[str, ...]] | None:
    """The violated cells of the committed full results (None outside the source tree)."""
    path = Path(__file__).resolve().parents[3] / "paper" / "results" / "verdicts.json"
    if not path.is_file():
        return None
    cells = typed_cells(json.loads(path.read_text(encoding="utf-8")))
    return {_key(c) for c in cells if c.verdict is Verdict.VIOLATED}


def matrix_full_store(store: str) -> FullStoreMatrix:
    """The FULL-budget matrix on one store: wall time and the cells left incomplete."""
    wall = time.monotonic()
    cells = matrix(stores=[store], quick=False)
    return FullStoreMatrix(round(time.monotonic() - wall, 1), len(cells),
                           sorted(f"{c.committer}/{c.store}/{c.prop}"
                                  for c in cells if c.verdict is Verdict.VIOLATED),
                           sorted(f"{c.committer}/{c.store}/{c.prop}"
                                  for c in cells if c.undecided))


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
    report: JsonObject = {
        "max_runs": args.max_runs, "reduction": args.reduction,
        "cells": [asdict(f) for f in figures],
        "total": {"runs": runs, "states": states, "complete": done, "cells": len(figures),
                  "wall": round(wall, 1), "cpu": round(cpu, 1)}}
    for which in args.matrix:
        timed = (matrix_quick(which == "quick") if which.startswith("quick")
                 else matrix_full_store("s3-2018")).to_json()
        report[which] = timed
        print(f"{which}: {json.dumps(timed)}", flush=True)
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
