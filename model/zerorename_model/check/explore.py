"""Finding violations and proving their absence within bounds.

:func:`explore` enumerates a scenario's schedules with :func:`runs`, the one exploration engine
(the verdict matrix, Table V's probes and the paper's race probe all use it): a stateless
depth-first search over the harness's choice sequences.  Every run replays the prefix of
choices that leads to an unexplored move, takes it, and continues; at each new choice point it
fingerprints the whole state (stores, every running actor's history and pause point, what the
drivers know, fault budgets; a finished actor as below), and a state seen before is pruned,
because its futures were or will be explored from the first visit.  When the search finishes
without hitting its run budget, every schedule, crash point and fault placement within the
scenario's budgets has been covered: a property that held on every run *holds within that
scope*.

**Sleep sets** (Godefroid, *Partial-Order Methods for the Verification of Concurrent Systems*,
1996, ch. 5) cut the moves explored without losing a reachable end state: two steps of
different task attempts whose store operations touch disjoint keys (a listing covers its
prefix) commute, so after exploring one of them from a state, the other's subtree need not
explore it again first.  A move is put to sleep with its *footprint* (:class:`Footprint`,
observed when it ran); a step that changed state shared between actors (a launch, a kill, a
failure: everything :meth:`~zerorename_model.engine.harness.Run.note` records), a driver's step, a
driver call, a throttle, a restart and a job failure depend on everything.  A settle touches
the visibility of its key (and is identified by its event, not its index); with
``reduction="faults"`` (the default of :func:`explore`) a crash, partition or speculative
launch touches the driver's view of its job, unless it fails the job.  Sleep sets are combined
with the state pruning as in Godefroid's Fig. 5.2: a state is pruned only if it was explored
with a sleep set contained in the current one; otherwise the moves asleep then but awake now
are explored from it.  ``reduction="sleep"`` sleeps steps and settles only (Table V uses it:
its observations look at every state with the fault about to be taken); ``"none"`` is the
plain search.  :mod:`tests.model.test_explore` checks that all three reach the same end states
and violated properties on small scopes.

**Verdicts decided early**: a property may say, of a run in progress, that it holds on every
continuation (:data:`~zerorename_model.check.properties.DECIDED_EARLY`: liveness, once every job has
committed and every driver is done).  When every property a search checks says so, the run
ends there (``Exploration.decided_early`` counts them): what attempts that outlive the commit
and the store's settles do next cannot change those verdicts.  The predicates read only
fingerprinted state, so a pruned state is decided exactly when its first visit was; and an
explored run equivalent to a skipped one (sleep sets) ends in a continuation of the state where
it was cut.  :mod:`tests.model.test_decided_early` compares both searches.

**Finished actors forgotten** (``forget_finished``, the default): a task attempt or driver that
is done takes no further step and no other actor reads its history, so the fingerprint keeps,
instead of that history, only what the property checkers read of it (what it wrote, its
incidents, its accepted task commit message, ...).  :mod:`tests.model.test_forget_finished`
checks on complete scopes that equal fingerprints mean equal verdicts.

For scopes too big to enumerate, :mod:`zerorename_model.check.sampling` lets hypothesis pick the
answers instead, and shrinks a violating choice sequence to a short one.
"""

from __future__ import annotations

import contextlib
import enum
import gc
import time
from collections.abc import Callable, Hashable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from zerorename_model.check.properties import CONSTRAINS, DECIDED_EARLY, PROPERTIES, Violation
from zerorename_model.check.reach import State, reached
from zerorename_model.engine.choices import ScriptedChooser
from zerorename_model.engine.harness import (
    Channel,
    HarnessStore,
    Move,
    MoveKind,
    Prune,
    Run,
    RunResult,
)
from zerorename_model.engine.scenario import CommitterFactory, Scenario


class Reduction(enum.Enum):
    NONE = "none"    # every move from every new state
    SLEEP = "sleep"  # sleep sets: independent steps (and settles) not explored in both orders
    #: also crashes, partitions and speculative launches, which change only the driver's view
    #: of one job, commute with the steps of other task attempts
    FAULTS = "faults"


