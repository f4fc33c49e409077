"""Regenerate the paper's results and render ``zerorename.md`` from its template.

Usage (from the repository root)::

    .venv/bin/python paper/make_paper.py                 # explore, write results, render
    .venv/bin/python paper/make_paper.py --render-only   # re-render from results/verdicts.json
    .venv/bin/python paper/make_paper.py --merge --committers fenced,fenced+no-fence

The first form runs, on 2 worker processes:

* the verdict matrix, ``zerorename_model.verdicts.matrix`` with :data:`PAPER_BUDGET` (every
  committer on every store profile, every property; violations shrunk and saved as traces);
* the VIII.C probe: the partition scopes under Hadoop's and under Spark's job-commit protocol, for
  the committers whose job commit can read task output from the store;
* Table V, ``zerorename_model.tablev.compute`` (every attribute probed for every committer);

then writes ``results/verdicts.json`` (everything the paper's tables are rendered from) and
``results/traces/*.jsonl`` (every witness trace), and substitutes the generated sections of
``zerorename.template.md`` (``{{VERDICT_MATRIX}}``, ``{{TABLEV}}``, ``{{DIFFERENCES}}``,
``{{EXPLORED}}``) to write ``zerorename.md``, and draws the figures under ``figures/`` (the
matrix as heatmaps, the VIII.C witness as a timeline and a slice).

``--merge --committers a,b`` explores only the named committers, at the same budgets, and
replaces exactly their part of the existing ``verdicts.json``: their matrix cells, their rows of
the VIII.C probe (the pairs of :data:`RACE_PAIRS` they appear in: a variant such as
``fenced+no-fence`` has only those) and their Table V column, with their witness traces; every
other cell, row, column and trace stays as it was.  The results record each merge (which
committers, when, with what budgets, how long it took) under ``merged``, and the paper says so.
A merge is refused when the results were made with other scopes, stores, properties or budgets:
its cells would not be comparable with the rest.

The budget is a number of runs per scope, not a time limit: the wall-clock limit is set far out
of reach, so the same commit gives the same results on a fast or a loaded machine.  The
rendering is a pure function of ``verdicts.json`` and the template (``tests/test_paper.py``
checks that the committed paper is exactly that).

What is typed here is the *paper's* side of each comparison (:data:`PAPER_CLAIMS`, and Table V
in ``zerorename_model.tablev``) and the prose explaining a disagreement; whether a claim agrees,
and every verdict, comes from running.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import resource
import shutil
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from types import ModuleType
from typing import Any

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
TRACES = RESULTS / "traces"
TEMPLATE = HERE / "zerorename.template.md"
PAPER = HERE / "zerorename.md"
FIGURES = HERE / "figures"
PLACEHOLDERS = ("{{VERDICT_MATRIX}}", "{{TABLEV}}", "{{DIFFERENCES}}", "{{EXPLORED}}",
                "{{FENCED}}")

#: runs per scope (a scope is enumerated completely when it has fewer schedules than this, which
#: makes a ``holds`` a proof within the scope); no wall-clock limit, so that results do not depend
#: on the machine's speed, and no hypothesis sampling: a scope cut off is reported ``holds*``.
PAPER_BUDGET = {"max_runs": 4000, "seconds": None, "hypothesis_examples": 0}
#: a second pass for every ``holds*`` cell (no violation found, some scope cut off): more runs
#: there can only turn it into a proof or find a violation
DEEP_RUNS = 20000
DEEP_BUDGET = {"max_runs": DEEP_RUNS, "seconds": None, "hypothesis_examples": 0}
#: the VIII.C probe's scopes are few: explore them as far as the second pass does
RACE_MAX_RUNS = DEEP_RUNS
TABLEV_MAX_RUNS = 4000
WORKERS = 2

#: The VIII.C race: committers whose job commit can take task output from the store, each on the
#: store it is built for; and the fenced committer, with the variant that drops its fence (plain
#: PUTs), whose witness is the evidence that the fence is what excludes the partitioned attempt
RACE_PAIRS = (("v1", "hdfs"), ("directory", "s3"), ("partitioned", "s3"), ("magic", "s3"),
              ("manifest", "abfs"), ("fenced", "s3"), ("fenced+no-fence", "s3"))
RACE_SCOPES = ("partition-hadoop", "partition-spark")
RACE_PROPS = ("completeness", "exclusivity")


@dataclass(frozen=True)
class Claim:
    """What the paper (or the Hadoop document it cites) says about some cells of the matrix.

    Only the paper's side: whether our verdicts agree is computed from the results."""

    key: str
    section: str
    quote: str
    committers: tuple[str, ...]
    stores: tuple[str, ...]
    props: tuple[str, ...]
    expected: str  # "holds" or "violated"


PAPER_CLAIMS: tuple[Claim, ...] = (
    Claim("v1-hdfs", "VIII.B",
          "As the v1 algorithm satisfies the completeness and exclusivity requirements",
          ("v1",), ("hdfs",), ("completeness", "exclusivity"), "holds"),
    Claim("staging", "VIII.B",
          "the commitment of upload data has the same correctness as the v1 commit algorithm on "
          "a consistent HDFS filesystem [...] there is no requirement for a consistent view of "
          "the object store during the actual job",
          ("directory", "partitioned"), ("s3-2018", "s3"),
          ("completeness", "exclusivity", "consistency"), "holds"),
    Claim("magic", "VIII.C, XII.B",
          "All pending uploads written by a committed task attempt must be included [...] No "
          "pending uploads by a failed task attempt must be included [...] partitioned task "
          "attempts will never make changes to the visible file set",
          ("magic",), ("s3",), ("completeness", "exclusivity", "continuity"), "holds"),
    Claim("magic-listing", "VIII.C",
          "[the magic committer] depends on consistent directory listings of the object stores",
          ("magic",), ("s3-2018",), ("consistency",), "violated"),
    Claim("abort", "VIII.C",
          "the fact that all writes are not manifest until job commit means that the any writes "
          "from failed tasks will remain \"pending\" [...] lists all outstanding uploads against "
          "the destination directory and cancels them",
          ("magic", "directory", "partitioned"), ("s3",), ("abortability",), "holds"),
    Claim("concurrency", "VIII.D",
          "listing and cancelling pending work in the directory /output/dataset1, would also "
          "delete the output in /output/dataset10 [...] this was found before the product "
          "shipped", ("magic", "directory", "partitioned"), ("s3",), ("concurrency",), "holds"),
    Claim("manifest", "manifest committer document (seed 004)",
          "a committer for work which provides performance on ABFS for \"real world\" queries, "
          "and performance and correctness on GCS",
          ("manifest",), ("gcs", "abfs"), ("completeness", "exclusivity"), "holds"),
    Claim("direct", "XII.A",
          "the committer was still not resilient to failure: a failed task could not be "
          "repeated, as its output was unknown",
          ("direct",), ("s3",), ("exclusivity",), "violated"),
    Claim("stocator-failures", "XII.B",
          "every remapped file is given a name which inserted the job and task attempt IDs [...] "
          "Failed and aborted tasks and jobs can then be cleaned up by their successors",
          ("stocator",), ("s3",), ("exclusivity",), "holds"),
    Claim("stocator", "XII.B",
          "It does however, fail to meet our requirement \"Continuity of correctness.\"",
          ("stocator",), ("s3",), ("continuity",), "violated"),
    Claim("emr", "XII.C",
          "the operation may fail partway through, which will trigger a new task attempt, which "
          "will then commit its work into a destination of unknown state",
          ("emr",), ("s3",), ("exclusivity",), "violated"),
)

