"""IOStatistics: thread-safe counters and durations, in the JSON shape Hadoop uses.

Hadoop's committers carry an ``IOStatisticsSnapshot`` in every ``.pendingset``, task manifest
and ``_SUCCESS`` file, so the job's summary adds up what every task did (the acceptance tests
read ``committer_tasks_completed`` back from ``_SUCCESS``).  We keep the same shape::

    {"counters": {...}, "gauges": {...}, "minimums": {...}, "maximums": {...},
     "meanstatistics": {"name": {"samples": n, "sum": s}}}

A duration statistic ``op`` (milliseconds) records the counter ``op`` (or ``op.failures``)
plus ``op.min``/``op.max``/``op.mean`` (or the ``.failures`` variants), as Hadoop does.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from zerorename import statistics as S
from zerorename.clock import SYSTEM_CLOCK, Clock

if TYPE_CHECKING:
    from zerorename.logs import DurationObserver

__all__ = ["IOStatistics"]

_SECTIONS = ("counters", "gauges", "minimums", "maximums", "meanstatistics")


class IOStatistics:
    """Counters, gauges, minimums, maximums and means; every method is thread-safe.

    ``clock`` times :meth:`duration` blocks (a :class:`~zerorename.clock.FixedClock` makes
    every duration 0, so statistics repeat exactly across identical runs)."""

    def __init__(self, clock: Clock | None = None) -> None:
        self.clock = clock or SYSTEM_CLOCK
        self._lock = threading.Lock()
        self.counters: dict[str, int] = {}
        self.gauges: dict[str, int] = {}
        self.minimums: dict[str, int] = {}
        self.maximums: dict[str, int] = {}
        self.means: dict[str, tuple[int, int]] = {}  # name -> (samples, sum)
        #: told when each :meth:`duration` starts and ends (the committer's log: see
        #: :mod:`zerorename.logs`); statistics never fail for it, so its errors are dropped
        self.observer: DurationObserver | None = None

    def incr(self, name: str, amount: int = 1) -> None:
        with self._lock:
            self.counters[name] = self.counters.get(name, 0) + amount

    def counter(self, name: str) -> int:
        with self._lock:
            return self.counters.get(name, 0)

    def set_gauge(self, name: str, value: int) -> None:
        with self._lock:
            self.gauges[name] = value

    def sample(self, name: str, value: int) -> None:
        """Add one sample to the min/max/mean of ``name`` (e.g. a task's file count)."""
        with self._lock:
            self._sample_locked(name, value)

    def _sample_locked(self, name: str, value: int) -> None:
        lo = self.minimums.get(name + ".min")
        self.minimums[name + ".min"] = value if lo is None else min(lo, value)
        hi = self.maximums.get(name + ".max")
        self.maximums[name + ".max"] = value if hi is None else max(hi, value)
        samples, total = self.means.get(name + ".mean", (0, 0))
        self.means[name + ".mean"] = (samples + 1, total + value)

    def record_duration(self, name: str, seconds: float, *, failed: bool = False) -> None:
        key = name + S.FAILURES_SUFFIX if failed else name
        millis = int(seconds * 1000)
        with self._lock:
            self.counters[key] = self.counters.get(key, 0) + 1
            self._sample_locked(key, millis)

    @contextmanager
    def duration(self, name: str) -> Iterator[None]:
        """Time the block under ``name``; an exception is recorded as ``name.failures``."""
        self._observe(name, None, failed=False)
        start = self.clock.monotonic()
        try:
            yield
        except BaseException:
            elapsed = self.clock.monotonic() - start
            self.record_duration(name, elapsed, failed=True)
            self._observe(name, elapsed, failed=True)
            raise
        elapsed = self.clock.monotonic() - start
        self.record_duration(name, elapsed)
        self._observe(name, elapsed, failed=False)

    def _observe(self, name: str, seconds: float | None, *, failed: bool) -> None:
        observer = self.observer
        if observer is None:
            return
        try:
            if seconds is None:
                observer.started(name, self._counters_copy)
            else:
                observer.finished(name, seconds, failed, self._counters_copy)
        except Exception:  # a log line is never worth a failed commit
            pass

    def _counters_copy(self) -> dict[str, int]:
        with self._lock:
            return dict(self.counters)

    def aggregate(self, other: IOStatistics | Mapping[str, Any] | None) -> None:
        """Add ``other`` (statistics or their JSON) into these: counters and gauges sum,
        minimums take the least, maximums the greatest, means pool their samples."""
        if other is None:
            return
        snap = other.snapshot() if isinstance(other, IOStatistics) else other
        with self._lock:
            for name, value in _ints(snap.get("counters")).items():
                self.counters[name] = self.counters.get(name, 0) + value
            for name, value in _ints(snap.get("gauges")).items():
                self.gauges[name] = self.gauges.get(name, 0) + value
            for name, value in _ints(snap.get("minimums")).items():
                lo = self.minimums.get(name)
                self.minimums[name] = value if lo is None else min(lo, value)
            for name, value in _ints(snap.get("maximums")).items():
                hi = self.maximums.get(name)
                self.maximums[name] = value if hi is None else max(hi, value)
            means = snap.get("meanstatistics")
            if isinstance(means, Mapping):
                for name, mean in means.items():
                    if not isinstance(mean, Mapping):
                        continue
                    samples = _int(mean.get("samples"))
                    total = _int(mean.get("sum"))
                    have = self.means.get(str(name), (0, 0))
                    self.means[str(name)] = (have[0] + samples, have[1] + total)

    def snapshot(self) -> dict[str, Any]:
        """A JSON-ready copy (Hadoop's IOStatisticsSnapshot layout, keys sorted)."""
        with self._lock:
            return {
                "counters": dict(sorted(self.counters.items())),
                "gauges": dict(sorted(self.gauges.items())),
                "minimums": dict(sorted(self.minimums.items())),
                "maximums": dict(sorted(self.maximums.items())),
                "meanstatistics": {
                    name: {"samples": s, "sum": t} for name, (s, t) in sorted(self.means.items())
                },
            }

    @classmethod
    def from_json(cls, data: Mapping[str, Any] | None) -> IOStatistics:
        """Statistics from their JSON form; unknown or malformed entries are ignored, since
        statistics are diagnostics and must never fail a commit."""
        stats = cls()
        if isinstance(data, Mapping):
            stats.aggregate(data)
        return stats

    def __repr__(self) -> str:
        return f"IOStatistics(counters={self.counters!r})"


def is_statistics_json(value: Any) -> bool:
    """True if ``value`` has the IOStatisticsSnapshot shape (every section a mapping)."""
    return isinstance(value, Mapping) and all(
        isinstance(value.get(section, {}), Mapping) for section in _SECTIONS
    )


def _int(value: Any) -> int:
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return int(value)
    return 0


def _ints(section: Any) -> dict[str, int]:
    if not isinstance(section, Mapping):
        return {}
    return {str(k): _int(v) for k, v in section.items() if isinstance(v, (int, float))}
