"""Another writer's object at a key a job completes: the scenarios the matrix lacks.

No scope of the matrix puts an object the job did not write at a key it completes: a job's
tasks name files by task (``part-00000``), the scopes with two jobs give each job file names
of its own or a destination of its own, no scope starts with data in the destination, and no
actor but a job writes into it.  So ``zerorename.fenced.complete`` (overwrite, the JVM's
``If-None-Match: *``, or a check before the commit point) cannot change a verdict there.  Two
families of scopes add the other writer, each built on every scope of the matrix:

* ``+foreign`` (:attr:`Placement.BEFORE`): one object written before the job starts
  (``Scenario.preexisting``) at the key the first task's first file goes to: what an earlier
  job, or another tool (``aws s3 cp``), left there.  Under Spark this needs a writer that
  reuses names (Spark's own writers put the job's UUID in every file name); Hadoop MapReduce's
  ``part-r-00000`` names do, on every run.
* ``+race`` (:attr:`Placement.RACING`): the other writer is an actor of the run, which PUTs
  its object at that key (in the first job's destination) at whatever step the explorer
  schedules: before the job's check, between the check and the complete, or after.  It writes
  only where no object is (``If-None-Match: *``), as a writer that does not overwrite: an
  unconditional writer after the job committed would replace a committed file under any rule,
  which no committer can prevent, and every output property would flag it.  Its request is
  one step (the faults of the scope may strike it, as any request).

Beside the scope's own properties (which judge such a job leniently: ``liveness`` does not
judge a job whose destination held data before it started, and the output properties only
judge committed jobs) three checkers ask these families' questions:

* ``foreign-kept``: the other writer's object is still there, byte for byte, at the end of the
  run (no job replaced or deleted it);
* ``incomplete-reported``: a job that did not commit, although its faults were bounded
  (liveness's rule), while its destination held the other writer's object, failed because of
  it and said so, naming the key, and lost nothing: either before its commit point (the
  check-first refusal: nothing committed, the abort cleans up, a rerun starts over) or after
  it (committed-incomplete: the upload for that key is still pending, so a rerun can complete
  it once the object is moved);
* ``invisibility``: a job that did not commit leaves none of its output visible (the
  permission family's check, which has one job a run, with a job's output told by its own
  attempts: in ``same-destination`` the other job's committed files are not this one's).
"""

from __future__ import annotations

import contextlib
import enum
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from zerorename_model.check.explore import Reduction, Stats, runs
from zerorename_model.check.properties import PROPERTIES, Violation
from zerorename_model.check.run_facts import run_facts
from zerorename_model.engine.choices import ScriptedChooser
from zerorename_model.engine.errors import ModelStoreError
from zerorename_model.engine.harness import (
    Actor,
    Failure,
    Op,
    Role,
    Run,
    RunResult,
    SteppedStore,
    hidden,
)
from zerorename_model.engine.scenario import Scenario
from zerorename_model.experiments.scopes import SCOPES, Scope
from zerorename_model.systems.protocols import get

__all__ = ["CHECKS", "FOREIGN", "WRITER", "Decided", "ForeignScope", "Placement", "decide",
           "foreign_kept", "foreign_key", "foreign_scopes", "incomplete_reported", "names_key",
           "new_run", "race_scopes", "racer_wrote", "run_foreign", "with_foreign_object"]

#: the other writer's object (its bytes name no job, so no attempt's output can equal them)
FOREIGN = "written by another tool"
#: the racing writer's actor
WRITER = "writer"
#: what the fenced job commit's errors say when a key holds an object it did not write: after
#: its commit point (``if-none-match``), before it (``check-first``)
INCOMPLETE = "JobCommitIncomplete"
REFUSED = "JobCommitRefused"


class Placement(enum.Enum):
    """When the other writer's object comes (the value is the scope name's suffix)."""

    BEFORE = "foreign"  # written before the run starts
    RACING = "race"     # written by an actor, at a step the explorer schedules


@dataclass(frozen=True)
class ForeignScope:
    """A scope of the matrix with the other writer's object placed as ``placement`` says."""

    scope: Scope
    placement: Placement

    @property
    def name(self) -> str:
        return f"{self.scope.name}+{self.placement.value}"

    @property
    def props(self) -> tuple[str, ...]:
        return self.scope.props

    def make(self, committer: str, store: str) -> Scenario:
        scenario = self.scope.make(committer, store)
        return (with_foreign_object(scenario) if self.placement is Placement.BEFORE
                else scenario)


def foreign_key(scenario: Scenario) -> str:
    """The key, relative to each destination, of the first task's first file (of job 0)."""
    return scenario.files[0].format(task=0, job=0)


