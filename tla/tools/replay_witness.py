"""Replay a witness of the model's verdict matrix on another store profile.

    python tla/tools/replay_witness.py v2 s3 s3-2018 continuity [hadoop|spark]

Why: where TLC finds a violation that the model's bounded exploration did not reach (its
scope was only sampled), this shows the schedule exists in the model too.  It takes the trace
``paper/results/traces/<committer>.<from>.<property>.<protocol>.jsonl`` that
``paper/make_paper.py`` saved (protocol: ``hadoop`` unless given), runs the same scenario on
the ``<to>`` profile, and at every choice takes

* a visibility event ("settle …") whenever one is offered — the model offers them just before
  reads, so every read sees the settled store, as on a consistent store;
* otherwise the move the trace took (matched by its description).

It prints the violations of the property, and exits 0 if there are some, 1 if none, 2 if the
trace cannot be followed (a move it names is not offered).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
TRACES = ROOT / "paper" / "results" / "traces"


class TraceDiverged(Exception):
    """The trace names a move the run on the other profile does not offer."""


@dataclass
class _Guided:
    moves: list[str]
    position: int = 0
    settles: int = 0
    taken: list[str] = field(default_factory=list)

    def choose(self, label: str, options: Sequence[str]) -> int:
        for index, option in enumerate(options):
            if option.startswith("settle"):
                self.settles += 1
                return index
        if self.position >= len(self.moves):
            return 0  # past the trace's end: the plainest move, as the model's replay does
        want = self.moves[self.position]
        self.position += 1
        if want not in options:
            raise TraceDiverged(f"move {self.position}: {want!r} not offered; offered "
                                f"{list(options)!r}")
        self.taken.append(want)
        return list(options).index(want)


def replay(committer: str, from_store: str, to_store: str, prop: str,
           protocol: str = "hadoop") -> list[str]:
    """The violations of ``prop`` when the ``from_store`` witness (of the cell decided under
    ``protocol``) runs on ``to_store``."""
    from zerorename_model.check.explore import new_run
    from zerorename_model.check.properties import PROPERTIES
    from zerorename_model.engine.scenario import Faults, Scenario
    from zerorename_model.systems.protocols import get, load_all

    path = TRACES / f"{committer}.{from_store}.{prop}.{protocol}.jsonl"
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()
               if line.strip()]
    header = records[0]["scenario"]
    moves = [r["move"] for r in records if r.get("t") == "choice"]
    load_all()
    scenario = Scenario(header["committer"], store=to_store, tasks=header["tasks"],
                        files=tuple(header["files"]), max_attempts=header["max_attempts"],
                        dests=tuple(header["dests"]), driver=header["driver"],
                        faults=Faults(**header["faults"]))
    result = new_run(scenario, get(committer), None).run(_Guided(moves))
    return [str(v) for v in PROPERTIES[prop](result)]


def main(argv: list[str]) -> int:
    if len(argv) not in (4, 5):
        print(__doc__)
        return 2
    try:
        found = replay(*argv)
    except TraceDiverged as exc:
        print(f"the trace cannot be followed: {exc}")
        return 2
    print("\n".join(found) or "no violation")
    return 0 if found else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
