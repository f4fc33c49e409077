"""The correctness properties of docs/research/design.md (the paper's Section VIII), as pure
functions of a finished run.  Each returns the list of violations it found (empty: the property
held).

The destination is observed as a reader sees it (names with a ``_`` or ``.`` component are not
output).  A file's bytes name the attempt that wrote them, so a checker can tell which attempt's
output a destination holds without trusting anything the committer says.

Two exclusivities are checked, because the paper argues both: *strict* ``exclusivity`` (only the
output of attempts the driver accepted: "a partitioned task attempt's uploads must never become
visible") and ``valid-outcome`` (for each task, exactly the complete output of one attempt that
committed: "the pending set from either attempt must constitute a valid result").  The race of
Section VIII.C breaks the first and keeps the second.  ``liveness`` asks that a job whose faults
were bounded commits at all (HADOOP-17258 broke it and nothing else).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from zerorename_model.check.reach import State
from zerorename_model.check.run_facts import RunFacts, run_facts
from zerorename_model.engine.harness import JobState, Role, Run, RunResult, hidden
from zerorename_model.engine.scenario import TaskSpec
from zerorename_model.engine.stores.profiles import PROFILES
from zerorename_model.systems.protocols import COMMITTERS


@dataclass(frozen=True)
class Violation:
    property: str
    job: int
    detail: str

    def __str__(self) -> str:
        return f"{self.property} (job {self.job}): {self.detail}"


def _published(result: RunResult, task: TaskSpec, rel: str) -> str:
    """Where a committer publishes a file written as ``rel`` (Stocator inserts the attempt ID
    into the name: the committer class declares it with ``published_name``)."""
    # an optional class attribute (only Stocator has one): looked up, not declared on every
    # factory; a plain getattr, as this runs for every file of every checked run
    rename: Callable[[str, TaskSpec], str] | None = getattr(
        COMMITTERS.get(result.scenario.committer), "published_name", None)
    return str(rename(rel, task)) if rename else rel


def _accepted_output(result: RunResult, job: JobState) -> dict[str, bytes]:
    expected: dict[str, bytes] = {}
    for task, _message in job.accepted.values():
        for rel, data in result.written.get(task.name, {}).items():
            expected[_published(result, task, rel)] = data
    return expected


def _other_jobs_output(result: RunResult, job: JobState) -> dict[str, bytes]:
    """The accepted output of the run's other committed jobs on ``job``'s destination: two
    jobs writing one destination (other files of one table) see each other's output, which is
    neither job's failure."""
    shared: dict[str, bytes] = {}
    for other in result.jobs:
        if other is not job and other.spec.dest == job.spec.dest and other.outcome == "committed":
            shared.update(_accepted_output(result, other))
    return shared


def _nested_output(result: RunResult, job: JobState) -> set[tuple[str, bytes]]:
    """What other jobs whose destination is another directory wrote under ``job``'s (a job on
    a partition of ``job``'s table, or ``job``'s table around a job on a partition): their
    files, relative to ``job``'s destination.  They are neither job's output nor its failure;
    each job's own checks judge them under its own destination."""
    prefix = job.spec.dest + "/"
    nested: set[tuple[str, bytes]] = set()
    for other in result.jobs:
        if other.spec.dest == job.spec.dest:
            continue
        tasks = {t.name: t for launched in other.attempts.values() for t in launched}
        for name, files in result.written.items():
            if result.attempt_dest.get(name) != other.spec.dest or name not in tasks:
                continue
            for rel, data in files.items():
                url = f"{other.spec.dest}/{_published(result, tasks[name], rel)}"
                if url.startswith(prefix):
                    nested.add((url[len(prefix):], data))
    return nested


def _committed_jobs(result: RunResult) -> list[tuple[int, JobState]]:
    return [(i, j) for i, j in enumerate(result.jobs)
            if j.outcome == "committed" and j.dest_at_commit is not None]


