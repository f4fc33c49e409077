"""Regenerate the paper's results and render ``zerorename.md`` from its template.

Usage (from the repository root)::

    .venv/bin/python paper/make_paper.py                 # explore, write results, render
    .venv/bin/python paper/make_paper.py --render-only   # re-render from results/verdicts.json

The first form runs, on 2 worker processes:

* the verdict matrix, ``zerorename_model.verdicts.matrix`` with :data:`PAPER_BUDGET` (every
  committer on every store profile, every property; violations shrunk and saved as traces);
* the VIII.C probe: the partition scopes under Hadoop's and under Spark's job-commit protocol, for
  the committers whose job commit can read task output from the store;
* Table V, ``zerorename_model.tablev.compute`` (every attribute probed for every committer);

then writes ``results/verdicts.json`` (everything the paper's tables are rendered from) and
``results/traces/*.jsonl`` (every witness trace), and substitutes the generated sections of
``zerorename.template.md`` (``{{VERDICT_MATRIX}}``, ``{{TABLEV}}``, ``{{DIFFERENCES}}``,
``{{EXPLORED}}``) to write ``zerorename.md``.

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
from pathlib import Path
from types import ModuleType
from typing import Any

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
TRACES = RESULTS / "traces"
TEMPLATE = HERE / "zerorename.template.md"
PAPER = HERE / "zerorename.md"
PLACEHOLDERS = ("{{VERDICT_MATRIX}}", "{{TABLEV}}", "{{DIFFERENCES}}", "{{EXPLORED}}")

#: runs per scope (a scope is enumerated completely when it has fewer schedules than this, which
#: makes a ``holds`` a proof within the scope); no wall-clock limit, so that results do not depend
#: on the machine's speed, and no hypothesis sampling: a scope cut off is reported ``holds*``.
PAPER_BUDGET = {"max_runs": 4000, "seconds": None, "hypothesis_examples": 0}
#: a second pass for every ``holds*`` cell (no violation found, some scope cut off): more runs
#: there can only turn it into a proof or find a violation
DEEP_BUDGET = {"max_runs": 20000, "seconds": None, "hypothesis_examples": 0}
#: the VIII.C probe's scopes are few: explore them as far as the second pass does
RACE_MAX_RUNS = DEEP_BUDGET["max_runs"]
TABLEV_MAX_RUNS = 4000
WORKERS = 2

#: The VIII.C race: committers whose job commit can take task output from the store, each on the
#: store it is built for
RACE_PAIRS = (("v1", "hdfs"), ("directory", "s3"), ("partitioned", "s3"), ("magic", "s3"),
              ("manifest", "abfs"))
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
    for cell in cells:
        cell["trace"] = _rel(cell["trace"])
        _drop_seconds(cell["explored"])
    return cells, [list(pair) for pair in deepened]


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
    summary.pop("seconds", None)
    return {"committer": committer, "store": store, "scope": scope_name,
            "driver": scenario.driver, "verdicts": verdicts, "explored": summary}


def compute_race(max_runs: int, workers: int) -> list[dict[str, Any]]:
    jobs = [(c, s, scope, max_runs) for c, s in RACE_PAIRS for scope in RACE_SCOPES]
    with ProcessPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(_race_one, jobs))


def compute_tablev() -> dict[str, Any]:
    from zerorename_model.tablev import (
        ATTRIBUTES,
        PAPER_COLUMN,
        PAPER_SOURCE,
        PAPER_TABLE_V,
        compare,
        compute,
    )
    from zerorename_model.trace import write_trace

    table = compute(max_runs=TABLEV_MAX_RUNS)
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
    return {"source": PAPER_SOURCE, "attributes": [list(a) for a in ATTRIBUTES],
            "paper": PAPER_TABLE_V, "paper_columns": PAPER_COLUMN, "cells": cells,
            "differences": differences}


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
    race = compute_race(RACE_MAX_RUNS, workers)
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
    }


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
        f"Table V {timing['tablev_wall_s']} s.",
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
    return (cell["verdict"] == "violated") != (claim.expected == "violated")


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
    rows: dict[tuple[str, str], dict[str, dict[str, Any]]] = {}
    for probe in results["race"]:
        rows.setdefault((probe["committer"], probe["store"]), {})[probe["scope"]] = probe
    for (committer, store), by_scope in rows.items():
        marks = []
        for scope in RACE_SCOPES:
            for prop in RACE_PROPS:
                probe = by_scope[scope]
                v = probe["verdicts"][prop]
                marks.append(_link("**violated**", v["trace"]) if v["verdict"] == "violated"
                             else "holds" if probe["explored"]["complete"] else "holds\\*")
        lines.append(f"| {committer} | {store} | " + " | ".join(marks) + " |")
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


def render(template: str, results: dict[str, Any]) -> str:
    """The paper: the template with every generated section substituted."""
    sections = {
        "{{VERDICT_MATRIX}}": render_matrix(results),
        "{{TABLEV}}": render_tablev(results),
        "{{DIFFERENCES}}": render_differences(results),
        "{{EXPLORED}}": render_explored(results),
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


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--render-only", action="store_true",
                        help="re-render zerorename.md from results/verdicts.json")
    parser.add_argument("--workers", type=int, default=min(WORKERS, os.cpu_count() or 1))
    parser.add_argument("--max-runs", type=int, default=PAPER_BUDGET["max_runs"],
                        help="runs per scope (to try a budget; the paper uses the default)")
    parser.add_argument("--committers", default=None,
                        help="comma-separated subset of the matrix (to try; the paper uses all)")
    args = parser.parse_args(argv)
    if not args.render_only:
        started = time.monotonic()
        budget = {**PAPER_BUDGET, "max_runs": args.max_runs}
        committers = args.committers.split(",") if args.committers else None
        results = generate(budget, args.workers, lambda line: print(line, flush=True),
                           committers)
        RESULTS.mkdir(parents=True, exist_ok=True)
        (RESULTS / "verdicts.json").write_text(
            json.dumps(results, indent=1, ensure_ascii=False, default=str) + "\n",
            encoding="utf-8")
        print(f"results written in {time.monotonic() - started:.0f} s", file=sys.stderr)
    write_paper(load_results())
    print(f"wrote {PAPER.relative_to(HERE.parent)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
