"""Every model trace the repository ships replays through ``zerorename trace replay``.

The traces are the evidence behind the paper's tables (``paper/results/traces``: verdict-matrix
witnesses, the Section VIII.C race probe, Table V's probe witnesses).  A trace a reader cannot
replay is evidence nobody can check, so each one is replayed here the way a reader would: through
the command line, which must reach the recorded final state.  Table V's probes record a wrapper
around the committer in the scenario's options (``zerorename.tablev.wrap``); a replay that ignored
it offered Direct's moves instead of the wrapped committer's and stopped with "scripted answer 1
out of range".

Cost: 178 traces replay in well under a second in all (the model runs a few dozen steps each).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from zerorename.cli import main
from zerorename_model.experiments.tablev import WRAP_OPTION
from zerorename_model.experiments.trace import TraceDivergence, read_trace, replay, write_trace

ROOT = Path(__file__).resolve().parents[1]
#: where the repository keeps files (never the virtualenv, caches or git's own files)
SHIPPED_DIRS = ("paper", "docs", "tests", "tla", "bench", "model", "reference",
                "property_tests")


def _is_trace(path: Path) -> bool:
    """A file whose first line is a trace header (other JSON lines are not traces)."""
    with path.open(encoding="utf-8") as f:
        first = f.readline()
    try:
        return bool(json.loads(first).get("t") == "header")
    except (json.JSONDecodeError, AttributeError):
        return False


def shipped_traces() -> list[Path]:
    found = {p for folder in SHIPPED_DIRS for p in (ROOT / folder).rglob("*.jsonl")}
    return sorted(p for p in found if _is_trace(p))


TRACES = shipped_traces()


def test_the_repository_ships_traces_of_every_kind() -> None:
    """The parametrised test below is not vacuous: it covers the matrix, race and Table V
    traces, including the ones whose committer ran inside a wrapper."""
    names = [p.name for p in TRACES]
    assert len(names) >= 100
    for kind in ("race.", "tablev.", "direct.", "magic."):
        assert any(n.startswith(kind) for n in names), kind
    wrapped = [p for p in TRACES
               if any(k == WRAP_OPTION for k, _v in read_trace(p)[0]["scenario"]["options"])]
    assert wrapped, "no shipped trace records a wrapper: the wrapper replay is untested"


@pytest.mark.parametrize("path", TRACES, ids=[p.relative_to(ROOT).as_posix() for p in TRACES])
def test_shipped_trace_replays_through_the_cli(path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["trace", "replay", str(path)])
    out, err = capsys.readouterr()
    assert code == 0, err or out[-600:]
    assert "replay: same final state" in out
    assert out.startswith("scenario: committer=")


def test_a_trace_that_diverges_names_the_step_and_both_moves(tmp_path: Path) -> None:
    """A trace whose recorded move is not what the replay offers (here: the wrapper left out of
    the header) stops at the first step that differs, saying what was recorded and what was
    offered, instead of running on to a different state or an index error."""
    source = next(p for p in TRACES if p.name == "tablev.direct.abortable_task.jsonl")
    events = read_trace(source)
    header = events[0]
    events[0] = {**header, "scenario": {**header["scenario"], "options": []}}
    stripped = write_trace(tmp_path / "unwrapped.jsonl", events)
    with pytest.raises(TraceDivergence) as info:
        replay(stripped)
    message = str(info.value)
    assert str(stripped) in message and "step " in message
    assert "recorded" in message and "offered" in message
