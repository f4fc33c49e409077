"""The VIII.C probe: the partition scopes under Hadoop's and Spark's job-commit protocols for
the committers whose job commit can read task output from the store (:data:`RACE_PAIRS`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from typing import Any

from zrpaper.settings import RACE_PAIRS, RACE_PROPS, RACE_SCOPES, TRACES, rel


def _race_one(args: tuple[str, str, str, int]) -> dict[str, Any]:
    """One committer, one store, one partition scope: which of RACE_PROPS it violates."""
    from zerorename_model.check.explore import explore
    from zerorename_model.check.properties import PROPERTIES
    from zerorename_model.check.sampling import shrink
    from zerorename_model.experiments.trace import write_trace
    from zerorename_model.experiments.verdicts import SCOPES
    from zerorename_model.systems.protocols import get

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
        verdicts[prop] = {"verdict": "violated", "trace": rel(path), "witness": str(found[0])}
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


