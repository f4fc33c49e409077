"""The VIII.C probe: the partition scopes under Hadoop's and Spark's job-commit protocols for
the committers whose job commit can read task output from the store (:data:`RACE_PAIRS`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, replace

from zerorename_model.engine.json_values import json_list, json_object
from zerorename_model.experiments.cells import Verdict
from zerorename_model.experiments.explored import (
    JsonObject,
    Search,
    json_optional_str,
    json_str,
)
from zrpaper.settings import RACE_PAIRS, RACE_PROPS, RACE_SCOPES, TRACES, rel


@dataclass(frozen=True)
class RaceVerdict:
    """One property in one row of the probe: ``holds`` or ``violated``, with the shrunk
    witness's trace (relative to ``paper/``) and its first violation."""

    verdict: Verdict
    trace: str | None = None
    witness: str | None = None

    def to_json(self) -> JsonObject:
        return {"verdict": self.verdict.value, "trace": self.trace, "witness": self.witness}

    @classmethod
    def from_json(cls, raw: Mapping[str, object]) -> RaceVerdict:
        return cls(Verdict(json_str(raw["verdict"])), json_optional_str(raw["trace"]),
                   json_optional_str(raw["witness"]))


@dataclass(frozen=True)
class RaceRow:
    """One committer on its store in one partition scope: each of :data:`RACE_PROPS`'
    verdicts, and what the search covered (no wall-clock seconds: those are reported, not
    kept)."""

    committer: str
    store: str
    scope: str
    driver: str
    verdicts: tuple[tuple[str, RaceVerdict], ...]
    explored: Search

    @property
    def by_prop(self) -> dict[str, RaceVerdict]:
        return dict(self.verdicts)

    def to_json(self) -> JsonObject:
        return {"committer": self.committer, "store": self.store, "scope": self.scope,
                "driver": self.driver,
                "verdicts": {prop: v.to_json() for prop, v in self.verdicts},
                "explored": self.explored.to_json()}

    @classmethod
    def from_json(cls, raw: Mapping[str, object]) -> RaceRow:
        return cls(json_str(raw["committer"]), json_str(raw["store"]), json_str(raw["scope"]),
                   json_str(raw["driver"]),
                   tuple((prop, RaceVerdict.from_json(json_object(v)))
                         for prop, v in json_object(raw["verdicts"]).items()),
                   Search.from_json(json_object(raw["explored"])))


def race_rows(results: Mapping[str, object]) -> list[RaceRow]:
    """The VIII.C rows of a results object (``verdicts.json``'s ``race``)."""
    return [RaceRow.from_json(json_object(raw)) for raw in json_list(results["race"])]


def _race_one(args: tuple[str, str, str, int]) -> tuple[RaceRow, float | None]:
    """One committer, one store, one partition scope: which of RACE_PROPS it violates, and
    the search's wall-clock seconds."""
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
    verdicts: list[tuple[str, RaceVerdict]] = []
    for prop in RACE_PROPS:
        if prop not in report.violations:
            verdicts.append((prop, RaceVerdict(Verdict.HOLDS)))
            continue
        _violations, _result, choices = report.violations[prop]
        _short, result = shrink(scenario, factory, prop, choices)
        found = PROPERTIES[prop](result)
        trace = [*result.trace[:-1], {**result.trace[-1], "violations": [str(v) for v in found]}]
        path = write_trace(TRACES / f"race.{committer}.{store}.{scope_name}.{prop}.jsonl", trace)
        verdicts.append((prop, RaceVerdict(Verdict.VIOLATED, rel(path), str(found[0]))))
    search = Search.of(report)
    return (RaceRow(committer, store, scope_name, scenario.driver, tuple(verdicts),
                    replace(search, seconds=None)), search.seconds)


def compute_race(max_runs: int, workers: int,
                 pairs: Sequence[tuple[str, str]] = RACE_PAIRS,
                 progress: Callable[[str], None] | None = None) -> list[RaceRow]:
    """The VIII.C probe for ``pairs``: one row per (pair, scope), in that order."""
    jobs = [(c, s, scope, max_runs) for c, s in pairs for scope in RACE_SCOPES]
    with ProcessPoolExecutor(max_workers=workers) as pool:
        done = list(pool.map(_race_one, jobs))
    for row, seconds in done:  # machine-dependent: reported, not kept
        if progress is not None:
            e = row.explored
            progress(f"  VIII.C {row.committer} on {row.store}, {row.scope}: "
                     f"{e.runs} runs, {e.states} states, {seconds} s, "
                     f"{'complete' if e.complete else 'stopped'}: " + ", ".join(
                         f"{p}={v.verdict}" for p, v in row.verdicts))
    return [row for row, _seconds in done]
