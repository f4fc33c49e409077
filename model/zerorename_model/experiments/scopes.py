"""The scopes the verdict matrix explores: small scenario families, each under both job-commit
protocols, and the properties each decides.

A *family* (``crash``, ``partition``, ``two-jobs``…) fixes the tasks, files, destinations and
one kind of fault; its two scopes differ only in the driver's protocol:

* ``hadoop`` — Hadoop's protocol: ``commit_job(None)``; the job commit discovers the committed
  tasks by listing what they left in the store;
* ``spark`` — Spark's protocol: ``commit_job(messages)``; the driver passes the messages of the
  attempts it accepted.

A cell of the matrix is decided per protocol from that protocol's scopes only, because a
committer can be correct under one and not the other (the race of the paper's Section VIII.C
needs a job commit that lists).  Every scope is small enough to enumerate (2 tasks x 2
attempts x 1 file, one fault of a kind at every point of every schedule).  Abortability is
decided by two families rather than one with both faults: the job failing at any point of two
tasks' schedules, and an attempt crashing (leaving what only the job can clean) before its
retry and the job's failure; together they cover a crashed attempt's leftovers, a committed
task's uncompleted output and an in-flight attempt at the moment of failure, in about 3,500
runs for the staging committer where the combined scope needs 55,000.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace

from zerorename_model.engine.scenario import Faults, Scenario

#: the job-commit protocols, as ``Scenario.driver`` names them
PROTOCOLS = ("hadoop", "spark")
#: one line each, for legends
PROTOCOL_LEGEND = {
    "hadoop": "Hadoop's protocol: commit_job(None) discovers the committed tasks by listing "
              "the store",
    "spark": "Spark's protocol: the driver passes commit_job the messages of the attempts it "
             "accepted",
}

FILES = ("part-{task:05d}",)
#: a nested path with a space in the file name (HADOOP-17112 broke job commit on it)
SPACED_FILES = ("year=2024/my file {task}.csv",)
#: adjacent destinations: ``dataset1`` is a string prefix of ``dataset10``
ADJACENT = ("s3://bucket/out/dataset1", "s3://bucket/out/dataset10")
#: unrelated destinations, for two jobs that share a job ID (SPARK-33402)
SEPARATE = ("s3://bucket/out/a", "s3://bucket/out/b")
#: one destination for two jobs, each writing files of its own (other partitions of one table)
SAME = ("s3://bucket/out", "s3://bucket/out")
JOB_FILES = ("part-{task:05d}-job{job}",)
#: nested destinations: a table and one of its partitions, written by two jobs at once (the
#: first job's destination is a prefix of the second's, issue 31)
NESTED = ("s3://bucket/out/t", "s3://bucket/out/t/date=1")
#: the parent job also writes into the child's destination (a partition both write files of
#: their own to): the child's cleanup then meets the parent's uploads under its own prefix
OVERLAP_FILES = ("date=1/part-{task:05d}-job{job}",)

#: the properties every single-job scope decides
OUTPUT_PROPS = ("completeness", "exclusivity", "valid-outcome", "consistency", "liveness")
#: what the ambiguous-outcome scopes decide (consistency is the lag scopes' question)
AMBIGUOUS_PROPS = ("completeness", "exclusivity", "valid-outcome", "liveness")
#: one lost answer and one 409, anywhere.  On a lagging store every visibility event settles
#: before each read: the lag is the other families' question, and a lost answer combined with
#: every order of visibility events would not finish (a lagging store's consistent behaviours
#: are behaviours it allows, so a violation found so is a real one)
AMBIGUOUS_FAULTS = Faults(lost_answer=1, conflict=1, settle_eagerly=True)
#: what scopes with two jobs decide: each job's output is whole and exclusive, and neither
#: fails because of the other (concurrency says so; liveness is left to single-job scopes, so
#: that its column means "a job alone, with bounded faults, commits")
CONCURRENT_PROPS = ("concurrency",)

Make = Callable[[str, str], Scenario]


@dataclass(frozen=True)
class Scope:
    """One scenario family under one protocol (``name`` is ``family-protocol``) and the
    properties it decides; ``make(committer, store)`` builds its scenario."""

    name: str
    family: str
    protocol: str
    props: tuple[str, ...]
    make: Make


@dataclass(frozen=True)
class _Single:
    """One job on ``s3://bucket/out``: ``tasks`` tasks of 2 attempts, one file each."""

    driver: str
    faults: Faults
    tasks: int = 2
    files: tuple[str, ...] = FILES

    def __call__(self, committer: str, store: str) -> Scenario:
        return Scenario(committer, store=store, tasks=self.tasks, files=self.files,
                        max_attempts=2, driver=self.driver, faults=self.faults)