def with_foreign_object(scenario: Scenario) -> Scenario:
    """``scenario`` with the other writer's object at :func:`foreign_key` before it starts."""
    return scenario.with_(preexisting=((foreign_key(scenario), FOREIGN),))


def foreign_scopes(protocols: Sequence[str] = ("hadoop", "spark")) -> list[ForeignScope]:
    """Every scope of the matrix under ``protocols``, with the other writer's object."""
    return [ForeignScope(s, Placement.BEFORE) for s in SCOPES if s.protocol in protocols]


def race_scopes(protocols: Sequence[str] = ("hadoop", "spark")) -> list[ForeignScope]:
    """Every scope of the matrix under ``protocols``, with the racing writer."""
    return [ForeignScope(s, Placement.RACING) for s in SCOPES if s.protocol in protocols]


def _racer_url(scenario: Scenario) -> str:
    return f"{scenario.dests[0]}/{foreign_key(scenario)}"


def new_run(committer: str, scope: ForeignScope, store: str = "s3") -> Run:
    """A run of ``scope`` for ``committer``; with :attr:`Placement.RACING`, its writer spawned
    (after the job drivers: a plain schedule lets the driver set up first)."""
    run = Run(scope.make(committer, store), get(committer))
    if scope.placement is Placement.RACING:
        url = _racer_url(run.scenario)
        stepped = SteppedStore(run, run.store, cluster=False)

        def body() -> None:
            # a 412 (the key holds an object already) or a failed request: it gives up
            with contextlib.suppress(ModelStoreError):
                stepped.put(url, FOREIGN.encode(), if_none_match=True)

        run.spawn(Actor(WRITER, body, job_index=0, role=Role.READER))
    return run


def racer_wrote(result: RunResult) -> bool:
    """Whether the racing writer's PUT took effect (it answered, or its answer was lost)."""
    for event in result.events:
        if isinstance(event, Op) and event.actor == WRITER:
            said = event.said.result
            return not isinstance(said, ModelStoreError) or said.code == "ReadTimeout"
    return False


def _held(result: RunResult) -> dict[str, bytes]:
    """URL -> bytes of every object the other writer put in a destination."""
    held = {f"{dest}/{rel}": data for dest, objects in sorted(result.preexisting.items())
            for rel, data in sorted(objects.items())}
    if racer_wrote(result):
        held[_racer_url(result.scenario)] = FOREIGN.encode()
    return held


def foreign_kept(result: RunResult) -> list[Violation]:
    """The object another writer put in a destination is there at the end of the run."""
    found = []
    for url, data in _held(result).items():
        now = result.final.get(url)
        if now != data:
            what = "deleted" if now is None else f"replaced by {now[:40]!r}"
            job = next((i for i, j in enumerate(result.jobs)
                        if url.startswith(j.spec.dest + "/")), 0)
            found.append(Violation("foreign-kept", job, f"{url}: another writer's object "
                                                        f"{what}"))
    return found


def names_key(message: str, url: str) -> bool:
    """Whether ``message`` names the object at ``url``: the URL itself, or the same key in
    another client's URL of its bucket (a JVM committer says ``s3a://<bucket>/out/part-00000``
    where the model says ``s3://bucket/out/part-00000``).  A longer key that begins with this
    one (``part-000001``, ``part-00000/x``, ``part-00000.csv``) does not name it."""
    key = url.split("://", 1)[-1].partition("/")[2]
    return bool(key) and re.search(
        r"[a-z0-9]+://[^/\s'`\"]+/" + re.escape(key) + r"(?![\w/-]|\.\w)", message) is not None


def incomplete_reported(result: RunResult) -> list[Violation]:
    """A job that did not commit with bounded faults, while its destination held the other
    writer's object, failed on it and said so naming the key, and lost nothing: refused before
    its commit point, or committed-incomplete with the upload for that key still pending."""
    found = []
    facts = run_facts(result)
    failures = [i.message for i in result.incidents if isinstance(i, Failure)]
    held = _held(result)
    for i, job in enumerate(result.jobs):
        url = f"{job.spec.dest}/{foreign_key(result.scenario)}"
        if job.outcome in ("committed", "lost") or url not in held:
            continue
        if not facts.bounded(i, job, result.scenario.max_attempts):
            continue
        incomplete = [f for f in failures if INCOMPLETE in f and names_key(f, url)]
        if not incomplete and not any(REFUSED in f and names_key(f, url) for f in failures):
            found.append(Violation("incomplete-reported", i, f"the job ended {job.outcome} "
                                   f"({job.error}) without reporting {url} as held by another "
                                   "writer"))
        elif incomplete and url not in result.final_uploads:
            found.append(Violation("incomplete-reported", i, f"{url}: reported, but its upload "
                                   "is gone: a rerun cannot complete it"))
    return found