@dataclass
class Exploration:
    """What a search covered and found.  ``complete``: the whole space was enumerated."""

    scenario: Scenario
    runs: int = 0
    pruned: int = 0
    states: int = 0
    complete: bool = False
    seconds: float = 0.0
    method: str = "exhaustive"
    decided_early: int = 0  # runs ended early: their properties hold on every continuation
    violations: dict[str, tuple[list[Violation], RunResult, list[int]]] = field(
        default_factory=dict)
    #: per state the checked properties constrain (:mod:`.reach`), how many runs reached it
    reach: dict[State, int] = field(default_factory=dict)

    def summary(self) -> dict[str, Any]:
        return {"method": self.method, "runs": self.runs, "pruned": self.pruned,
                "states": self.states, "complete": self.complete,
                "seconds": round(self.seconds, 2),
                **({"decided_early": self.decided_early} if self.decided_early else {}),
                **({"reach": {s.value: n for s, n in self.reach.items()}} if self.reach else {})}


#: makes the store a run uses instead of the scenario's model store (None: the model store)
Backend = Callable[[], HarnessStore] | None


def new_run(scenario: Scenario, factory: CommitterFactory, backend: Backend = None) -> Run:
    return Run(scenario, factory, backend=backend() if backend else None)


def run_once(scenario: Scenario, factory: CommitterFactory, choices: Sequence[int],
             backend: Backend = None) -> RunResult:
    """Replay ``choices`` (then option 0 to the end)."""
    return new_run(scenario, factory, backend).run(ScriptedChooser(list(choices)))


def _violations(result: RunResult, props: Sequence[str]) -> dict[str, list[Violation]]:
    found = {}
    for name in props:
        violations = PROPERTIES[name](result)
        if violations:
            found[name] = violations
    return found


# -- independence ---------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class Footprint:
    """What a step of a task attempt touched: ``keys`` (read or written) and ``prefixes``
    (listed), each named with its store (``d`` destination, ``c`` cluster filesystem)."""

    actor: str
    keys: frozenset[tuple[str, str]]
    prefixes: frozenset[tuple[str, str]]


def independent(a: Footprint | None, b: Footprint | None) -> bool:
    """Whether two steps commute (None: a move that may depend on anything)."""
    if a is None or b is None or a.actor == b.actor:
        return False
    if a.keys & b.keys:
        return False
    return not (_covers(a.prefixes, b.keys) or _covers(b.prefixes, a.keys))


def _covers(prefixes: frozenset[tuple[str, str]], keys: frozenset[tuple[str, str]]) -> bool:
    return any(ks == ps and key.startswith(prefix) for ps, prefix in prefixes for ks, key in keys)


_READS = frozenset({"get", "head", "list_page", "copy", "rename"})


def _candidate(run: Run, move: Move, faults: bool) -> tuple[Footprint | None, bool]:
    """The footprint ``move`` has, and whether it holds only if the move turns out not to
    change shared state (None: it depends on everything whatever happens).  With ``faults``,
    a crash, partition or speculative launch has a footprint too: the driver's view of its job
    (it must then not fail the job: see :func:`_execute`)."""
    if move.kind is MoveKind.SETTLE:
        # a lagging write becoming visible touches that key's visibility only (its note is
        # not a change to shared state)
        event = run.store.pending[move.settle]
        return Footprint(f"settle {event}", frozenset({("d", event.url)}), frozenset()), False
    if faults and move.kind in (MoveKind.CRASH, MoveKind.PARTITION):
        actor = run.actor(move)
        return Footprint(actor.name, frozenset({("job", str(actor.job_index))}),
                         frozenset()), False
    if faults and move.kind is MoveKind.SPECULATE:
        return Footprint(f"speculate j{move.job}.t{move.task}",
                         frozenset({("job", str(move.job))}), frozenset()), False
    if move.kind is not MoveKind.STEP:
        return None, False
    actor = run.actor(move)
    op = actor.pending
    if actor.task is None or op is None or op.channel not in (Channel.STORE, Channel.CLUSTER):
        return None, False
    if op.op == "rename":  # directory renames move a subtree, in parts on some stores
        return None, False
    if (op.channel is Channel.STORE and run.scenario.faults.settle_eagerly
            and op.op in _READS):  # settles every pending visibility event first
        return None, False
    space = "d" if op.channel is Channel.STORE else "c"
    named = frozenset((space, k) for k in op.urls())
    if op.is_prefix:
        return Footprint(actor.name, frozenset(), named), True
    return Footprint(actor.name, named, frozenset()), True