#: Why a claim and our verdicts can differ; shown only for a claim that does differ (a
#: difference without an entry here is shown as unexplained).
CLAIM_EXPLANATIONS: dict[str, str] = {
    "v1-hdfs": (
        "This is the race of Section VIII.C and XIV.A.1, and v1 has it too, as XIV.A.1 says. "
        "Under Hadoop's protocol the job commit is not told which attempts the driver accepted: "
        "it lists the store. An attempt that is partitioned after it was granted its commit "
        "keeps running; the driver launches a second attempt and accepts it; the first one then "
        "finishes its task commit late and replaces the committed task directory (v1 deletes "
        "it before its rename, exactly the behaviour XIV.A.1 describes). The job commit promotes "
        "the output of an attempt the driver considers failed. The paper argues that \"the "
        "pending set from either attempt must constitute a valid result of a task\"; our "
        "completeness and exclusivity follow the definition of VIII.A with the driver's view of "
        "which attempt committed, and so count it. See the protocol table below: v1 ignores the "
        "attempts Spark passes to the job commit, so Spark's protocol does not help it."),
    "staging": (
        "The staging committers propagate task output through the cluster filesystem with the "
        "v1 algorithm, and inherit v1's race (previous entry): under Hadoop's protocol a "
        "partitioned attempt's late `.pendingset` replaces the accepted attempt's, and the job "
        "completes the partitioned attempt's uploads. Under Spark's protocol the job commit uses "
        "the accepted attempts' messages (the protocol table below), which is what VIII.C "
        "suggests: \"this process could be improved were the job commit operation supplied with "
        "a list of successful task attempts\"."),
    "magic": (
        "The race VIII.C describes: \"a task attempt partitioned from the Job Manager during "
        "task commit can still complete its PUT of its list of uploads to commit, the pending "
        "set, overwriting that of the task attempt which had considered itself successful\". "
        "The paper accepts either attempt's output as valid; our checkers, which know which "
        "attempt the driver accepted, report the substitution. Under Spark's protocol the job "
        "commit takes the pending sets from the accepted attempts' messages, and no schedule "
        "of the scope explored shows a substitution (protocol table below)."),
    "manifest": (
        "The manifest committer loads the task manifests it finds in the job attempt directory "
        "and ignores what Spark passes to the job commit, so a partitioned attempt that saves "
        "its manifest after the accepted attempt did replaces it under either protocol: the "
        "same race as v1 (protocol table below)."),
    "stocator-failures": (
        "Stocator writes every file straight into the destination under an attempt-specific "
        "name. Under Hadoop's protocol its job commit is told nothing, lists the destination, "
        "and cannot tell the file of an attempt that crashed before its task commit from the "
        "file of the attempt that replaced it, so it keeps both: a reader listing the directory "
        "sees two versions of the same part. Under Spark's protocol the job commit deletes the "
        "files of attempts that are not in the messages. The paper leaves such files to be "
        "\"cleaned up by their successors\": until a later job does, the committed "
        "destination holds the failed attempt's output."),
}

#: Table V differences the model finds that ``paper/make_tablev.py`` does not explain yet.
TABLEV_EXPLANATIONS: dict[tuple[str, str], str] = {
    ("stocator", "abortable_job"): (
        "Stocator's job abort deletes the job's attempt-named files that it can list. A task "
        "attempt still running when the driver gives up writes straight into the destination; "
        "when its write lands after the abort's listing, nothing deletes it. The paper's "
        "argument is that failed and aborted work \"can then be cleaned up by their "
        "successors\": by a later job, not by this job's abort."),
}


# -- loading the model (lazily: --render-only needs none of it) ---------------------------------

