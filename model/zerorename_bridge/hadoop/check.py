"""``zerorename check --target hadoop``: Hadoop's own committers explored under the model's
scheduler and fault choices (issue 45, item 3; issue 47, item 3).

The conformance translator (:mod:`.translate`) replays a schedule the *model's* committer
chose; here the real committer is the one explored.  Each committer call of the harness
(``setup_job``, ``commit_task``...) is a call into the research driver's JVM, and each
filesystem call (HDFS-like) or S3 request (S3A on moto) the Java committer is about to make is
one harness step (:meth:`~zerorename_model.engine.harness.Env.step`): the model's scheduler
decides which actor moves next, and its crashes, kills, partitions, duplicate attempts,
restarts and job failures strike at those points.  A run's store is the real one — the
HDFS-like filesystem's directory or the moto bucket — seen through a harness store
(:class:`HadoopStore`) that snapshots it for the property checkers, so the model's own
checkers decide completeness, exclusivity, valid-outcome, concurrency, abortability,
continuity and liveness on what Hadoop's code did, in the model's scopes, and each violation
is saved as a trace that replays (:func:`replay`).

What the driver cannot reproduce is left out: the store's own faults (a lost answer, a
throttled request, a 409; the ``ambiguous`` scopes), and consistency (the stores are
consistent).  Hadoop's committers take no task commit messages (``commitJob`` finds the tasks'
work itself), so a cell is decided once and shown under both protocols, as the model does for
its own v1.  A restarted job attempt runs every task again (Spark's behaviour: it never calls
``recoverTask``).

Names: ``v1``, ``v2``, ``manifest`` (HDFS-like filesystem), ``magic``, ``directory``,
``partitioned`` (S3A 3.5.0 on moto), or ``hadoop:<class>`` — any ``PathOutputCommitter`` with
the ``(Path, TaskAttemptContext)`` constructor, on the class path the research driver is given
plus :data:`CLASSPATH_VARIABLE` (jars or folders, ``os.pathsep``-separated), driven on the
HDFS-like filesystem (``--store hdfs``) or on moto through S3A (``--store s3``, the S3A jars on
the class path).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from zerorename_bridge.hadoop.check_committer import (
    HadoopCommitter,
    HadoopFactory,
    check_available,
    hadoop_resolver,
)
from zerorename_bridge.hadoop.check_process import (
    _PROCESS,
    BUILTIN,
    CLASSPATH_VARIABLE,
    HADOOP_PREFIX,
    PROPERTIES,
    STORES,
    HadoopCallFailed,
    HadoopCommitterError,
    close,
    extra_classpath,
    jvm_name,
    store_for,
)
from zerorename_bridge.hadoop.check_store import MODEL_BUCKET, HadoopStore, store_backend
from zerorename_bridge.hadoop.check_store import _stable as _stable
from zerorename_model.engine.harness.state import RunResult
from zerorename_model.experiments.cells import Cell
from zerorename_model.experiments.verdicts import Budget

#: the names this module has had since before its split (the JVM's process state in
#: :mod:`.check_process`, the harness store in :mod:`.check_store`, the driven committer in
#: :mod:`.check_committer`), importable from here
__all__ = ["BUILTIN", "CLASSPATH_VARIABLE", "FULL_RUNS", "HADOOP_PREFIX", "MODEL_BUCKET",
           "PROPERTIES", "QUICK_RUNS", "STORES", "TARGET", "HadoopCallFailed",
           "HadoopCommitter", "HadoopCommitterError", "HadoopFactory", "HadoopStore",
           "Replayed", "check_available", "close", "decide", "extra_classpath",
           "hadoop_resolver", "is_hadoop_trace", "jvm_name", "replay", "replay_run",
           "run_check", "store_backend", "store_for"]

# -- deciding cells, and witnesses that replay ---------------------------------------------------

#: a witness trace's header says which committers it ran (``zerorename trace replay``)
TARGET = "hadoop"


def replay_run(events: Sequence[Mapping[str, object]], source: str = "<trace>",
               driver: str | None = None) -> RunResult:
    """Run a Hadoop witness again with its recorded choices, on the store it ran on (raises
    :class:`~zerorename_model.experiments.trace.TraceDivergence` where it differs);
    ``driver``: under another protocol's driver."""
    from zerorename_model.engine.harness import Run
    from zerorename_model.engine.json_values import json_object
    from zerorename_model.engine.scenario import Scenario
    from zerorename_model.experiments.trace import _RecordedChooser

    header = json_object(events[0]["scenario"])
    if driver is not None:
        header = {**header, "driver": driver}
    scenario = Scenario.from_json(header)
    factory, backend = hadoop_resolver(scenario.committer, scenario.store)
    chooser = _RecordedChooser(source, [e for e in events if e.get("t") == "choice"])
    return Run(scenario, factory, backend=backend()).run(chooser)


@dataclass(frozen=True)
class Replayed:
    same: bool
    recorded_digest: str
    replayed_digest: str
    result: RunResult


