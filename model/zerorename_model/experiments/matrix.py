"""The verdict matrix run: every (committer, store) row decided in a process pool
(:func:`zerorename_model.experiments.verdicts.decide_pair`), then, row by row as each first pass
ends, the deeper passes over what it left open.

* the first pass explores every scope at ``Budget.max_runs`` runs;
* the second (``Budget.deep_runs``) explores again, deeper, the scope families in which a
  ``holds*`` cell (no violation, some scope cut off) was left open;
* the third (``Budget.lag_pass``) explores what is still open on a lagging store with the
  visibility lag bounded.

A later pass replaces a cell only with what it decided; the scopes an earlier pass finished
stand beside the new ones, and the runs add up.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path

from zerorename_model.check.properties import PROPERTIES
from zerorename_model.engine.stores.profiles import PROFILES
from zerorename_model.experiments.bugs import by_report
from zerorename_model.experiments.cells import Cell, cells_json
from zerorename_model.experiments.explored import (
    Explored,
    Held,
    LagTried,
    Unbounded,
    Violation,
)
from zerorename_model.experiments.scopes import PROTOCOLS, scope_named
from zerorename_model.experiments.verdicts import (
    FULL,
    HOLDING,
    MATRIX_COMMITTERS,
    MATRIX_STORES,
    QUICK,
    Budget,
    Job,
    Resolver,
    Row,
    bug_jobs,
    decide_job,
    judge_reach,
    lags,
    model_resolver,
)
from zerorename_model.systems.protocols import load_all

__all__ = ["RowKey", "matrix", "row_key", "save"]


def matrix(committers: Sequence[str] | None = None, stores: Sequence[str] | None = None,
           props: Sequence[str] | None = None, *, quick: bool = True,
           traces: str | None = None, workers: int | None = None,
           progress: Callable[[str], None] | None = None,
           resolve: Resolver = model_resolver, known: Sequence[str] | None = None,
           known_stores: Sequence[str] | None = None,
           budget: Budget | None = None, protocols: Sequence[str] = PROTOCOLS,
           variants: bool = False, seeds: str | None = None) -> list[Cell]:
    """Decide every requested cell, in parallel over (committer, store) pairs, under each of
    ``protocols``; with ``variants``, the production-bug rows too (model committers only).
    ``resolve`` (a module-level function, so worker processes can import it) maps a
    (committer, store) pair to its factory and backend; the reference target passes its own.
    ``seeds``: a directory of saved witness traces each scope replays first (:mod:`.seeds`)."""
    known = list(known) if known is not None else list(load_all())
    committers = list(committers or [c for c in MATRIX_COMMITTERS if c in known])
    stores = list(stores or known_stores or MATRIX_STORES)
    props = tuple(props or PROPERTIES)
    for c in committers:
        if c not in known:
            raise ValueError(f"unknown committer {c!r}; known: {sorted(known)}")
    for s in stores:
        if s not in (known_stores or PROFILES):
            raise ValueError(f"unknown store {s!r}; known: {sorted(known_stores or PROFILES)}")
    for p in props:
        if p not in PROPERTIES:
            raise ValueError(f"unknown property {p!r}; known: {sorted(PROPERTIES)}")
    for d in protocols:
        if d not in PROTOCOLS:
            raise ValueError(f"unknown protocol {d!r}; known: {list(PROTOCOLS)}")
    budget = budget or (QUICK if quick else FULL)
    jobs: list[Job] = [(c, s, props, budget, traces, resolve, tuple(protocols), None, seeds)
                       for c in committers for s in stores]
    if variants and resolve is model_resolver:
        jobs += bug_jobs(committers, stores, props, budget, traces, protocols, seeds)
    workers = workers or min(2, os.cpu_count() or 1)
    said = threading.Lock()

    def report(line: str) -> None:
        if progress:
            with said:
                progress(line)

    with ProcessPoolExecutor(max_workers=workers) as pool:
        # the workers are forked at the first submit: before any thread of ours runs, so that
        # none holds a lock at that moment
        pool.submit(int).result()
        with ThreadPoolExecutor(max_workers=max(1, len(jobs)), thread_name_prefix="row") as rows:
            return [cell for cells in rows.map(
                lambda job: _passes(job, pool, budget, traces, resolve, seeds, report), jobs)
                for cell in cells]


def _passes(job: Job, pool: ProcessPoolExecutor, budget: Budget, traces: str | None,
            resolve: Resolver, seeds: str | None,
            report: Callable[[str], None]) -> list[Cell]:
    """One job's cells through every pass of ``budget``, in ``pool``.

    Each job's later passes are queued as soon as its first ends, not after every job's first
    pass: a pass no longer waits for the slowest job of the one before, so the workers stay
    busy to the end.  A job's cells depend on its own runs only (a later pass regroups a
    (committer, store) pair's rows, all from the same job), so the cells and their order are
    those of running the passes one after the other."""
    cells = pool.submit(decide_job, job).result()
    report(_progress_line(job, cells))
    if budget.deep_runs and budget.deep_runs > budget.max_runs:
        cells = _second_pass(cells, budget, traces, resolve, seeds, pool, report)
    if budget.lag_pass is not None:
        cells = _lag_pass(cells, budget, traces, resolve, pool, report)
    return cells


RowKey = tuple[str, str, str, str | None, str | None]


def row_key(cell: Cell) -> RowKey:
    """The row a cell belongs to: (committer, store, protocol, bug, variant_of)."""
    return (cell.committer, cell.store, str(cell.protocol), cell.bug, cell.variant_of)


def _bounded(explored: Explored, max_lag: int, unbounded: Unbounded) -> Explored:
    """``explored`` proved (or broken) with the lag bounded by ``max_lag``: a violation's bound
    is that of its scope, where the bounded search found it."""
    if isinstance(explored, Violation):
        return replace(explored, where=replace(explored.where, max_lag=max_lag),
                       unbounded=unbounded)
    return replace(explored, max_lag=max_lag, unbounded=unbounded)


def _second_pass(cells: list[Cell], budget: Budget, traces: str | None,
                 resolve: Resolver, seeds: str | None, pool: ProcessPoolExecutor,
                 progress: Callable[[str], None] | None) -> list[Cell]:
    """Every ``holds*`` cell decided again at ``budget.deep_runs`` runs per scope (each such
    cell then records ``explored.deep_runs``), in the scope families the first pass left open:
    the ones it finished stand beside the deeper ones."""
    assert budget.deep_runs is not None
    deep = replace(budget, max_runs=budget.deep_runs, hypothesis_examples=0, deep_runs=None,
                   lag_pass=None)
    rows, families = _open_rows(cells, lambda cell: True)
    before = {(row_key(c), c.prop): c for c in cells}
    fresh: dict[tuple[RowKey, str], Cell] = {}
    for job, again in _again(rows, deep, traces, resolve, seeds, pool, families):
        for cell in again:
            key = (row_key(cell), cell.prop)
            if cell.verdict in HOLDING:
                cell = judge_reach(_keep_finished(before[key], cell))
            fresh[key] = replace(cell, explored=replace(cell.explored,
                                                        deep_runs=budget.deep_runs))
        if progress:
            progress(f"again with {budget.deep_runs} runs per scope: {_progress_line(job, again)}")
    return [fresh.get((row_key(c), c.prop), c) for c in cells]


def _open_rows(cells: Sequence[Cell], pick: Callable[[Cell], bool],
               ) -> tuple[dict[RowKey, list[str]], dict[RowKey, tuple[str, ...]]]:
    """The ``holds*`` cells ``pick`` selects, by row, and per row the scope families any of
    them left open (cut off): a row's job explores those again, for all its properties."""
    rows: dict[RowKey, list[str]] = {}
    families: dict[RowKey, tuple[str, ...]] = {}
    for cell in cells:
        if cell.verdict not in HOLDING or cell.complete or not pick(cell):
            continue
        cut = tuple(dict.fromkeys(scope_named(name).family for name in cell.cut_off))
        row = row_key(cell)
        families[row] = tuple(dict.fromkeys([*families.get(row, ()), *cut]))
        rows.setdefault(row, []).append(cell.prop)
    return rows, families


