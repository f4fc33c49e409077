"""Another writer's object at a key a job completes: the scenario the matrix lacks.

No scope of the matrix puts an object the job did not write at a key it completes: a job's
tasks name files by task (``part-00000``), the scopes with two jobs give each job file names
of its own or a destination of its own, no scope starts with data in the destination, and no
actor but a job writes into it.  So ``zerorename.fenced.complete`` (overwrite, or the JVM's
``If-None-Match: *``) cannot change a verdict there.  This family is every scope of the matrix
with one object written before the job starts (``Scenario.preexisting``) at the key the
first task's first file goes to: what an earlier job, or another tool (``aws s3 cp``), left
there.  Under Spark this needs a writer that reuses names (Spark's own writers put the job's
UUID in every file name); Hadoop MapReduce's ``part-r-00000`` names do, on every run.

Beside the scope's own properties (which judge such a job leniently: ``liveness`` does not
judge a job whose destination held data, and the output properties only judge committed jobs)
three checkers ask this family's questions:

* ``foreign-kept``: the other writer's object is still there, byte for byte, at the end of the
  run (no job replaced or deleted it);
* ``incomplete-reported``: a job that did not commit, although its faults were bounded
  (liveness's rule), failed because of the object — its job commit raised the committed-
  incomplete error naming the key — and lost nothing: the upload for that key is still pending,
  so a rerun can complete it once the object is moved;
* ``invisibility`` (the permission family's): a job that did not commit leaves none of its
  output visible.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from zerorename_model.check.explore import Reduction, Stats, new_run, run_once, runs
from zerorename_model.check.properties import PROPERTIES, Violation
from zerorename_model.check.run_facts import run_facts
from zerorename_model.engine.harness import Run, RunResult
from zerorename_model.engine.harness.events import Failure
from zerorename_model.engine.scenario import Scenario
from zerorename_model.experiments.permissions import invisibility
from zerorename_model.experiments.scopes import SCOPES, Scope
from zerorename_model.systems.protocols import get

__all__ = ["CHECKS", "FOREIGN", "Decided", "decide", "foreign_kept", "foreign_key",
           "foreign_scopes", "incomplete_reported", "run_foreign", "with_foreign_object"]

#: the other writer's object (its bytes name no job, so no attempt's output can equal them)
FOREIGN = "written by another tool"
#: what the fenced job commit's error says when the key holds an object it did not write
INCOMPLETE = "JobCommitIncomplete"


def foreign_key(scenario: Scenario) -> str:
    """The key, relative to each destination, of the first task's first file (of job 0)."""
    return scenario.files[0].format(task=0, job=0)


def with_foreign_object(scenario: Scenario) -> Scenario:
    """``scenario`` with the other writer's object at :func:`foreign_key` before it starts."""
    return scenario.with_(preexisting=((foreign_key(scenario), FOREIGN),))


def foreign_scopes(protocols: Sequence[str] = ("hadoop", "spark")) -> list[Scope]:
    """Every scope of the matrix under ``protocols``, with the other writer's object."""
    def make(scope: Scope) -> Callable[[str, str], Scenario]:
        return lambda committer, store: with_foreign_object(scope.make(committer, store))

    return [Scope(f"{scope.name}+foreign", scope.family, scope.protocol, scope.props,
                  make(scope)) for scope in SCOPES if scope.protocol in protocols]


def foreign_kept(result: RunResult) -> list[Violation]:
    """The object another writer put in a destination before the run is there at its end."""
    found = []
    for i, (dest, objects) in enumerate(sorted(result.preexisting.items())):
        for rel, data in sorted(objects.items()):
            now = result.final.get(f"{dest}/{rel}")
            if now != data:
                what = "deleted" if now is None else f"replaced by {now[:40]!r}"
                found.append(Violation("foreign-kept", i, f"{rel}: another writer's object "
                                                          f"{what}"))
    return found


def incomplete_reported(result: RunResult) -> list[Violation]:
    """A job that did not commit with bounded faults failed on the other writer's object,
    said so, and left the upload for that key pending (nothing lost)."""
    found = []
    facts = run_facts(result)
    failures = [i.message for i in result.incidents if isinstance(i, Failure)]
    key = foreign_key(result.scenario)
    for i, job in enumerate(result.jobs):
        if job.outcome in ("committed", "lost"):
            continue
        if not facts.bounded(i, job, result.scenario.max_attempts):
            continue
        url = f"{job.spec.dest}/{key}"
        reported = [f for f in failures if INCOMPLETE in f and url in f]
        if not reported:
            found.append(Violation("incomplete-reported", i, f"the job ended {job.outcome} "
                                   f"({job.error}) without reporting {url} as held by another "
                                   "writer"))
        elif url not in result.final_uploads:
            found.append(Violation("incomplete-reported", i, f"{url}: reported, but its upload "
                                   "is gone: a rerun cannot complete it"))
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


def decide(committer: str, scope: Scope, store: str = "s3", *,
           max_runs: int = 20_000) -> Decided:
    """Explore ``scope`` (one of :func:`foreign_scopes`) for ``committer``: every schedule,
    the scope's own properties and :data:`CHECKS` on every run."""
    checks = {**{p: PROPERTIES[p] for p in scope.props}, **CHECKS}
    found: dict[str, Violation | None] = dict.fromkeys(checks)
    witnesses: dict[str, list[int]] = {}
    scenario = scope.make(committer, store)

    def make() -> Run:
        run = new_run(scenario, get(committer))
        run.forget_finished = True
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


def run_foreign(committer: str, scope: Scope, choices: Sequence[int],
                store: str = "s3") -> RunResult:
    """One run of ``scope`` for ``committer`` again, from its choices (a witness)."""
    return run_once(scope.make(committer, store), get(committer), list(choices))
