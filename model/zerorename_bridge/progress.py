"""Progress lines for long steps (the demo's Spark jobs, the model matrix), on stderr."""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager


class Progress:
    """Step lines on stderr with the elapsed time, so a slow step never looks like a hang and
    stdout keeps only results.  :meth:`step` wraps a step that can take long (a Spark job, the
    model matrix): it says when the step starts, says again every ``heartbeat`` seconds while it
    runs, and says how long it took."""

    def __init__(self, heartbeat: float = 10.0) -> None:
        self.started = time.monotonic()
        self.heartbeat = heartbeat
        self._lock = threading.Lock()  # the heartbeat thread and the main thread both print

    def __call__(self, message: str) -> None:
        with self._lock:
            print(f"[{time.monotonic() - self.started:6.1f}s] {message}", file=sys.stderr,
                  flush=True)

    @contextmanager
    def step(self, name: str) -> Iterator[None]:
        self(name)
        began = time.monotonic()
        finished = threading.Event()

        def beat() -> None:
            while not finished.wait(self.heartbeat):
                self(f"{name}: still running ({time.monotonic() - began:.0f} s so far)")

        ticker = threading.Thread(target=beat, name="zerorename-progress", daemon=True)
        ticker.start()
        try:
            yield
        finally:
            finished.set()
            ticker.join()
        self(f"{name}: done in {time.monotonic() - began:.1f} s")
