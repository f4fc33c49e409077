"""How a side-by-side run's rows join the results already in ``side_by_side.json``
(``side_by_side.py --merge``): a row measured again on the same committers pools its rounds
with the earlier ones, on other committers it replaces them, and every other row stays."""

from __future__ import annotations

import json
import statistics
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

from interleave import RUN_KEYS, TIME_KEYS

REPO = Path(__file__).resolve().parent.parent

def row_key(row: dict[str, Any]) -> tuple[str, str, int, int | None]:
    return row["server"], row["strategy"], row["files"], row["threads"]


def same_committers(old: str | None, new: str | None) -> tuple[bool, str]:
    """Whether two rows' ``reference_commit`` name the same committers: ``git diff --quiet OLD
    NEW -- reference/zerorename`` (a commit marked ``+changes`` measured a working tree that no
    commit names: never the same).  Returns the answer and why."""
    if not old or not new:
        return False, "a row has no reference_commit"
    if "+" in old or "+" in new:
        return False, f"{old} / {new}: uncommitted changes to reference/ were measured"
    if old == new:
        return True, f"same commit {new}"
    done = subprocess.run(["git", "diff", "--quiet", old, new, "--", "reference/zerorename"],
                          cwd=REPO, capture_output=True, timeout=60)
    if done.returncode == 0:
        return True, f"git diff {old} {new} -- reference/zerorename is empty"
    if done.returncode == 1:
        return False, f"reference/zerorename differs between {old} and {new}"
    return False, f"git diff {old} {new} failed: {done.stderr.decode(errors='replace').strip()}"


def replace_measured(old: str | None, new: str | None) -> tuple[bool, str]:
    """``--merge --replace``: never pool, whatever the committers."""
    return False, "--replace: this invocation's rounds replace the earlier ones"


def _round_parts(round_id: str) -> tuple[str, int] | None:
    """``"F:T:r"`` as (``"F:T"``, r); None for an id of another shape."""
    prefix, _, index = round_id.rpartition(":")
    return (prefix, int(index)) if prefix and index.isdigit() else None


def renumber_rounds(rows: list[dict[str, Any]], previous: list[dict[str, Any]]) -> None:
    """Give the rounds of ``rows`` (one invocation) ids that no round of ``previous`` has, per
    server: ``F:T:r`` becomes ``F:T:k``, k the next free index of that F and T (the same k for
    every strategy of the round, so the rounds still pair; ``round_as_measured`` keeps the id of
    the runs log)."""
    taken: dict[tuple[str, str], set[int]] = {}
    for row in previous:
        for run in row.get("runs", ()):
            parts = _round_parts(str(run.get("round", "")))
            if parts:
                taken.setdefault((row["server"], parts[0]), set()).add(parts[1])
    mapping: dict[tuple[str, str], str] = {}
    for row in rows:
        entries = [*row.get("runs", ()), *row.get("failed_runs", ())]
        for rid in sorted({str(e.get("round", "")) for e in entries},
                          key=lambda x: (_round_parts(x) or ("", -1))[1]):
            parts = _round_parts(rid)
            if parts is None or (row["server"], rid) in mapping:
                continue
            used = taken.setdefault((row["server"], parts[0]), set())
            index = max(used) + 1 if parts[1] in used else parts[1]
            used.add(index)
            mapping[(row["server"], rid)] = f"{parts[0]}:{index}"
    for row in rows:
        for entry in [*row.get("runs", ()), *row.get("failed_runs", ())]:
            rid = str(entry.get("round", ""))
            now = mapping.get((row["server"], rid), rid)
            if now != rid:
                entry["round_as_measured"] = rid
                entry["round"] = now