def completeness(result: RunResult) -> list[Violation]:
    """After commit_job returns, every file of every accepted attempt is there, byte for byte."""
    found = []
    for i, job in _committed_jobs(result):
        assert job.dest_at_commit is not None
        for rel, data in sorted(_accepted_output(result, job).items()):
            got = job.dest_at_commit.get(rel)
            if got != data:
                what = "missing" if got is None else f"holds {got!r}"
                found.append(Violation("completeness", i, f"{rel}: {what}, expected {data!r}"))
    return found


def exclusivity(result: RunResult) -> list[Violation]:
    """After commit_job returns, the destination holds only accepted attempts' output (and the
    pre-existing data the conflict mode keeps): no failed attempt's file, no mix of attempts."""
    found = []
    for i, job in _committed_jobs(result):
        assert job.dest_at_commit is not None
        allowed = _accepted_output(result, job)
        kept = result.preexisting.get(job.spec.dest, {})
        shared = _other_jobs_output(result, job)
        nested = _nested_output(result, job)
        for rel, data in sorted(job.dest_at_commit.items()):
            if allowed.get(rel) == data or (rel not in allowed and kept.get(rel) == data):
                continue
            if rel not in allowed and (shared.get(rel) == data or (rel, data) in nested):
                continue
            found.append(Violation("exclusivity", i,
                                   f"{rel}: written by {_writer_of(data)}, not accepted"))
    return found


def consistency(result: RunResult) -> list[Violation]:
    """Completeness and exclusivity hold even when the store served inconsistent answers.

    Only meaningful on stores that can be inconsistent; on consistent stores the matrix reports
    n/a (see :func:`applicable`).  A run counts when the store actually lagged during it.
    """
    if result.inconsistent_answers == 0:
        return []
    return [Violation("consistency", v.job, f"under inconsistent listings: {v.detail}")
            for v in completeness(result) + exclusivity(result)]


def concurrency(result: RunResult) -> list[Violation]:
    """With several jobs (adjacent destinations such as dataset1/dataset10), each job's output is
    complete and exclusive and no job's cleanup touched another job's output or uploads."""
    if len(result.jobs) < 2:
        return []
    found = [Violation("concurrency", v.job, v.detail)
             for v in completeness(result) + exclusivity(result)]
    for i, job in enumerate(result.jobs):
        if job.outcome != "committed" and job.error:
            found.append(Violation("concurrency", i, f"the job failed: {job.error}"))
    for i, job in _committed_jobs(result):
        assert job.dest_at_commit is not None
        final = _visible_final(result, job.spec.dest)
        nested = _nested_output(result, job)
        for rel, data in job.dest_at_commit.items():
            if final.get(rel) != data and (rel, data) not in nested:
                found.append(Violation("concurrency", i, f"{rel} changed after commit by "
                                       "another job"))
    return found


def abortability(result: RunResult) -> list[Violation]:
    """After abort_job and cleanup_job, no output of the job is visible, now or later, and no
    uploads or temporary data of it remain."""
    found = []
    for i, job in enumerate(result.jobs):
        if job.outcome == "abort-failed":
            found.append(Violation("abortability", i, f"abort failed: {job.error}"))
            continue
        if job.outcome != "aborted":
            continue
        kept = result.preexisting.get(job.spec.dest, {})
        final = _visible_final(result, job.spec.dest)
        for rel, data in sorted(final.items()):
            if kept.get(rel) != data and _written_by_job(result, job, rel, data):
                found.append(Violation("abortability", i, f"{rel} visible after abort"))
        for url in job.uploads_after_cleanup or []:
            found.append(Violation("abortability", i, f"upload to {url} left after cleanup"))
        for url in job.temp_after_cleanup or []:
            found.append(Violation("abortability", i, f"temporary {url} left after cleanup"))
    return found


