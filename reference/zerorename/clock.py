"""Where a committer's times come from: the system clock, or one fixed instant.

Committers write wall-clock timestamps into their records (``created``/``saved`` of a
``.pending``, ``zerorename.saved`` of a pendingset or manifest, ``timestamp`` of ``_SUCCESS``)
and monotonic durations into their statistics (``store_put.max``, ``committer_commit_job.mean``…),
which travel into pendingsets, manifests and ``_SUCCESS``.  That is what users want, but it
makes two runs that do exactly the same thing write different bytes.  A checker that recognises
states by the store's contents (the model harness prunes a schedule when it reaches a state it
has seen) then never sees a state twice.

The option ``zerorename.clock.fixed-millis`` gives a committer a :class:`FixedClock`: every
timestamp it writes is that value and every duration it records is 0, so runs that perform the
same operations write byte-identical records.  The clock is carried by the
:class:`~zerorename.context.JobContext` (so every committer of a job, driver and tasks, agrees)
rather than patched into a module, so a process can run fixed-clock and real jobs side by side.

Ordering that depends on time is unaffected in kind: Hadoop-protocol job commit picks the last
committed attempt of a task by its ``saved`` time, then by attempt number; with a fixed clock
every ``saved`` is equal and the attempt number decides, deterministically.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from zerorename import options as O
from zerorename.errors import CommitError

__all__ = ["FIXED_MILLIS_OPTION", "SYSTEM_CLOCK", "Clock", "FixedClock", "clock_from_options"]

FIXED_MILLIS_OPTION = O.FIXED_MILLIS.name


class Clock:
    """The system clock: ``now_millis`` is wall-clock time (ms since the epoch, for records);
    ``monotonic`` is seconds from an arbitrary origin (for durations, immune to clock steps)."""

    def now_millis(self) -> int:
        return int(time.time() * 1000)

    def monotonic(self) -> float:
        return time.monotonic()

    def __repr__(self) -> str:
        return "Clock()"


class FixedClock(Clock):
    """A clock stopped at ``millis``: every timestamp is ``millis``, every duration 0."""

    def __init__(self, millis: int) -> None:
        if isinstance(millis, bool) or not isinstance(millis, int) or millis < 0:
            raise CommitError(FIXED_MILLIS_OPTION,
                              f"fixed clock value {millis!r} is not an integer >= 0")
        self.millis = millis

    def now_millis(self) -> int:
        return self.millis

    def monotonic(self) -> float:
        return 0.0

    def __repr__(self) -> str:
        return f"FixedClock({self.millis})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, FixedClock) and other.millis == self.millis

    def __hash__(self) -> int:
        return hash(("FixedClock", self.millis))


SYSTEM_CLOCK = Clock()


def clock_from_options(options: Mapping[str, Any]) -> Clock:
    """:class:`FixedClock` when ``zerorename.clock.fixed-millis`` is set (an integer number of
    milliseconds since the epoch, as a string or int), else :data:`SYSTEM_CLOCK`.  A malformed
    value is a :class:`CommitError` naming the option."""
    value = options.get(FIXED_MILLIS_OPTION)
    if value is None or (isinstance(value, str) and not value.strip()):
        return SYSTEM_CLOCK
    if isinstance(value, bool):
        raise CommitError(FIXED_MILLIS_OPTION, f"option value {value!r} is not an integer "
                                               "number of milliseconds")
    if isinstance(value, int):
        return FixedClock(value)
    try:
        millis = int(str(value).strip())
    except ValueError:
        raise CommitError(FIXED_MILLIS_OPTION, f"option value {value!r} is not an integer "
                                               "number of milliseconds") from None
    return FixedClock(millis)
