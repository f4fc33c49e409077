"""One row of the verdict matrix: every (property, protocol) cell of a (committer, store) pair,
decided by exploration.  :mod:`zerorename_model.experiments.matrix` runs every row, in a process
pool, and the deeper passes over what the first left open.

For each committer and store profile, the scopes of :mod:`zerorename_model.experiments.scopes` are
explored (each a scenario with fault budgets, under one job-commit protocol) and every property
is checked on every run.  A cell is decided per protocol, from the scopes of that protocol:

* ``violated`` when some run broke the property: its schedule is shrunk and saved as a trace;
* ``holds`` when no run did; ``explored.complete`` says whether every scope was enumerated
  (a proof within bounds) or only sampled (the run budget ran out first, then hypothesis tried);
* ``n/a`` when the committer cannot run on the store at all (its fault-free run fails, e.g. a
  multipart committer on HDFS), or the property cannot arise (consistency on a consistent store).

The production bugs of the paper's Section XIV (:mod:`zerorename_model.experiments.bugs`) are rows
too: each variant, and the fixed committer beside it, explored in the scope family the bug names,
both marked with the bug (``bug``; the variant's ``variant_of`` names the fixed committer).

Nothing here knows which committer "should" pass: the table is whatever exploration finds.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from zerorename_model.check.explore import Backend, Exploration, explore, run_once
from zerorename_model.check.properties import CONSTRAINS, PROPERTIES, applicable
from zerorename_model.check.reach import vacuous_states
from zerorename_model.check.sampling import search, shrink
from zerorename_model.engine.harness import RunResult
from zerorename_model.engine.json_values import json_object
from zerorename_model.engine.scenario import CommitterFactory, Scenario
from zerorename_model.engine.stores.profiles import PROFILES
from zerorename_model.experiments.bugs import BUGS
from zerorename_model.experiments.cells import Cell, JobProtocol, Verdict
from zerorename_model.experiments.explored import (
    Explored,
    Held,
    NotApplicable,
    ScopeRecord,
    Search,
    SeedsTried,
    Violation,
    scope_records,
)
from zerorename_model.experiments.scopes import PROTOCOLS, SCOPES, Scope
from zerorename_model.experiments.seeds import Seed, exact, for_scope, guided, in_scope
from zerorename_model.experiments.seeds import load as load_seeds
from zerorename_model.experiments.trace import (
    TraceDivergence,
    read_trace,
    run_recorded,
    write_trace,
)
from zerorename_model.systems.protocols import get

__all__ = ["FULL", "HOLDING", "MATRIX_COMMITTERS", "MATRIX_STORES", "PROTOCOLS", "QUICK",
           "SCOPES", "Budget", "Job", "Resolver", "Row", "Scope", "bug_jobs", "decide_job",
           "decide_pair", "judge_reach", "lags", "model_resolver"]

MATRIX_COMMITTERS = ("v1", "v2", "directory", "partitioned", "magic", "manifest", "direct",
                     "stocator", "emr", "lakefs", "fenced")
MATRIX_STORES = ("hdfs", "s3-2018", "s3", "gcs", "abfs")


@dataclass(frozen=True)
class Budget:
    """How much exploration each scope gets.  ``max_runs`` is the budget that matters: the same
    commit then gives the same verdicts on a fast or a loaded machine.  ``seconds`` is an optional
    wall-clock cap on top (None: none), for interactive use where time matters more than
    reproducibility; ``hypothesis_examples`` sample scopes the runs did not cover completely."""

    max_runs: int
    seconds: float | None = None
    hypothesis_examples: int = 0
    #: a second pass at this many runs per scope for every cell the first left ``holds*`` (no
    #: violation, some scope cut off); None: none.  Most scopes are exhausted in a few
    #: thousand runs, a few lagging-store ones need tens of thousands: the second pass spends
    #: the budget only where it decides something.
    deep_runs: int | None = None
    #: a third pass for every cell still ``holds*`` on a lagging store after the second: its
    #: scopes enumerated again with at most this many visibility events pending at once
    #: (bounded staleness, ``Faults.max_lag``), at ``lag_runs`` runs per scope; None: none.
    #: The clean-up LIST of Hadoop's committers can see any subset of the events pending under
    #: ``_temporary/`` (up to 21 of them in these scopes), each subset a distinct observation
    #: no reduction may merge; the bound is what makes those scopes finite on this machine.
    #: A violation found under it is a real one (the bounded runs are runs of the store);
    #: ``holds`` under it says so (``explored.max_lag``) wherever the cell is shown.
    lag_pass: int | None = None
    lag_runs: int = 400_000
    #: the bound this search puts on lagging stores (set by the third pass; None: unbounded)
    max_lag: int | None = None


#: ``check --quick`` (CI): about 42 CPU seconds for the whole matrix (so about 25 s on two idle
#: cores).  40 runs per scope prove little; with the seeds (:mod:`.seeds`, each replayed and
#: checked) it finds every violation the committed 1,000-run results list, without them about
#: 70% (docs/research/exploration.md).
QUICK = Budget(max_runs=40)
#: ``check`` (the default): 4,000 runs per scope, then the paper's second pass (50,000 runs
#: per scope) over every cell the first left ``holds*``: most scopes are exhausted within the
#: first, a few lagging-store ones need the second (the largest any cell finishes, 47,078),
#: and the third pass bounds the lag of what is still open (docs/research/HISTORY.md, Round 10).
FULL = Budget(max_runs=4_000, hypothesis_examples=20, deep_runs=50_000, lag_pass=4)


#: a committer and store name -> the committer's factory and the store backend (None: the model
#: store): the model's own committers, or the bridge's reference committers
Resolver = Callable[[str, str], tuple[CommitterFactory, Backend]]


def model_resolver(committer: str, store: str) -> tuple[CommitterFactory, Backend]:
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


@dataclass(frozen=True)
class Row:
    """Which row a cell belongs to: a committer of the matrix (``bug`` None), or one side of a
    production bug's comparison (``bug`` its report; ``variant_of`` set on the variant)."""

    bug: str | None = None
    variant_of: str | None = None
    families: tuple[str, ...] | None = None  # the scope families explored (None: every one)


