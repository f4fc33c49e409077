"""bench/quiet.py: the wait before a side-by-side run ends when the server's processes are idle,
not before (a busy process holds it up) and not never (it gives up at the timeout)."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

from quiet import QuietPolicy, _used, server_pids, wait_until_quiet

FAST = QuietPolicy(busy_below=0.2, window=0.2, windows=2, timeout=10.0)
#: a spinning child counts as busy even on a loaded machine (it gets well over 5 % of a core)
BUSY_ABOVE = 0.05


def _spin(seconds: float) -> subprocess.Popen[bytes]:
    """A child that keeps one core busy for ``seconds``, then sleeps."""
    code = (f"import time\nend = time.monotonic() + {seconds}\n"
            "while time.monotonic() < end: pass\ntime.sleep(30)\n")
    return subprocess.Popen([sys.executable, "-c", code])


@pytest.fixture
def children() -> Iterator[list[subprocess.Popen[bytes]]]:
    procs: list[subprocess.Popen[bytes]] = []
    yield procs
    for proc in procs:
        proc.kill()
        proc.wait()


def test_an_idle_process_is_quiet_after_the_required_windows(
        children: list[subprocess.Popen[bytes]]) -> None:
    children.append(subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"]))
    time.sleep(0.5)  # past the interpreter's start-up
    seen = wait_until_quiet([children[0].pid], FAST)
    assert not seen.timed_out
    assert seen.processes == 1
    assert seen.seconds < FAST.timeout
    assert seen.last_busy_cores < FAST.busy_below


def test_a_busy_process_holds_the_wait_until_it_is_idle(
        children: list[subprocess.Popen[bytes]]) -> None:
    children.append(_spin(1.5))
    policy = QuietPolicy(busy_below=BUSY_ABOVE, window=0.2, windows=2, timeout=10.0)
    seen = wait_until_quiet([children[0].pid], policy)
    assert not seen.timed_out
    assert seen.seconds >= 1.2  # not before the spinning ended (and two quiet windows after)


def test_a_process_busy_past_the_timeout_ends_the_wait_as_timed_out(
        children: list[subprocess.Popen[bytes]]) -> None:
    children.append(_spin(20))
    policy = QuietPolicy(busy_below=BUSY_ABOVE, window=0.2, windows=2, timeout=1.0)
    seen = wait_until_quiet([children[0].pid], policy)
    assert seen.timed_out
    assert seen.last_busy_cores >= BUSY_ABOVE


def test_server_pids_finds_processes_by_name_and_keeps_the_given_ones(
        children: list[subprocess.Popen[bytes]]) -> None:
    children.append(subprocess.Popen(["sleep", "30"]))
    time.sleep(0.2)
    assert children[0].pid in server_pids(["sleep"])
    assert children[0].pid in server_pids(["sleep"], command_line_has="sleep 30")
    assert children[0].pid not in server_pids(["sleep"], command_line_has="sleep 31")
    assert server_pids([], [12345]) == [12345]
    assert wait_until_quiet([]).processes == 0


def test_a_process_that_ends_during_a_window_does_not_make_its_use_negative() -> None:
    # the first RGW wait of 2026-11-25 03:1x reported -29.3 cores: CI's RGW daemons ended in
    # its window and their ticks were subtracted
    assert _used({1: 100, 2: 5000}, {1: 110}) == 10
    assert _used({1: 100}, {1: 110, 3: 7}) == 10  # one that started meanwhile: not counted
