"""Production bugs of the zero-rename paper's Section XIV: committer variants, the matrix scope
that decides each, and one schedule that shows each.

Every bug is a committer *variant* (the fixed protocol with the bug put back, registered as
``name+BUG`` next to the protocol).  Its verdicts come from exploration, like every cell of the
matrix: ``scope`` names the scope family (``zerorename_model.experiments.scopes``) in which the
matrix explores the variant and the fixed committer side by side, under both protocols, and
``shows`` the property the bug report says breaks (data for readers and tests: the verdict is never
taken from it).  Separately, ``scenario`` with ``once``/``prefer`` is one schedule written as
patterns over the harness's move descriptions: :func:`show` runs both committers on that same
schedule, for a story a person can follow step by step.  What "wrong" means is not written
here: the caller reads the runs' outcomes and the property checkers' findings.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from zerorename_model.check.properties import check_all
from zerorename_model.engine.choices import SteeredChooser
from zerorename_model.engine.harness import Run, RunResult
from zerorename_model.engine.scenario import Faults, Scenario
from zerorename_model.systems.protocols import get

FILES = ("part-{task:05d}", "year=2024/part-{task:05d}.csv")


@dataclass(frozen=True)
class ProductionBug:
    """A bug report, the variant that reproduces it, and the schedule that shows it."""

    report: str        # the ID, or a name where the paper gives none
    section: str       # where the paper describes it
    summary: str
    variant: str       # the registered committer with the bug
    fixed: str         # the registered committer without it
    scope: str         # the scope family the matrix explores both in
    shows: str         # the property the report says the bug breaks
    scenario: Scenario
    once: tuple[str, ...] = ()
    prefer: tuple[str, ...] = ()
    store: str = "s3"  # the store profile of its matrix rows
    #: the store of the fixed committer's row, when the bug is the store's rather than the
    #: committer's (then ``variant`` and ``fixed`` name one committer); None: ``store``
    fixed_store: str | None = None

    @property
    def fixed_on(self) -> str:
        """The store profile the fixed committer runs on."""
        return self.fixed_store or self.store


BUGS: tuple[ProductionBug, ...] = (
    ProductionBug(
        "HADOOP-17258", "XIV.A.1",
        "the pendingset was written without overwrite: once an attempt that saved it died, "
        "every later attempt of the task failed, and so did the job",
        "magic+HADOOP-17258", "magic", "crash", "liveness",
        Scenario("magic", tasks=1, driver="hadoop", files=FILES, faults=Faults(crash=1)),
        once=(r"^crash j0\.t0\.a0: report success$",)),
    ProductionBug(
        "HADOOP-17112", "XIV.C.4",
        "a pending commit's URI was read back undecoded, so a path with a space named a key "
        "with no upload and job commit failed",
        "magic+HADOOP-17112", "magic", "spaces", "liveness",
        Scenario("magic", files=("my dir/part {task}.csv",))),
    ProductionBug(
        "prefix-cleanup", "VIII (over-aggressive cleanup)",
        "cleanup listed uploads by the bare string prefix: cleaning up dataset1 aborted the "
        "pending uploads of a concurrent job writing dataset10",
        "magic+prefix-cleanup", "magic", "two-jobs", "concurrency",
        Scenario("magic", tasks=1, files=FILES, dests=("s3://bucket/out1", "s3://bucket/out10")),
        prefer=(r"^step j1\.t0\.a0: (create_multipart|upload_part|put) ",)),
    ProductionBug(
        "SPARK-33402", "XIV.B",
        "two jobs started in the same second got one job ID; the staging committer's cluster "
        "path built from it alone let one job's task commit replace the other's",
        "directory+SPARK-33402", "directory", "same-job-id", "concurrency",
        Scenario("directory", tasks=1, driver="hadoop", files=FILES,
                 dests=("s3://bucket/a", "s3://bucket/b"), same_job_id=True),
        prefer=(r"^step j1\.t0\.a0",)),
    ProductionBug(
        "XIV.C.1", "XIV.C.1",
        "job cleanup aborted every pending upload under the destination, so a job finishing "
        "first killed the uploads of a concurrent job writing other files of the same "
        "destination (shown on fenced, the model committer whose cleanup is scoped to its own "
        "job; the model's magic still sweeps the destination: its concurrency cell says so)",
        "fenced+XIV.C.1", "fenced", "same-destination", "concurrency",
        Scenario("fenced", tasks=1, files=("part-{task:05d}-job{job}",),
                 dests=("s3://bucket/out", "s3://bucket/out")),
        prefer=(r"^step j1\.t0\.a0: (create_multipart|upload_part) ",)),
    ProductionBug(
        "issue-31", "issue 31 (nested destinations)",
        "cleanup decided that no other job was active from the destination's own record area, "
        "so a job writing the table t aborted, as strays, the uploads of a job writing its "
        "partition t/date=1, which then failed after its commit point",
        "fenced+top-level-cleanup", "fenced", "nested", "concurrency",
        Scenario("fenced", tasks=1, files=("part-{task:05d}-job{job}",),
                 dests=("s3://bucket/out/t", "s3://bucket/out/t/date=1")),
        prefer=(r"^step j1\.t0\.a0: (create_multipart|upload_part) ",)),
    ProductionBug(
        "issue-34-landed", "issue 34 (ambiguous outcomes)",
        "a request whose answer was lost was repeated without asking whether it had landed: "
        "the repeated task record PUT met its own record (412) and the task gave its output "
        "up, and the job then failed completing uploads that were gone",
        "fenced+no-landed-check", "fenced", "ambiguous", "liveness",
        Scenario("fenced", tasks=1, files=FILES, faults=Faults(lost_answer=1)),
        once=(r"^lost_answer j0\.t0\.a0: put .*/tasks/",)),
    ProductionBug(
        "issue-34-check-then-act", "issue 34 (stores that cannot fence)",
        "a store whose conditional PUT checks, then writes, lets two racing task records both "
        "pass the check: a partitioned attempt's late record replaces the accepted one's, and "
        "Hadoop's listing job commit publishes it (the race of VIII.C back)",
        "fenced", "fenced", "partition", "exclusivity",
        Scenario("fenced", tasks=1, driver="hadoop", files=FILES, faults=Faults(partition=1)),
        once=(r"^step j0\.t0\.a0: can_commit", r"^partition j0\.t0\.a0",
              # each attempt's record PUT passes the check; then the writes, a0's last
              r"^step j0\.t0\.a0: put .*/tasks/.*bytes>$",
              r"^step j0\.t0\.a1: put .*/tasks/.*bytes>$",
              r"^step j0\.t0\.a1: put .*/tasks/\S+\.json$",
              r"^step j0\.t0\.a0: put .*/tasks/\S+\.json$"),
        prefer=(r"^step j0\.t0\.a1",),
        store="s3-check-then-act", fixed_store="s3"),
    ProductionBug(
        "issue-34-ignored", "issue 34 (stores that cannot fence)",
        "a store that accepts If-None-Match and ignores it lets a partitioned attempt's late "
        "task record replace the accepted one's, and Hadoop's listing job commit publishes it",
        "fenced", "fenced", "partition", "exclusivity",
        Scenario("fenced", tasks=1, driver="hadoop", files=FILES, faults=Faults(partition=1)),
        once=(r"^step j0\.t0\.a0: can_commit", r"^partition j0\.t0\.a0",
              r"^step j0\.t0\.a1: report success", r"^step j0\.t0\.a0: put .*/tasks/"),
        prefer=(r"^step j0\.t0\.a1",),
        store="s3-ignores-conditions", fixed_store="s3"),
)


@dataclass(frozen=True)
class Shown:
    """One committer's run of a bug's schedule, and what the checkers found in it."""

    committer: str
    result: RunResult
    violated: dict[str, list[str]]

    @property
    def outcomes(self) -> list[str]:
        return [job.outcome for job in self.result.jobs]

    @property
    def errors(self) -> list[str]:
        return [job.error for job in self.result.jobs if job.error]


def run_schedule(bug: ProductionBug, committer: str, store: str | None = None, *,
                 strict: bool = True) -> Shown:
    """Run ``committer`` on the bug's scenario and schedule, on ``store`` (None: the
    variant's store, ``bug.store``).  ``strict=False``: moves of the schedule the store never
    offers (the check-then-act store's step between check and write) are left out."""
    steer = SteeredChooser(bug.once, bug.prefer)
    scenario = replace(bug.scenario, committer=committer, store=store or bug.store)
    result = Run(scenario, get(committer)).run(steer)
    if steer.unmet and strict:
        raise ValueError(f"{bug.report}: the schedule's moves never became possible for "
                         f"{committer}: {steer.unmet}")
    found = {name: [str(v) for v in found] for name, found in check_all(result).items() if found}
    return Shown(committer, result, found)


def show(bug: ProductionBug) -> tuple[Shown, Shown]:
    """The variant's run and the fixed committer's run of the same schedule."""
    return (run_schedule(bug, bug.variant),
            run_schedule(bug, bug.fixed, bug.fixed_on, strict=bug.fixed_store is None))


def by_report(report: str) -> ProductionBug:
    for bug in BUGS:
        if bug.report == report:
            return bug
    raise KeyError(f"no production bug {report!r}; known: {[b.report for b in BUGS]}")