def _keep_finished(old: Cell, cell: Cell) -> Cell:
    """A ``holds`` cell explored again in its open scope families: the scopes the earlier
    search finished stand beside the new ones (a finished scope covers every run a deeper or
    bounded search of it could take), and the runs add up."""
    held = cell.explored
    assert isinstance(held, Held)
    named = {s.scope for s in held.scopes}
    scopes = (*[s for s in old.scopes if s.complete and s.scope not in named], *held.scopes)
    return replace(cell, explored=replace(held, scopes=scopes,
                                          runs=sum(s.search.runs for s in scopes)))


def _again(rows: dict[RowKey, list[str]], budget: Budget, traces: str | None,
           resolve: Resolver, seeds: str | None, pool: ProcessPoolExecutor,
           families: dict[RowKey, tuple[str, ...]] | None = None,
           ) -> Iterator[tuple[Job, list[Cell]]]:
    """``rows``' properties decided again at ``budget``, in ``pool``: each job and its cells.
    A row's protocols with the same properties go in one job, so that a committer that takes
    no messages explores them once (decide_pair).  ``families``: per row, the only scope
    families to explore (a production bug's row keeps to its own family anyway)."""
    Key = tuple[str, str, str | None, str | None, tuple[str, ...], tuple[str, ...] | None]
    together: dict[Key, list[str]] = {}
    for row, props in rows.items():
        c, s, protocol, bug, variant_of = row
        only = (families or {}).get(row) or ((by_report(bug).scope,) if bug else None)
        together.setdefault((c, s, bug, variant_of, tuple(props), only), []).append(protocol)
    jobs: list[Job] = [
        (c, s, props, budget, traces, resolve, tuple(protocols), Row(bug, variant_of, only),
         seeds)
        for (c, s, bug, variant_of, props, only), protocols in together.items()]
    return zip(jobs, pool.map(decide_job, jobs), strict=True)


