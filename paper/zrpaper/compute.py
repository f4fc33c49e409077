"""Computing the results: the verdict matrix (with a deeper second pass for every cell a scope
left undecided), then the VIII.C probe and Table V (:mod:`zrpaper.race`,
:mod:`zrpaper.table5`), into the :class:`~zrpaper.results.Results` ``results/verdicts.json`` holds.

The model is imported inside the functions, so rendering (``--render-only``) needs none of it.
"""

from __future__ import annotations

import os
import resource
import shutil
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, replace

from zerorename_model.experiments.cells import Cell
from zerorename_model.experiments.explored import without_seconds
from zrpaper.budgets import RunBudget
from zrpaper.race import compute_race
from zrpaper.results import Load, Results, RowKey, ScopeShape, Timing
from zrpaper.settings import (
    DEEP_BUDGET,
    LAG_BUDGET,
    RACE_MAX_RUNS,
    TABLEV_MAX_RUNS,
    TRACES,
    rel,
)
from zrpaper.table5 import compute_tablev


def row_key(cell: Cell) -> RowKey:
    return (cell.committer, cell.store, None if cell.protocol is None else cell.protocol.value,
            cell.bug, cell.variant_of)


def compute_matrix(budget: RunBudget, workers: int, progress: Callable[[str], None],
                   committers: Sequence[str] | None = None,
                   deep_budget: RunBudget = DEEP_BUDGET,
                   ) -> tuple[list[Cell], list[RowKey]]:
    """The matrix at ``budget`` under both job-commit protocols, with the production bugs'
    rows (each variant and its fixed committer, in the bug's scope family), then every cell
    left undecided (no violation found, some scope cut off) again at ``deep_budget``
    (``matrix.matrix``'s second pass), then those still undecided on a lagging store with the
    lag bounded (:data:`~zrpaper.settings.LAG_BUDGET`, the third pass); returns the cells and
    the rows (:data:`RowKey`) explored twice."""
    from zerorename_model.experiments.matrix import matrix
    from zerorename_model.experiments.verdicts import PROTOCOLS, Budget

    deep_runs = deep_budget.max_runs if deep_budget.max_runs > budget.max_runs else None
    lagged = Budget(max_runs=budget.max_runs, seconds=budget.seconds,
                    hypothesis_examples=budget.hypothesis_examples, deep_runs=deep_runs,
                    lag_pass=LAG_BUDGET.max_lag, lag_runs=LAG_BUDGET.max_runs)
    cells = matrix(committers, None, quick=False, budget=lagged,
                   traces=str(TRACES), workers=workers, progress=progress,
                   protocols=PROTOCOLS, variants=True)
    deepened = list(dict.fromkeys(row_key(c) for c in cells
                                  if c.explored.deep_runs is not None))
    for line in scope_report(cells):
        progress(line)
    return ([replace(cell, trace=rel(cell.trace), explored=without_seconds(cell.explored))
             for cell in cells], deepened)


def committers_of(cells: Sequence[Cell]) -> list[str]:
    """The results' committers: the matrix's in its order, then the production-bug variants in
    the order they were explored."""
    from zerorename_model.experiments.verdicts import MATRIX_COMMITTERS

    present = list(dict.fromkeys(c.committer for c in cells))
    return ([c for c in MATRIX_COMMITTERS if c in present]
            + [c for c in present if c not in MATRIX_COMMITTERS])


def scope_report(cells: Sequence[Cell]) -> list[str]:
    """One line per (committer, store, scope) explored: runs, states, seconds, complete.
    Printed while the seconds are still there (the results leave them out)."""
    seen = {(cell.committer, cell.store, record.scope): record.search
            for cell in cells for record in cell.scopes}
    return [f"  {c} on {s}, {scope}: {e.runs} runs, {e.states} states, "
            f"{'?' if e.seconds is None else e.seconds} s, "
            f"{'complete' if e.complete else 'cut off'}"
            for (c, s, scope), e in seen.items()]


def describe_scopes() -> list[ScopeShape]:
    from zerorename_model.experiments.verdicts import SCOPES

    described = []
    for scope in SCOPES:
        scenario = scope.make("v1", "s3")
        faults = {k: v for k, v in asdict(scenario.faults).items() if v and k != "settle"}
        described.append(ScopeShape(scope.name, list(scope.props), scenario.driver,
                                    scenario.tasks, scenario.max_attempts,
                                    list(scenario.files), list(scenario.dests), faults))
    return described


def child_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def generate(budget: RunBudget, workers: int, progress: Callable[[str], None],
             committers: Sequence[str] | None = None, *,
             deep_budget: RunBudget = DEEP_BUDGET,
             race_max_runs: int = RACE_MAX_RUNS) -> Results:
    """Every result of the paper.  ``deep_budget`` and ``race_max_runs`` default to the
    paper's settings; smaller ones (make_paper's --deep-runs, --race-runs) trade proofs for
    time, and the results record what was used, so the paper says it."""
    from zerorename_model.check.properties import PROPERTIES
    from zerorename_model.experiments.verdicts import MATRIX_STORES

    if TRACES.exists():
        shutil.rmtree(TRACES)
    TRACES.mkdir(parents=True)
    timing: dict[str, float] = {}
    load_at_start = os.getloadavg()[0]
    started, cpu = time.monotonic(), child_cpu()
    cells, deepened = compute_matrix(budget, workers, progress, committers, deep_budget)
    timing["matrix_wall_s"] = time.monotonic() - started
    timing["matrix_cpu_s"] = child_cpu() - cpu
    progress(f"matrix: {timing['matrix_wall_s']:.0f} s wall, {timing['matrix_cpu_s']:.0f} s CPU")
    started, cpu = time.monotonic(), child_cpu()
    race = compute_race(race_max_runs, workers, progress=progress)
    timing["race_wall_s"] = time.monotonic() - started
    timing["race_cpu_s"] = child_cpu() - cpu
    progress(f"VIII.C probe: {timing['race_wall_s']:.0f} s wall")
    started, own = time.monotonic(), time.process_time()
    tablev = compute_tablev()
    timing["tablev_wall_s"] = time.monotonic() - started
    timing["tablev_cpu_s"] = time.process_time() - own
    progress(f"Table V: {timing['tablev_wall_s']:.0f} s wall")
    return Results(
        generated_by="paper/make_paper.py", budget=budget, deep_budget=deep_budget,
        deepened=deepened, lag_budget=LAG_BUDGET, race_max_runs=race_max_runs,
        tablev_max_runs=TABLEV_MAX_RUNS, workers=workers, timing=rounded(timing),
        # the machine is shared: how loaded it was says how to read the times
        load=Load(round(load_at_start, 2), round(os.getloadavg()[0], 2), os.cpu_count()),
        committers=committers_of(cells), stores=list(MATRIX_STORES),
        properties=list(PROPERTIES), scopes=describe_scopes(), cells=cells, race=race,
        tablev=tablev)


def rounded(timing: dict[str, float]) -> Timing:
    """The seconds each part took, rounded as the results keep them."""
    return Timing(**{k: round(v) for k, v in timing.items()})

