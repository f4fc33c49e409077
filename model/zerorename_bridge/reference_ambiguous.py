"""The ambiguous-outcome families for the *reference* committers: every cell decided.

Issue 34 asks that a lost answer and a 409 be proved against the real retry loop, not only the
model's copy of it.  Here the production committers (``zerorename.create_committer``, through
:class:`~zerorename_bridge.adapters.ReferenceFactory`) run on the model's stores in the scope
families ``ambiguous`` and ``ambiguous-abort`` (:mod:`zerorename_model.experiments.scopes`),
under both job-commit protocols.  The harness performs a request and then raises a
``ReadTimeout`` (``lost_answer``) or refuses a conditional one with 409
(``conflict``); :class:`~zerorename_bridge.adapters.TranslatingStore` turns that into the
``StoreError`` a real S3 client would raise, and the committer's own ``ReliableStore`` retries
it, with its own landed checks.

A cell is *decided* only when exploration ends on its own: ``violated`` (a witness trace, shrunk,
replayable with ``zerorename trace replay``) or ``holds`` / ``vacuous`` with every scope
enumerated.  A scope cut off by the run budget leaves its cell ``open``, never ``holds``.  On
the fixed harness clock every scope here ends within the budget (the largest, ``fenced``'s
``ambiguous-abort``, in about 16,000 runs).

Rows ``<committer>+no-landed-check`` run the same production committer with its retry loop's
landed checks off (:class:`~zerorename_bridge.adapters.BlindRetryPolicy`): the cells that turn
violated there are what ``put_landed`` and ``complete_landed`` are for.

Run it with ``python -m zerorename_bridge.reference_ambiguous`` (``--help``): it writes
``paper/results/reference_ambiguous.json``, ``paper/results/reference_ambiguous.md`` and the
witnesses under ``paper/results/reference_traces/``.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from zerorename_bridge.adapters import NO_LANDED_CHECK, ReferenceFactory
from zerorename_model.check.explore import Backend
from zerorename_model.engine.json_values import json_object
from zerorename_model.engine.scenario import CommitterFactory
from zerorename_model.experiments.cells import Cell, Verdict
from zerorename_model.experiments.explored import Violation
from zerorename_model.experiments.scopes import AMBIGUOUS_PROPS, PROTOCOLS
from zerorename_model.experiments.trace import read_trace, run_recorded, write_trace
from zerorename_model.experiments.verdicts import Budget, Row, decide_pair

__all__ = ["BUDGET", "FAMILIES", "PROPS", "ROWS", "TARGET", "RowSpec", "decide_row",
           "is_reference_trace", "main", "markdown", "replay_reference", "resolve_reference",
           "run", "verdict_of"]

#: the scope families decided here (each under both protocols)
FAMILIES = ("ambiguous", "ambiguous-abort")
PROPS = (*AMBIGUOUS_PROPS, "abortability")
#: the trace header's mark for a reference committer's witness: ``zerorename trace replay``
#: runs it with the reference committer of that name, not the model's
TARGET = "reference"

#: runs per scope.  Budgets count runs, never seconds, so a verdict does not depend on load;
#: this one is far above what any scope here needs (a scope that still meets it is ``open``).
BUDGET = Budget(max_runs=100_000)


@dataclass(frozen=True)
class RowSpec:
    """One row: a reference committer (or its ``+no-landed-check`` variant) on a model store."""

    committer: str
    store: str


#: every reference committer on ``s3`` (v1 and v2 refuse it: no rename) and on ``abfs`` (a
#: store with rename, where v1 and v2 run; fenced refuses it: no conditional writes); the
#: variants without the landed checks on ``s3``.  ``gcs`` costs as much as ``s3`` again (the
#: ``--row`` option runs it, e.g. ``--row fenced:gcs``).  Not ``hdfs``: its NameNode answers a
#: repeated rename or create from its retry cache (HDFS-4979), so a client never meets its own
#: earlier success there, and a lost answer as this fault makes it is not what HDFS gives.
_COMMITTERS = ("v1", "v2", "directory", "partitioned", "magic", "manifest", "fenced")
ROWS: tuple[RowSpec, ...] = (
    *(RowSpec(c, "s3") for c in _COMMITTERS),
    *(RowSpec(c, "abfs") for c in _COMMITTERS),
    *(RowSpec(c + NO_LANDED_CHECK, "s3") for c in ("magic", "fenced")),
)


def resolve_reference(committer: str, store: str) -> tuple[CommitterFactory, Backend]:
    """The reference committer (or its variant) on the model store: a module-level function,
    so that worker processes can import it."""
    return ReferenceFactory(committer), None


def verdict_of(cell: Cell) -> str:
    """The cell's verdict as this table shows it: ``open`` for a ``holds``/``vacuous`` that
    some scope's budget cut off (not a proof), else the exploration's own verdict."""
    if cell.verdict in (Verdict.HOLDS, Verdict.VACUOUS) and not cell.complete:
        return "open"
    return str(cell.verdict.value)


def decide_row(row: RowSpec, traces: str | None, budget: Budget = BUDGET,
               protocols: Sequence[str] = PROTOCOLS) -> tuple[list[Cell], float]:
    """Every cell of one row (both protocols) and the seconds it took.  Witness traces are
    marked with :data:`TARGET` in their header."""
    logging.disable(logging.CRITICAL)  # the committers' job logs, thousands of runs of them
    started = time.monotonic()
    cells = decide_pair(row.committer, row.store, PROPS, budget, traces, resolve_reference,
                        protocols, Row(families=FAMILIES))
    for cell in cells:
        if cell.trace:
            _mark(Path(cell.trace))
    return cells, time.monotonic() - started


def _mark(path: Path) -> None:
    events = read_trace(path)
    events[0] = {**events[0], "target": TARGET}
    write_trace(path, events)


def is_reference_trace(events: Sequence[dict[str, Any]]) -> bool:
    """Whether a trace (its events) is a reference committer's witness."""
    return bool(events) and events[0].get("target") == TARGET