def _execute(run: Run, moves: Sequence[Move], index: int,
             faults: bool = False) -> Footprint | None:
    """Take ``moves[index]``; its footprint, or None if it changed shared state (a step that
    noted an effect; a fault that failed a job, which wakes its driver)."""
    candidate, checked = _candidate(run, moves[index], faults)
    effects, failed = run.effects, [job.failed for job in run.jobs]
    run.choose(moves, index)
    if checked and run.effects != effects:
        return None
    if [job.failed for job in run.jobs] != failed:
        return None
    return candidate


def _identity(run: Run, move: Move) -> Hashable:
    """What a move is across states: a settle move by the event it settles (its index shifts
    as other events settle), every other move by itself."""
    if move.kind is MoveKind.SETTLE:
        return (MoveKind.SETTLE, str(run.store.pending[move.settle]))
    return move


# -- the engine -----------------------------------------------------------------------------------

Allow = Callable[[Run, Move], bool]
#: moves asleep (by :func:`_identity`), with their footprints
Sleep = dict[Hashable, Footprint | None]
Watch = Callable[[Run, Move | None], str | None]
#: true once every property being checked holds on every continuation of the run so far
Decide = Callable[[Run], bool]


class DecidedEarly(Prune):
    """Raised to end a run whose checked properties hold however it continues."""

#: one choice on the way to a state: the index taken, the move it was, how many were offered
Step = tuple[int, Move, int]


class _Replayed(Sequence[Move]):
    """The options a replayed state offered, as far as :meth:`Run.choose` records them: how
    many there were, and the one taken.  Replaying a prefix takes the moves its first run
    took (the harness is deterministic), so the options need not be computed again: that was
    about a sixth of a search's CPU time, most of it spent replaying."""

    __slots__ = ("_index", "_move", "_n")

    def __init__(self, step: Step) -> None:
        self._index, self._move, self._n = step

    def __len__(self) -> int:
        return self._n

    def __getitem__(self, index: Any) -> Any:
        if index != self._index:
            raise IndexError(f"a replayed state keeps only the move taken ({self._index})")
        return self._move


@dataclass
class _Node:
    """A state the search expanded: the choices leading to it, its moves, which of them it
    explores (``todo``, indices into ``moves``), its sleep set, and the footprints of the
    explored moves as their runs observe them."""

    prefix: tuple[Step, ...]
    ids: list[Hashable]
    todo: list[int]
    sleep: Sleep
    footprints: list[Footprint | None]
    observed: list[bool]


@dataclass
class Finished:
    """One run that reached its end: its result, its choices and what ``watch`` found."""

    result: RunResult
    choices: list[int]
    found: str | None = None
    run: Run | None = None


@dataclass
class Stats:
    runs: int = 0
    pruned: int = 0
    decided_early: int = 0
    states: int = 0
    complete: bool = False


def runs(make: Callable[[], Run], stats: Stats, *, reduction: Reduction = Reduction.SLEEP,
         allow: Allow | None = None, watch: Watch | None = None, max_runs: int | None = None,
         seconds: float | None = None, decided: Decide | None = None) -> Iterator[Finished]:
    """Every run of the depth-first search, as it finishes (the caller may stop early).
    ``allow`` restricts the fault moves explored (steps are always allowed); ``watch`` looks at
    every state with the move about to be taken, and at the end: once it finds something, the
    run is finished with the plainest moves, for its trace.  ``max_runs`` (pruned runs count)
    and ``seconds`` bound the search; ``stats.complete`` says whether it covered everything."""
    visited: dict[Any, Sleep] = {}
    frontier: list[tuple[_Node | None, int]] = [(None, 0)]
    sleeping = reduction is not Reduction.NONE
    faults = reduction is Reduction.FAULTS
    started = time.monotonic()
    with _fewer_collections():
        yield from _search(make, stats, visited, frontier, sleeping, faults, allow, watch,
                           max_runs, seconds, started, decided)


