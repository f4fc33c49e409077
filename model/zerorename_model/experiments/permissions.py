"""Permission faults in the model: a role missing one IAM action.

The fault (``Faults(deny=1)``): from some point on, every destination request of one kind — the
kind of the request it strikes — answers 403 AccessDenied and takes no effect.  Struck at the
first request of a kind, the kind is denied for the whole run (a role that never had the
action); struck later, the policy changed while the job ran.  The explorer places it before
every request of every kind, so one family covers every action.

What it decides, per committer and protocol:

* **completeness**: a job reported committed has its output whole (as everywhere);
* **abortability**: after the abort, nothing of the job is left.  With a kind denied that the
  abort itself needs (deleting records, aborting uploads), no committer can leave nothing: the
  verdict says so, it is not a committer's fault;
* **invisibility** (this family's question): a job that did not commit leaves none of its
  output visible, whether or not its abort could finish — the production rule that a failure
  before the commit point takes back what the job made visible
  (``tests/reference/test_permission_faults.py`` runs the same question on an IAM-enforcing
  moto).

The family's rows (:func:`rows`) are every committer of the paper's matrix and, beside each
committer production fixed (a failed job takes back its completed files, a published job stays
committed when its cleanup fails: ``reference/zerorename/committers/s3a.py``), zerorename's
version (``+take-back``, :mod:`zerorename_model.systems.protocols.takeback`): the model's
``magic``, ``directory`` and ``partitioned`` are Hadoop's, the unfixed rows, and their
invisibility witnesses are what the fix removes.  ``paper/make_paper.py --permissions`` explores
every row under both protocols and writes ``paper/results/permissions.json`` and the witnesses;
the paper's matrix itself (``verdicts.json``) does not hold the family.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from zerorename_model.check.explore import Reduction, Stats, new_run, run_once, runs
from zerorename_model.check.properties import (
    Violation,
    _visible_final,
    _written_by_job,
    abortability,
    completeness,
)
from zerorename_model.engine.harness import Run, RunResult
from zerorename_model.engine.scenario import Faults, Scenario
from zerorename_model.experiments.scopes import FILES, PROTOCOLS
from zerorename_model.experiments.verdicts import MATRIX_COMMITTERS
from zerorename_model.systems.protocols import get

__all__ = ["DENY", "FAMILY", "PROPS", "TAKE_BACK", "Verdict", "decide", "invisibility", "rows",
           "scenario", "witness_trace"]

#: one kind of request denied, from any point on
DENY = Faults(deny=1)
FAMILY = "denied"
PROPS = ("completeness", "abortability", "invisibility")
#: the committers production fixed, each with zerorename's version of it (the model's own rows
#: are Hadoop's: the family's unfixed variant rows)
TAKE_BACK = {"magic": "magic+take-back", "directory": "directory+take-back",
             "partitioned": "partitioned+take-back"}


def rows(committers: tuple[str, ...] = MATRIX_COMMITTERS) -> list[tuple[str, str | None]]:
    """The family's rows, each (committer, the row it is zerorename's fix of, or None): every
    committer of the matrix, a fixed one followed by its ``+take-back`` row."""
    out: list[tuple[str, str | None]] = []
    for committer in committers:
        out.append((committer, None))
        if committer in TAKE_BACK:
            out.append((TAKE_BACK[committer], committer))
    return out


def invisibility(result: RunResult) -> list[Violation]:
    """A job that did not commit leaves none of its output visible at the end of the run (its
    abort may have failed: what matters is what readers see)."""
    found = []
    for i, job in enumerate(result.jobs):
        if job.outcome == "committed":
            continue
        kept = result.preexisting.get(job.spec.dest, {})
        for rel, data in sorted(_visible_final(result, job.spec.dest).items()):
            if kept.get(rel) != data and _written_by_job(result, job, rel, data):
                found.append(Violation("invisibility", i, f"{rel} visible after the job "
                                       f"failed ({job.outcome}: {job.error})"))
    return found


def scenario(committer: str, protocol: str, store: str = "s3") -> Scenario:
    """The family's scenario: one task of two attempts, one file, one kind of request denied
    from some point on."""
    return Scenario(committer, store=store, tasks=1, files=FILES, max_attempts=2,
                    driver=protocol, faults=DENY)


@dataclass(frozen=True)
class Verdict:
    """One committer under one protocol: per property, the first violation found (None:
    holds on every run), and the exploration's size."""

    committer: str
    protocol: str
    violated: dict[str, Violation | None]
    runs: int
    complete: bool
    #: per violated property, the choices of the first run found violating it
    witnesses: dict[str, list[int]]

    def holds(self, prop: str) -> bool:
        return self.violated[prop] is None

    @property
    def witness(self) -> list[int] | None:
        """The choices of a run violating invisibility, if any."""
        return self.witnesses.get("invisibility")


def decide(committer: str, protocol: str, store: str = "s3", *,
           max_runs: int = 20_000) -> Verdict:
    """Explore the family for ``committer`` (a registered model protocol, variants included)
    under ``protocol`` (``spark`` or ``hadoop``): every schedule, the denial placed before
    every request."""
    assert protocol in PROTOCOLS, protocol
    found: dict[str, Violation | None] = dict.fromkeys(PROPS)
    witnesses: dict[str, list[int]] = {}

    def make() -> Run:
        run = new_run(scenario(committer, protocol, store), get(committer))
        run.forget_finished = True
        return run

    stats = Stats()
    for done in runs(make, stats, reduction=Reduction.FAULTS, max_runs=max_runs):
        for name, check in _CHECKS.items():
            if found[name] is None:
                bad = check(done.result)
                if bad:
                    found[name] = bad[0]
                    witnesses[name] = list(done.choices)
    return Verdict(committer, protocol, found, stats.runs, stats.complete, witnesses)


def witness_trace(verdict: Verdict, prop: str, store: str = "s3") -> list[dict[str, object]]:
    """The trace of the run found violating ``prop`` (run again from its choices), its end
    event naming the violations, as the matrix's witnesses are written: ``zerorename trace
    replay`` runs it again to the same final state."""
    result = run_once(scenario(verdict.committer, verdict.protocol, store),
                      get(verdict.committer), verdict.witnesses[prop])
    found = _CHECKS[prop](result)
    assert found, f"{verdict.committer} {verdict.protocol}: the {prop} witness does not replay"
    events = list(result.trace)
    events[-1] = {**events[-1], "violations": [str(v) for v in found]}
    return events


_CHECKS: dict[str, Callable[[RunResult], list[Violation]]] = {
    "completeness": completeness, "abortability": abortability, "invisibility": invisibility}