@dataclass(frozen=True)
class Replayed:
    """A reference witness run again from its recorded choices."""

    same: bool
    recorded_digest: str
    replayed_digest: str
    result: Any


def replay_reference(path: str | Path) -> Replayed:
    """Run a reference witness's scenario again with its recorded choices, with the reference
    committer its header names; compare the final states' digests."""
    events = read_trace(path)
    ends = [e for e in events if e.get("t") == "end"]
    recorded = str(ends[-1]["digest"]) if ends else ""
    committer = str(json_object(events[0]["scenario"])["committer"])
    result = run_recorded(events, ReferenceFactory(committer), source=str(path))
    return Replayed(result.digest == recorded, recorded, result.digest, result)


def run(rows: Iterable[RowSpec] = ROWS, traces: str | None = None, budget: Budget = BUDGET,
        workers: int = 2, progress: Callable[[str], None] | None = None,
        ) -> dict[str, Any]:
    """Decide every row, ``workers`` at a time: the artefact's content (JSON-ready)."""
    rows = list(rows)
    results: list[dict[str, Any]] = []
    started = time.monotonic()
    # fenced's rows are the longest (about 18,000 runs each): submitted first, so the others
    # fill the second worker meanwhile; the table keeps the rows' order
    first = sorted(rows, key=lambda r: not r.committer.startswith("fenced"))
    with ProcessPoolExecutor(max_workers=workers) as pool:
        submitted = {row: pool.submit(decide_row, row, traces, budget) for row in first}
        for row, future in ((r, submitted[r]) for r in rows):
            cells, seconds = future.result()
            results.append({"committer": row.committer, "store": row.store,
                            "seconds": round(seconds, 1),
                            "cells": [c.to_json() for c in cells]})
            if progress:
                shown = ", ".join(f"{c.prop}/{c.protocol}={verdict_of(c)}" for c in cells)
                progress(f"{row.committer} on {row.store} ({seconds:.0f}s): {shown}")
    return {"families": list(FAMILIES), "properties": list(PROPS),
            "protocols": list(PROTOCOLS), "max_runs": budget.max_runs, "workers": workers,
            "seconds": round(time.monotonic() - started, 1), "rows": results}


