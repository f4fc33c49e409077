"""What a finished run did to its attempts and drivers, as the liveness and valid-outcome
checkers need it: which attempts injected faults ended, which drivers were restarted or told
to give up, and which attempts finished their task commit.

The run's record of these is its trace: the harness notes every injected fault ("crash
j0.t1.a0", "partition …", "crash driver driver0; restart the job", "driver of job 0 gives
up…"), records every driver call ("report success", made once ``commit_task`` has returned) and
every store answer (a throttled request answers "error SlowDown").  This module is the one
place that reads those records, so the checkers stay pure functions of typed values.  Moves
applied step by step (``Run.apply``, as the hypothesis state machine does) leave no choice
line; then an attempt that crashed just before reporting its finished task commit is not known
to have committed.  Only the JSON trace is read, which every harness version writes alike.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from zerorename_model.harness import JobState, RunResult

#: the driver calls an attempt makes once its task commit is done (or needs none)
REPORTS = frozenset({"report success", "report success (nothing to commit)"})


@dataclass(frozen=True)
class RunFacts:
    """``failed``: attempts an injected fault ended (crash, partition, a throttled request);
    ``restarted``/``gave_up``/``throttled_drivers``: job indices; ``committed``: attempts whose
    ``commit_task`` returned; ``failures``: the harness's notes of attempts that failed."""

    failed: frozenset[str] = frozenset()
    restarted: frozenset[int] = frozenset()
    gave_up: frozenset[int] = frozenset()
    throttled_drivers: frozenset[int] = frozenset()
    committed: frozenset[str] = frozenset()
    failures: tuple[str, ...] = field(default=())

    def bounded(self, index: int, job: JobState, max_attempts: int) -> bool:
        """Whether job ``index``'s faults were bounded: no ``fail_job``, no throttled driver
        request, and every task lost fewer attempts to injected faults than ``max_attempts``.
        After a driver restart, every attempt an earlier job attempt launched and the driver
        did not accept counts as lost (the restart kills the running ones; which were running
        is not recorded, so this errs towards excusing the job)."""
        if index in self.gave_up or index in self.throttled_drivers:
            return False
        accepted = {task.name for task, _message in job.accepted.values()}
        for launched in job.attempts.values():
            lost = {t.name for t in launched if t.name in self.failed}
            if index in self.restarted:
                lost |= {t.name for t in launched
                         if t.job.attempt < job.spec.attempt and t.name not in accepted}
            if len(lost) >= max_attempts:
                return False
        return True


def driver_job(actor: str) -> int | None:
    """The job index of a driver actor's name (``driver0``, ``driver1.2``), else None."""
    if not actor.startswith("driver"):
        return None
    number = actor[len("driver"):].split(".", 1)[0]
    return int(number) if number.isdigit() else None


def run_facts(result: RunResult) -> RunFacts:
    """Read :class:`RunFacts` from the run's trace (see the module's docstring)."""
    failed: set[str] = set()
    restarted: set[int] = set()
    gave_up: set[int] = set()
    throttled: set[int] = set()
    committed: set[str] = set()
    failures: list[str] = []
    for event in result.trace:
        kind = event.get("t")
        if kind == "note":
            words = str(event["msg"]).split()
            if words[:2] == ["crash", "driver"] and len(words) > 2:
                job = driver_job(words[2].rstrip(";"))
                if job is not None:
                    restarted.add(job)
            elif words[:1] in (["crash"], ["partition"]) and len(words) > 1:
                failed.add(words[1])
            elif words[:3] == ["driver", "of", "job"] and "gives" in words:
                gave_up.add(int(words[3]))
            elif len(words) > 1 and words[1] == "failed:":
                failures.append(str(event["msg"]))
        elif kind == "op":
            actor = str(event.get("actor", ""))
            if event.get("op") in REPORTS:
                committed.add(actor)
            if str(event.get("result", "")).startswith("error SlowDown"):
                job = driver_job(actor)
                if job is not None:
                    throttled.add(job)
                elif not actor.startswith("reader"):
                    failed.add(actor)
        elif kind == "choice":
            verb, _, rest = str(event.get("move", "")).partition(" ")
            name, _, pending = rest.partition(": ")
            if verb == "crash" and pending in REPORTS:
                committed.add(name)
    return RunFacts(frozenset(failed), frozenset(restarted), frozenset(gave_up),
                    frozenset(throttled), frozenset(committed), tuple(failures))