@dataclass(frozen=True)
class _TwoJobs:
    """Two jobs of one task at once, on ``dests``; ``same_job_id``: both get one job ID."""

    driver: str
    dests: tuple[str, ...]
    faults: Faults = field(default_factory=Faults)
    files: tuple[str, ...] = SPACED_FILES
    same_job_id: bool = False

    def __call__(self, committer: str, store: str) -> Scenario:
        return Scenario(committer, store=store, tasks=1, files=self.files, max_attempts=2,
                        dests=self.dests, driver=self.driver, faults=self.faults,
                        same_job_id=self.same_job_id)


@dataclass(frozen=True)
class Family:
    """A scenario family: its name, what it decides, and its scenario for a driver."""

    name: str
    props: tuple[str, ...]
    build: Callable[[str], Make]
    summary: str


FAMILIES: tuple[Family, ...] = (
    Family("crash", OUTPUT_PROPS, lambda d: _Single(d, Faults(crash=1)),
           "a task attempt crashes between two store operations"),
    Family("duplicate", OUTPUT_PROPS, lambda d: _Single(d, Faults(speculate=1)),
           "a duplicate (speculative) attempt of a running task"),
    Family("partition", (*OUTPUT_PROPS, "continuity"), lambda d: _Single(d, Faults(partition=1)),
           "the driver gives up on an attempt that keeps running (a partitioned attempt)"),
    Family("restart", OUTPUT_PROPS, lambda d: _Single(d, Faults(restart=1)),
           "the job driver crashes and the next job attempt starts"),
    Family("spaces", ("completeness", "exclusivity", "valid-outcome", "liveness"),
           lambda d: _Single(d, Faults(), files=SPACED_FILES),
           "no fault; the file's path has a space in it"),
    Family("abort", ("abortability",), lambda d: _Single(d, Faults(fail_job=1)),
           "the driver gives up and aborts the job"),
    Family("abort-crash", ("abortability",), lambda d: _Single(d, Faults(crash=1, fail_job=1), 1),
           "a task attempt crashes, then the driver gives up and aborts the job"),
    Family("two-jobs", CONCURRENT_PROPS, lambda d: _TwoJobs(d, ADJACENT, Faults(crash=1)),
           "two jobs writing to adjacent destinations (dataset1, dataset10); a crash"),
    Family("same-job-id", CONCURRENT_PROPS, lambda d: _TwoJobs(d, SEPARATE, files=FILES,
                                                                same_job_id=True),
           "two jobs with one job ID (started in the same second) writing to two "
           "destinations"),
    Family("same-destination", CONCURRENT_PROPS,
           lambda d: _TwoJobs(d, SAME, files=JOB_FILES),
           "two jobs writing files of their own to the same destination at once"),
    Family("ambiguous", AMBIGUOUS_PROPS,
           lambda d: _Single(d, AMBIGUOUS_FAULTS),
           "a request takes effect but its answer is lost, and a conditional request "
           "answers 409 ConditionalRequestConflict (each at most once, at any request)"),
    Family("ambiguous-abort", ("abortability",),
           lambda d: _Single(d, replace(AMBIGUOUS_FAULTS, fail_job=1), 1),
           "a request's answer is lost or a conditional request answers 409, and the driver "
           "gives up and aborts the job"),
    Family("nested", CONCURRENT_PROPS, lambda d: _TwoJobs(d, NESTED, Faults(crash=1),
                                                          files=JOB_FILES),
           "two jobs at once, one writing a table (t), the other one of its partitions "
           "(t/date=1); a crash"),
    Family("nested-overlap", CONCURRENT_PROPS,
           lambda d: _TwoJobs(d, NESTED, files=OVERLAP_FILES),
           "two jobs at once on t and t/date=1, the job on t writing files of its own into "
           "date=1 too"),
)

SCOPES: tuple[Scope, ...] = tuple(
    Scope(f"{family.name}-{protocol}", family.name, protocol, family.props,
          family.build(protocol))
    for protocol in PROTOCOLS for family in FAMILIES)


def family_named(name: str) -> Family:
    for family in FAMILIES:
        if family.name == name:
            return family
    raise KeyError(f"no scope family {name!r}; known: {[f.name for f in FAMILIES]}")


def scope_named(name: str) -> Scope:
    for scope in SCOPES:
        if scope.name == name:
            return scope
    raise KeyError(f"no scope {name!r}; known: {[s.name for s in SCOPES]}")