def invisibility(result: RunResult) -> list[Violation]:
    """A job that did not commit leaves no file one of its attempts wrote visible at the end
    of the run (other than the other writer's object, or an object it kept)."""
    found = []
    for i, job in enumerate(result.jobs):
        if job.outcome == "committed":
            continue
        prefix = job.spec.dest + "/"
        kept = result.preexisting.get(job.spec.dest, {})
        ours = {(rel, data) for launched in job.attempts.values() for task in launched
                for rel, data in result.written.get(task.name, {}).items()}
        for url, data in sorted(result.final.items()):
            rel = url[len(prefix):]
            if (url.startswith(prefix) and not hidden(rel) and kept.get(rel) != data
                    and (rel, data) in ours):
                found.append(Violation("invisibility", i, f"{rel} visible after the job "
                                       f"failed ({job.outcome}: {job.error})"))
    return found


CHECKS: dict[str, Callable[[RunResult], list[Violation]]] = {
    "foreign-kept": foreign_kept, "incomplete-reported": incomplete_reported,
    "invisibility": invisibility}


@dataclass(frozen=True)
class Decided:
    """One committer, one foreign scope: per property, the first violation (None: holds on
    every run) and the choices of the run that found it; the exploration's size."""

    committer: str
    scope: str
    violated: dict[str, Violation | None]
    witnesses: dict[str, list[int]]
    runs: int
    complete: bool


def decide(committer: str, scope: ForeignScope, store: str = "s3", *,
           max_runs: int = 20_000, new: Callable[[], Run] | None = None) -> Decided:
    """Explore ``scope`` for ``committer``: every schedule, the scope's own properties and
    :data:`CHECKS` on every run.  A racing scope fingerprints finished actors with their
    histories (``forget_finished`` off): whether the writer's PUT took effect is in its
    history only, and :func:`foreign_kept` reads it.  ``new`` makes each run's harness where
    the committer is not the model's (the bridge's production committers); ``committer`` then
    only names it."""
    checks = {**{p: PROPERTIES[p] for p in scope.props}, **CHECKS}
    found: dict[str, Violation | None] = dict.fromkeys(checks)
    witnesses: dict[str, list[int]] = {}

    def make() -> Run:
        run = new() if new is not None else new_run(committer, scope, store)
        run.forget_finished = scope.placement is Placement.BEFORE
        run.counts_inconsistency = "consistency" in checks
        return run

    stats = Stats()
    for done in runs(make, stats, reduction=Reduction.FAULTS, max_runs=max_runs):
        for name, check in checks.items():
            if found[name] is None:
                bad = check(done.result)
                if bad:
                    found[name] = bad[0]
                    witnesses[name] = list(done.choices)
    return Decided(committer, scope.name, found, witnesses, stats.runs, stats.complete)


def run_foreign(committer: str, scope: ForeignScope, choices: Sequence[int],
                store: str = "s3") -> RunResult:
    """One run of ``scope`` for ``committer`` again, from its choices (a witness)."""
    return new_run(committer, scope, store).run(ScriptedChooser(list(choices)))


def main(argv: Sequence[str] | None = None) -> None:
    """``python -m zerorename_model.experiments.foreign_object COMMITTER... [--race]``: every
    scope of the family (``--scope`` picks some) for each committer, one JSON line each: the
    first violation per property (null: holds on every run), its witness's choices, the
    runs and whether the scope was enumerated."""
    import argparse
    import json
    import time

    parser = argparse.ArgumentParser(prog="python -m zerorename_model.experiments.foreign_object")
    parser.add_argument("committers", nargs="+")
    parser.add_argument("--race", action="store_true", help="the +race scopes (a writer "
                        "actor) instead of +foreign (the object there before the job)")
    parser.add_argument("--scope", action="append", help="a scope's name; repeatable")
    parser.add_argument("--max-runs", type=int, default=20_000)
    args = parser.parse_args(argv)
    for committer in args.committers:
        # (task records in messages need Spark's protocol)
        protocols = ("spark",) if "+messages" in committer else ("hadoop", "spark")
        family = race_scopes(protocols) if args.race else foreign_scopes(protocols)
        for scope in family:
            if args.scope and scope.name not in args.scope:
                continue
            started = time.monotonic()
            decided = decide(committer, scope, max_runs=args.max_runs)
            print(json.dumps({
                "committer": committer, "scope": scope.name, "runs": decided.runs,
                "complete": decided.complete,
                "seconds": round(time.monotonic() - started, 1),
                "violated": {p: None if v is None else str(v)
                             for p, v in decided.violated.items()},
                "witnesses": decided.witnesses}), flush=True)


if __name__ == "__main__":
    main()
