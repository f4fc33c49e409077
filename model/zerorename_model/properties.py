"""The correctness properties of docs/design.md (the paper's Section VIII), as pure functions of a
finished run.  Each returns the list of violations it found (empty: the property held).

The destination is observed as a reader sees it (names with a ``_`` or ``.`` component are not
output).  A file's bytes name the attempt that wrote them, so a checker can tell which attempt's
output a destination holds without trusting anything the committer says.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from zerorename_model.harness import JobState, RunResult, hidden


@dataclass(frozen=True)
class Violation:
    property: str
    job: int
    detail: str

    def __str__(self) -> str:
        return f"{self.property} (job {self.job}): {self.detail}"


def _published(result: RunResult, task: Any, rel: str) -> str:
    """Where a committer publishes a file written as ``rel`` (Stocator inserts the attempt ID
    into the name: the committer class declares it with ``published_name``)."""
    from zerorename_model.protocols import COMMITTERS

    rename = getattr(COMMITTERS.get(result.scenario.committer), "published_name", None)
    return str(rename(rel, task)) if rename else rel


def _accepted_output(result: RunResult, job: JobState) -> dict[str, bytes]:
    expected: dict[str, bytes] = {}
    for task, _message in job.accepted.values():
        for rel, data in result.written.get(task.name, {}).items():
            expected[_published(result, task, rel)] = data
    return expected


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
        for rel, data in sorted(job.dest_at_commit.items()):
            if allowed.get(rel) == data or (rel not in allowed and kept.get(rel) == data):
                continue
            writer = data.decode(errors="replace").split("|")
            who = "|".join(writer[:4]) if len(writer) >= 4 else "unknown writer"
            found.append(Violation("exclusivity", i, f"{rel}: written by {who}, not accepted"))
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
        for rel, data in job.dest_at_commit.items():
            if final.get(rel) != data:
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


PROPERTIES: dict[str, Callable[[RunResult], list[Violation]]] = {
    "completeness": completeness,
    "exclusivity": exclusivity,
    "consistency": consistency,
    "concurrency": concurrency,
    "abortability": abortability,
    "continuity": continuity,
}


def applicable(prop: str, store: str) -> bool:
    """Consistency is only a question for stores that can answer inconsistently."""
    from zerorename_model.stores import PROFILES

    profile = PROFILES.get(store)
    return not (prop == "consistency" and (profile is None or profile.consistent))


def check_all(result: RunResult, props: list[str] | None = None) -> dict[str, list[Violation]]:
    return {name: PROPERTIES[name](result) for name in (props or list(PROPERTIES))}
