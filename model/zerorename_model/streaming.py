"""Structured Streaming in the model: a driver running micro-batches 0..N-1 into a sink, dying
between any two of its steps and restarting, and an exactly-once property checked in every
reachable state.

The driver follows Spark's micro-batch engine: batch ``b``'s tasks write, the sink commits
``b``, then Spark records ``b`` in its commit log (the checkpoint, modelled as reliable: it is
Spark's, not the sink's, store).  A crash anywhere loses the driver's memory; the restarted run
re-runs the first batch missing from the commit log **with the same id**.  Two sinks:

* :class:`RecordSink` — zerorename's: each task's file is an uncompleted multipart upload (on
  stores without multipart, HDFS, a hidden staged file); the driver creates the batch record
  ``_zerorename_log/<b>`` with ``If-None-Match: *`` (the commit point), then publishes the
  recorded files (complete, or rename into place) and discards its own leftovers.  A re-run
  finds the record and publishes *its* files, not its own.  Without conditional PUT the sink
  refuses to start (:attr:`Verdict.REFUSED`), as the real one does.
* :class:`FileSink` — Spark's built-in file sink: tasks write straight into the destination;
  the driver skips a batch the log already lists (``getLatestBatchId``, a LIST), else adds
  ``_spark_metadata/<b>`` by writing a temporary file and renaming it (on S3 the rename is a
  HEAD of the target then a copy).

Readers: the **log reader** reads the sink's log (the records and the files they name; Spark's
``_spark_metadata`` entries); the **listing reader** lists the destination.  The property
(:func:`violations`, two halves, :class:`Property`): the log reader never sees a row twice nor
part of a batch, and, once the driver has finished, sees every row (a log entry it lists but
cannot read counts as no batch, as Spark's ``HDFSMetadataLog.get`` does); the listing reader never
sees a file the sink's log does not commit.  :func:`explore` enumerates every schedule (driver
steps, crashes, and on ``s3-2018`` the store's visibility events) breadth-first and returns the
first violation as a :class:`Witness`, which :func:`replay` re-executes step by step.
"""

from __future__ import annotations

import copy
from collections import Counter, deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from enum import Enum

from zerorename_model.errors import ModelStoreError
from zerorename_model.stores import ModelStore

__all__ = [
    "SINKS",
    "FileSink",
    "Property",
    "RecordSink",
    "Verdict",
    "Witness",
    "explore",
    "replay",
    "violations",
]

DEST = "s3://bucket/events"
TASKS = 2


def _row(batch: int, task: int) -> str:
    return f"b{batch}t{task}"


@dataclass
class Driver:
    """The driver's state: Spark's commit log survives a crash, the rest does not."""

    run: int = 0
    batch: int = 0
    pc: int = 0
    commit_log: set[int] = field(default_factory=set)
    #: what this attempt of the batch holds in memory (upload ids, or staged paths)
    memory: dict[str, str] = field(default_factory=dict)
    #: this attempt found the batch already committed (or skipped it)
    skip: bool = False


class Sink:
    """A sink's steps for one batch attempt, and what its log says."""

    name = ""
    steps: tuple[str, ...] = ()

    def usable(self, store: ModelStore) -> bool:
        return True

    def step(self, name: str, store: ModelStore, d: Driver) -> None:
        raise NotImplementedError

    def log_files(self, store: ModelStore) -> dict[int, list[str]]:
        """Batch id -> the files the log commits, as a log reader finds them."""
        raise NotImplementedError

    def committed(self, store: ModelStore) -> set[str]:
        """Every file the sink's log commits, in truth (whatever readers observe)."""
        raise NotImplementedError

    def file_of(self, d: Driver, task: int) -> str:
        return f"{DEST}/part-r{d.run}-b{d.batch}-t{task}"


