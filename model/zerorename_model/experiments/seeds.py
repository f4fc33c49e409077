"""Saved witness traces as seeds: an example database for the verdict matrix.

Hypothesis keeps the examples that once failed and tries them first next time; the matrix does
the same with the witness traces a full run saved (``paper/results/traces``).  A seed is only a
*guide for choosing*: it is replayed against the current code, in the scope's own scenario, and
it counts only if the property checker finds the violation in that replay.  A seed that no
longer violates (the committer was fixed, the harness changed, the trace no longer fits) counts
for nothing, and the cell is decided by the exploration alone.

Most witnesses were shrunk to a scenario with fewer tasks than the scope explores, so a seed's
choice indices do not mean the same thing in the scope.  It is replayed by its moves'
descriptions instead: at each state the option described as the seed's next move is taken;
when the seed's next move is not offered (an actor of the larger scenario has to move first),
a step of an actor the seed never mentions is taken, else the plainest option; after the seed's
last move, the plainest options to the end.  Whatever run results is a run of the scope's
scenario, and the checker judges it like any explored run.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from zerorename_model.check.explore import Backend, new_run
from zerorename_model.engine.harness import MoveKind, RunResult
from zerorename_model.engine.json_values import json_int, json_object
from zerorename_model.engine.scenario import CommitterFactory, Scenario
from zerorename_model.experiments.trace import read_trace


@dataclass(frozen=True)
class Seed:
    """One saved trace: the scenario it was recorded in, and its moves (as described and as
    indices)."""

    path: str
    scenario: Scenario
    moves: tuple[str, ...]
    choices: tuple[int, ...]
    actors: frozenset[str]


def default_directory() -> Path | None:
    """The committed witness traces of the source tree (None when absent, e.g. installed)."""
    here = Path(__file__).resolve().parents[3] / "paper" / "results" / "traces"
    return here if here.is_dir() else None


@functools.lru_cache(maxsize=4)
def load(directory: str) -> tuple[Seed, ...]:
    """Every readable trace in ``directory`` (unreadable or foreign files are skipped: a seed
    is a hint, never a requirement)."""
    seeds = []
    for path in sorted(Path(directory).glob("*.jsonl")):
        try:
            events = read_trace(path)
            scenario = Scenario.from_json(json_object(events[0]["scenario"]))
        except (ValueError, KeyError, TypeError):
            continue
        choices = [e for e in events if e.get("t") == "choice"]
        actors = frozenset(str(e["actor"]) for e in events if e.get("t") == "op")
        seeds.append(Seed(str(path), scenario, tuple(str(e["move"]) for e in choices),
                          tuple(json_int(e["i"]) for e in choices), actors))
    return tuple(seeds)


def _shape(scenario: Scenario) -> Scenario:
    """What a seed must share with a scope: everything but the task count and whether lagging
    writes settle before reads (the matrix explores both settings of a scope)."""
    return replace(scenario, tasks=0, faults=replace(scenario.faults, settle_eagerly=False))


def for_scope(seeds: Sequence[Seed], scenario: Scenario) -> list[Seed]:
    """The seeds recorded in ``scenario``'s scope (any task count, either settling)."""
    shape = _shape(scenario)
    return [s for s in seeds if _shape(s.scenario) == shape]


def in_scope(seed: Seed, scenario: Scenario) -> Scenario:
    """The scope's scenario a seed is replayed in: the scope's tasks, the seed's settling."""
    return replace(scenario, faults=replace(
        scenario.faults, settle_eagerly=seed.scenario.faults.settle_eagerly))


def guided(seed: Seed, scenario: Scenario, factory: CommitterFactory,
           backend: Backend = None) -> tuple[list[int], RunResult]:
    """Run ``scenario`` steered by the seed's moves (see the module docstring); the choices
    taken and the result."""
    run = new_run(scenario, factory, backend)
    taken: list[int] = []
    position = 0
    try:
        while not run.finished():
            moves = run.options()
            index = 0
            if position < len(seed.moves):
                texts = [run.describe(m) for m in moves]
                if seed.moves[position] in texts:
                    index = texts.index(seed.moves[position])
                    position += 1
                else:  # let an actor the seed does not know move first
                    index = next((i for i, m in enumerate(moves) if m.kind is MoveKind.STEP
                                  and m.actor not in seed.actors), 0)
            run.choose(moves, index)
            taken.append(index)
    finally:
        run.kill_all()
    return taken, run.result()


def exact(seed: Seed, factory: CommitterFactory,
          backend: Backend = None) -> tuple[list[int], RunResult] | None:
    """The seed replayed in its own scenario, choice by choice (None if the run no longer
    offers what was recorded)."""
    run = new_run(seed.scenario, factory, backend)
    try:
        for text, index in zip(seed.moves, seed.choices, strict=True):
            if run.finished():
                return None
            moves = run.options()
            if not 0 <= index < len(moves) or run.describe(moves[index]) != text:
                return None
            run.choose(moves, index)
        while not run.finished():
            run.choose(run.options(), 0)
    finally:
        run.kill_all()
    return list(seed.choices), run.result()
