"""What the demo tells a user: one line per committer run, then a short matrix of the
committers a user would pick against the guarantees, per job-commit protocol.

The full research output (every field of every run, the whole verdict matrix with the
production-bug variants and why a cell differs between the Spark runs and the matrix) is
``zerorename demo --research`` (:mod:`zerorename_bridge.matrix_report`).  The short matrix is
explored like ``zerorename check --quick --store s3`` (the saved witness traces replayed first),
so it states what exploration finds, never a typed-in table.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from zerorename_model.experiments.cells import Cell, Verdict

if TYPE_CHECKING:
    from zerorename_bridge.mainjob import Result
    from zerorename_bridge.matrix_report import Steps

#: the committers a user picks from on an S3 store, in the order the README recommends them
USER_COMMITTERS = ("fenced", "magic", "directory", "partitioned", "manifest")
#: the store a user has: S3 today (strongly consistent, conditional writes)
USER_STORE = "s3"
#: the job-commit protocols, the Spark writer's first
PROTOCOL_TITLES = {"spark": "Spark's protocol", "hadoop": "Hadoop's protocol"}


def _size(n: int) -> str:
    for unit, size in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return f"{n} B"


def summary_line(result: Result) -> str:
    """One line: what the committer did on this run, and whether its guarantees held."""
    if result.skipped:
        return f"{result.committer:<12} skipped: {result.skipped}"
    if result.errors:
        return f"{result.committer:<12} FAILED: {result.errors[0]}"
    copied = "" if not result.copied else f", copied {_size(result.copied)}"
    commit = "" if result.commit_ms is None else f", job commit {result.commit_ms} ms"
    checks = [name for name, ok in (("complete", result.complete),
                                    ("nothing extra", result.exclusive),
                                    ("a failed job left nothing", result.abortable)) if ok]
    broken = [name for name, ok in (("INCOMPLETE", result.complete),
                                    ("EXTRA OUTPUT", result.exclusive),
                                    ("A FAILED JOB LEFT DATA", result.abortable)) if not ok]
    return (f"{result.committer:<12} wrote {result.files} files ({_size(result.bytes)}) with "
            f"{sum(result.requests.values())} requests{copied}{commit}; "
            + ", ".join(broken or checks) + f"; a late zombie: {result.late_zombie.split(';')[0]}")


def guarantees(cell_list: Sequence[Cell], committers: Sequence[str],
               protocols: Sequence[str]) -> str:
    """Committers × protocols: ``all hold`` (every search finished without a violation),
    ``no break found`` (some search was cut off by the quick budget), or the properties
    broken."""
    rows = []
    for name in committers:
        cells = [c for c in cell_list if c.committer == name and not c.bug]
        if not cells:
            continue
        texts = []
        for protocol in protocols:
            mine = [c for c in cells if (c.protocol or "spark") == protocol]
            broken = [c.prop for c in mine if c.verdict is Verdict.VIOLATED]
            open_ = [c.prop for c in mine if c.undecided]
            if all(c.verdict is Verdict.NA for c in mine):
                texts.append("cannot run")
            elif broken:
                texts.append("breaks " + ", ".join(broken))
            else:
                texts.append("no break found (quick search)" if open_ else "all hold")
        rows.append((name, texts))
    width = max(len(PROTOCOL_TITLES.get(p, p)) for p in protocols)
    widths = [max(width, *(len(t[i]) for _, t in rows)) for i in range(len(protocols))]
    head = f"{'committer':<12} " + " | ".join(
        f"{PROTOCOL_TITLES.get(p, p):<{w}}" for p, w in zip(protocols, widths, strict=True))
    lines = [head]
    lines += [f"{name:<12} " + " | ".join(f"{t:<{w}}" for t, w in zip(texts, widths, strict=True))
              for name, texts in rows]
    return "\n".join(line.rstrip() for line in lines)


def user_report(progress: Steps, committers: Sequence[str] = USER_COMMITTERS) -> None:
    """Explore the users' committers on S3 under both protocols (quick budget, saved
    witnesses first) and print the short matrix with one line on how to read it."""
    try:
        from zerorename_model.experiments.matrix import matrix
        from zerorename_model.experiments.seeds import default_directory
    except ImportError as error:
        print(f"(the model is unavailable: {error})", flush=True)
        return
    seeds = default_directory()
    with progress.step("model: the committers a user picks, on S3, every schedule of small "
                       "jobs with faults, under both protocols"):
        cells = matrix(list(committers), [USER_STORE], quick=True,
                       seeds=str(seeds) if seeds else None,
                       progress=lambda line: progress(f"model matrix: {line}"))
    print()
    print("What each committer guarantees on S3, as the model finds it exploring crashes, "
          "partitioned\nand speculative attempts and two jobs at once (Spark's protocol is what "
          "the Spark writer uses;\nHadoop's is commit_job() without messages; every store and "
          "committer: zerorename demo --research):")
    print(guarantees(cells, committers, ("spark", "hadoop")))
    sys.stdout.flush()