_SHORT = {"holds": "holds", "vacuous": "vacuous", "violated": "**violated**", "n/a": "n/a",
          "open": "open"}


def markdown(data: dict[str, Any]) -> str:
    """The table: one line per (row, protocol), a column per property; then the witnesses."""
    props = list(data["properties"])
    lines = [
        "| committer | store | protocol | " + " | ".join(props) + " | runs | states | s |",
        "|---|---|---|" + "---|" * len(props) + "---|---|---|",
    ]
    witnesses: list[str] = []
    for row in data["rows"]:
        for protocol in data["protocols"]:
            cells = {c.prop: c for c in map(Cell.from_json, row["cells"])
                     if c.protocol == protocol}
            scopes = {s.scope: s.search for c in cells.values() for s in c.scopes}.values()
            runs = sum(s.runs for s in scopes)
            states = sum(s.states for s in scopes)
            seconds = sum(s.seconds or 0.0 for s in scopes)
            shown = [_SHORT.get(verdict_of(cells[p]), verdict_of(cells[p])) if p in cells
                     else "–" for p in props]
            lines.append(f"| {row['committer']} | {row['store']} | {protocol} | "
                         + " | ".join(shown) + f" | {runs:,} | {states:,} | {seconds:.1f} |")
            for p in props:
                cell = cells.get(p)
                if cell is not None and isinstance(cell.explored, Violation):
                    witnesses.append(f"- {row['committer']} on {row['store']}, {p} "
                                     f"({protocol}): {cell.explored.witness} "
                                     f"(`{cell.trace}`)")
    head = [
        f"Scope families {', '.join(data['families'])} (one lost answer and one 409 "
        "ConditionalRequestConflict, each at any request; ambiguous-abort: the driver also "
        f"gives up and aborts), at most {data['max_runs']:,} runs per scope.  `open`: a "
        "scope's budget ran out (not a proof); `holds`: every scope enumerated.  runs, "
        "states and seconds: summed over the protocol's scopes (runs of a committer that "
        "takes no messages are shared by both protocols).",
        "",
    ]
    tail = ["", "Witnesses (replay: `zerorename trace replay FILE`):", "", *witnesses] \
        if witnesses else []
    return "\n".join([*head, *lines, *tail]) + "\n"


def _root() -> Path:
    return Path(__file__).resolve().parents[2]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m zerorename_bridge.reference_ambiguous",
        description="Decide the ambiguous-outcome families for the reference committers "
                    "and write the table, its JSON and the witnesses.")
    results = _root() / "paper" / "results"
    parser.add_argument("--json", default=str(results / "reference_ambiguous.json"))
    parser.add_argument("--markdown", default=str(results / "reference_ambiguous.md"))
    parser.add_argument("--traces", default=str(results / "reference_traces"))
    parser.add_argument("--row", action="append", metavar="COMMITTER:STORE",
                        help="only these rows (repeatable; default: every row)")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--max-runs", type=int, default=BUDGET.max_runs)
    args = parser.parse_args(argv)
    rows = ROWS if not args.row else tuple(RowSpec(*r.split(":", 1)) for r in args.row)
    traces = Path(args.traces)
    if not args.row and traces.is_dir():
        for old in traces.glob("*.jsonl"):
            old.unlink()  # witnesses of an earlier run that may no longer be violated

    def progress(line: str) -> None:
        print(line, file=sys.stderr, flush=True)

    data = run(rows, str(traces), Budget(max_runs=args.max_runs), args.workers, progress)
    base = Path(args.json).resolve().parent
    for row in data["rows"]:
        for cell in row["cells"]:
            if cell.get("trace"):
                cell["trace"] = Path(cell["trace"]).resolve().relative_to(base).as_posix()
    Path(args.json).write_text(json.dumps(data, indent=1, sort_keys=True) + "\n",
                               encoding="utf-8")
    Path(args.markdown).write_text(markdown(data), encoding="utf-8")
    print(f"wrote {args.json}, {args.markdown} in {data['seconds']:.0f}s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
