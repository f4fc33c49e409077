"""Traces: a run as JSON lines, readable by people and replayable by the harness.

Line 1 is the header (the scenario, which fixes everything but the choices); then, in order,
``choice`` lines (how many options there were, which was taken, and what it meant), ``op`` lines
(an actor's store operation or driver call, and its result), ``note`` lines (harness events:
launches, crashes, visibility), and an ``end`` line with the outcome and a digest of the final
state.  Replaying feeds the recorded choices back and checks the digest is the same.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from zerorename_model.choices import ScriptedChooser
from zerorename_model.harness import Run, RunResult
from zerorename_model.scenario import Scenario


def write_trace(path: str | Path, trace: Iterable[dict[str, Any]]) -> Path:
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w", encoding="utf-8") as f:
        for event in trace:
            f.write(json.dumps(event, ensure_ascii=False, default=str) + "\n")
    return out


def read_trace(path: str | Path) -> list[dict[str, Any]]:
    events = []
    for number, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            events.append(json.loads(line))
        except json.JSONDecodeError as error:
            raise ValueError(f"{path}:{number}: not a JSON line: {error}") from None
    if not events or events[0].get("t") != "header":
        raise ValueError(f"{path}: not a zerorename trace (no header line)")
    return events


def choices_of(events: Iterable[dict[str, Any]]) -> list[int]:
    return [e["i"] for e in events if e.get("t") == "choice"]


def format_trace(events: list[dict[str, Any]], *, verbose: bool = False) -> str:
    """Render a trace for people: one line per step, notes indented, the outcome last."""
    scenario = events[0]["scenario"]
    lines = [f"scenario: committer={scenario['committer']} store={scenario['store']} "
             f"tasks={scenario['tasks']} driver={scenario['driver']} "
             f"dests={','.join(scenario['dests'])}"]
    step = 0
    for e in events[1:]:
        kind = e.get("t")
        if kind == "choice":
            step += 1
            if verbose or not e["move"].startswith("step "):
                lines.append(f"{step:4d}  [{e['i']}/{e['n']}] {e['move']}")
        elif kind == "op":
            args = " ".join(str(a) for a in e.get("args", []))
            lines.append(f"{step:4d}  {e['actor']:<12} {e['op']} {args} -> {e['result']}")
        elif kind == "note":
            lines.append(f"      · {e['msg']}")
        elif kind == "end":
            lines.append(f"end: {', '.join(e['outcomes'])}; requests {e.get('requests', {})}")
            if e.get("violations"):
                lines += [f"  VIOLATED {v}" for v in e["violations"]]
    return "\n".join(lines)


@dataclass
class Replay:
    same: bool
    recorded_digest: str
    replayed_digest: str
    result: RunResult


def replay(path: str | Path) -> Replay:
    """Re-run a trace's scenario with its recorded choices; compare final-state digests."""
    from zerorename_model.protocols import get

    events = read_trace(path)
    scenario = Scenario.from_json(events[0]["scenario"])
    ends = [e for e in events if e.get("t") == "end"]
    recorded = ends[-1]["digest"] if ends else ""
    result = Run(scenario, get(scenario.committer)).run(ScriptedChooser(choices_of(events)))
    return Replay(result.digest == recorded, recorded, result.digest, result)
