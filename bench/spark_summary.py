"""A ``--versus-native`` cell's summary rows from its runs: medians and paired ratios.

Every ratio pairs runs of the same round (seconds apart, about the same load) and takes the
median over rounds, as :mod:`interleave` does for the earlier benchmarks: to ``native``
(Spark's writer to the local disk) for every strategy, and for the JVM ``fenced`` rows also
to the faster of S3A's committers and to the ``minimal`` committer on the same store (issue
46's targets: at most 1.0x the faster S3A committer and 1.05x the minimal).
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from typing import Any

BASE = "native"
#: the stores of the S3A rows (``s3a-<committer>-<store>``)
STORES = ("moto", "rgw")
S3A_COMMITTERS = ("magic", "directory")


def round_ratios(runs: Sequence[dict[str, Any]], strategy: str, key: str,
                 base: str = BASE) -> list[float]:
    """``strategy``'s ``key`` / ``base``'s, one ratio per round that has both figures, in
    round order."""
    by_round: dict[int, dict[str, dict[str, Any]]] = {}
    for r in runs:
        by_round.setdefault(r["round"], {})[r["strategy"]] = r
    return [rnd[strategy][key] / rnd[base][key] for _, rnd in sorted(by_round.items())
            if strategy in rnd and base in rnd and rnd[base].get(key)
            and rnd[strategy].get(key) is not None]


def paired(runs: Sequence[dict[str, Any]], strategy: str, key: str,
           base: str = BASE) -> float | None:
    """Median over rounds of ``strategy``'s ``key`` / ``base``'s in the same round (None
    when they share no round with both figures)."""
    values = round_ratios(runs, strategy, key, base)
    return round(statistics.median(values), 3) if values else None


def paired_range(runs: Sequence[dict[str, Any]], strategy: str, key: str,
                 base: str = BASE) -> tuple[float, float, int] | None:
    """The lowest and highest of the same-round ratios :func:`paired` takes the median of,
    and how many rounds there were: how far one round's ratio strays (load on a 2-core
    machine moves a 1.5 s write by a tenth either way) beside the median."""
    values = round_ratios(runs, strategy, key, base)
    return (round(min(values), 3), round(max(values), 3), len(values)) if values else None


def summarise(cell_runs: Sequence[dict[str, Any]], rows: int) -> list[dict[str, Any]]:
    """One row per strategy of a cell: median seconds, rows/s, bytes, ratios to native, and
    the JVM ``fenced`` rows' ratios to the faster S3A committer and to the minimal."""
    out = []
    for strategy in dict.fromkeys(r["strategy"] for r in cell_runs):
        mine = [r for r in cell_runs if r["strategy"] == strategy]
        seconds = statistics.median(r["seconds"] for r in mine)
        size = mine[0]["bytes"]
        cpus = [r["cpu_seconds"] for r in mine if r.get("cpu_seconds") is not None]
        per_file = [r["requests_per_file"] for r in mine
                    if r.get("requests_per_file") is not None]
        extra = {} if not per_file else {
            "requests_per_file": round(statistics.median(per_file), 2),
            "files": mine[0].get("files")}
        out.append({"strategy": strategy, "seconds": round(seconds, 3), **extra,
                    "cpu_seconds": round(statistics.median(cpus), 2) if cpus else None,
                    "cpu_ratio": paired(cell_runs, strategy, "cpu_seconds"),
                    "rows_per_second": round(rows / seconds),
                    "bytes": size, "time_ratio": paired(cell_runs, strategy, "seconds"),
                    "bytes_ratio": paired(cell_runs, strategy, "bytes"),
                    "repeats": len(mine),
                    "load_range": [min(r["load_average"] for r in mine),
                                   max(r["load_average"] for r in mine)]})
    _jvm_ratios(cell_runs, out)
    return out


def _jvm_ratios(cell_runs: Sequence[dict[str, Any]], summary: list[dict[str, Any]]) -> None:
    """On each store's ``s3a-fenced-<store>`` row: ``faster_s3a`` (the S3A committer with the
    lower median time in this cell) and ``faster_s3a_time_ratio``; ``minimal_time_ratio`` and
    ``minimal_requests_ratio`` (requests per file) against ``s3a-minimal-<store>``; each the
    median over rounds of the same round's ratio.  Absent where the cell lacks the rows."""
    rows = {r["strategy"]: r for r in summary}
    for store in STORES:
        fenced = rows.get(f"s3a-fenced-{store}")
        if fenced is None:
            continue
        s3a = [rows[f"s3a-{c}-{store}"] for c in S3A_COMMITTERS if f"s3a-{c}-{store}" in rows]
        if len(s3a) == len(S3A_COMMITTERS):
            faster = min(s3a, key=lambda r: r["seconds"])
            fenced["faster_s3a"] = faster["strategy"]
            fenced["faster_s3a_time_ratio"] = paired(cell_runs, fenced["strategy"], "seconds",
                                                     faster["strategy"])
        minimal = f"s3a-minimal-{store}"
        if minimal in rows:
            fenced["minimal_time_ratio"] = paired(cell_runs, fenced["strategy"], "seconds",
                                                  minimal)
            fenced["minimal_requests_ratio"] = paired(cell_runs, fenced["strategy"],
                                                      "requests_per_file", minimal)
