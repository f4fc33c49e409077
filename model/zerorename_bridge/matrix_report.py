"""The demo's model part: the first finding, then the quick verdict matrix, explained.

The matrix (``zerorename_model.experiments.verdicts``) decides every cell twice, once per job-commit
protocol, and the Spark runs of the demo use only one of them (Spark's) on one consistent
store.  So a committer that held every property in those runs can show ``VIOL`` in the matrix,
and the reader needs to know under which protocol, in which scope, and what the other protocol
said: :func:`explain_matrix` writes that, from the cells alone.
"""

from __future__ import annotations

import sys
import textwrap
from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import Protocol

from zerorename_model.engine.scenario import Scenario
from zerorename_model.engine.stores.profiles import PROFILES
from zerorename_model.experiments.cells import Cell, Verdict
from zerorename_model.experiments.explored import Violation
from zerorename_model.experiments.scopes import SCOPES

WIDTH = 100  # the explanation's line width

#: what each of the model's driver protocols gives the job commit (``Scenario.driver``)
DRIVER_PROTOCOLS = {
    "hadoop": "Hadoop's protocol: the job commit gets no task messages and discovers the "
              "committed tasks by listing what they left in the store",
    "spark": "Spark's protocol: the driver passes the job commit the messages of the attempts "
             "it accepted",
}
#: what one use of each fault budget does (``zerorename_model.engine.scenario.Faults``)
FAULT_EVENTS = {
    "crash": "a task attempt crashes between two store operations",
    "partition": "the driver gives up on an attempt that keeps running (a partitioned "
                 "attempt)",
    "speculate": "a duplicate (speculative) attempt of a running task",
    "throttle": "a store request fails with 503 SlowDown",
    "restart": "the job driver crashes and the next job attempt starts",
    "fail_job": "the driver gives up and aborts the job",
    "lost_answer": "a store request takes effect, but its caller sees a read timeout",
    "conflict": "a conditional request answers 409 ConditionalRequestConflict, nothing "
                "taken effect",
}
#: why a partitioned attempt breaks a listing job commit and not one that is given messages
RACE = ("The partitioned attempt can commit its task after the driver gave up on it, and a job "
        "commit that lists takes that task commit too: the race of the paper's Section VIII.C. "
        "Under Spark's protocol, which the Spark runs use, the job commit gets only the accepted "
        "attempts' messages")


class Steps(Protocol):
    """What the report needs of the demo's progress: a line, and a long step."""

    def __call__(self, message: str) -> None: ...

    def step(self, name: str) -> AbstractContextManager[None]: ...


def describe_scope(scenario: Scenario) -> str:
    """What a matrix scope explores, read from its scenario (driver, faults, jobs, files)."""
    faults = [FAULT_EVENTS[name] for name, budget in sorted(vars(scenario.faults).items())
              if name in FAULT_EVENTS and budget]
    dests = list(scenario.dests)
    jobs = ""
    if len(dests) > 1:
        where = "one destination" if len(set(dests)) == 1 else "two destinations"
        jobs = f"{len(dests)} jobs at once on {where}" + (
            ", with one job ID" if scenario.same_job_id else "")
    spaced = [f for f in scenario.files if " " in f]
    parts = [DRIVER_PROTOCOLS.get(scenario.driver, f"the {scenario.driver} protocol"),
             *([jobs] if jobs else []), *faults,
             *([f"a file name with a space ({spaced[0]!r})"] if spaced else [])]
    text = "; ".join(parts)
    if scenario.driver == "hadoop" and scenario.faults.partition:
        text += ". " + RACE
    return text


