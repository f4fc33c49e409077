"""Traces: a run as JSON lines, readable by people and replayable by the harness.

Line 1 is the header (the scenario, which fixes everything but the choices); then, in order,
``choice`` lines (how many options there were, which was taken, and what it meant), ``op`` lines
(an actor's store operation or driver call, and its result), ``note`` lines (harness events:
launches, crashes, visibility), and an ``end`` line with the outcome and a digest of the final
state.  Replaying feeds the recorded choices back and checks the digest is the same.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from zerorename_model.engine.harness import Run, RunResult
from zerorename_model.engine.harness.events import ChoiceLine as ChoiceLine
from zerorename_model.engine.harness.events import EndLine as EndLine
from zerorename_model.engine.harness.events import HeaderLine as HeaderLine
from zerorename_model.engine.harness.events import NoteLine as NoteLine
from zerorename_model.engine.harness.events import OpLine as OpLine
from zerorename_model.engine.harness.events import TraceLine as TraceLine
from zerorename_model.engine.json_values import json_int, json_list, json_object
from zerorename_model.engine.scenario import CommitterFactory, Scenario
from zerorename_model.experiments.tablev_probes import wrapped
from zerorename_model.systems.protocols import get

# -- the lines of a trace file ---------------------------------------------------------------------
# HeaderLine, ChoiceLine, OpLine, NoteLine, EndLine and their union TraceLine: one line of a trace
# file, as written (defined with the harness's events, which render themselves as them, since
# this module imports the harness).  A trace *read back* is parsed JSON, so the readers below take
# ``Mapping[str, object]`` and check what they use.


def write_trace(path: str | Path, trace: Iterable[Mapping[str, object]]) -> Path:
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w", encoding="utf-8") as f:
        for event in trace:
            f.write(json.dumps(event, ensure_ascii=False, default=str) + "\n")
    return out


def read_trace(path: str | Path) -> list[dict[str, object]]:
    """The events of a trace file, each a JSON object: readers check the fields they use
    (``engine.json_values``)."""
    events: list[dict[str, object]] = []
    for number, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            events.append(json_object(json.loads(line)))
        except json.JSONDecodeError as error:
            raise ValueError(f"{path}:{number}: not a JSON line: {error}") from None
    if not events or events[0].get("t") != "header":
        raise ValueError(f"{path}: not a zerorename trace (no header line)")
    return events


def choices_of(events: Iterable[Mapping[str, object]]) -> list[int]:
    return [json_int(e["i"]) for e in events if e.get("t") == "choice"]


def format_trace(events: Sequence[Mapping[str, object]], *, verbose: bool = False) -> str:
    """Render a trace for people: one line per step, notes indented, the outcome last."""
    scenario = json_object(events[0]["scenario"])
    dests = ",".join(str(d) for d in json_list(scenario["dests"]))
    lines = [f"scenario: committer={scenario['committer']} store={scenario['store']} "
             f"tasks={scenario['tasks']} driver={scenario['driver']} dests={dests}"]
    step = 0
    for e in events[1:]:
        kind = e.get("t")
        if kind == "choice":
            step += 1
            if verbose or not str(e["move"]).startswith("step "):
                lines.append(f"{step:4d}  [{e['i']}/{e['n']}] {e['move']}")
        elif kind == "op":
            args = " ".join(str(a) for a in json_list(e.get("args")))
            lines.append(f"{step:4d}  {e['actor']:<12} {e['op']} {args} -> {e['result']}")
        elif kind == "note":
            lines.append(f"      · {e['msg']}")
        elif kind == "end":
            outcomes = ", ".join(str(o) for o in json_list(e["outcomes"]))
            lines.append(f"end: {outcomes}; requests {e.get('requests', {})}")
            lines += [f"  VIOLATED {v}" for v in json_list(e.get("violations"))]
    return "\n".join(lines)


class TraceDivergence(ValueError):
    """Replaying a trace offered moves other than the recorded ones: the trace was written by
    other code (another version of a committer, or a wrapper its header does not name), so its
    choices no longer mean what they meant.  Names the trace, the step and both moves."""


class _RecordedChooser:
    """Answers with the recorded choices, checking at each step that the run offers what was
    recorded (as many options, and the taken one described the same way).  An index alone
    would silently steer a different run; the descriptions say where the two parted."""

    def __init__(self, path: str, recorded: list[Mapping[str, object]]) -> None:
        self.path = path
        self.recorded = recorded
        self.position = 0

    def choose(self, label: str, options: Sequence[str]) -> int:
        if self.position >= len(self.recorded):
            return 0  # past the recording (a trace cut short): the plainest move, as explore
        event = self.recorded[self.position]
        self.position += 1
        index = json_int(event["i"])
        offered = options[index] if 0 <= index < len(options) else None
        if len(options) != event["n"] or offered != event["move"]:
            shown = "; ".join(f"[{i}] {options[i]}" for i in range(len(options)))
            raise TraceDivergence(
                f"{self.path}: step {self.position}: recorded {event['move']!r} (option {index} "
                f"of {event['n']}), but the replay offered {len(options)} option(s): {shown}")
        return index


def committer_factory(scenario: Scenario,
                      factory: CommitterFactory | None = None) -> CommitterFactory:
    """The committer a trace's header names: the registered protocol (or ``factory``), inside
    the wrapper the scenario's options name, if any (Table V's probes make Direct ask to
    commit; :data:`zerorename_model.experiments.tablev.WRAP_OPTION`)."""
    return wrapped(scenario, factory or get(scenario.committer))


def run_recorded(events: Sequence[Mapping[str, object]],
                 factory: CommitterFactory | None = None,
                 source: str = "<trace>") -> RunResult:
    """Run a trace's scenario again with its recorded choices (raises
    :class:`TraceDivergence` at the first step that differs from the recording)."""
    scenario = Scenario.from_json(json_object(events[0]["scenario"]))
    chooser = _RecordedChooser(source, [e for e in events if e.get("t") == "choice"])
    return Run(scenario, committer_factory(scenario, factory)).run(chooser)


@dataclass
class Replay:
    same: bool
    recorded_digest: str
    replayed_digest: str
    result: RunResult


def replay(path: str | Path) -> Replay:
    """Re-run a trace's scenario with its recorded choices; compare final-state digests."""
    events = read_trace(path)
    ends = [e for e in events if e.get("t") == "end"]
    recorded = str(ends[-1]["digest"]) if ends else ""
    result = run_recorded(events, source=str(path))
    return Replay(result.digest == recorded, recorded, result.digest, result)
