"""What the benchmark pages, plots and README blocks share: the strategies' order and
labels, the number formats, and the selection of a results file's rows.

Apart from the renderers so that the pages (:mod:`render_pages`), the plots
(:mod:`render_plots`) and the README blocks (:mod:`render_readme`) order, label and format
every strategy the same way: a strategy is in the same place, under the same name, with the
same digits wherever it is shown.
"""

from __future__ import annotations

from typing import Any

#: the strategies in the order every table and plot shows them: the baselines first
ORDER = ("minimal", "rename-v1", "rename-v2", "s3fs", "magic", "fenced", "directory",
         "partitioned", "manifest")
#: what the README tables call each strategy (the name a user would know it by)
LABEL = {
    "minimal": "minimal deferred multipart (initiate + part; driver completes)",
    "rename-v1": "rename-by-copy v1 (FileOutputCommitter v1 on S3)",
    "rename-v2": "rename-by-copy v2 (FileOutputCommitter v2 on S3)",
    "s3fs": "s3fs transaction",
    "magic": "zerorename `magic`",
    "fenced": "zerorename `fenced`",
    "directory": "zerorename `directory`",
    "partitioned": "zerorename `partitioned`",
    "manifest": "zerorename `manifest` (copy + delete)",
}


def order(name: str) -> int:
    """A strategy's place in :data:`ORDER`; one it does not name goes last."""
    return ORDER.index(name) if name in ORDER else len(ORDER)


def size_text(n: int) -> str:
    """A byte count in decimal units, one decimal (tables compare magnitudes, not bytes)."""
    if n == 0:
        return "0"
    for unit, size in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return f"{n} B"


def secs(x: float | None) -> str:
    """Seconds to two decimals; empty where a run did not measure it."""
    return "" if x is None else f"{x:.2f}"


def rows_at(report: dict[str, Any], server: str, files: int) -> list[dict[str, Any]]:
    """The rows of one server and F, in :data:`ORDER` and then by thread count."""
    return sorted((r for r in report["rows"] if r["server"] == server and r["files"] == files),
                  key=lambda r: (order(r["strategy"]), r["threads"] or 0))


def cells_of(report: dict[str, Any]) -> list[tuple[str, int]]:
    """The (server, F) pairs the rows were measured at, in the order first measured."""
    seen: list[tuple[str, int]] = []
    for r in report["rows"]:
        if (r["server"], r["files"]) not in seen:
            seen.append((r["server"], r["files"]))
    return seen


def repeats_note(report: dict[str, Any]) -> str:
    """How the rows were measured, when in interleaved rounds (``interleave.py``)."""
    counts = sorted({r.get("repeats", 1) for r in report["rows"] if "error" not in r})
    if not counts or counts == [1]:
        return ""
    n = " or ".join(str(c) for c in counts)
    return (f"; each row is the median of {n} runs, one per round, every round running every "
            "strategy once in an order that changes from round to round (bench/README.md), and "
            "each ratio the median of the per-round ratios to the minimal run of the same "
            "round (load: the range over the row's runs)")


def load_text(row: dict[str, Any]) -> str:
    """The load average a row ran under: the range over its runs when they differ."""
    low_high = row.get("load_range")
    if low_high and low_high[0] != low_high[1]:
        return f"{low_high[0]:.1f}–{low_high[1]:.1f}"
    return f"{row['load_average'][0]:.1f}"


def run_label(row: dict[str, Any], default: str, word: str) -> str:
    """When a row was measured and on which committers: a row whose rounds ``--merge`` pooled
    (``pooled_runs``) names every invocation and both commits (the same committers)."""
    runs = row.get("pooled_runs") or [row.get("run", default)]
    commits = [row.get("reference_commit", "?")]
    merge = row.get("merge") or {}
    if merge.get("pooled") and merge.get("old_reference_commit") not in (None, commits[0]):
        commits.insert(0, merge["old_reference_commit"])
    return f"{' + '.join(runs)} on {word}{' = '.join(commits)}"

