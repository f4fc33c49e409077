"""Merging: explore only some committers again and replace exactly their part of the results
(matrix cells, VIII.C rows, Table V column, traces), recording the merge; refused when the
existing results were made under other settings, whose cells would not be comparable."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path

from zerorename_model.experiments.cells import Cell
from zrpaper.budgets import RunBudget
from zrpaper.compute import (
    child_cpu,
    committers_of,
    compute_matrix,
    describe_scopes,
    rounded,
    row_key,
)
from zrpaper.race import RaceRow, compute_race
from zrpaper.results import Merge, Results, RowKey, TableV
from zrpaper.settings import (
    HERE,
    RACE_PAIRS,
    RACE_SCOPES,
    TABLEV_MAX_RUNS,
    TRACES,
)
from zrpaper.table5 import compute_tablev


@dataclass(frozen=True)
class Explorations:
    """What a merge runs to explore its rows (a test passes stubs)."""

    matrix: Callable[..., tuple[list[Cell], list[RowKey]]] = compute_matrix
    race: Callable[..., list[RaceRow]] = compute_race
    tablev: Callable[[Sequence[str]], TableV] = compute_tablev


class MergeRefused(ValueError):
    """A merge whose cells could not stand beside the existing results (another budget, other
    scopes) or that names nothing the paper explores."""


def merge_plan(results: Results, committers: Sequence[str], budget: RunBudget,
               deep_budget: RunBudget | None = None, race_max_runs: int | None = None,
               ) -> tuple[list[str], list[tuple[str, str]], list[str]]:
    """What a merge of ``committers`` explores: their matrix rows, their VIII.C pairs and their
    Table V columns; :class:`MergeRefused` when that is nothing, or when the existing results
    were made under other settings than this script's (their cells would not be comparable).
    ``deep_budget`` and ``race_max_runs`` default to the results' own: a merge continues the
    run it merges into (a larger second pass is allowed on the terms of :func:`_check_deeper`)."""
    from zerorename_model.check.properties import PROPERTIES
    from zerorename_model.experiments.tablev import COLUMNS, available
    from zerorename_model.experiments.verdicts import MATRIX_COMMITTERS, MATRIX_STORES

    deep_budget = deep_budget or results.deep_budget
    if deep_budget != results.deep_budget:
        _check_deeper(results, committers, deep_budget)
    settings: dict[str, tuple[object, object]] = {
        "budget": (results.budget, budget),
        "race_max_runs": (results.race_max_runs,
                          results.race_max_runs if race_max_runs is None else race_max_runs),
        "tablev_max_runs": (results.tablev_max_runs, TABLEV_MAX_RUNS),
        "stores": (results.stores, list(MATRIX_STORES)),
        "properties": (results.properties, list(PROPERTIES)),
        "scopes": (results.scopes, describe_scopes())}
    for name, (theirs, ours) in settings.items():
        if theirs != ours:
            raise MergeRefused(f"verdicts.json was made with {name} {theirs!r}, this merge "
                               f"would use {ours!r}: regenerate everything instead")
    matrix_rows = [c for c in MATRIX_COMMITTERS if c in committers]
    race_pairs = [(c, s) for c, s in RACE_PAIRS if c in committers]
    columns = [c for c in available(COLUMNS) if c in committers]
    unknown = [c for c in committers if c not in matrix_rows + [c for c, _ in race_pairs]
               + columns]
    if unknown:
        raise MergeRefused(f"{', '.join(unknown)}: not a matrix committer, a VIII.C pair or a "
                           f"Table V column, so a merge has nothing to explore for it")
    return matrix_rows, race_pairs, columns


def _check_deeper(results: Results, committers: Sequence[str],
                  deep_budget: RunBudget) -> None:
    """A merge may raise the second pass's run budget, and only raise it, when every cell it
    does not explore again is decided (``holds`` with every scope exhausted, ``violated`` or
    ``n/a``): the search is deterministic, so a scope exhausted (or a violation found) within
    the old budget is exhausted (found) at the same run within a larger one, and a full run at
    the new budget would give those cells unchanged.  The merged results then record the new
    budget for all of them."""
    theirs = results.deep_budget
    if (replace(deep_budget, max_runs=0) != replace(theirs, max_runs=0)
            or deep_budget.max_runs <= theirs.max_runs):
        raise MergeRefused(f"verdicts.json was made with deep_budget {theirs!r}, this merge "
                           f"would use {deep_budget!r}: a merge may only raise its max_runs; "
                           "regenerate everything instead")
    undecided = sorted({f"{c.committer} on {c.store}" for c in results.cells
                        if c.undecided and c.committer not in committers
                        and c.variant_of not in committers})
    if undecided:
        raise MergeRefused(f"a deeper second pass would explore cells this merge leaves as they "
                           f"are ({', '.join(undecided)} hold only within a cut-off scope): "
                           "name their committers too, or regenerate everything")


def merge(results: Results, committers: Sequence[str], budget: RunBudget,
          workers: int, progress: Callable[[str], None],
          now: Callable[[], datetime] = lambda: datetime.now(UTC),
          explorations: Explorations = Explorations(), paper_dir: Path = HERE,
          deep_budget: RunBudget | None = None, race_max_runs: int | None = None,
          ) -> Results:
    """``results`` with exactly the parts of ``committers`` explored again (see the module
    docstring): their cells, VIII.C rows and Table V column replaced, their traces written and
    their stale traces removed, everything else as it was; the merge recorded in ``merged``."""
    from zerorename_model.experiments.tablev import ATTRIBUTES, COLUMNS
    from zerorename_model.experiments.verdicts import MATRIX_STORES

    matrix_rows, race_pairs, columns = merge_plan(results, committers, budget, deep_budget,
                                                  race_max_runs)
    deep_budget = deep_budget or results.deep_budget
    raised_from = (results.deep_budget.max_runs if deep_budget != results.deep_budget
                   else None)
    race_max_runs = results.race_max_runs if race_max_runs is None else race_max_runs
    old_cells = results.cells
    old_race = results.race
    old_traces = results.traces()
    (paper_dir / TRACES.relative_to(HERE)).mkdir(parents=True, exist_ok=True)
    timing: dict[str, float] = {}
    started, cpu = time.monotonic(), child_cpu()
    cells: list[Cell] = []
    deepened: list[RowKey] = []
    if matrix_rows:
        cells, deepened = explorations.matrix(budget, workers, progress, matrix_rows,
                                              deep_budget)
    timing["matrix_wall_s"] = time.monotonic() - started
    timing["matrix_cpu_s"] = child_cpu() - cpu
    started, cpu = time.monotonic(), child_cpu()
    race = explorations.race(race_max_runs, workers, race_pairs, progress) if race_pairs else []
    timing["race_wall_s"] = time.monotonic() - started
    timing["race_cpu_s"] = child_cpu() - cpu
    started, own = time.monotonic(), time.process_time()
    tablev = explorations.tablev(columns) if columns else None
    timing["tablev_wall_s"] = time.monotonic() - started
    timing["tablev_cpu_s"] = time.process_time() - own

    def replaced(committer: str, variant_of: str | None) -> bool:
        """A committer's part: its rows, and the rows of the variants of it."""
        return committer in matrix_rows or variant_of in matrix_rows

    # the matrix proper sorted by committer only (stable: a committer's cells keep the order
    # they were made in), then the production-bug rows where the full run put them
    every = [c for c in old_cells if not replaced(c.committer, c.variant_of)] + cells
    order = committers_of(every)
    position = {(row_key(c), c.prop): i for i, c in enumerate(old_cells)}

    def place(cell: Cell) -> tuple[int, int]:
        if cell.bug is None:
            return 0, order.index(cell.committer)
        return 1, position.get((row_key(cell), cell.prop), len(position))

    merged_cells = sorted(every, key=place)
    stores = list(MATRIX_STORES)
    merged_deepened = sorted(
        [row for row in results.deepened if not replaced(row[0], row[4])] + deepened,
        key=lambda row: (order.index(row[0]), _store_rank(stores, row[1])))
    pair_order = [(c, s) for c, s in RACE_PAIRS]
    merged_race = sorted(
        [r for r in old_race if (r.committer, r.store) not in race_pairs] + race,
        key=lambda r: (pair_order.index((r.committer, r.store)), RACE_SCOPES.index(r.scope)))
    table = results.tablev
    if tablev is not None:
        kept = {c: row for c, row in table.cells.items() if c not in columns}
        all_cells = {**kept, **tablev.cells}
        attributes = [a for a, _label in ATTRIBUTES]
        readers = {c: r for c, r in table.record_reader.items() if c not in columns}
        readers.update(tablev.record_reader)
        table = replace(
            table, cells={c: all_cells[c] for c in COLUMNS if c in all_cells},
            differences=sorted(
                [d for d in table.differences if d.committer not in columns]
                + tablev.differences,
                key=lambda d: (list(COLUMNS).index(d.committer),
                               attributes.index(d.attribute))),
            record_reader={c: readers[c] for c in COLUMNS if c in readers})
    record = Merge(list(committers), now().isoformat(timespec="seconds"), budget, deep_budget,
                   race_max_runs, TABLEV_MAX_RUNS, workers, matrix_rows, list(race_pairs),
                   columns, rounded(timing), raised_from)
    # the merges that made some part of these results, oldest first: a committer's part comes
    # from the last merge naming it (or from the full run when none does); a merge whose every
    # committer this one explored again no longer made anything here
    merged = replace(
        results, deep_budget=deep_budget,  # raised or the same: see _check_deeper
        cells=merged_cells, committers=committers_of(merged_cells), deepened=merged_deepened,
        race=merged_race, tablev=table,
        merged=[m for m in results.merged if not set(m.committers) <= set(committers)]
        + [record])
    new_traces = merged.traces()
    for stale in sorted(old_traces - new_traces):
        (paper_dir / stale).unlink(missing_ok=True)
        progress(f"removed the stale trace {stale}")
    return merged


def _store_rank(stores: list[str], store: str) -> tuple[int, str]:
    """The matrix's stores in their order, then the stores only a bug row names (such as
    ``s3-check-then-act``), by name."""
    return (stores.index(store), "") if store in stores else (len(stores), store)
