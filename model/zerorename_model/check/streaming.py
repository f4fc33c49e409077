"""The exactly-once property of a streaming sink, and the search that checks it
(the driver and the sinks are :mod:`zerorename_model.systems.streaming`).

Readers: the **log reader** reads the sink's log (the records and the files they name; Spark's
``_spark_metadata`` entries); the **listing reader** lists the destination.  The property
(:func:`violations`, two halves, :class:`Property`): the log reader never sees a row twice nor
part of a batch, and, once the driver has finished, sees every row (a log entry it lists but
cannot read counts as no batch, as Spark's ``HDFSMetadataLog.get`` does); the listing reader
never sees a file the sink's log does not commit.  :func:`explore` enumerates every schedule
(driver steps, crashes, and on ``s3-2018`` the store's visibility events) breadth-first and
returns the first violation as a :class:`Witness`, which :func:`replay` re-executes step by
step.
"""

from __future__ import annotations

import copy
from collections import Counter, deque
from collections.abc import Iterator
from dataclasses import dataclass
from enum import Enum

from zerorename_model.engine.errors import ModelStoreError
from zerorename_model.engine.stores.store import ModelStore
from zerorename_model.systems.streaming import DEST, SINKS, TASKS, Driver, Sink, row

__all__ = ["Property", "Verdict", "Witness", "explore", "replay", "violations"]


class Verdict(Enum):
    HOLDS = "holds"
    VIOLATED = "violated"
    REFUSED = "refused: the store has no conditional PUT"


@dataclass
class State:
    store: ModelStore
    driver: Driver
    crashes: int = 0


@dataclass(frozen=True)
class Witness:
    """A schedule (the choices, in order) and what it broke."""

    sink: str
    store: str
    batches: int
    prop: Property
    choices: tuple[str, ...]
    broken: tuple[str, ...]


def _read_rows(store: ModelStore, files: list[str]) -> Counter[str] | None:
    rows: Counter[str] = Counter()
    for f in files:
        try:
            rows[store.get(f).decode()] += 1
        except ModelStoreError:
            return None
    return rows


class Property(Enum):
    """The two halves of exactly-once, checked (and reported) separately."""

    LOG_EXACTLY_ONCE = "a log reader sees whole batches, each once, and finally all"
    LISTING_COMMITTED_ONLY = "a listing reader sees only files the log commits"
    NO_LEFTOVERS = "a finished query leaves no pending upload nor hidden staged data"


def violations(sink: Sink, state: State, batches: int, prop: Property) -> list[str]:
    """What is wrong in ``state`` under ``prop`` (empty: it holds here)."""
    store, d = state.store, state.driver
    if prop is Property.NO_LEFTOVERS:
        if d.batch < batches:
            return []
        left = sorted(store.upload_urls()) + sorted(
            u for u in store.objects if u.startswith(f"{DEST}/_") and "/_spark_metadata/" not in u
            and "/_zerorename_log/" not in u)
        return [f"the query finished, leaving {left}"] if left else []
    if prop is Property.LISTING_COMMITTED_ONLY:
        committed = sink.committed(store)
        listed = sorted(o.url for o in store.list_page(f"{DEST}/").objects
                        if "/_" not in o.url[len(DEST):] and o.url not in committed)
        return [f"a listing reader sees files no log entry commits: {listed}"] if listed else []
    logged = sink.log_files(store)
    log_rows = _read_rows(store, [f for files in logged.values() for f in files])
    if log_rows is None:
        return ["the log reader cannot read a file the log names"]
    found = []
    twice = sorted(r for r, n in log_rows.items() if n > 1)
    if twice:
        found.append(f"the log reader sees rows twice: {twice}")
    for b in range(batches):
        seen = {row(b, t) for t in range(TASKS)} & set(log_rows)
        if seen and len(seen) < TASKS:
            found.append(f"the log reader sees part of batch {b}: {sorted(seen)}")
    want = {row(b, t) for b in range(batches) for t in range(TASKS)}
    if d.batch >= batches and set(log_rows) != want:
        found.append(f"the query finished, but the log reader misses rows "
                     f"{sorted(want - set(log_rows))}")
    return found


def _choices(sink: Sink, state: State, batches: int, max_crashes: int) -> Iterator[str]:
    d = state.driver
    if d.batch < batches:
        yield f"step {sink.steps[d.pc]}"
        if state.crashes < max_crashes:
            yield "crash"
    for i, event in enumerate(state.store.pending):
        yield f"settle {i} {event}"


def _apply(sink: Sink, state: State, choice: str) -> None:
    d = state.driver
    if choice == "crash":
        state.crashes += 1
        state.driver = Driver(run=d.run + 1, batch=min(set(range(d.batch + 1)) - d.commit_log),
                              commit_log=set(d.commit_log))
    elif choice.startswith("settle "):
        state.store.settle(int(choice.split(" ")[1]))
    else:
        sink.step(choice[len("step "):], state.store, d)
        d.pc += 1
        if d.pc == len(sink.steps):
            state.driver = Driver(run=d.run, batch=d.batch + 1, commit_log=set(d.commit_log))


#: s3-2018's visibility lag in the exploration: three pending events, the fewest at which the
#: file sink's temporary-file-then-copy leaves its new log entry unlisted after the batch
DEFAULT_LAG = 3


def _start(store_name: str, max_lag: int | None) -> State:
    lag = max_lag if store_name == "s3-2018" else None
    return State(ModelStore(store_name, max_lag=lag), Driver())


def explore(sink_name: str, store_name: str, prop: Property, *, batches: int = 2,
            max_crashes: int = 2, max_lag: int | None = DEFAULT_LAG
            ) -> tuple[Verdict, Witness | None, int]:
    """Every schedule of ``batches`` micro-batches with up to ``max_crashes`` driver crashes
    (and the store's visibility events), depth first.  Returns the verdict, the first
    violation's witness, and how many states were checked."""
    sink = SINKS[sink_name]()
    start = _start(store_name, max_lag)
    if not sink.usable(start.store):
        return Verdict.REFUSED, None, 0
    seen: set[str] = set()
    queue: deque[tuple[State, tuple[str, ...]]] = deque([(start, ())])
    checked = 0
    while queue:  # breadth first: the first witness is a shortest one
        state, path = queue.popleft()
        key = f"{state.store.digest()}|{state.driver}|{state.crashes}"
        if key in seen:
            continue
        seen.add(key)
        checked += 1
        broken = violations(sink, state, batches, prop)
        if broken:
            return Verdict.VIOLATED, Witness(sink_name, store_name, batches, prop, path,
                                             tuple(broken)), checked
        for choice in _choices(sink, state, batches, max_crashes):
            child = copy.deepcopy(state)
            _apply(sink, child, choice)
            queue.append((child, (*path, choice)))
    return Verdict.HOLDS, None, checked


def replay(witness: Witness, *, max_lag: int | None = DEFAULT_LAG) -> list[str]:
    """Re-execute ``witness``'s choices; returns the violations found at its end."""
    sink = SINKS[witness.sink]()
    state = _start(witness.store, max_lag)
    for choice in witness.choices:
        _apply(sink, state, choice)
    return violations(sink, state, witness.batches, witness.prop)