def decide_pair(committer: str, store: str, props: Sequence[str], budget: Budget,
                traces: str | None, resolve: Resolver = model_resolver,
                protocols: Sequence[str] = PROTOCOLS, row: Row | None = None,
                seeds: str | None = None) -> list[Cell]:
    """Every requested property's cell, under each protocol, for one (committer, store).
    ``seeds``: a directory of saved witness traces tried first (:mod:`.seeds`; model
    committers only)."""
    row = row or Row()
    reason = runnable_on(committer, store, resolve)
    saved = load_seeds(seeds) if seeds and resolve is model_resolver else ()
    takes_messages = getattr(resolve(committer, store)[0], "takes_messages", True)
    by_protocol: dict[str, list[Cell]] = {}
    for protocol in protocols:
        if not takes_messages and by_protocol:  # the same runs as the protocol decided first
            first, decided_cells = next(iter(by_protocol.items()))
            by_protocol[protocol] = [_same_runs(c, protocol, first, traces, resolve)
                                     for c in decided_cells]
            continue
        scopes = [s for s in SCOPES if s.protocol == protocol
                  and (row.families is None or s.family in row.families)]
        decided = _decide_protocol(committer, store, props, budget, traces, resolve,
                                   protocol, scopes, reason, row, saved)
        by_protocol[protocol] = [decided[p] for p in props if p in decided]
    cells = [judge_reach(c) for decided_cells in by_protocol.values() for c in decided_cells]
    order = {p: i for i, p in enumerate(props)}
    return sorted(cells, key=lambda c: order[c.prop])  # stable: protocols stay in order


