"""Where the paper's files are and the budgets it is explored with (the results file is read and
written in :mod:`zrpaper.results`).

Shared by the computing and the rendering halves: a setting that changed between a full run and
a merge would make their cells incomparable (``merge.merge_plan`` refuses then)."""

from __future__ import annotations

from pathlib import Path

from zrpaper.budgets import LagBudget, RunBudget

#: ``paper/``: every path the results name is relative to it
HERE = Path(__file__).resolve().parents[1]
RESULTS = HERE / "results"
TRACES = RESULTS / "traces"
TEMPLATE = HERE / "zerorename.template.md"
PAPER = HERE / "zerorename.md"
FIGURES = HERE / "figures"

#: runs per scope of the first pass (a scope is enumerated completely when it has fewer schedules
#: than this, which makes a ``holds`` a proof within the scope); no wall-clock limit, so that
#: results do not depend on the machine's speed, and no hypothesis sampling: a scope cut off is
#: left to the second pass.  Most scopes end within it; the first pass is where violations are
#: found (and shrunk) cheaply.
PAPER_BUDGET = RunBudget(max_runs=1000)
#: a second pass for every ``holds*`` cell (no violation found, some scope cut off): more runs
#: there can only turn it into a proof or find a violation.  The committed results were made
#: with this budget; at 1,000,000 runs v1's continuity and v2's liveness on ``s3-2018`` were
#: still cut off (docs/research/HISTORY.md, Round 5): more runs alone did not decide them.  50,000
#: since Round 10: in the results of 100,000, every scope a cell finished needed at most 47,078
#: runs outside the six cells the third pass decides (v2's duplicate-hadoop, 66,960, is one of
#: theirs) and the second pass found its violations within 17,169; the runs beyond 50,000 went
#: to scopes the bounded third pass explores again (about 300,000 runs, a fifth of the matrix).
DEEP_RUNS = 50_000
DEEP_BUDGET = RunBudget(max_runs=DEEP_RUNS)
#: a third pass for every cell still ``holds*`` on a lagging store (``Budget.lag_pass``): its
#: scopes enumerated with at most ``max_lag`` visibility events pending at once.  Those cells'
#: scopes have up to 21 events pending and a clean-up LIST that can see any subset of them
#: (docs/research/HISTORY.md, Rounds 7 and 9); with 4 they end in at most 166,068 runs.
LAG_BUDGET = LagBudget(max_lag=4, max_runs=400_000)
#: the VIII.C probe's scopes (its committers on the stores they are built for)
RACE_MAX_RUNS = 4000
TABLEV_MAX_RUNS = 4000
WORKERS = 2

#: The VIII.C race: committers whose job commit can take task output from the store, each on the
#: store it is built for; and the fenced committer, with the variant that drops its fence (plain
#: PUTs), whose witness is the evidence that the fence is what excludes the partitioned attempt
RACE_PAIRS = (("v1", "hdfs"), ("directory", "s3"), ("partitioned", "s3"), ("magic", "s3"),
              ("manifest", "abfs"), ("fenced", "s3"), ("fenced+no-fence", "s3"))
RACE_SCOPES = ("partition-hadoop", "partition-spark")
#: strict exclusivity and valid-outcome side by side: the race publishes the output of an
#: attempt the driver did not accept (strict), but one that committed, whole (valid outcome)
RACE_PROPS = ("completeness", "exclusivity", "valid-outcome")


def rel(path: str | Path | None) -> str | None:
    """A path as the paper links it (relative to ``paper/``)."""
    if path is None:
        return None
    return Path(path).resolve().relative_to(HERE).as_posix()

