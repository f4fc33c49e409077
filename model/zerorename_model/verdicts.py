"""The verdict matrix: every (committer, store, property) cell decided by exploration.

For each committer and store profile, a few *scopes* are explored (each a scenario with fault
budgets) and every property is checked on every run.  A cell is

* ``violated`` when some run broke the property: its schedule is shrunk and saved as a trace;
* ``holds`` when no run did; ``explored.complete`` says whether the whole scope was enumerated
  (a proof within bounds) or only sampled (the run budget ran out first, then hypothesis tried);
* ``n/a`` when the committer cannot run on the store at all (its fault-free run fails, e.g. a
  multipart committer on HDFS), or the property cannot arise (consistency on a consistent store).

Nothing here knows which committer "should" pass: the table is whatever exploration finds.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from zerorename_model.explore import explore, run_once, search, shrink
from zerorename_model.harness import RunResult
from zerorename_model.properties import PROPERTIES, applicable
from zerorename_model.protocols import get, load_all
from zerorename_model.scenario import Faults, Scenario
from zerorename_model.stores import PROFILES
from zerorename_model.trace import write_trace

MATRIX_COMMITTERS = ("v1", "v2", "directory", "partitioned", "magic", "manifest", "direct",
                     "stocator", "emr", "lakefs", "fenced")
MATRIX_STORES = ("hdfs", "s3-2018", "s3", "gcs", "abfs")
FILES = ("part-{task:05d}",)
NESTED_FILES = ("year=2024/my file {task}.csv",)


@dataclass(frozen=True)
class Scope:
    """A named scenario family and the properties it decides."""

    name: str
    props: tuple[str, ...]
    make: Callable[[str, str], Scenario]


def _single(driver: str, faults: Faults, tasks: int = 2) -> Callable[[str, str], Scenario]:
    def make(committer: str, store: str) -> Scenario:
        return Scenario(committer, store=store, tasks=tasks, files=FILES, max_attempts=2,
                        driver=driver, faults=faults)
    return make


def _two_jobs(committer: str, store: str) -> Scenario:
    return Scenario(committer, store=store, tasks=1, files=NESTED_FILES, max_attempts=2,
                    dests=("s3://bucket/out/dataset1", "s3://bucket/out/dataset10"),
                    driver="hadoop", faults=Faults(crash=1))


OUTPUT_PROPS = ("completeness", "exclusivity", "consistency")
#: Each scope is small enough to enumerate (2 tasks x 2 attempts x 1 file, one fault of a kind,
#: at every point of every schedule); a property's cell combines every scope that checks it.
#: Abortability is decided by two scopes rather than one with both faults: the job failing at any
#: point of two tasks' schedules, and an attempt crashing (leaving what only the job can clean)
#: before its retry and the job's failure.  Together they cover a crashed attempt's leftovers, a
#: committed task's uncompleted output and an in-flight attempt at the moment of failure, in
#: about 3,500 runs for the staging committer where the combined scope needs 55,000.
SCOPES = tuple(
    [Scope(f"crash-{d}", OUTPUT_PROPS, _single(d, Faults(crash=1))) for d in ("hadoop", "spark")]
    + [Scope(f"duplicate-{d}", OUTPUT_PROPS, _single(d, Faults(speculate=1)))
       for d in ("hadoop", "spark")]
    + [Scope(f"partition-{d}", (*OUTPUT_PROPS, "continuity"), _single(d, Faults(partition=1)))
       for d in ("hadoop", "spark")]
    + [Scope("restart", OUTPUT_PROPS, _single("hadoop", Faults(restart=1))),
       Scope("abort", ("abortability",), _single("spark", Faults(fail_job=1))),
       Scope("abort-crash", ("abortability",),
             _single("spark", Faults(crash=1, fail_job=1), tasks=1)),
       Scope("two-jobs", ("concurrency",), _two_jobs)]
)


@dataclass(frozen=True)
class Budget:
    """How much exploration each scope gets.  ``max_runs`` is the budget that matters: the same
    commit then gives the same verdicts on a fast or a loaded machine.  ``seconds`` is an optional
    wall-clock cap on top (None: none), for interactive use where time matters more than
    reproducibility; ``hypothesis_examples`` sample scopes the runs did not cover completely."""

    max_runs: int
    seconds: float | None = None
    hypothesis_examples: int = 0


#: ``check --quick`` (CI): about 2.5 minutes on 2 cores for the whole matrix.
QUICK = Budget(max_runs=300)
#: ``check`` (the default): within 15 minutes on 2 cores for the whole matrix.
FULL = Budget(max_runs=4_000, hypothesis_examples=20)


Resolver = Callable[[str, str], tuple[Any, Any]]


def model_resolver(committer: str, store: str) -> tuple[Any, Any]:
    """The model's committer on the model's store (no backend override)."""
    return get(committer), None


def runnable_on(committer: str, store: str, resolve: Resolver = model_resolver) -> str | None:
    """None if the committer completes a fault-free job on the store, else the reason not."""
    factory, backend = resolve(committer, store)
    result = run_once(Scenario(committer, store=store, tasks=1), factory, [], backend)
    job = result.jobs[0]
    if job.outcome == "committed":
        return None
    return job.error or f"fault-free job ended {job.outcome}"


def decide_pair(committer: str, store: str, props: Sequence[str], budget: Budget,
                traces: str | None, resolve: Resolver = model_resolver,
                ) -> list[dict[str, Any]]:
    """Every requested property's cell for one (committer, store)."""
    factory, backend = resolve(committer, store)
    cells: dict[str, dict[str, Any]] = {}
    reason = runnable_on(committer, store, resolve)
    for scope in SCOPES:
        wanted = [p for p in scope.props if p in props
                  and cells.get(p, {}).get("verdict") in (None, "holds")]
        for prop in [p for p in wanted if reason or not applicable(p, store)]:
            cells[prop] = _cell(committer, store, prop, "n/a", None,
                                {"reason": reason or f"{store} is consistent"})
        wanted = [p for p in wanted if cells.get(p, {}).get("verdict") != "n/a"]
        if not wanted:
            continue
        found, explored = _explore_scope(scope, scope.make(committer, store), factory, wanted,
                                         budget, backend)
        for prop in wanted:
            if prop in found:
                scenario, choices = found[prop]
                witness = _witness(scenario, factory, prop, choices, budget, backend)
                path = None
                if traces:
                    trace = list(witness.result.trace)
                    trace[-1] = {**trace[-1], "violations": [
                        str(v) for v in PROPERTIES[prop](witness.result)]}
                    path = str(write_trace(Path(traces) / f"{committer}.{store}.{prop}.jsonl",
                                           trace))
                earlier = cells.get(prop, {}).get("explored", {}).get("scopes", [])
                cells[prop] = _cell(committer, store, prop, "violated", path,
                                    {**explored, "steps": witness.result.steps,
                                     "witness": str(PROPERTIES[prop](witness.result)[0]),
                                     "witness_tasks": witness.scenario.tasks,
                                     "scopes": [*earlier, explored]})
            else:
                _merge_holds(cells, _cell(committer, store, prop, "holds", None, explored))
    return [cells[p] for p in props if p in cells]


