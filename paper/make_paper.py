"""Regenerate the paper's results and render ``zerorename.md`` from its template.

Usage (from the repository root)::

    .venv/bin/python paper/make_paper.py                 # explore, write results, render
    .venv/bin/python paper/make_paper.py --render-only   # re-render from results/verdicts.json
    .venv/bin/python paper/make_paper.py --merge --committers fenced,fenced+no-fence
    .venv/bin/python paper/make_paper.py --permissions   # the permission fault family only
    .venv/bin/python paper/make_paper.py --hadoop        # Hadoop's own committers as rows
    .venv/bin/python paper/make_paper.py --hadoop-s3a    # S3A's committers (on moto) as rows

The first form runs, on 2 worker processes:

* the verdict matrix, ``zerorename_model.experiments.matrix.matrix`` with ``PAPER_BUDGET`` (every
  committer on every store profile, every property; violations shrunk and saved as traces);
* the VIII.C probe: the partition scopes under Hadoop's and under Spark's job-commit protocol, for
  the committers whose job commit can read task output from the store;
* Table V, ``zerorename_model.experiments.tablev.compute`` (every attribute probed for every
  committer);

then writes ``results/verdicts.json`` (everything the paper's tables are rendered from) and
``results/traces/*.jsonl`` (every witness trace), and substitutes the generated sections of
``zerorename.template.md`` (``{{VERDICT_MATRIX}}``, ``{{TABLEV}}``, ``{{DIFFERENCES}}``,
``{{EXPLORED}}``) to write ``zerorename.md``, and draws the figures under ``figures/`` (the
matrix as heatmaps, the VIII.C witness as a timeline and a slice).

``--merge --committers a,b`` explores only the named committers, at the same budgets, and
replaces exactly their part of the existing ``verdicts.json``: their matrix cells, their rows of
the VIII.C probe (the pairs of ``RACE_PAIRS`` they appear in: a variant such as
``fenced+no-fence`` has only those) and their Table V column, with their witness traces; every
other cell, row, column and trace stays as it was.  The results record each merge (which
committers, when, with what budgets, how long it took) under ``merged``, and the paper says so.
A merge is refused when the results were made with other scopes, stores, properties or budgets:
its cells would not be comparable with the rest.

The budget is a number of runs per scope, not a time limit: the wall-clock limit is set far out
of reach, so the same commit gives the same results on a fast or a loaded machine.  The
rendering is a pure function of ``verdicts.json`` and the template (``tests/test_paper.py``
checks that the committed paper is exactly that).

``--permissions`` explores the permission fault family (``zrpaper/permissions.py``): every
committer of the matrix and the ``+take-back`` rows, under both protocols, in a few seconds; it
writes ``results/permissions.json`` and ``results/permission_traces/``, the table between the
permission markers of ``README.md``, and ``zerorename.md`` (whose ``{{PERMISSIONS}}`` section
renders that file); ``verdicts.json``, the figures and the other blocks are left as they are.

``--hadoop`` explores Hadoop 3.5.0's own ``v1``, ``v2`` and ``manifest`` committers on the
HDFS-like filesystem (``zrpaper/hadoop_rows.py``: ``zerorename check --target hadoop --quick``,
about 10 minutes, 9 of them manifest); it writes ``results/hadoop.json`` and
``results/hadoop_traces/``, the table between the hadoop markers of ``README.md`` (each real
row beside the model's, read from ``verdicts.json``), and ``zerorename.md``
(``{{HADOOP_ROWS}}``); nothing else changes.

``--hadoop-s3a`` explores S3A's own ``magic``, ``directory`` and ``partitioned`` committers
(hadoop-aws 3.5.0) on a moto server the same way, at ``hadoop_rows.S3A_RUNS`` runs per scope
(the quick check's 40; each S3 request is a step, so a run costs half a second to a second on a
loaded 2-core machine; the three take about half an hour), under Hadoop's protocol only (what
S3A's committers run under Spark too); it writes ``results/hadoop_s3a.json``
and its witnesses (``results/hadoop_traces/*.s3.*``), and renders the same block and section,
now with S3A's rows as a second table.  It is a mode of its own so that the ten-minute
``--hadoop`` does not pay for it.

What is typed by hand is the *paper's* side of each comparison (``zrpaper.claims``, and Table
V in ``zerorename_model.experiments.tablev``) and the prose explaining a disagreement; whether a
claim agrees, and every verdict, comes from running.  This file is the command line; what it runs is
in ``zrpaper/`` next to it, one module per concern (``zrpaper/__init__.py`` lists them).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import replace

from zrpaper.compute import generate
from zrpaper.figures import write_figures
from zrpaper.hadoop_rows import S3A_STORE as HADOOP_S3A_STORE
from zrpaper.hadoop_rows import STORE as HADOOP_STORE
from zrpaper.hadoop_rows import compute as compute_hadoop
from zrpaper.hadoop_rows import results_file as hadoop_file
from zrpaper.hadoop_rows import save as save_hadoop
from zrpaper.hadoop_rows import write_readme as write_hadoop_readme
from zrpaper.merge import MergeRefused, merge
from zrpaper.permissions import compute as compute_permissions
from zrpaper.permissions import save as save_permissions
from zrpaper.permissions import write_readme as write_permissions_readme
from zrpaper.readme import README, TOP_README, write_readme
from zrpaper.render import write_paper
from zrpaper.results import load_results, save_results
from zrpaper.settings import (
    DEEP_BUDGET,
    FIGURES,
    HERE,
    PAPER,
    PAPER_BUDGET,
    RACE_MAX_RUNS,
    WORKERS,
)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--render-only", action="store_true",
                        help="re-render zerorename.md and figures/ from results/verdicts.json")
    parser.add_argument("--merge", action="store_true",
                        help="explore only --committers and replace exactly their cells, "
                             "VIII.C rows and Table V column in results/verdicts.json")
    parser.add_argument("--permissions", action="store_true",
                        help="explore the permission fault family only: write "
                             "results/permissions.json, its witnesses, its README block and "
                             "the paper")
    parser.add_argument("--hadoop", action="store_true",
                        help="explore Hadoop 3.5.0's own v1, v2 and manifest committers only: "
                             "write results/hadoop.json, its witnesses, its README block and "
                             "the paper")
    parser.add_argument("--hadoop-s3a", action="store_true",
                        help="explore S3A's own magic, directory and partitioned committers on "
                             "moto only: write results/hadoop_s3a.json, its witnesses, the "
                             "hadoop block of the README and the paper")
    parser.add_argument("--workers", type=int, default=min(WORKERS, os.cpu_count() or 1))
    parser.add_argument("--max-runs", type=int, default=PAPER_BUDGET.max_runs,
                        help="runs per scope (to try a budget; the paper uses the default)")
    parser.add_argument("--deep-runs", type=int, default=DEEP_BUDGET.max_runs,
                        help="runs per scope of the second pass over undecided cells (fewer "
                             "leave more cells holds*, which the paper lists)")
    parser.add_argument("--race-runs", type=int, default=RACE_MAX_RUNS,
                        help="runs per scope of the VIII.C probe")
    parser.add_argument("--committers", default=None,
                        help="comma-separated subset of the matrix (to try; the paper uses all)")
    args = parser.parse_args(argv)
    budget = replace(PAPER_BUDGET, max_runs=args.max_runs)
    committers = [c for c in args.committers.split(",") if c] if args.committers else None
    progress: Callable[[str], None] = lambda line: print(line, flush=True)  # noqa: E731
    started = time.monotonic()
    if args.merge and args.render_only:
        parser.error("--merge explores: it cannot be --render-only")
    if args.permissions:
        if args.merge or args.render_only:
            parser.error("--permissions is a mode of its own")
        data = compute_permissions(progress)
        save_permissions(data)
        write_permissions_readme(data)
        write_paper(load_results())
        print(f"wrote results/permissions.json, its witnesses, the permission block of "
              f"{README.relative_to(HERE.parent)} and {PAPER.relative_to(HERE.parent)} in "
              f"{time.monotonic() - started:.0f} s", file=sys.stderr)
        return 0
    if args.hadoop or args.hadoop_s3a:
        if args.merge or args.render_only or args.permissions or (args.hadoop and
                                                                 args.hadoop_s3a):
            parser.error("--hadoop and --hadoop-s3a are modes of their own")
        hadoop = compute_hadoop(progress, store=HADOOP_S3A_STORE if args.hadoop_s3a
                                else HADOOP_STORE)
        save_hadoop(hadoop)
        results = load_results()
        write_hadoop_readme(results)
        write_paper(results)
        print(f"wrote results/{hadoop_file(hadoop['store']).name}, its witnesses, the hadoop "
              "block of "
              f"{README.relative_to(HERE.parent)} and {PAPER.relative_to(HERE.parent)} in "
              f"{time.monotonic() - started:.0f} s", file=sys.stderr)
        return 0
    if args.merge:
        if not committers:
            parser.error("--merge needs --committers")
        try:
            save_results(merge(load_results(), committers, budget, args.workers, progress,
                               deep_budget=replace(DEEP_BUDGET, max_runs=args.deep_runs)
                               if args.deep_runs != DEEP_BUDGET.max_runs else None,
                               race_max_runs=args.race_runs
                               if args.race_runs != RACE_MAX_RUNS else None))
        except MergeRefused as refused:
            parser.error(str(refused))
        print(f"merged {', '.join(committers)} in {time.monotonic() - started:.0f} s",
              file=sys.stderr)
    elif not args.render_only:
        save_results(generate(budget, args.workers, progress, committers,
                              deep_budget=replace(DEEP_BUDGET, max_runs=args.deep_runs),
                              race_max_runs=args.race_runs))
        print(f"results written in {time.monotonic() - started:.0f} s", file=sys.stderr)
    results = load_results()
    write_paper(results)
    print(f"wrote {PAPER.relative_to(HERE.parent)}")
    write_readme(results)
    print(f"wrote the verdict blocks of {README.relative_to(HERE.parent)} and "
          f"{TOP_README.relative_to(HERE.parent)}")
    written = write_figures(results, FIGURES)
    print(f"wrote {len(written)} figures under {FIGURES.relative_to(HERE.parent)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