def _decide_protocol(committer: str, store: str, props: Sequence[str], budget: Budget,
                     traces: str | None, resolve: Resolver, protocol: str,
                     scopes: Sequence[Scope], reason: str | None, row: Row,
                     saved: Sequence[Seed] = ()) -> dict[str, Cell]:
    factory, backend = resolve(committer, store)
    cells: dict[str, Cell] = {}

    def cell(prop: str, verdict: Verdict, trace: str | None, explored: Explored) -> Cell:
        return Cell(committer, store, prop, JobProtocol(protocol), verdict, trace, explored,
                    row.variant_of, row.bug)

    for scope in scopes:
        wanted = [p for p in scope.props if p in props
                  and (p not in cells or cells[p].verdict in HOLDING)]
        for prop in [p for p in wanted if reason or not applicable(p, store)]:
            cells[prop] = cell(prop, Verdict.NA, None,
                               NotApplicable(reason or f"{store} is consistent"))
        wanted = [p for p in wanted if p not in cells or cells[p].verdict is not Verdict.NA]
        if not wanted:
            continue
        scenario = scope.make(committer, store)
        if budget.max_lag is not None and lags(store):
            scenario = replace(scenario, faults=replace(scenario.faults, max_lag=budget.max_lag))
        found, explored = _explore_scope(scope, scenario, factory, wanted, budget, backend,
                                         for_scope(saved, scenario) if saved else [])
        for prop in wanted:
            if prop not in found:
                _merge_holds(cells, cell(prop, Verdict.HOLDS, None,
                                         Held((explored,), explored.complete,
                                              explored.search.runs)))
                continue
            hit = found[prop]
            witness = (_seed_witness(hit.seed, factory, prop, backend) if hit.seed else None
                       ) or _witness(hit.scenario, factory, prop, hit.choices, budget, backend)
            path = None
            if traces:
                trace = list(witness.result.trace)
                trace[-1] = {**trace[-1], "violations": [
                    str(v) for v in PROPERTIES[prop](witness.result)]}
                name = [committer, store, prop, protocol]
                if row.bug and not row.variant_of:  # the fixed side of a bug's comparison
                    name.append(row.bug)
                path = str(write_trace(Path(traces) / (".".join(name) + ".jsonl"), trace))
            earlier = scope_records(cells[prop].explored) if prop in cells else ()
            cells[prop] = cell(prop, Verdict.VIOLATED, path,
                               Violation(explored, hit.by, witness.result.steps,
                                         str(PROPERTIES[prop](witness.result)[0]),
                                         witness.scenario.tasks, (*earlier, explored)))
    return cells


def _same_runs(cell: Cell, protocol: str, first: str, traces: str | None,
               resolve: Resolver) -> Cell:
    """``cell`` (decided under ``first``) for ``protocol``, for a committer that takes no
    messages: the driver calls its ``commit_job(None)`` under every protocol, so each scope's
    runs are those of the other protocol's scope, step for step, and so are its verdicts.  A
    violated cell's trace is run again under ``protocol`` and must reach the same digest and
    violation (else the harness depends on the protocol somewhere else, and this is wrong)."""
    same = replace(cell, protocol=JobProtocol(protocol),
                   explored=replace(cell.explored, runs_of=first))
    if cell.trace is None:
        return same
    events = read_trace(cell.trace)
    header = dict(events[0])
    header["scenario"] = {**json_object(header["scenario"]), "driver": protocol}
    recorded = str(events[-1]["digest"])
    differs = f"{cell.trace} run under {protocol}'s protocol"
    not_same = f"its runs are not those of {first}'s protocol"
    try:
        result = run_recorded([header, *events[1:]],
                              resolve(cell.committer, cell.store)[0], source=cell.trace)
    except TraceDivergence as divergence:
        raise AssertionError(f"{differs} took other steps ({divergence}): {not_same}") from None
    found = PROPERTIES[cell.prop](result)
    if result.digest != recorded or not found:
        raise AssertionError(f"{differs} reached another state ({result.digest} against "
                             f"{recorded}): {not_same}")
    trace = list(result.trace)
    trace[-1] = {**trace[-1], "violations": [str(v) for v in found]}
    path = Path(cell.trace)
    named = path.with_name(path.name.replace(f".{first}.", f".{protocol}.", 1))
    return replace(same, trace=str(write_trace(named, trace)))