@contextlib.contextmanager
def _fewer_collections() -> Iterator[None]:
    """A run allocates many small typed records and leaves cycles (actors and their
    greenlets) that only the cyclic collector frees; with the default thresholds the collector
    took about a fifth of the search's CPU time (measured with it off: 1.3 s instead of
    1.65 s).  Collecting less often frees the same garbage in fewer passes."""
    before = gc.get_threshold()
    gc.set_threshold(10_000, 100, 100)
    try:
        yield
    finally:
        gc.set_threshold(*before)


def _search(make: Callable[[], Run], stats: Stats, visited: dict[Any, Sleep],
            frontier: list[tuple[_Node | None, int]], sleeping: bool, faults: bool,
            allow: Allow | None, watch: Watch | None, max_runs: int | None,
            seconds: float | None, started: float,
            decided: Decide | None = None) -> Iterator[Finished]:
    while frontier:
        if (max_runs is not None and stats.runs >= max_runs) or (
                seconds is not None and time.monotonic() - started > seconds):
            break
        node, k = frontier.pop()
        run = make()
        stats.runs += 1
        try:
            done = _one_run(run, node, k, visited, frontier, sleeping, faults, allow, watch,
                            decided)
        except DecidedEarly:
            stats.decided_early += 1
            continue
        except Prune:
            stats.pruned += 1
            continue
        finally:
            stats.states = len(visited)
            stats.complete = not frontier
        yield done


def _allowed(run: Run, moves: Sequence[Move], allow: Allow | None) -> list[int]:
    return [i for i, m in enumerate(moves)
            if allow is None or m.kind is MoveKind.STEP or allow(run, m)]


def _one_run(run: Run, node: _Node | None, k: int,
             visited: dict[Any, Sleep],
             frontier: list[tuple[_Node | None, int]], sleeping: bool, faults: bool,
             allow: Allow | None, watch: Watch | None,
             decided: Decide | None = None) -> Finished:
    taken: list[Step] = []
    found: str | None = None
    sleep: Sleep = {}
    try:
        if node is not None:
            for step in node.prefix:
                run.finished()  # wakes the actors whose wait is over, as options() does
                if found is None and watch is not None:
                    found = watch(run, step[1])
                run.choose(_Replayed(step), step[0])
                taken.append(step)
            moves = run.options()
            index = node.todo[k]
            if found is None and watch is not None:
                found = watch(run, moves[index])
            footprint = _execute(run, moves, index, faults)
            taken.append((index, moves[index], len(moves)))
            node.footprints[k], node.observed[k] = footprint, True
            if sleeping:  # the node's sleep set and the siblings explored before this one
                earlier = [(node.ids[node.todo[i]], node.footprints[i]) for i in range(k)
                           if node.observed[i]]
                sleep = {z: f for z, f in [*node.sleep.items(), *earlier]
                         if independent(f, footprint)}
        while not run.finished():
            if decided is not None and found is None and decided(run):
                raise DecidedEarly()
            moves = run.options()
            if found is not None:  # finish the run plainly, for its trace
                run.choose(moves, _allowed(run, moves, allow)[0])
                continue
            ids = [_identity(run, m) for m in moves]
            todo, sleep = _expand(run, moves, ids, sleep, visited, allow)
            here = _Node(tuple(taken), ids, todo, sleep, [None] * len(todo),
                         [False] * len(todo))
            frontier.extend((here, i) for i in range(len(todo) - 1, 0, -1))
            if watch is not None:
                found = watch(run, moves[todo[0]])
            footprint = _execute(run, moves, todo[0], faults)
            here.footprints[0], here.observed[0] = footprint, True
            taken.append((todo[0], moves[todo[0]], len(moves)))
            if sleeping:
                sleep = {z: f for z, f in sleep.items()
                         if independent(f, footprint)}
    finally:
        run.kill_all()
    result = run.result()
    if found is None and watch is not None:
        found = watch(run, None)
    return Finished(result, [step[0] for step in taken], found, run)


