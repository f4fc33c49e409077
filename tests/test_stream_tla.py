"""TLC on tla/stream/StreamCommit.tla, the stream sink's batch-record protocol: with the record
created by ``If-None-Match: *`` every invariant holds for 3 batches of 2 files each and 3
driver restarts; with a plain PUT (a re-run overwrites the record) TLC finds a listing reader
seeing a file no record names.  Kept apart from tla/*.cfg, whose results are compared cell by
cell with the batch committers' verdict matrix (tests/test_tla.py), which has no streaming
cells."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parent.parent
STREAM = ROOT / "tla" / "stream"


def _tlc() -> ModuleType:
    path = ROOT / "tla" / "tools" / "tlc.py"
    spec = importlib.util.spec_from_file_location("zerorename_tla_tlc_stream", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


tlc = _tlc()


@pytest.fixture(scope="module")
def jar() -> Path:
    try:
        return Path(tlc.java_and_jar()[1])
    except tlc.TlcUnavailable as exc:
        pytest.fail(f"TLC cannot run: {exc}")


def test_sany_accepts_the_module(jar: Path) -> None:
    assert tlc.sany_errors(STREAM / "StreamCommit.tla", jar=jar) == []


def test_the_conditional_record_holds(jar: Path) -> None:
    result = tlc.run_tlc(STREAM / "StreamCommit_conditional.cfg", STREAM / "StreamCommit.tla",
                         jar=jar)
    assert result.outcome is tlc.Outcome.HOLDS, result.output[-2000:]
    assert result.distinct_states > 500  # restarts and re-runs were explored


def test_a_plain_put_record_is_caught(jar: Path) -> None:
    result = tlc.run_tlc(STREAM / "StreamCommit_plainput.cfg", STREAM / "StreamCommit.tla",
                         jar=jar)
    assert result.outcome is tlc.Outcome.INVARIANT_VIOLATED
    assert result.violated == "ListingCommittedOnly"
    assert len(result.trace) >= 5  # a write, a record, a publish, a crash, the re-run's record


def test_a_rerun_that_does_not_roll_forward_is_caught(jar: Path) -> None:
    """A driver that died between two completes of a recorded batch: a re-run that completes
    only its own uploads leaves the batch committed in Spark's log with a file missing."""
    result = tlc.run_tlc(STREAM / "StreamCommit_noroll.cfg", STREAM / "StreamCommit.tla",
                         jar=jar)
    assert result.outcome is tlc.Outcome.INVARIANT_VIOLATED
    assert result.violated == "Committed"