def _lag_pass(cells: list[Cell], budget: Budget, traces: str | None,
              resolve: Resolver, pool: ProcessPoolExecutor,
              progress: Callable[[str], None] | None) -> list[Cell]:
    """Every ``holds*`` cell on a lagging store decided again with its visibility lag bounded
    (``budget.lag_pass`` events pending at most, ``budget.lag_runs`` runs per scope), in the
    scope families its unbounded search did not finish: a finished one already covers every
    bounded run.  A violation replaces the cell; so does a proof (``holds`` with
    ``explored.max_lag``, the finished unbounded scopes beside the bounded ones, and under
    ``explored.unbounded`` how far the unbounded search went); a bounded search that is cut
    off too leaves the cell as it was, noting the attempt (``explored.lag_pass``)."""
    assert budget.lag_pass is not None
    rows, families = _open_rows(cells, lambda cell: lags(cell.store))
    if not rows:
        return cells
    bounded = replace(budget, max_runs=budget.lag_runs, hypothesis_examples=0, deep_runs=None,
                      lag_pass=None, max_lag=budget.lag_pass)
    before = {(row_key(c), c.prop): c for c in cells}
    fresh: dict[tuple[RowKey, str], Cell] = {}
    for job, again in _again(rows, bounded, traces, resolve, None, pool, families):
        for cell in again:
            key = (row_key(cell), cell.prop)
            old = before[key].explored
            assert isinstance(old, Held)  # (only cells no run violated are explored again)
            if isinstance(cell.explored, Held) and not cell.complete:
                tried = LagTried(budget.lag_pass, cell.explored.runs)
                fresh[key] = replace(before[key], explored=replace(old, lag_pass=tried))
                continue
            if cell.verdict in HOLDING:
                cell = judge_reach(_keep_finished(before[key], cell))
            fresh[key] = replace(cell, explored=_bounded(
                cell.explored, budget.lag_pass, Unbounded(old.runs, old.complete, old.deep_runs)))
        if progress:
            progress(f"again with at most {budget.lag_pass} visibility events pending: "
                     f"{_progress_line(job, again)}")
    return [fresh.get((row_key(c), c.prop), c) for c in cells]


def _progress_line(job: Job, cells: Sequence[Cell]) -> str:
    """``magic on s3: completeness=violated/holds, … (hadoop/spark)``."""
    committer, store, *_rest = job
    row = job[7] or Row()
    by_prop: dict[str, list[str]] = {}
    for cell in cells:
        by_prop.setdefault(cell.prop, []).append(cell.shown)
    protocols = "/".join(dict.fromkeys(str(c.protocol) for c in cells))
    what = f" ({row.bug}, scope {', '.join(row.families or ())})" if row.bug else ""
    return (f"{committer} on {store}{what}: "
            + ", ".join(f"{p}={'/'.join(v)}" for p, v in by_prop.items()) + f" ({protocols})")


def save(cells: Sequence[Cell], path: str) -> None:
    """The cells as ``zerorename check --json`` writes them."""
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text(json.dumps(cells_json(cells), indent=2, ensure_ascii=False) + "\n")