#: the verdicts of a cell no run violated: ``holds`` when the runs reached every state its
#: property constrains, ``vacuous`` when they never reached one
HOLDING = (Verdict.HOLDS, Verdict.VACUOUS)


def judge_reach(cell: Cell) -> Cell:
    """A cell no run violated, with ``explored.reach`` (per state its property constrains, how
    many runs of its scopes reached it: :mod:`zerorename_model.check.reach`) and its verdict
    ``vacuous`` if one of them is 0, else ``holds``.  A cell of scopes explored before runs
    were counted (no ``reach`` in some scope) is left as it is."""
    held = cell.explored
    if not isinstance(held, Held) or cell.verdict not in HOLDING:
        return cell
    if not held.scopes or any(not s.search.reach for s in held.scopes):
        return cell
    constrains = CONSTRAINS.get(cell.prop, ())
    reach = {state.value: sum(dict(s.search.reach).get(state.value, 0)
                              + (dict(s.settled.reach).get(state.value, 0) if s.settled else 0)
                              for s in held.scopes)
             for state in constrains}
    return replace(cell, explored=replace(held, reach=tuple(reach.items())),
                   verdict=Verdict.VACUOUS if vacuous_states(constrains, reach)
                   else Verdict.HOLDS)

def lags(store: str) -> bool:
    """Whether ``store``'s profile lets a write's visibility lag (S3 of 2018)."""
    profile = PROFILES.get(store)
    return profile is not None and not profile.consistent


@dataclass(frozen=True)
class Found:
    """A violating run: its scenario and choices, and the seed that steered it (if any)."""

    scenario: Scenario
    choices: list[int]
    seed: Seed | None = None

    @property
    def by(self) -> str:
        return f"seed {Path(self.seed.path).name}" if self.seed else "exploration"


def _explore_scope(scope: Scope, scenario: Scenario, factory: CommitterFactory,
                   wanted: Sequence[str], budget: Budget, backend: Backend,
                   seeds: Sequence[Seed] = (),
                   ) -> tuple[dict[str, Found], ScopeRecord]:
    """The violating schedule found for each of ``wanted`` in one scope, and what was explored.

    The scope's seeds (:mod:`.seeds`) are replayed first; a property counts as found by a seed
    only if its checker flags that replay.  On a lagging store the scope is then explored with
    every visibility event settled before each read: those runs are behaviours the store
    allows (its consistent ones), few enough to enumerate, and a violation among them is found
    there rather than left to the much larger search over anomalies (with the lag bounded,
    in the third pass, they are not explored apart again).  Only the second, full exploration
    can prove a property holds."""
    found: dict[str, Found] = {}
    seeds_tried: SeedsTried | None = None
    for seed in seeds:
        rest = [p for p in wanted if p not in found]
        if not rest:
            break
        variant = in_scope(seed, scenario)
        choices, result = guided(seed, variant, factory, backend)
        for prop in rest:
            if PROPERTIES[prop](result):
                found[prop] = Found(variant, choices, seed)
    if seeds:
        seeds_tried = SeedsTried(len(seeds), tuple(sorted(found)))

    def record(search: Search, settled: Search | None = None, hypothesis_runs: int | None = None,
               phase: str | None = None) -> ScopeRecord:
        return ScopeRecord(scope.name, search, scenario.faults.max_lag, seeds_tried, settled,
                           hypothesis_runs, phase)

    def run(variant: Scenario, props: Sequence[str]) -> Exploration:
        report = explore(variant, factory, props, max_runs=budget.max_runs,
                         seconds=budget.seconds, stop_when_all_violated=True, backend=backend)
        found.update({p: Found(variant, v[2]) for p, v in report.violations.items()
                      if p not in found})
        return report

    rest = [p for p in wanted if p not in found]
    if not rest:
        return found, record(Search("seeds", 0, 0, 0, complete=False, seconds=0.0))
    settled: Search | None = None
    if lags(scenario.store) and scenario.faults.max_lag is None:
        # (not with the lag bounded: the third pass explores only what the second left open,
        # which found nothing among these runs, and a bounded search that ends covers them)
        eager = replace(scenario, faults=replace(scenario.faults, settle_eagerly=True))
        settled = Search.of(run(eager, rest))
    rest = [p for p in wanted if p not in found]
    if settled is not None and not rest:
        # (the settled search is the scope's record, and stays under its own name too)
        return found, record(settled, settled=settled, phase="settled before reads")
    report = run(scenario, rest)
    hypothesis_runs = None
    missing = [p for p in rest if p not in found]
    if missing and not report.complete and budget.hypothesis_examples:
        sampled = search(scenario, factory, missing, max_examples=budget.hypothesis_examples,
                         backend=backend)
        found.update({p: Found(scenario, v[2]) for p, v in sampled.violations.items()})
        hypothesis_runs = sampled.runs
    return found, record(Search.of(report), settled=settled, hypothesis_runs=hypothesis_runs)