def pool_rows(old: dict[str, Any], new: dict[str, Any], why: str) -> dict[str, Any]:
    """One row from ``old`` (an earlier ``--merge`` result) and ``new`` (this invocation's row
    of the same server, strategy, F and T, on the same committers): every run of both, the
    times the medians over all of them, the counts and phases of the median run's row."""
    def runs_of(row: dict[str, Any]) -> list[dict[str, Any]]:
        runs = row.get("runs") or [{k: row[k] for k in RUN_KEYS if k in row}]
        return [{**r, "run": r.get("run", row.get("run"))} for r in runs]

    old_runs, new_runs = runs_of(old), runs_of(new)
    runs = [*old_runs, *new_runs]
    by_time = sorted(range(len(runs)), key=lambda i: runs[i]["job_commit_seconds"])
    median_index = by_time[(len(by_time) - 1) // 2]
    row = dict(old if median_index < len(old_runs) else new)
    for k in TIME_KEYS:
        row[k] = round(statistics.median(r[k] for r in runs), 3)
    loads = [r["load_average"][0] for r in runs]
    failed = [*old.get("failed_runs", ()), *new.get("failed_runs", ())]
    row.update({
        "runs": runs, "repeats": len(runs), "load_range": [min(loads), max(loads)],
        "run": new.get("run"), "reference_commit": new.get("reference_commit"),
        "pooled_runs": [*old.get("pooled_runs", [old.get("run")]), new.get("run")],
        "merge": {"pooled": True, "with_run": old.get("run"),
                  "old_reference_commit": old.get("reference_commit"),
                  "rounds_before": len(old_runs), "rounds_added": len(new_runs),
                  "counts_from": "earlier run" if median_index < len(old_runs)
                  else "this run", "why": why},
    })
    if failed:
        row["failed_runs"] = failed
    else:
        row.pop("failed_runs", None)
    return row


def merge_previous(report: dict[str, Any], path: Path,
                   same: Callable[[str | None, str | None], tuple[bool, str]] = same_committers
                   ) -> None:
    """``--merge``: keep the rows of the previous results at ``path`` that this run did not
    measure again (each row says when and on which commit it was measured).  A row measured
    again on the same committers (:func:`same_committers`) pools its rounds with the earlier
    ones (:func:`pool_rows`; this run's rounds renumbered after the earlier ones); on other
    committers, or where either row failed, this run's row replaces the earlier one, and its
    ``merge`` says why."""
    try:
        previous = json.loads(path.read_text())
    except (OSError, ValueError):
        return
    if previous.get("mode") != report["mode"]:
        return
    old_rows = previous.get("rows", [])
    before = {row_key(r): r for r in old_rows}
    measured = {row_key(r) for r in report["rows"]}
    renumber_rounds(report["rows"], [*old_rows, *previous.get("superseded_minimal", [])])
    for i, row in enumerate(report["rows"]):
        old = before.get(row_key(row))
        if old is None:
            continue
        if "error" in row or "error" in old:
            ok, why = False, "a failed row is not pooled"
        else:
            ok, why = same(old.get("reference_commit"), row.get("reference_commit"))
        if ok:
            report["rows"][i] = pool_rows(old, row, why)
        else:
            row["merge"] = {"pooled": False, "replaced_run": old.get("run"),
                            "old_reference_commit": old.get("reference_commit"),
                            "old_repeats": old.get("repeats", 1), "why": why}
    kept = [r for r in old_rows if row_key(r) not in measured]
    report["rows"][:0] = kept
    # a kept row is set against the minimal strategy of its own run (add_ratios): keep the
    # minimal rows measured again, out of the tables (a pooled one's rounds are also in the
    # pooled row)
    replaced = [r for r in old_rows if row_key(r) in measured and r.get("strategy") == "minimal"]
    report["superseded_minimal"] = [*previous.get("superseded_minimal", []), *replaced]
    for name, info in previous.get("servers", {}).items():
        report["servers"].setdefault(name, info)
    old_cells = previous.get("job", {}).get("cells")
    for name, cells in (old_cells.items() if isinstance(old_cells, dict) else ()):
        mine = report["job"]["cells"].setdefault(name, [])
        mine += [c for c in cells if c not in mine]
    if report.get("s3fs") is None and previous.get("s3fs"):
        report["s3fs"] = previous["s3fs"]
    report["merged_with"] = sorted({*previous.get("merged_with", []), previous["when"]})