def explain_matrix(cells: Sequence[Cell], passed: Sequence[str]) -> str:
    """Why committers that held every property in the Spark runs (``passed``) show violations
    in the matrix: that a cell is per protocol; then, for each scope in which such a violation
    was found, what the scope explores and which cells it decided — with what the *other*
    protocol said about the same cells — and one witness.  Empty when there is nothing to
    explain.  Production-bug rows are left to the matrix's own table."""
    scopes = {scope.name: scope for scope in SCOPES}
    main = [c for c in cells if not c.bug]
    other: dict[tuple[str, str, str, str], Cell] = {
        (c.committer, c.store, c.prop, c.protocol or ""): c for c in main}
    found: dict[str, list[Cell]] = {}
    for cell in main:
        if cell.verdict is Verdict.VIOLATED and cell.committer in passed:
            found.setdefault(cell.scope or "?", []).append(cell)
    if not found:
        return ""
    names = sorted({c.committer for group in found.values() for c in group})
    lines = textwrap.wrap(
        f"Why committers that held every property in the Spark runs above ({', '.join(names)}) "
        "show violations here: each cell of the matrix is two verdicts, hadoop/spark, one per "
        "job-commit protocol; the Spark runs took a few schedules of Spark's protocol on one "
        "consistent store, while the matrix explores every schedule of each scope (within its "
        "run budget) under both protocols on each store profile. Each violation was found in "
        "the scope named:", WIDTH)
    for name in sorted(found, key=lambda n: list(scopes).index(n) if n in scopes else 99):
        group = found[name]
        scope = scopes.get(name)
        first = group[0]
        what = describe_scope(scope.make(first.committer, first.store)) if scope else ""
        lines += textwrap.wrap(f"* scope {name}: {what}.", WIDTH, subsequent_indent="  ")
        for committer in sorted({c.committer for c in group}):
            mine = [c for c in group if c.committer == committer]
            props = ", ".join(dict.fromkeys(c.prop for c in mine))
            stores = ", ".join(dict.fromkeys(c.store for c in mine))
            line = f"    {committer}: {props} violated on {stores}"
            protocol = first.protocol
            if protocol:
                line += f" under {protocol}'s protocol"
                for d in [d for d in DRIVER_PROTOCOLS if d != protocol]:
                    said = {o.shown for c in mine
                            if (o := other.get((c.committer, c.store, c.prop, d)))}
                    if said:
                        line += f"; under {d}'s: {', '.join(sorted(said))}"
            lines += textwrap.wrap(line, WIDTH, subsequent_indent="      ")
        lagging = sorted({c.store for c in group if c.store in PROFILES
                          and not PROFILES[c.store].consistent})
        if lagging and {c.store for c in group} <= set(lagging):
            lines.append(f"    only on {', '.join(lagging)}: a store whose listings or "
                         "overwrites lag behind writes (the Spark runs' moto is consistent)")
        witness = first.explored.witness if isinstance(first.explored, Violation) else ""
        lines += textwrap.wrap(f"e.g. {first.committer} on {first.store}: {witness}", WIDTH,
                               initial_indent="    ", subsequent_indent="      ")
    return "\n".join(lines)


def model_report(progress: Steps, *, committers: Sequence[str] | None = None,
                 stores: Sequence[str] | None = None, passed: Sequence[str] = ()) -> None:
    """The model's part of the demo, each result printed as soon as it exists: the lagging
    listing of S3 as of 2018 (under a second), then the quick verdict matrix under both
    protocols with the production-bug rows (the long step: progress for every committer and
    store as it is decided), then why the committers in ``passed`` show violations in it."""
    try:
        from zerorename_model.experiments.matrix import matrix
        from zerorename_model.experiments.matrix_text import format_matrix
        from zerorename_model.present import demo
    except ImportError as error:
        print(f"(the model is unavailable: {error})", flush=True)
        return
    with progress.step("model: the same schedule on S3 as of 2018 and on S3 today"):
        demo.main()
        sys.stdout.flush()
    from zerorename_model.experiments.seeds import default_directory

    # As ``zerorename check --quick``: the committed witness traces are replayed first (each
    # counts only if the property checker flags the replay on this code), so the quick budget
    # re-finds every violation the full run found instead of about 70% of them.
    seeds = default_directory()
    with progress.step("model: quick verdict matrix (every committer on every store profile, "
                       "under Hadoop's and Spark's protocols"
                       + (", the saved witness traces replayed first)" if seeds else ")")):
        cells = matrix(committers, stores, quick=True, variants=True,
                       seeds=str(seeds) if seeds else None,
                       progress=lambda line: progress(f"model matrix: {line}"))
    print()
    print(format_matrix(cells))
    explanation = explain_matrix(cells, passed)
    if explanation:
        print()
        print(explanation)
    sys.stdout.flush()
