"""Wait, before a run, until the server has finished the previous run's work.

Why.  After a run the benchmark empties and deletes its bucket; Ceph RGW goes on working for
tens of seconds after the last answer (``ceph-osd`` at 100–127 % of a core while the client was
idle, `results/side_by_side.load_2026-11-24T23.log`), so the next run of a round met a busier
server than the first one did: at RGW F = 10,000, T = 8 the ``minimal`` strategy's job commit
took 21.9–24.2 s when it ran first in its round and 28.0–28.6 s when it ran last.  Rotating the
order cancels that only over many rounds.  Waiting until the server's own processes are idle
removes it at the source, whatever the order.

How.  The server's processes are named by :func:`server_pids` (moto: its child process; RGW:
the ``radosgw`` and ``ceph-*`` daemons whose command line names its state directory).  Their
CPU time (``utime + stime`` of ``/proc/PID/stat``) is sampled over windows of ``window``
seconds; the wait ends after ``windows`` consecutive windows in which they used less than
``busy_below`` of one core, or after ``timeout`` seconds (the row records that it timed
out).  Only the server is watched, not the whole machine: another user's process must not
hold the benchmark up, and the load average recorded with every run says how busy the
machine was.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

__all__ = ["Quiet", "QuietPolicy", "server_pids", "wait_until_quiet"]

#: the process names (``/proc/PID/comm``) of a Ceph RGW's daemons
CEPH_NAMES = ("radosgw", "ceph-osd", "ceph-mon", "ceph-mgr")

_TICKS = os.sysconf("SC_CLK_TCK")


@dataclass(frozen=True)
class QuietPolicy:
    """When the server counts as quiet: under ``busy_below`` of a core for ``windows``
    consecutive windows of ``window`` seconds; never wait longer than ``timeout``."""

    busy_below: float = 0.10
    window: float = 1.0
    windows: int = 2
    timeout: float = 90.0


@dataclass(frozen=True)
class Quiet:
    """What one wait saw: how long it took, the server's CPU (cores) in its last window, the
    processes watched, and whether it gave up."""

    seconds: float
    last_busy_cores: float
    processes: int
    timed_out: bool

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def server_pids(names: Iterable[str] = (), pids: Iterable[int] = (),
                command_line_has: str = "") -> list[int]:
    """``pids`` plus every process on the machine whose ``comm`` is one of ``names`` and, if
    ``command_line_has`` is given, whose command line contains it (one RGW's daemons name its
    state directory: another RGW on the machine, such as CI's, is not watched)."""
    wanted = set(names)
    found = set(pids)
    if wanted:
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                comm = (entry / "comm").read_text().strip()
                if comm not in wanted:
                    continue
                args = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(
                    "utf-8", "replace")
            except OSError:  # gone meanwhile
                continue
            if command_line_has in args:
                found.add(int(entry.name))
    return sorted(found)


def _cpu_ticks(pids: Iterable[int]) -> dict[int, int]:
    """CPU ticks used so far by each of ``pids`` that is still running."""
    ticks: dict[int, int] = {}
    for pid in pids:
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except OSError:  # the process ended: it uses no CPU any more
            continue
        # fields after the parenthesised comm (which may hold spaces): utime is 14th, stime 15th
        fields = stat[stat.rindex(")") + 2:].split()
        ticks[pid] = int(fields[11]) + int(fields[12])
    return ticks


def _used(before: dict[int, int], after: dict[int, int]) -> int:
    """Ticks used between two samples by the processes in both (one that ended meanwhile
    takes its ticks with it: counting it would make the window's use negative)."""
    return sum(max(0, after[pid] - before[pid]) for pid in before.keys() & after.keys())


def wait_until_quiet(pids: list[int], policy: QuietPolicy = QuietPolicy()) -> Quiet:
    """Block until ``pids`` are quiet by ``policy`` (see the module docstring)."""
    start = time.monotonic()
    quiet_windows = 0
    busy = 0.0
    if not pids:
        return Quiet(0.0, 0.0, 0, False)
    while True:
        ticks, t0 = _cpu_ticks(pids), time.monotonic()
        time.sleep(policy.window)
        used, elapsed = _used(ticks, _cpu_ticks(pids)), time.monotonic() - t0
        busy = used / _TICKS / elapsed
        quiet_windows = quiet_windows + 1 if busy < policy.busy_below else 0
        waited = time.monotonic() - start
        if quiet_windows >= policy.windows:
            return Quiet(round(waited, 1), round(busy, 3), len(pids), False)
        if waited >= policy.timeout:
            return Quiet(round(waited, 1), round(busy, 3), len(pids), True)