class RecordSink(Sink):
    """zerorename's stream sink (see the module docstring)."""

    name = "zerorename"
    steps = ("write t0", "write t1", "record", "publish t0", "publish t1", "clean",
             "spark commit")

    def usable(self, store: ModelStore) -> bool:
        return store.profile.conditional_put

    def record_url(self, batch: int) -> str:
        return f"{DEST}/_zerorename_log/{batch:04d}"

    def step(self, name: str, store: ModelStore, d: Driver) -> None:
        multipart = store.profile.multipart
        if name.startswith("write"):
            task = int(name[-1])
            final = self.file_of(d, task)
            data = _row(d.batch, task).encode()
            if multipart:
                uid = store.create_multipart(final)
                store.upload_part(final, uid, 1, data)
                d.memory[final] = uid
            else:
                staged = f"{DEST}/_zr_stage/{final.rsplit('/', 1)[-1]}"
                store.put(staged, data)
                d.memory[final] = staged
        elif name == "record":
            body = "\n".join(f"{f} {w}" for f, w in sorted(d.memory.items())).encode()
            try:
                store.put(self.record_url(d.batch), body, if_none_match=True)
            except ModelStoreError as error:
                if error.status != 412:
                    raise
        elif name.startswith("publish"):
            recorded = self._recorded(store, d.batch)
            files = sorted(recorded)
            task = int(name[-1])
            if task < len(files):
                final = files[task]
                self._publish(store, final, recorded[final])
        elif name == "clean":
            recorded = self._recorded(store, d.batch)
            for final, what in d.memory.items():
                if recorded.get(final) == what:
                    continue
                if multipart and what in store.uploads:
                    store.abort_multipart(final, what)
                elif not multipart and store.head(what) is not None:
                    store.delete(what)
        elif name == "spark commit":
            d.commit_log.add(d.batch)

    def _recorded(self, store: ModelStore, batch: int) -> dict[str, str]:
        body = store.get(self.record_url(batch)).decode()
        return dict(line.split(" ", 1) for line in body.splitlines() if line)

    @staticmethod
    def _publish(store: ModelStore, final: str, what: str) -> None:
        if what in store.uploads:
            store.complete_multipart(final, what, [(1, _etag(store, what))])
        elif not store.profile.multipart and store.head(what) is not None \
                and store.head(final) is None:
            store.rename(what, final)

    def committed(self, store: ModelStore) -> set[str]:
        return {line.split(" ", 1)[0] for url, obj in store.objects.items()
                if url.startswith(f"{DEST}/_zerorename_log/")
                for line in obj.data.decode().splitlines() if line}

    def log_files(self, store: ModelStore) -> dict[int, list[str]]:
        out: dict[int, list[str]] = {}
        listed = {o.url for o in store.list_page(f"{DEST}/").objects}
        for url in sorted(listed):
            if url.startswith(f"{DEST}/_zerorename_log/"):
                batch = int(url.rsplit("/", 1)[-1])
                files = sorted(self._recorded(store, batch))
                if all(f in listed for f in files):  # whole batches only
                    out[batch] = files
        return out


def _etag(store: ModelStore, upload_id: str) -> str:
    from zerorename_model.stores import etag_of

    return etag_of(store.uploads[upload_id].parts[1])


class FileSink(Sink):
    """Spark's built-in file sink with its ``_spark_metadata`` log (see the module docstring)."""

    name = "spark-file-sink"
    steps = ("latest", "write t0", "write t1", "add temp", "add rename", "spark commit")

    def entry(self, batch: int) -> str:
        return f"{DEST}/_spark_metadata/{batch:04d}"

    def step(self, name: str, store: ModelStore, d: Driver) -> None:
        if name == "latest":
            logged = [int(o.url.rsplit("/", 1)[-1]) for o in
                      store.list_page(f"{DEST}/_spark_metadata/").objects
                      if o.url.rsplit("/", 1)[-1].isdigit()]
            d.skip = d.batch <= max(logged, default=-1)
        elif d.skip and name != "spark commit":
            return
        elif name.startswith("write"):
            task = int(name[-1])
            final = self.file_of(d, task)
            store.put(final, _row(d.batch, task).encode())
            d.memory[final] = final
        elif name == "add temp":
            if store.head(self.entry(d.batch)) is not None:  # HDFSMetadataLog.add: get first
                d.skip = True
                return
            temp = f"{DEST}/_spark_metadata/.{d.batch:04d}.tmp"
            store.put(temp, "\n".join(sorted(d.memory)).encode())
            d.memory["temp"] = temp
        elif name == "add rename":
            temp, target = d.memory["temp"], self.entry(d.batch)
            if store.profile.rename:
                try:
                    store.rename(temp, target)  # fails if the target exists
                except ModelStoreError:
                    store.delete(temp)
            elif store.head(target) is None:  # S3: check, then copy and delete
                store.copy(temp, target)
                store.delete(temp)
            else:
                store.delete(temp)
        elif name == "spark commit":
            d.commit_log.add(d.batch)

    def committed(self, store: ModelStore) -> set[str]:
        return {line for url, obj in store.objects.items()
                if url.startswith(f"{DEST}/_spark_metadata/") and url.rsplit("/", 1)[-1].isdigit()
                for line in obj.data.decode().splitlines() if line}

    def log_files(self, store: ModelStore) -> dict[int, list[str]]:
        out: dict[int, list[str]] = {}
        for o in store.list_page(f"{DEST}/_spark_metadata/").objects:
            name = o.url.rsplit("/", 1)[-1]
            if name.isdigit():
                try:
                    out[int(name)] = store.get(o.url).decode().splitlines()
                except ModelStoreError:  # HDFSMetadataLog.get: a missing entry is no batch
                    continue
        return out


SINKS: dict[str, Callable[[], Sink]] = {"zerorename": RecordSink, "spark-file-sink": FileSink}


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


def violations(sink: Sink, state: State, batches: int, prop: Property) -> list[str]:
    """What is wrong in ``state`` under ``prop`` (empty: it holds here)."""
    store, d = state.store, state.driver
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
        seen = {_row(b, t) for t in range(TASKS)} & set(log_rows)
        if seen and len(seen) < TASKS:
            found.append(f"the log reader sees part of batch {b}: {sorted(seen)}")
    want = {_row(b, t) for b in range(batches) for t in range(TASKS)}
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