@dataclass(frozen=True)
class Witness:
    """The trace a violated cell shows: the shortest found, in the scope or a smaller one."""

    scenario: Scenario
    choices: list[int]
    result: RunResult


def _witness(scenario: Scenario, factory: CommitterFactory, prop: str, choices: Sequence[int],
             budget: Budget, backend: Backend) -> Witness:
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


def _seed_witness(seed: Seed, factory: CommitterFactory, prop: str,
                  backend: Backend) -> Witness | None:
    """The seed itself, replayed exactly in its own (smaller) scenario, when that replay still
    violates ``prop``: it was shrunk when it was saved, so it is shown as it is."""
    replayed = exact(seed, factory, backend)
    if replayed is None or not PROPERTIES[prop](replayed[1]):
        return None
    return Witness(seed.scenario, *replayed)


def _merge_holds(cells: dict[str, Cell], cell: Cell) -> None:
    """A property holds for a pair only if it held in every scope: accumulate what was covered
    (``cell`` holds in one scope)."""
    if cell.prop not in cells:
        cells[cell.prop] = cell
        return
    held, more = cells[cell.prop].explored, cell.explored
    assert isinstance(held, Held) and isinstance(more, Held)
    cells[cell.prop] = replace(cells[cell.prop], explored=replace(
        held, scopes=(*held.scopes, *more.scopes), complete=held.complete and more.complete,
        runs=held.runs + more.runs))


#: :func:`decide_pair`'s arguments: ``(committer, store, props, budget, traces, resolve,
#: protocols, row, seeds)``
Job = tuple[str, str, Sequence[str], Budget, str | None, Resolver, Sequence[str], Row | None,
            str | None]


def decide_job(args: Job) -> list[Cell]:
    """:func:`decide_pair` on one tuple of arguments (what a process pool maps over)."""
    return decide_pair(*args)


def bug_jobs(committers: Sequence[str], stores: Sequence[str], props: Sequence[str],
             budget: Budget, traces: str | None, protocols: Sequence[str],
             seeds: str | None = None) -> list[Job]:
    """The production-bug rows whose fixed committer and store are asked for: the variant and
    the fixed committer, each explored in the bug's scope family only."""
    jobs: list[Job] = []
    for bug in BUGS:
        # (a store's bug, such as a check-then-act conditional PUT, is asked for with the
        # store its fixed row runs on: its own profile is no column of the matrix)
        if bug.fixed not in committers or bug.fixed_on not in stores:
            continue
        wanted = tuple(p for p in props if any(
            p in s.props for s in SCOPES if s.family == bug.scope))
        if not wanted:
            continue
        for committer, store, variant_of in ((bug.variant, bug.store, bug.fixed),
                                             (bug.fixed, bug.fixed_on, None)):
            jobs.append((committer, store, wanted, budget, traces, model_resolver,
                         tuple(protocols), Row(bug.report, variant_of, (bug.scope,)), seeds))
    return jobs