def continuity(result: RunResult) -> list[Violation]:
    """After commit_job returns, no still-running (partitioned) attempt changes the destination:
    what was visible at commit is what is visible at the end of the run."""
    found = []
    for i, job in _committed_jobs(result):
        assert job.dest_at_commit is not None
        final = _visible_final(result, job.spec.dest)
        others = {rel for j in result.jobs if j is not job for rel in _dests_of(result, j)}
        others |= {rel for rel, _data in _nested_output(result, job)}
        for rel in sorted(set(final) | set(job.dest_at_commit)):
            if rel in others:
                continue
            if final.get(rel) != job.dest_at_commit.get(rel):
                found.append(Violation("continuity", i, f"{rel} changed after the job committed"))
    return found


def _visible_final(result: RunResult, dest: str) -> dict[str, bytes]:
    prefix = dest + "/"
    return {k[len(prefix):]: v for k, v in result.final.items()
            if k.startswith(prefix) and not hidden(k[len(prefix):])}


def _dests_of(result: RunResult, job: JobState) -> set[str]:
    tasks = {t.name: t for launched in job.attempts.values() for t in launched}
    return {_published(result, tasks[name], rel) if name in tasks else rel
            for name, files in result.written.items()
            if result.attempt_dest.get(name) == job.spec.dest for rel in files}


def _written_by_job(result: RunResult, job: JobState, rel: str, data: bytes) -> bool:
    return any(result.attempt_dest.get(name) == job.spec.dest and files.get(rel) == data
               for name, files in result.written.items()) or data.startswith(
                   f"{job.spec.job_id}|".encode())


def valid_outcome(result: RunResult) -> list[Violation]:
    """After commit_job returns, each task's visible output is exactly the complete output of one
    of its attempts that committed (finished commit_task): never a mix of two attempts, never
    part of one, never an attempt that did not commit, and never nothing.  Weaker than strict
    exclusivity: it allows the output of a committed attempt the driver did not accept (the
    partitioned attempt of Section VIII.C whose late task commit a listing job commit took)."""
    found = []
    facts: RunFacts | None = None
    for i, job in _committed_jobs(result):
        assert job.dest_at_commit is not None
        visible = job.dest_at_commit
        tasks = {t.name: t for launched in job.attempts.values() for t in launched}
        output = {name: {_published(result, task, rel): data
                         for rel, data in result.written.get(name, {}).items()}
                  for name, task in tasks.items()}
        writer = {(rel, data): name for name, files in output.items()
                  for rel, data in files.items()}
        kept = {**result.preexisting.get(job.spec.dest, {}), **_other_jobs_output(result, job)}
        nested = _nested_output(result, job)
        shown: dict[int, set[str]] = {}
        for rel, data in sorted(visible.items()):
            name = writer.get((rel, data))
            if name is not None:
                shown.setdefault(tasks[name].task_id, set()).add(name)
            elif kept.get(rel) != data and (rel, data) not in nested:
                found.append(Violation("valid-outcome", i, f"{rel}: written by "
                                       f"{_writer_of(data)}, no attempt of this job"))
        accepted = {task.name for task, _message in job.accepted.values()}
        for task_id, launched in sorted(job.attempts.items()):
            names = sorted(shown.get(task_id, set()))
            if not names:
                if any(output[t.name] for t in launched):
                    found.append(Violation("valid-outcome", i,
                                           f"task {task_id}: no attempt's output is visible"))
                continue
            if len(names) > 1:
                found.append(Violation("valid-outcome", i, f"task {task_id}: a mix of "
                                       f"attempts {', '.join(names)}"))
                continue
            [name] = names
            missing = sorted(rel for rel, data in output[name].items() if visible.get(rel) != data)
            if missing:
                found.append(Violation("valid-outcome", i, f"task {task_id}: part of {name}'s "
                                       f"output ({', '.join(missing)} not visible)"))
            elif name not in accepted:
                facts = facts or run_facts(result)
                if name not in facts.committed:
                    found.append(Violation("valid-outcome", i, f"task {task_id}: the output of "
                                           f"{name}, an attempt that never committed"))
    return found