def _lags(store: str) -> bool:
    profile = PROFILES.get(store)
    return profile is not None and not profile.consistent


def _explore_scope(scope: Scope, scenario: Scenario, factory: Any, wanted: Sequence[str],
                   budget: Budget, backend: Any,
                   ) -> tuple[dict[str, tuple[Scenario, list[int]]], dict[str, Any]]:
    """The violating schedule found for each of ``wanted`` in one scope, and what was explored.

    On a lagging store the scope is first explored with every visibility event settled before
    each read: those runs are behaviours the store allows (its consistent ones), few enough to
    enumerate, and a violation among them is found there rather than left to the much larger
    search over anomalies.  Only the second, full exploration can prove a property holds."""
    found: dict[str, tuple[Scenario, list[int]]] = {}
    explored: dict[str, Any] = {"scope": scope.name}

    def run(variant: Scenario, props: Sequence[str]) -> Any:
        report = explore(variant, factory, props, max_runs=budget.max_runs,
                         seconds=budget.seconds, stop_when_all_violated=True, backend=backend)
        found.update({p: (variant, v[2]) for p, v in report.violations.items() if p not in found})
        return report

    if _lags(scenario.store):
        eager = replace(scenario, faults=replace(scenario.faults, settle_eagerly=True))
        first = run(eager, wanted)
        explored["settled_before_reads"] = first.summary()
    rest = [p for p in wanted if p not in found]
    if not rest:
        return found, {**explored, **explored.pop("settled_before_reads"),
                       "phase": "settled before reads"}
    report = run(scenario, rest)
    explored.update(report.summary())
    missing = [p for p in rest if p not in found]
    if missing and not report.complete and budget.hypothesis_examples:
        sampled = search(scenario, factory, missing, max_examples=budget.hypothesis_examples,
                         backend=backend)
        found.update({p: (scenario, v[2]) for p, v in sampled.violations.items()})
        explored["hypothesis_runs"] = sampled.runs
    return found, explored


@dataclass(frozen=True)
class Witness:
    """The trace a violated cell shows: the shortest found, in the scope or a smaller one."""

    scenario: Scenario
    choices: list[int]
    result: RunResult