def _expand(run: Run, moves: list[Move], ids: list[Hashable], sleep: Sleep,
            visited: dict[Any, Sleep], allow: Allow | None) -> tuple[list[int], Sleep]:
    """Which moves to explore from this state (raises :class:`Prune` if none), and the sleep
    set it is explored with; records the state as visited with that sleep set."""
    if sleep:  # a move a step disabled leaves the sleep set (a settle once no read waits)
        enabled = set(ids)
        sleep = {z: f for z, f in sleep.items() if z in enabled}
    state = run.fingerprint()
    stored = visited.get(state)
    allowed = _allowed(run, moves, allow)
    if stored is None:
        visited[state] = dict(sleep)
        todo = [i for i in allowed if ids[i] not in sleep]
    else:
        if stored.keys() <= sleep.keys():
            raise Prune(state)
        # explored before with a smaller sleep set: what slept then and is awake now
        todo = [i for i in allowed if ids[i] in stored and ids[i] not in sleep]
        sleep = {z: f for z, f in sleep.items() if z in stored}
        visited[state] = dict(sleep)
    if not todo:
        raise Prune(state)  # every move asleep: each was explored from an equivalent state
    return todo, sleep


def explore(scenario: Scenario, factory: CommitterFactory, props: Sequence[str], *,
            max_runs: int = 20_000, seconds: float | None = None,
            stop_when_all_violated: bool = True, backend: Backend = None,
            progress: Callable[[Exploration], None] | None = None,
            reduction: Reduction | str = Reduction.FAULTS, early: bool = True,
            forget_finished: bool = True) -> Exploration:
    """Enumerate every schedule of ``scenario`` (with state pruning and, by default, sleep
    sets over steps, settles and the faults that change only a driver's view), checking
    ``props``.  ``early``: when every property checked can be decided before a run ends
    (:data:`~zerorename_model.check.properties.DECIDED_EARLY`), a run is ended once they all hold on
    every continuation of it (a liveness-only search stops once the job has committed).
    ``forget_finished``: fingerprint a finished attempt or driver by what the checkers read of
    it, not by its history (``Recorder.fingerprint``)."""
    report = Exploration(scenario)
    stats = Stats()
    started = time.monotonic()
    early_checks = [DECIDED_EARLY.get(p) for p in props]
    checks = [c for c in early_checks if c is not None]
    decided = ((lambda run: all(check(run) for check in checks))
               if early and checks and len(checks) == len(early_checks) else None)
    def make() -> Run:
        run = new_run(scenario, factory, backend)
        run.forget_finished = forget_finished
        run.counts_inconsistency = "consistency" in props
        return run

    engine = runs(make, stats,
                  reduction=Reduction(reduction), max_runs=max_runs, seconds=seconds,
                  decided=decided)
    reported = 0
    constrained = list(dict.fromkeys(s for p in props for s in CONSTRAINS.get(p, ())))
    report.reach = dict.fromkeys(constrained, 0)
    for done in engine:
        for state in reached(done.result, constrained):
            report.reach[state] += 1
        for name, violations in _violations(done.result, props).items():
            if name not in report.violations:
                report.violations[name] = (violations, done.result, done.choices)
        if progress and stats.runs // 1000 > reported:
            reported = stats.runs // 1000
            report.runs, report.states = stats.runs, stats.states
            progress(report)
        if stop_when_all_violated and len(report.violations) == len(props):
            break
    report.runs, report.pruned, report.states = stats.runs, stats.pruned, stats.states
    report.decided_early = stats.decided_early
    report.complete = stats.complete
    report.seconds = time.monotonic() - started
    return report
