"""Per-round job-commit ratios × minimal from the side-by-side runs log, for a time window.

Pairs each round's runs as :mod:`side_by_side` does (a run's job-commit seconds over the
minimal run of the same server, F, T and round), prints every cell's ratios in time order,
their median, requests per file × minimal and the load at the runs' starts.

    .venv/bin/python bench/round_ratios.py 14:21 15:00            # UTC HH:MM, today's log
    .venv/bin/python bench/round_ratios.py 14:21 15:00 --date 2026-11-24
"""

from __future__ import annotations

import argparse
import json
import statistics
from collections import defaultdict
from pathlib import Path
from typing import Any

LOG = Path(__file__).resolve().parent / "results" / "side_by_side.runs.jsonl"
STRATEGIES = ("magic", "fenced", "directory", "partitioned")


def table(runs: list[dict[str, Any]]) -> None:
    rounds: dict[tuple[str, int, int, str], dict[str, dict[str, Any]]] = defaultdict(dict)
    for r in runs:
        if "error" in r:
            print("ERROR", r["server"], r["strategy"], r.get("round"), r["error"])
            continue
        if r["strategy"] in (*STRATEGIES, "minimal"):
            rounds[(r["server"], r["files"], r["threads"], r["round"])][r["strategy"]] = r
    cells: dict[tuple[str, int, int], list[dict[str, dict[str, Any]]]] = defaultdict(list)
    for key in sorted(rounds, key=lambda k: (k[0], k[1], k[2], min(
            x["when"] for x in rounds[k].values()))):
        cells[key[:3]].append(rounds[key])
    for cell, rl in cells.items():
        mins = [d["minimal"]["job_commit_seconds"] for d in rl if "minimal" in d]
        print(f"{cell} rounds={len(rl)} minimal s: " + " / ".join(f"{m:.2f}" for m in mins))
        for s in STRATEGIES:
            pairs = [(d[s], d["minimal"]) for d in rl if s in d and "minimal" in d]
            if not pairs:
                continue
            ratios = [a["job_commit_seconds"] / b["job_commit_seconds"] for a, b in pairs]
            rpf = [a["requests_per_file"] / b["requests_per_file"] for a, b in pairs]
            med = statistics.median(ratios)
            print(f"   {s:12s} " + " / ".join(f"{x:.2f}" for x in ratios)
                  + f"  (median {med:.2f}){' X' if round(med, 2) > 1.15 else ''}"
                  f"  req/file x minimal {min(rpf):.3f}-{max(rpf):.3f}")
        loads = [x["load_average"][0] for d in rl for x in d.values()]
        whens = [x["when"][11:16] for d in rl for x in d.values()]
        print(f"   load at run starts {min(loads):.1f}-{max(loads):.1f}; "
              f"{min(whens)}-{max(whens)} UTC")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("start", help="HH:MM UTC (runs started at or after)")
    ap.add_argument("end", help="HH:MM UTC (runs started at or before)")
    ap.add_argument("--date", default=None, help="YYYY-MM-DD (default: the log's last day)")
    ap.add_argument("--log", type=Path, default=LOG)
    args = ap.parse_args()
    runs = [json.loads(line) for line in args.log.read_text().splitlines() if line.strip()]
    day = args.date or max(r["when"][:10] for r in runs if "when" in r)
    table([r for r in runs if r.get("when", "").startswith(day)
           and args.start <= r["when"][11:16] <= args.end])


if __name__ == "__main__":
    main()