def replay(path: str | Path) -> Replayed:
    """Run a witness of ``check --target hadoop`` again; compare the final states' digests."""
    from zerorename_model.experiments.trace import read_trace

    events = read_trace(path)
    ends = [e for e in events if e.get("t") == "end"]
    recorded = str(ends[-1]["digest"]) if ends else ""
    result = replay_run(events, str(path))
    return Replayed(result.digest == recorded, recorded, result.digest, result)


def is_hadoop_trace(events: Sequence[Mapping[str, object]]) -> bool:
    return bool(events) and events[0].get("target") == TARGET


def _mark(path: str) -> None:
    from zerorename_model.experiments.trace import read_trace, write_trace

    events = read_trace(path)
    events[0] = {**events[0], "target": TARGET}
    write_trace(path, events)


def _under(cell: Cell, protocol: str) -> Cell:
    """``cell`` (decided under Hadoop's protocol) under ``protocol``: Hadoop's committers take
    no messages, so the driver's runs are the same step for step; a witness is run again
    under ``protocol`` (on the real store) and must reach the same state and violation."""
    from zerorename_model.check.properties import PROPERTIES as CHECKERS
    from zerorename_model.experiments.cells import JobProtocol
    from zerorename_model.experiments.trace import read_trace, write_trace

    same = replace(cell, protocol=JobProtocol(protocol),
                   explored=replace(cell.explored, runs_of=str(cell.protocol)))
    if cell.trace is None:
        return same
    events = read_trace(cell.trace)
    result = replay_run(events, cell.trace, driver=protocol)
    found = CHECKERS[cell.prop](result)
    if result.digest != str(events[-1]["digest"]) or not found:
        raise AssertionError(f"{cell.trace} under {protocol}'s protocol reached another state: "
                             "the harness depends on the protocol for Hadoop's committers")
    trace = list(result.trace)
    trace[-1] = {**trace[-1], "violations": [str(v) for v in found]}
    trace[0] = {**trace[0], "target": TARGET}
    path = Path(cell.trace)
    named = path.with_name(path.name.replace(f".{cell.protocol}.", f".{protocol}.", 1))
    return replace(same, trace=str(write_trace(named, trace)))


def decide(committer: str, store: str, props: Sequence[str], budget: Budget,
           traces: str | None, protocols: Sequence[str] = ("hadoop", "spark")) -> list[Cell]:
    """Every requested property's cell for one Hadoop committer on one store: explored once
    under Hadoop's protocol, shown under each of ``protocols``."""
    from zerorename_model.experiments.verdicts import decide_pair

    first = decide_pair(committer, store, props, budget, traces, hadoop_resolver,
                        protocols=("hadoop",))
    for cell in first:
        if cell.trace:
            _mark(cell.trace)
    cells = [c if protocol == "hadoop" else _under(c, protocol)
             for c in first for protocol in protocols]
    return cells


#: ``check --target hadoop --quick``: the model's quick budget, runs per scope
QUICK_RUNS = 40
#: ``check --target hadoop`` without ``--quick``: the stated budget, runs per scope (the
#: model's paper budget; a scope it does not exhaust is reported ``holds*``)
FULL_RUNS = 1_000


def run_check(committers: Sequence[str] | None, stores: Sequence[str] | None,
              props: Sequence[str] | None, *, quick: bool, traces: str | None,
              protocols: Sequence[str] = ("hadoop", "spark"),
              jars: Sequence[str] | None = None,
              progress: Callable[[str], None] | None = None,
              max_runs: int | None = None, fs: str = "imitation") -> list[Cell]:
    """``zerorename check --target hadoop``: each committer's cells, on its store(s), at
    :data:`QUICK_RUNS` (``quick``) or :data:`FULL_RUNS` runs per scope (or ``max_runs``);
    ``fs``: the hdfs committers' filesystem (``minidfs``: a MiniDFSCluster)."""
    if fs != _PROCESS.fs:
        close()  # a JVM started before runs on the other filesystem
        _PROCESS.fs = fs
    for jar in jars or ():
        if not Path(jar).exists():
            raise HadoopCommitterError(jar, "no such jar or folder: give the path of the jar "
                                            "holding your committer class")
    if jars:
        os.environ[CLASSPATH_VARIABLE] = os.pathsep.join(
            [*(str(Path(j).resolve()) for j in jars), *extra_classpath()])
        close()  # a JVM started before has the old class path
    names = list(committers or BUILTIN)
    wanted = tuple(props or PROPERTIES)
    for prop in wanted:
        if prop not in PROPERTIES:
            raise ValueError(f"--target hadoop decides {', '.join(PROPERTIES)}, not {prop!r} "
                             "(the drivers' stores are consistent: consistency cannot arise)")
    plan = [(name, store) for name in names for store in store_for(name, stores)]
    budget = Budget(max_runs=max_runs or (QUICK_RUNS if quick else FULL_RUNS))
    cells: list[Cell] = []
    try:
        for name, store in plan:
            if name not in BUILTIN:
                check_available(name, store)
            row = decide(name, store, wanted, budget, traces, protocols)
            if progress:
                progress(f"{name} on {store} (Hadoop 3.5.0 in the JVM, {budget.max_runs} runs "
                         "per scope): " + ", ".join(
                             f"{c.prop}={c.shown}" for c in row if str(c.protocol) == protocols[0]))
            cells += row
    finally:
        close()
    return cells