def _sibling(name: str) -> ModuleType:
    """A script next to this one (``make_tablev``), importable from a test as well."""
    spec = importlib.util.spec_from_file_location(name, HERE / f"{name}.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(name, module)
    spec.loader.exec_module(module)
    return module


def _rel(path: str | Path | None) -> str | None:
    """A path as the paper links it (relative to ``paper/``)."""
    if path is None:
        return None
    return Path(path).resolve().relative_to(HERE).as_posix()


# -- computing the results ----------------------------------------------------------------------

def compute_matrix(budget: dict[str, Any], workers: int, progress: Callable[[str], None],
                   committers: Sequence[str] | None = None,
                   ) -> tuple[list[dict[str, Any]], list[list[str]]]:
    """The matrix at ``budget``, then every ``holds*`` cell again at :data:`DEEP_BUDGET`;
    returns the cells and the (committer, store) pairs explored twice."""
    from zerorename_model.verdicts import Budget, decide_job, matrix, model_resolver

    cells = matrix(committers, None, quick=False, budget=Budget(**budget), traces=str(TRACES),
                   workers=workers, progress=progress)
    deepened = undecided_cells(cells) if DEEP_BUDGET["max_runs"] > budget["max_runs"] else {}
    jobs = [(c, s, tuple(props), Budget(**DEEP_BUDGET), str(TRACES), model_resolver)
            for (c, s), props in deepened.items()]
    with ProcessPoolExecutor(max_workers=workers) as pool:
        for (c, s, *_rest), again in zip(jobs, pool.map(decide_job, jobs), strict=True):
            progress(f"again with {DEEP_BUDGET['max_runs']} runs per scope: {c} on {s}: "
                     + ", ".join(f"{x['property']}={kind(x)}" for x in again))
            fresh = {x["property"]: x for x in again}
            cells = [fresh.get(x["property"], x) if (x["committer"], x["store"]) == (c, s)
                     else x for x in cells]
    for line in scope_report(cells):
        progress(line)
    for cell in cells:
        cell["trace"] = _rel(cell["trace"])
        _drop_seconds(cell["explored"])
    return cells, [list(pair) for pair in deepened]


def scope_report(cells: Sequence[dict[str, Any]]) -> list[str]:
    """One line per (committer, store, scope) explored: runs, states, seconds, complete.
    Printed while the seconds are still there (the results leave them out)."""
    seen: dict[tuple[str, str, str], dict[str, Any]] = {}
    for cell in cells:
        explored = cell["explored"]
        for summary in explored.get("scopes", [explored] if "scope" in explored else []):
            seen[(cell["committer"], cell["store"], summary["scope"])] = summary
    return [f"  {c} on {s}, {scope}: {e['runs']} runs, {e['states']} states, "
            f"{e.get('seconds', '?')} s, {'complete' if e['complete'] else 'cut off'}"
            for (c, s, scope), e in seen.items()]


def undecided_cells(cells: Sequence[dict[str, Any]]) -> dict[tuple[str, str], list[str]]:
    """The ``holds*`` cells (no violation found, a scope cut off), by (committer, store)."""
    pairs: dict[tuple[str, str], list[str]] = {}
    for cell in cells:
        if kind(cell) == "holds*":
            pairs.setdefault((cell["committer"], cell["store"]), []).append(cell["property"])
    return pairs


def _drop_seconds(explored: dict[str, Any]) -> None:
    """Wall-clock seconds per scope depend on the machine: keep them out of the results, so
    that regenerating changes the files only when a result changes."""
    explored.pop("seconds", None)
    for scope in explored.get("scopes", []):
        scope.pop("seconds", None)


def _race_one(args: tuple[str, str, str, int]) -> dict[str, Any]:
    """One committer, one store, one partition scope: which of RACE_PROPS it violates."""
    from zerorename_model.explore import explore, shrink
    from zerorename_model.properties import PROPERTIES
    from zerorename_model.protocols import get
    from zerorename_model.trace import write_trace
    from zerorename_model.verdicts import SCOPES

    committer, store, scope_name, max_runs = args
    scope = next(s for s in SCOPES if s.name == scope_name)
    scenario = scope.make(committer, store)
    factory = get(committer)
    report = explore(scenario, factory, RACE_PROPS, max_runs=max_runs, seconds=None,
                     stop_when_all_violated=True)
    verdicts: dict[str, dict[str, Any]] = {}
    for prop in RACE_PROPS:
        if prop not in report.violations:
            verdicts[prop] = {"verdict": "holds", "trace": None, "witness": None}
            continue
        _violations, _result, choices = report.violations[prop]
        _short, result = shrink(scenario, factory, prop, choices)
        found = PROPERTIES[prop](result)
        trace = [*result.trace[:-1], {**result.trace[-1], "violations": [str(v) for v in found]}]
        path = write_trace(TRACES / f"race.{committer}.{store}.{scope_name}.{prop}.jsonl", trace)
        verdicts[prop] = {"verdict": "violated", "trace": _rel(path), "witness": str(found[0])}
    summary = report.summary()
    seconds = summary.pop("seconds", None)
    return {"committer": committer, "store": store, "scope": scope_name,
            "driver": scenario.driver, "verdicts": verdicts, "explored": summary,
            "seconds": seconds}


def compute_race(max_runs: int, workers: int,
                 pairs: Sequence[tuple[str, str]] = RACE_PAIRS,
                 progress: Callable[[str], None] | None = None) -> list[dict[str, Any]]:
    """The VIII.C probe for ``pairs``: one row per (pair, scope), in that order."""
    jobs = [(c, s, scope, max_runs) for c, s in pairs for scope in RACE_SCOPES]
    with ProcessPoolExecutor(max_workers=workers) as pool:
        rows = list(pool.map(_race_one, jobs))
    for row in rows:
        seconds = row.pop("seconds")  # machine-dependent: reported, not kept
        if progress is not None:
            e = row["explored"]
            progress(f"  VIII.C {row['committer']} on {row['store']}, {row['scope']}: "
                     f"{e['runs']} runs, {e['states']} states, {seconds} s, "
                     f"{'complete' if e['complete'] else 'stopped'}: " + ", ".join(
                         f"{p}={v['verdict']}" for p, v in row["verdicts"].items()))
    return rows


def compute_tablev(columns: Sequence[str] | None = None) -> dict[str, Any]:
    """Table V for ``columns`` (default: every registered column of the model's table)."""
    from zerorename_model.tablev import (
        ATTRIBUTES,
        COLUMNS,
        PAPER_COLUMN,
        PAPER_SOURCE,
        PAPER_TABLE_V,
        compare,
        compute,
    )
    from zerorename_model.trace import write_trace

    table = compute(COLUMNS if columns is None else columns, max_runs=TABLEV_MAX_RUNS)
    cells: dict[str, dict[str, Any]] = {}
    for committer, row in table.items():
        cells[committer] = {}
        for attribute, cell in row.items():
            explored = {k: v for k, v in cell.explored.items() if k not in ("seconds", "scenario")}
            path = None
            if cell.witness_trace and (cell.explored["found"] or not cell.value):
                path = _rel(write_trace(TRACES / f"tablev.{committer}.{attribute}.jsonl",
                                        cell.witness_trace))
            cells[committer][attribute] = {"value": cell.value, "detail": cell.detail,
                                           "explored": explored, "trace": path}
    differences = [{"committer": d.committer, "attribute": d.attribute, "ours": d.ours,
                    "paper": d.paper, "reason": d.reason} for d in compare(table)]
    record_reader = {c: record_reader_atomicity(c) for c in table if c in RECORD_READERS}
    return {"source": PAPER_SOURCE, "attributes": [list(a) for a in ATTRIBUTES],
            "paper": PAPER_TABLE_V, "paper_columns": PAPER_COLUMN, "cells": cells,
            "differences": differences, "record_reader": record_reader}


#: Committers that publish a record of their output (``_SUCCESS`` naming every committed file,
#: written after the last of them): the module and function that read it, as a reader that
#: trusts the record rather than a listing would.  Table V's "Atomic Job Commit" probe lists
#: the destination; for these committers it is asked again of a reader of the record.
RECORD_READERS = {"fenced": ("zerorename_model.protocols.fenced", "committed_files")}
RECORD_READER_DRIVERS = ("spark", "hadoop")


def record_reader_atomicity(committer: str) -> dict[str, Any]:
    """Table V's atomic-job-commit probe (one task, two files, a driver restart anywhere,
    including in the middle of ``commit_job``), with the observation made in every state by a
    reader of the committer's record: it must see nothing of the job, or every file of every
    accepted attempt with the size the record gives.  Under both job-commit protocols."""
    from zerorename_model.scenario import Faults, Scenario
    from zerorename_model.stores import ObjectSnapshot
    from zerorename_model.tablev import TWO_FILES, Probe, search
    from zerorename_model.trace import write_trace

    module, name = RECORD_READERS[committer]
    read = getattr(importlib.import_module(module), name)

    def sees_a_part(run: Any, _move: Any) -> str | None:
        store = ObjectSnapshot(run.store.objects)
        for job in run.jobs:
            named = read(store, job.spec.dest)
            if not named:
                continue
            got = {rel: store.objects.get(f"{job.spec.dest}/{rel}") for rel in named}
            want = {rel: data for task, _message in job.accepted.values()
                    for rel, data in run.written.get(task.name, {}).items()}
            if got != want or any(len(got[r] or b"") != f.size for r, f in named.items()):
                return (f"the record names {sorted(got)}, the accepted output is "
                        f"{sorted(want)}")
        return None

    explored: dict[str, Any] = {}
    found, trace = None, None
    for driver in RECORD_READER_DRIVERS:
        def scenario(c: str, driver: str = driver) -> Scenario:
            return Scenario(c, store="s3", tasks=1, files=TWO_FILES, max_attempts=2,
                            driver=driver, faults=Faults(settle=False, restart=1))

        probe = Probe(scenario, "forall", "a reader of the record sees part of the output",
                      watch=sees_a_part)
        result = search(probe, committer, max_runs=TABLEV_MAX_RUNS)
        explored[driver] = {"found": result.found, "runs": result.runs,
                            "states": result.states, "complete": result.complete}
        if result.found and found is None:
            found = result.found
            assert result.result is not None
            trace = _rel(write_trace(
                TRACES / f"tablev.{committer}.atomic_job_commit.record.jsonl",
                result.result.trace))
    return {"value": found is None, "reader": f"{module}.{name}",
            "detail": found or "no schedule found where a reader of the record sees part of "
                               "the output", "explored": explored, "trace": trace}


def describe_scopes() -> list[dict[str, Any]]:
    from zerorename_model.verdicts import SCOPES

    described = []
    for scope in SCOPES:
        scenario = scope.make("v1", "s3")
        faults = {k: v for k, v in asdict(scenario.faults).items() if v and k != "settle"}
        described.append({"name": scope.name, "props": list(scope.props),
                          "driver": scenario.driver, "tasks": scenario.tasks,
                          "attempts": scenario.max_attempts, "files": list(scenario.files),
                          "dests": list(scenario.dests), "faults": faults})
    return described


def _child_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def generate(budget: dict[str, Any], workers: int, progress: Callable[[str], None],
             committers: Sequence[str] | None = None) -> dict[str, Any]:
    from zerorename_model.properties import PROPERTIES
    from zerorename_model.verdicts import MATRIX_COMMITTERS, MATRIX_STORES

    if TRACES.exists():
        shutil.rmtree(TRACES)
    TRACES.mkdir(parents=True)
    timing: dict[str, float] = {}
    started, cpu = time.monotonic(), _child_cpu()
    cells, deepened = compute_matrix(budget, workers, progress, committers)
    timing["matrix_wall_s"] = time.monotonic() - started
    timing["matrix_cpu_s"] = _child_cpu() - cpu
    progress(f"matrix: {timing['matrix_wall_s']:.0f} s wall, {timing['matrix_cpu_s']:.0f} s CPU")
    started, cpu = time.monotonic(), _child_cpu()
    race = compute_race(RACE_MAX_RUNS, workers, progress=progress)
    timing["race_wall_s"] = time.monotonic() - started
    timing["race_cpu_s"] = _child_cpu() - cpu
    progress(f"VIII.C probe: {timing['race_wall_s']:.0f} s wall")
    started, own = time.monotonic(), time.process_time()
    tablev = compute_tablev()
    timing["tablev_wall_s"] = time.monotonic() - started
    timing["tablev_cpu_s"] = time.process_time() - own
    progress(f"Table V: {timing['tablev_wall_s']:.0f} s wall")
    return {
        "generated_by": "paper/make_paper.py",
        "budget": budget,
        "deep_budget": DEEP_BUDGET,
        "deepened": deepened,
        "race_max_runs": RACE_MAX_RUNS,
        "tablev_max_runs": TABLEV_MAX_RUNS,
        "workers": workers,
        "timing": {k: round(v) for k, v in timing.items()},
        "committers": [c for c in MATRIX_COMMITTERS if any(x["committer"] == c for x in cells)],
        "stores": list(MATRIX_STORES),
        "properties": list(PROPERTIES),
        "scopes": describe_scopes(),
        "cells": cells,
        "race": race,
        "tablev": tablev,
        "merged": [],
    }


class MergeRefused(ValueError):
    """A merge whose cells could not stand beside the existing results (another budget, other
    scopes) or that names nothing the paper explores."""


def _traces_of(cells: Sequence[dict[str, Any]], race: Sequence[dict[str, Any]],
               tablev: dict[str, Any]) -> set[str]:
    """Every trace a part of the results links (paths relative to ``paper/``)."""
    named = {c["trace"] for c in cells if c["trace"]}
    named |= {v["trace"] for row in race for v in row["verdicts"].values() if v["trace"]}
    named |= {c["trace"] for row in tablev["cells"].values() for c in row.values()
              if c["trace"]}
    named |= {r["trace"] for r in tablev.get("record_reader", {}).values() if r["trace"]}
    return named


def merge_plan(results: dict[str, Any], committers: Sequence[str], budget: dict[str, Any],
               ) -> tuple[list[str], list[tuple[str, str]], list[str]]:
    """What a merge of ``committers`` explores: their matrix rows, their VIII.C pairs and their
    Table V columns; :class:`MergeRefused` when that is nothing, or when the existing results
    were made under other settings than this script's (their cells would not be comparable)."""
    from zerorename_model.properties import PROPERTIES
    from zerorename_model.tablev import COLUMNS, available
    from zerorename_model.verdicts import MATRIX_COMMITTERS, MATRIX_STORES

    settings = {"budget": (results["budget"], budget),
                "deep_budget": (results["deep_budget"], DEEP_BUDGET),
                "race_max_runs": (results["race_max_runs"], RACE_MAX_RUNS),
                "tablev_max_runs": (results["tablev_max_runs"], TABLEV_MAX_RUNS),
                "stores": (results["stores"], list(MATRIX_STORES)),
                "properties": (results["properties"], list(PROPERTIES)),
                "scopes": (results["scopes"], describe_scopes())}
    for name, (theirs, ours) in settings.items():
        if theirs != ours:
            raise MergeRefused(f"verdicts.json was made with {name} {theirs!r}, this merge "
                               f"would use {ours!r}: regenerate everything instead")
    matrix_rows = [c for c in MATRIX_COMMITTERS if c in committers]
    race_pairs = [(c, s) for c, s in RACE_PAIRS if c in committers]
    columns = [c for c in available(COLUMNS) if c in committers]
    unknown = [c for c in committers if c not in matrix_rows + [c for c, _ in race_pairs]
               + columns]
    if unknown:
        raise MergeRefused(f"{', '.join(unknown)}: not a matrix committer, a VIII.C pair or a "
                           f"Table V column, so a merge has nothing to explore for it")
    return matrix_rows, race_pairs, columns


def merge(results: dict[str, Any], committers: Sequence[str], budget: dict[str, Any],
          workers: int, progress: Callable[[str], None],
          now: Callable[[], datetime] = lambda: datetime.now(UTC)) -> dict[str, Any]:
    """``results`` with exactly the parts of ``committers`` explored again (see the module
    docstring): their cells, VIII.C rows and Table V column replaced, their traces written and
    their stale traces removed, everything else as it was; the merge recorded in ``merged``."""
    from zerorename_model.tablev import ATTRIBUTES, COLUMNS
    from zerorename_model.verdicts import MATRIX_COMMITTERS, MATRIX_STORES

    matrix_rows, race_pairs, columns = merge_plan(results, committers, budget)
    old_traces = _traces_of(results["cells"], results["race"], results["tablev"])
    TRACES.mkdir(parents=True, exist_ok=True)
    timing: dict[str, float] = {}
    started, cpu = time.monotonic(), _child_cpu()
    cells: list[dict[str, Any]] = []
    deepened: list[list[str]] = []
    if matrix_rows:
        cells, deepened = compute_matrix(budget, workers, progress, matrix_rows)
    timing["matrix_wall_s"] = time.monotonic() - started
    timing["matrix_cpu_s"] = _child_cpu() - cpu
    started, cpu = time.monotonic(), _child_cpu()
    race = compute_race(RACE_MAX_RUNS, workers, race_pairs, progress) if race_pairs else []
    timing["race_wall_s"] = time.monotonic() - started
    timing["race_cpu_s"] = _child_cpu() - cpu
    started, own = time.monotonic(), time.process_time()
    tablev = compute_tablev(columns) if columns else None
    timing["tablev_wall_s"] = time.monotonic() - started
    timing["tablev_cpu_s"] = time.process_time() - own

    merged = dict(results)
    props = list(results["properties"])
    order = {"committer": list(MATRIX_COMMITTERS), "store": list(MATRIX_STORES)}
    merged["cells"] = sorted(
        [c for c in results["cells"] if c["committer"] not in matrix_rows] + cells,
        key=lambda c: (order["committer"].index(c["committer"]),
                       order["store"].index(c["store"]), props.index(c["property"])))
    merged["committers"] = [c for c in MATRIX_COMMITTERS
                            if any(x["committer"] == c for x in merged["cells"])]
    merged["deepened"] = sorted(
        [pair for pair in results["deepened"] if pair[0] not in matrix_rows] + deepened,
        key=lambda pair: (order["committer"].index(pair[0]), order["store"].index(pair[1])))
    pair_order = [(c, s) for c, s in RACE_PAIRS]
    merged["race"] = sorted(
        [r for r in results["race"] if (r["committer"], r["store"]) not in race_pairs] + race,
        key=lambda r: (pair_order.index((r["committer"], r["store"])),
                       RACE_SCOPES.index(r["scope"])))
    table = dict(results["tablev"])
    if tablev is not None:
        kept = {c: row for c, row in results["tablev"]["cells"].items() if c not in columns}
        all_cells = {**kept, **tablev["cells"]}
        table["cells"] = {c: all_cells[c] for c in COLUMNS if c in all_cells}
        attributes = [a for a, _label in ATTRIBUTES]
        table["differences"] = sorted(
            [d for d in results["tablev"]["differences"] if d["committer"] not in columns]
            + tablev["differences"],
            key=lambda d: (list(COLUMNS).index(d["committer"]),
                           attributes.index(d["attribute"])))
        readers = {c: r for c, r in results["tablev"].get("record_reader", {}).items()
                   if c not in columns}
        readers.update(tablev["record_reader"])
        table["record_reader"] = {c: readers[c] for c in COLUMNS if c in readers}
    merged["tablev"] = table

    new_traces = _traces_of(merged["cells"], merged["race"], table)
    for stale in sorted(old_traces - new_traces):
        (HERE / stale).unlink(missing_ok=True)
        progress(f"removed the stale trace {stale}")
    record = {"committers": list(committers), "at": now().isoformat(timespec="seconds"),
              "budget": budget, "deep_budget": DEEP_BUDGET, "race_max_runs": RACE_MAX_RUNS,
              "tablev_max_runs": TABLEV_MAX_RUNS, "workers": workers,
              "matrix": matrix_rows, "race": [list(p) for p in race_pairs],
              "tablev": columns, "timing": {k: round(v) for k, v in timing.items()}}
    # the merges that made some part of these results, oldest first: a committer's part comes
    # from the last merge naming it (or from the full run when none does); a merge whose every
    # committer this one explored again no longer made anything here
    merged["merged"] = [m for m in results.get("merged", [])
                        if not set(m["committers"]) <= set(committers)] + [record]
    return merged


# -- rendering (a pure function of the results) -------------------------------------------------

def kind(cell: dict[str, Any]) -> str:
    """``violated``, ``holds`` (proved within the scopes), ``holds*`` (sampled) or ``n/a``."""
    if cell["verdict"] == "holds" and not cell["explored"].get("complete", True):
        return "holds*"
    return str(cell["verdict"])


def _link(text: str, path: str | None) -> str:
    return f"[{text}]({path})" if path else text


def _mark(cell: dict[str, Any]) -> str:
    mark = kind(cell)
    if mark == "violated":
        return _link("**violated**", cell["trace"])
    return mark.replace("*", "\\*")


def _index(results: dict[str, Any]) -> dict[tuple[str, str, str], dict[str, Any]]:
    return {(c["committer"], c["store"], c["property"]): c for c in results["cells"]}


def render_matrix(results: dict[str, Any]) -> str:
    props = results["properties"]
    cells = _index(results)
    lines = ["| committer | store | " + " | ".join(props) + " |",
             "|---|---|" + "---|" * len(props)]
    for committer in results["committers"]:
        for store in results["stores"]:
            row = [_mark(cells[(committer, store, p)]) if (committer, store, p) in cells else ""
                   for p in props]
            lines.append(f"| {committer} | {store} | " + " | ".join(row) + " |")
    counts = Counter(kind(c) for c in results["cells"])
    lines += [
        "",
        f"{len(results['cells'])} cells: {counts['violated']} violated, {counts['holds']} hold "
        f"(proved within the scopes), {counts['holds*']} hold as far as the budget reached "
        f"(`holds*`), {counts['n/a']} not applicable.",
        "",
        "Where each violation was found (the scope of its witness, and the length of the "
        "shrunk schedule in steps):",
        "",
        "| committer | property | scope | stores (steps) |",
        "|---|---|---|---|",
    ]
    found: dict[tuple[str, str, str], list[str]] = {}
    for cell in results["cells"]:
        if cell["verdict"] == "violated":
            key = (cell["committer"], cell["property"], cell["explored"]["scope"])
            found.setdefault(key, []).append(f"{cell['store']} ({cell['explored']['steps']})")
    for (committer, prop, scope), stores in found.items():
        lines.append(f"| {committer} | {prop} | {scope} | {', '.join(stores)} |")
    return "\n".join(lines)


def _scope_runs(results: dict[str, Any]) -> dict[tuple[str, str, str], dict[str, Any]]:
    """(committer, store, scope) -> that exploration's summary (cells share explorations)."""
    found: dict[tuple[str, str, str], dict[str, Any]] = {}
    for cell in results["cells"]:
        explored = cell["explored"]
        for summary in explored.get("scopes", [explored] if "scope" in explored else []):
            found[(cell["committer"], cell["store"], summary["scope"])] = summary
    return found


def _faults(faults: dict[str, int]) -> str:
    return ", ".join(f"{k}={v}" for k, v in sorted(faults.items())) or "none"


def render_explored(results: dict[str, Any]) -> str:
    budget, timing = results["budget"], results["timing"]
    explorations = _scope_runs(results)
    complete = sum(1 for e in explorations.values() if e["complete"])
    lines = [
        f"Budget: at most **{budget['max_runs']} runs per scope** for every (committer, store) "
        f"pair (no time limit, so the results do not depend on the machine)"
        + (f"; where a scope was cut off before a property was violated, hypothesis then tried "
           f"{budget['hypothesis_examples']} derandomized examples per open property"
           if budget["hypothesis_examples"] else
           "; a scope cut off by the budget is not sampled further (its cells read `holds*`)")
        + ". " + _deepened(results)
        + f"VIII.C probe: at most {results['race_max_runs']} runs per scope. "
        + f"Table V: at most {results['tablev_max_runs']} runs per probe.",
        "",
        f"Explorations behind the verdicts (for a violated cell the scope that violated it, "
        f"for a holding cell every scope that checks it): {len(explorations)} "
        f"(committer, store, scope) explorations, {complete} of them enumerated completely; "
        f"{sum(e['runs'] for e in explorations.values())} runs, "
        f"{sum(e['states'] for e in explorations.values())} distinct states. "
        f"Time on {results['workers']} worker processes: matrix {timing['matrix_wall_s']} s "
        f"({timing['matrix_cpu_s']} s CPU), VIII.C probe {timing['race_wall_s']} s, "
        f"Table V {timing['tablev_wall_s']} s." + _merges(results),
        "",
        "| scope | job commit protocol | tasks x attempts x files | faults (at most) "
        "| destinations | properties it decides |",
        "|---|---|---|---|---|---|",
    ]
    for scope in results["scopes"]:
        lines.append(
            f"| {scope['name']} | {scope['driver']} | {scope['tasks']} x {scope['attempts']} x "
            f"{len(scope['files'])} | {_faults(scope['faults'])} | "
            f"{', '.join(d.removeprefix('s3://bucket/') for d in scope['dests'])} | "
            f"{', '.join(scope['props'])} |")
    lines += ["", "| committer | explorations | enumerated completely | runs | states |",
              "|---|---|---|---|---|"]
    for committer in results["committers"]:
        mine = [e for (c, _s, _scope), e in explorations.items() if c == committer]
        lines.append(f"| {committer} | {len(mine)} | {sum(1 for e in mine if e['complete'])} | "
                     f"{sum(e['runs'] for e in mine)} | {sum(e['states'] for e in mine)} |")
    return "\n".join(lines)


def _merges(results: dict[str, Any]) -> str:
    """Which rows were explored after the full run and merged in, when, how (provenance)."""
    text = ""
    for m in results.get("merged", []):
        t = m["timing"]
        parts = ([f"matrix rows of {', '.join(f'`{c}`' for c in m['matrix'])}"]
                 if m["matrix"] else [])
        parts += ([f"VIII.C rows of {', '.join(f'`{c}` on {s}' for c, s in m['race'])}"]
                  if m["race"] else [])
        parts += ([f"Table V column of {', '.join(f'`{c}`' for c in m['tablev'])}"]
                  if m["tablev"] else [])
        same = (m["budget"] == results["budget"] and m["deep_budget"] == results["deep_budget"]
                and m["race_max_runs"] == results["race_max_runs"]
                and m["tablev_max_runs"] == results["tablev_max_runs"])
        text += (f" Explored later and merged into these results on {m['at'][:10]} "
                 f"(`make_paper.py --merge --committers {','.join(m['committers'])}`, which "
                 f"replaces only those parts and their traces): {'; '.join(parts)}, "
                 f"{'with the same budgets' if same else 'with other budgets: ' + str(m)}; "
                 f"on {m['workers']} worker processes, matrix {t['matrix_wall_s']} s "
                 f"({t['matrix_cpu_s']} s CPU), VIII.C probe {t['race_wall_s']} s, "
                 f"Table V {t['tablev_wall_s']} s.")
    if text:
        text += " The times before this are the full run's."
    return text


def _deepened(results: dict[str, Any]) -> str:
    pairs = results["deepened"]
    if not pairs:
        return ""
    by_committer: dict[str, list[str]] = {}
    for committer, store in pairs:
        by_committer.setdefault(committer, []).append(store)
    listed = "; ".join(f"`{c}` on {', '.join(stores)}" for c, stores in by_committer.items())
    return (f"Every cell that held in the scopes explored but with some scope cut off was explored "
            f"again with at most **{results['deep_budget']['max_runs']} runs per scope**: "
            f"{listed}. ")


def _bool(value: bool | None) -> str:
    return "" if value is None else str(value)


def render_tablev(results: dict[str, Any]) -> str:
    table = results["tablev"]
    names = list(table["cells"])
    columns = table["paper_columns"]
    lines = ["| attribute | " + " | ".join(names) + " |", "|---" * (len(names) + 1) + "|"]
    for attribute, label in table["attributes"]:
        row = []
        for name in names:
            cell = table["cells"][name][attribute]
            text = _bool(cell["value"])
            if not cell["value"]:
                text = _link(text, cell["trace"])
            paper = table["paper"][attribute].get(columns.get(name, ""))
            if paper is not None and paper != cell["value"]:
                text = f"**{text}** (paper: {_bool(paper)})"
            row.append(text)
        lines.append(f"| {label} | " + " | ".join(row) + " |")
    ours: dict[str, list[str]] = {}
    for name in names:
        if name in columns:
            ours.setdefault(columns[name], []).append(f"`{name}`")
    lines += ["", f"Paper: {table['source']}. Its columns are "
              + ", ".join(f"{paper} (our {' and '.join(mine)})" for paper, mine in ours.items())
              + f"; the other columns are not in the paper. {len(table['differences'])} cells "
              "differ from the paper (bold). A `False` links to the trace of the run that "
              "decided it: the counterexample for a `forall` attribute, the fault-free run "
              "for an `exists` attribute that no schedule showed."]
    return "\n".join(lines)


def _claim_cells(claim: Claim, results: dict[str, Any]) -> list[dict[str, Any]]:
    cells = _index(results)
    return [cells[(c, s, p)] for c in claim.committers for s in claim.stores
            for p in claim.props if (c, s, p) in cells]


def _contradicts(claim: Claim, cell: dict[str, Any]) -> bool:
    if cell["verdict"] == "n/a":
        return False
    return bool((cell["verdict"] == "violated") != (claim.expected == "violated"))


def _tablev_explanations() -> dict[tuple[str, str], str]:
    explained: dict[tuple[str, str], str] = dict(_sibling("make_tablev").EXPLANATIONS)
    return {**explained, **TABLEV_EXPLANATIONS}


def render_differences(results: dict[str, Any]) -> str:
    lines = ["### The verdict matrix against the paper's claims", "",
             "| claim | source | cells | the paper says | ours |", "|---|---|---|---|---|"]
    differing: list[tuple[Claim, list[dict[str, Any]]]] = []
    for claim in PAPER_CLAIMS:
        cells = _claim_cells(claim, results)
        wrong = [c for c in cells if _contradicts(claim, c)]
        ours = Counter(kind(c) for c in cells)
        summary = ", ".join(f"{n} {k}" for k, n in sorted(ours.items()))
        verdict = (f"**differs**: {summary}" if wrong else f"agrees: {summary}" if cells
                   else "not computed")
        lines.append(f"| {claim.key} | {claim.section} | {' '.join(claim.committers)} on "
                     f"{' '.join(claim.stores)}: {', '.join(claim.props)} | {claim.expected} "
                     f"| {verdict} |")
        if wrong:
            differing.append((claim, wrong))
    for claim, wrong in differing:
        lines += ["", f"#### {claim.key} ({claim.section})", "",
                  f"The paper: \"{claim.quote}\".", "",
                  "Ours: " + "; ".join(
                      f"{c['committer']} on {c['store']}, {c['property']}: "
                      f"{_link(kind(c), c['trace'])}"
                      + (f" (scope `{c['explored']['scope']}`)" if "scope" in c["explored"]
                         else "") for c in wrong) + ".", "",
                  "Why: " + CLAIM_EXPLANATIONS.get(
                      claim.key, "unexplained so far: read the witness traces.")]
    lines += ["", "### The VIII.C race: Hadoop's job commit protocol against Spark's", "",
              "The same scope (2 tasks, at most 2 attempts each, one partitioned attempt at any "
              "point of any schedule) with the job commit told nothing (Hadoop: it lists the "
              "store) or told the accepted attempts' messages (Spark):", "",
              "| committer | store | " + " | ".join(
                  f"{p}, {scope.split('-')[1]}" for scope in RACE_SCOPES for p in RACE_PROPS)
              + " |",
              "|---|---|" + "---|" * (len(RACE_SCOPES) * len(RACE_PROPS))]
    rows: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for probe in results["race"]:
        rows.setdefault((probe["committer"], probe["store"]), []).append(probe)
    for (committer, store), probe_rows in rows.items():
        lines.append(f"| {committer} | {store} | " + " | ".join(_race_marks(probe_rows)) + " |")
    lines += ["", "(`holds`: the scope was enumerated completely; `holds*`: the run budget "
              "ran out first.)"]
    table = results["tablev"]
    labels = dict(map(tuple, table["attributes"]))
    explanations = _tablev_explanations()
    lines += ["", "### Table V against the paper", ""]
    if not table["differences"]:
        lines.append("Every computed cell agrees with the paper.")
    for d in table["differences"]:
        cell = table["cells"][d["committer"]][d["attribute"]]
        why = explanations.get((d["committer"], d["attribute"]),
                               "unexplained so far: read the witness trace.")
        lines += [f"#### {d['committer']}: {labels[d['attribute']]} (ours {d['ours']}, paper "
                  f"{d['paper']})", "",
                  f"Finding: {d['reason']} ({_link('trace', cell['trace'])}).", "",
                  f"Why: {why}", ""]
    return "\n".join(lines).rstrip()


#: the committer of Section 6 and its variant without the fence
FENCED = "fenced"
FENCED_VARIANT = "fenced+no-fence"


def _race_marks(probe_rows: Sequence[dict[str, Any]]) -> list[str]:
    by_scope = {r["scope"]: r for r in probe_rows}
    marks = []
    for scope in RACE_SCOPES:
        for prop in RACE_PROPS:
            row = by_scope[scope]
            v = row["verdicts"][prop]
            marks.append(_link("**violated**", v["trace"]) if v["verdict"] == "violated"
                         else "holds" if row["explored"]["complete"] else "holds\\*")
    return marks


def _runs(n: int) -> str:
    return f"{n} run" if n == 1 else f"{n} runs"


def _searched(explored: dict[str, Any]) -> str:
    """How a Table V search ended: it found its schedule, covered every one, or was cut off."""
    if explored["found"]:
        return "found"
    return "every schedule" if explored["complete"] else "run budget hit"


def render_fenced(results: dict[str, Any]) -> str:
    """Section 6's tables: the fenced committer's matrix row with what its explorations
    covered, its Table V column with what each probe found (and the job commit's atomicity
    for a reader of its record), and the VIII.C probe with and without the fence."""
    props = results["properties"]
    cells = _index(results)
    explorations = _scope_runs(results)
    lines = ["| store | " + " | ".join(props) + " | what was explored |",
             "|---|" + "---|" * (len(props) + 1)]
    for store in results["stores"]:
        row = [cells[(FENCED, store, p)] for p in props if (FENCED, store, p) in cells]
        if not row:
            continue
        mine = [e for (c, s, _scope), e in explorations.items() if (c, s) == (FENCED, store)]
        if mine:
            complete = sum(1 for e in mine if e["complete"])
            covered = (f"{len(mine)} scopes, {complete} enumerated completely; "
                       f"{sum(e['runs'] for e in mine)} runs, "
                       f"{sum(e['states'] for e in mine)} states")
        else:
            reasons = sorted({c["explored"]["reason"] for c in row if c["verdict"] == "n/a"})
            covered = "not explored: " + "; ".join(reasons)
        lines.append(f"| {store} | " + " | ".join(_mark(c) for c in row) + f" | {covered} |")
    table = results["tablev"]
    column = table["cells"].get(FENCED)
    if column is not None:
        labels = dict(map(tuple, table["attributes"]))
        lines += ["", "| attribute | `fenced` | what the probe's search found | runs, states |",
                  "|---|---|---|---|"]
        for attribute, cell in column.items():
            e = cell["explored"]
            how = _searched(e)
            lines.append(f"| {labels[attribute]} | {_link(_bool(cell['value']), cell['trace'])}"
                         f" | {cell['detail']} | {_runs(e['runs'])}, {e['states']} states "
                         f"({how}) |")
        reader = table.get("record_reader", {}).get(FENCED)
        if reader is not None:
            searched = "; ".join(
                f"{driver}'s protocol: {_runs(e['runs'])}, {e['states']} states ({_searched(e)})"
                for driver, e in reader["explored"].items())
            value = _link(_bool(reader["value"]), reader["trace"])
            lines.append(f"| Atomic Job Commit, for a reader of `_SUCCESS` "
                         f"(`{reader['reader']}`) | {value} | {reader['detail']} | {searched} |")
    rows: dict[str, list[dict[str, Any]]] = {}
    for probe in results["race"]:
        if probe["committer"] in (FENCED, FENCED_VARIANT):
            rows.setdefault(f"{probe['committer']} | {probe['store']}", []).append(probe)
    if rows:
        lines += ["", "| committer | store | " + " | ".join(
            f"{p}, {scope.split('-')[1]}" for scope in RACE_SCOPES for p in RACE_PROPS) + " |",
                  "|---|---|" + "---|" * (len(RACE_SCOPES) * len(RACE_PROPS))]
        for key, probe_rows in rows.items():
            lines.append(f"| {key} | " + " | ".join(_race_marks(probe_rows)) + " |")
        witnesses = [(p, prop, v) for probe_rows in rows.values() for p in probe_rows
                     for prop, v in p["verdicts"].items() if v["verdict"] == "violated"]
        for p, prop, v in witnesses:
            lines += ["", f"`{p['committer']}` on {p['store']}, scope `{p['scope']}`, "
                          f"{prop}: {v['witness']} ({_link('trace', v['trace'])})."]
    return "\n".join(lines)


def render(template: str, results: dict[str, Any]) -> str:
    """The paper: the template with every generated section substituted."""
    sections = {
        "{{VERDICT_MATRIX}}": render_matrix(results),
        "{{TABLEV}}": render_tablev(results),
        "{{DIFFERENCES}}": render_differences(results),
        "{{EXPLORED}}": render_explored(results),
        "{{FENCED}}": render_fenced(results),
    }
    for placeholder, text in sections.items():
        if template.count(placeholder) != 1:
            raise ValueError(f"the template must hold {placeholder} exactly once")
        template = template.replace(placeholder, text)
    return template


def load_results(path: Path = RESULTS / "verdicts.json") -> dict[str, Any]:
    results: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return results


def write_paper(results: dict[str, Any]) -> None:
    PAPER.write_text(render(TEMPLATE.read_text(encoding="utf-8"), results), encoding="utf-8")


# -- figures (a pure function of the results and the traces) ----------------------------------

#: The VIII.C witness the paper draws: the magic committer under Hadoop's protocol, where a
#: partitioned attempt's late pending set replaces the accepted attempt's.
RACE_FIGURE_TRACE = "results/traces/race.magic.s3.partition-hadoop.exclusivity.jsonl"
#: Figures are PNG drawn by Agg at a fixed resolution with matplotlib's default style and no
#: "Software" text chunk, so the same results draw the same bytes (tests/test_paper.py
#: compares them); a matplotlib upgrade that draws differently is fixed by --render-only.
FIGURE_DPI = 100


def figure_names(results: dict[str, Any]) -> list[str]:
    """The files :func:`write_figures` draws, relative to the figures directory."""
    return (["matrix.png"] + [f"matrix.{prop}.png" for prop in results["properties"]]
            + ["race.timeline.png", "race.slice.png"])


def write_figures(results: dict[str, Any], out: Path) -> list[Path]:
    """Draw the matrix (overall and per property) and the VIII.C witness (timeline and slice)
    into ``out``; remove any other PNG there, so no stale figure is left."""
    import matplotlib
    import matplotlib.pyplot as plt
    from matplotlib.figure import Figure

    from zerorename_model import analysis, hb, viz

    out.mkdir(parents=True, exist_ok=True)
    witness = analysis.load(HERE / RACE_FIGURE_TRACE)
    cells = results["cells"]
    drawn: dict[str, Callable[[], Figure]] = {
        "matrix.png": lambda: viz.verdict_heatmap(
            cells, title="violated properties per cell (of those that apply)")}

    def _heatmap(prop: str) -> Callable[[], Figure]:
        return lambda: viz.verdict_heatmap(cells, prop=prop, sampled=True)

    for prop in results["properties"]:
        drawn[f"matrix.{prop}.png"] = _heatmap(prop)

    def _timeline() -> Figure:
        _graph, steps = hb.slice_of(witness)
        figure: Figure = viz.timeline(witness, highlight=[s.index for s in steps])
        return figure

    drawn["race.timeline.png"] = _timeline
    drawn["race.slice.png"] = lambda: viz.slice_graph(
        *hb.slice_of(witness), title="why: the slice of the violation (the timeline's "
                                     "large points)")
    assert list(drawn) == figure_names(results)
    written = []
    with plt.style.context("default"), matplotlib.rc_context({"savefig.dpi": FIGURE_DPI}):
        for name, draw in drawn.items():
            figure = draw()
            figure.savefig(out / name, format="png", dpi=FIGURE_DPI,
                           metadata={"Software": None})
            plt.close(figure)
            written.append(out / name)
    for stale in sorted(set(out.glob("*.png")) - set(written)):
        stale.unlink()
    return written


def save_results(results: dict[str, Any], path: Path = RESULTS / "verdicts.json") -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(results, indent=1, ensure_ascii=False, default=str) + "\n",
                    encoding="utf-8")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--render-only", action="store_true",
                        help="re-render zerorename.md and figures/ from results/verdicts.json")
    parser.add_argument("--merge", action="store_true",
                        help="explore only --committers and replace exactly their cells, "
                             "VIII.C rows and Table V column in results/verdicts.json")
    parser.add_argument("--workers", type=int, default=min(WORKERS, os.cpu_count() or 1))
    parser.add_argument("--max-runs", type=int, default=PAPER_BUDGET["max_runs"],
                        help="runs per scope (to try a budget; the paper uses the default)")
    parser.add_argument("--committers", default=None,
                        help="comma-separated subset of the matrix (to try; the paper uses all)")
    args = parser.parse_args(argv)
    budget = {**PAPER_BUDGET, "max_runs": args.max_runs}
    committers = [c for c in args.committers.split(",") if c] if args.committers else None
    progress: Callable[[str], None] = lambda line: print(line, flush=True)  # noqa: E731
    started = time.monotonic()
    if args.merge and args.render_only:
        parser.error("--merge explores: it cannot be --render-only")
    if args.merge:
        if not committers:
            parser.error("--merge needs --committers")
        try:
            save_results(merge(load_results(), committers, budget, args.workers, progress))
        except MergeRefused as refused:
            parser.error(str(refused))
        print(f"merged {', '.join(committers)} in {time.monotonic() - started:.0f} s",
              file=sys.stderr)
    elif not args.render_only:
        save_results(generate(budget, args.workers, progress, committers))
        print(f"results written in {time.monotonic() - started:.0f} s", file=sys.stderr)
    results = load_results()
    write_paper(results)
    print(f"wrote {PAPER.relative_to(HERE.parent)}")
    written = write_figures(results, FIGURES)
    print(f"wrote {len(written)} figures under {FIGURES.relative_to(HERE.parent)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