def liveness(result: RunResult) -> list[Violation]:
    """With faults bounded, every job commits.  Bounded: the driver was not told to give up
    (``fail_job``) and none of its requests was throttled, and every task lost fewer attempts
    to injected faults (crashes, partitions, throttled requests, a driver restart's killed
    attempts) than it may have.  A job that ends otherwise, under those faults, failed because
    of its committer (HADOOP-17258: the second attempt of a task fails forever once the first
    one's pendingset exists).

    A job whose destination held data before it started is not judged: its conflict mode may
    refuse to run (``fail``), which is the committer doing as it was told, not a fault.  A job
    the run left running (``lost``) is undecided, not a violation: either the run was
    cut at its step limit, or the driver waits for a task no attempt will report — committers
    act only through steps, so that would be the harness's driver, not the committer.  (Its
    rules relaunch a task whenever an attempt ends without committing it and no other attempt
    of the task runs, an attempt denied its commit included, as Spark's TaskCommitDenied does.)"""
    found = []
    facts: RunFacts | None = None
    for i, job in enumerate(result.jobs):
        if job.outcome in ("committed", "lost") or result.preexisting.get(job.spec.dest):
            continue
        facts = facts or run_facts(result)
        if not facts.bounded(i, job, result.scenario.max_attempts):
            continue
        why = job.error or "; ".join(facts.failures) or "no error reported"
        found.append(Violation("liveness", i, f"the job ended {job.outcome} although its faults "
                               f"were bounded: {why}"))
    return found


def _writer_of(data: bytes) -> str:
    writer = data.decode(errors="replace").split("|")
    return "|".join(writer[:4]) if len(writer) >= 4 else "unknown writer"


PROPERTIES: dict[str, Callable[[RunResult], list[Violation]]] = {
    "completeness": completeness,
    "exclusivity": exclusivity,
    "valid-outcome": valid_outcome,
    "consistency": consistency,
    "concurrency": concurrency,
    "abortability": abortability,
    "continuity": continuity,
    "liveness": liveness,
}


#: the states each property speaks about (:mod:`.reach`): a cell whose runs reached none of one
#: of them is ``vacuous``, not ``holds``.  What each checker needs before it can find anything:
#: a committed job (the output properties), a store that answered inconsistently before a job
#: committed (consistency), a job committing beside another (concurrency), an aborted job
#: (abortability), a job committing while a partitioned attempt of it ran on (continuity), a
#: job that ended at all (liveness).
CONSTRAINS: dict[str, tuple[State, ...]] = {
    "completeness": (State.JOB_COMMITTED,),
    "exclusivity": (State.JOB_COMMITTED,),
    "valid-outcome": (State.JOB_COMMITTED,),
    "consistency": (State.COMMITTED_UNDER_LAG,),
    "concurrency": (State.JOBS_SHARED_A_RUN,),
    "abortability": (State.JOB_ABORTED,),
    "continuity": (State.COMMITTED_AFTER_PARTITION,),
    "liveness": (State.JOB_ENDED,),
}

def liveness_decided(run: Run) -> bool:
    """Liveness holds on every continuation of a run in which every job has committed and
    every driver is done: only a driver changes its job's outcome (a failing clean-up, or the
    next job attempt after a restart, which needs a driver that is not done), so
    ``committed`` is then final."""
    return (all(job.outcome == "committed" for job in run.jobs)
            and all(a.done for a in run.actors if a.role is Role.DRIVER))


#: properties whose verdict a run can fix before it ends: the predicate is true of a run in
#: progress only when the property holds on every continuation of it, and reads only state
#: the explorer's fingerprint covers, so the explorer may end such a run early
#: (:func:`zerorename_model.check.explore.explore`, ``early=True``)
DECIDED_EARLY: dict[str, Callable[[Run], bool]] = {"liveness": liveness_decided}


def applicable(prop: str, store: str) -> bool:
    """Consistency is only a question for stores that can answer inconsistently."""
    profile = PROFILES.get(store)
    return not (prop == "consistency" and (profile is None or profile.consistent))


def check_all(result: RunResult, props: list[str] | None = None) -> dict[str, list[Violation]]:
    return {name: PROPERTIES[name](result) for name in (props or list(PROPERTIES))}