def _witness(scenario: Scenario, factory: Any, prop: str, choices: Sequence[int],
             budget: Budget, backend: Any) -> Witness:
    """Shrink the violating schedule; then, as hypothesis shrinks data before schedules, try the
    same scope with one task (fewer actors, so a shorter story) and keep whichever witness has
    fewer steps.  The verdict never depends on this: the violation was found in ``scenario``."""
    short, result = shrink(scenario, factory, prop, choices, backend=backend)
    best = Witness(scenario, short, result)
    if scenario.tasks > 1:
        smaller = replace(scenario, tasks=1)
        report = explore(smaller, factory, [prop], max_runs=min(budget.max_runs, 2_000),
                         seconds=budget.seconds, backend=backend)
        if prop in report.violations:
            short, result = shrink(smaller, factory, prop, report.violations[prop][2],
                                   backend=backend)
            if result.steps < best.result.steps:
                best = Witness(smaller, short, result)
    return best


def _merge_holds(cells: dict[str, dict[str, Any]], cell: dict[str, Any]) -> None:
    """A property holds for a pair only if it held in every scope: accumulate what was covered."""
    prop = cell["property"]
    if prop not in cells:
        cell["explored"] = {"scopes": [cell["explored"]], "complete":
                            cell["explored"]["complete"], "runs": cell["explored"]["runs"]}
        cells[prop] = cell
        return
    explored = cells[prop]["explored"]
    explored["scopes"].append(cell["explored"])
    explored["complete"] = explored["complete"] and cell["explored"]["complete"]
    explored["runs"] += cell["explored"]["runs"]


def _cell(committer: str, store: str, prop: str, verdict: str, trace: str | None,
          explored: dict[str, Any]) -> dict[str, Any]:
    return {"committer": committer, "store": store, "property": prop, "verdict": verdict,
            "trace": trace, "explored": explored}


def decide_job(args: tuple[str, str, tuple[str, ...], Budget, str | None, Resolver],
            ) -> list[dict[str, Any]]:
    """:func:`decide_pair` on one tuple of arguments (what a process pool maps over)."""
    return decide_pair(*args)


def matrix(committers: Sequence[str] | None = None, stores: Sequence[str] | None = None,
           props: Sequence[str] | None = None, *, quick: bool = True,
           traces: str | None = None, workers: int | None = None,
           progress: Callable[[str], None] | None = None,
           resolve: Resolver = model_resolver, known: Sequence[str] | None = None,
           known_stores: Sequence[str] | None = None,
           budget: Budget | None = None) -> list[dict[str, Any]]:
    """Decide every requested cell, in parallel over (committer, store) pairs.  ``resolve``
    (a module-level function, so worker processes can import it) maps a (committer, store)
    pair to its factory and backend; the reference target passes its own."""
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
    budget = budget or (QUICK if quick else FULL)
    jobs = [(c, s, props, budget, traces, resolve) for c in committers for s in stores]
    cells: list[dict[str, Any]] = []
    workers = workers or min(2, os.cpu_count() or 1)
    with ProcessPoolExecutor(max_workers=workers) as pool:
        for (c, s, *_rest), result in zip(jobs, pool.map(decide_job, jobs), strict=True):
            cells += result
            if progress:
                progress(f"{c} on {s}: " + ", ".join(f"{x['property']}={shown_verdict(x)}"
                                                      for x in result))
    return cells


def shown_verdict(cell: dict[str, Any]) -> str:
    """A cell's verdict as people read it: ``holds*`` where a scope was only sampled."""
    if cell["verdict"] == "holds" and not cell["explored"].get("complete", True):
        return "holds*"
    return str(cell["verdict"])


def format_matrix(cells: Sequence[dict[str, Any]]) -> str:
    """One row per (committer, store), one column per property; ``holds*`` = sampled only."""
    props = list(dict.fromkeys(c["property"] for c in cells))
    rows: dict[tuple[str, str], dict[str, str]] = {}
    for c in cells:
        rows.setdefault((c["committer"], c["store"]), {})[c["property"]] = shown_verdict(c)
    width = max([len(p) for p in props] + [8])
    head = f"{'committer':<12} {'store':<8} " + " ".join(f"{p:<{width}}" for p in props)
    lines = [head, "-" * len(head)]
    for (committer, store), row in rows.items():
        lines.append(f"{committer:<12} {store:<8} "
                     + " ".join(f"{row.get(p, ''):<{width}}" for p in props))
    lines.append("holds = no violation in the whole scope (proved within bounds); "
                 "holds* = none found, but the scope was only sampled")
    return "\n".join(lines)


def save(cells: Sequence[dict[str, Any]], path: str) -> None:
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text(json.dumps(list(cells), indent=2, ensure_ascii=False) + "\n")


def quick_matrix_text(committers: Sequence[str] | None = None) -> str:
    return format_matrix(matrix(committers, quick=True))
