"""Fault injection for Spark writes: the demo's and the tests' way to make real tasks fail.

Local Spark cannot produce the failures a committer exists for — it never speculates (one
host), and tasks only fail when told to.  So the production writer calls task hooks
(:mod:`zerorename.spark.hooks`) at two points of every task attempt, and this module is their
provider, registered under the entry-point group ``zerorename.spark_task_hooks`` (see
``model/pyproject.toml``): production never imports it by name, and without this distribution
a write that sets fault options is refused.  The options are ``zerorename.fault.<kind>``, each
a list of ``partition@attempt[:argument]`` rules (``attempt`` may be ``*``):

* ``raise_after_write`` — raise after every file is written, before ``commit_task``; the
  exception path runs ``abort_task`` (a UDF error, an OOM caught by Python).
* ``exit_after_write`` — ``os._exit`` at the same point: no ``abort_task``, uploads stay
  pending, exactly what a killed executor leaves; only job commit/abort can clean it.
* ``exit_mid_write`` — ``os._exit`` after ``argument`` batches (default 1), files still open.
* ``sleep_before_commit`` — sleep ``argument`` seconds before ``commit_task`` (to overlap a
  duplicate attempt with the real one).

:class:`DuplicateAttempt` is the other half: a second attempt of one task, run outside Spark
(in a thread, against the same store), as a speculative or partitioned ("zombie") executor
would.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from zerorename.spark.core import WriteSpec

log = logging.getLogger("zerorename.spark")

KINDS = frozenset({"raise_after_write", "exit_after_write", "exit_mid_write",
                   "sleep_before_commit"})
EXIT_CODE = 17


class InjectedFault(RuntimeError):
    """Raised by the ``raise_after_write`` hook (never in normal operation)."""


def validate(rules: Mapping[str, str]) -> dict[str, str]:
    """``rules`` (kind → rule: the option names without ``zerorename.fault.``), checked."""
    unknown = sorted(set(rules) - KINDS)
    if unknown:
        raise ValueError(f"unknown fault hooks {unknown}; known: {sorted(KINDS)}")
    for rule in rules.values():
        for item in rule.split(","):
            target = item.strip().partition(":")[0]
            part, at, attempt = target.partition("@")
            if not (part.isdigit() and at and (attempt == "*" or attempt.isdigit())):
                raise ValueError(f"fault rule {item!r}: expected partition@attempt[:arg]")
    return dict(rules)


def matches(rule: str | None, partition_id: int, attempt: int) -> str | None:
    """The argument of the first item of ``rule`` matching this attempt ('' if it has none),
    or ``None`` when no item matches."""
    if not rule:
        return None
    for item in rule.split(","):
        target, _, arg = item.strip().partition(":")
        part, _, att = target.partition("@")
        if int(part) == partition_id and att in ("*", str(attempt)):
            return arg
    return None


@dataclass(frozen=True)
class TaskFaults:
    """The faults that apply to one task attempt."""

    faults: Mapping[str, str]
    partition_id: int
    attempt: int

    def _arg(self, kind: str) -> str | None:
        return matches(self.faults.get(kind), self.partition_id, self.attempt)

    def batch_hook(self) -> Callable[[], None] | None:
        """Called after each batch: exits once ``exit_mid_write``'s batch count is reached."""
        arg = self._arg("exit_mid_write")
        if arg is None:
            return None
        limit = int(arg or 1)
        seen = [0]

        def hook() -> None:
            seen[0] += 1
            if seen[0] >= limit:
                self._exit("exit mid-write")

        return hook

    def after_write(self, job_id: str) -> None:
        """Between "every byte written" and ``commit_task``."""
        delay = self._arg("sleep_before_commit")
        if delay:
            time.sleep(float(delay))
        if self._arg("exit_after_write") is not None:
            self._exit("exit after write")
        if self._arg("raise_after_write") is not None:
            raise InjectedFault(f"injected failure after write: task {self.partition_id} "
                                f"attempt {self.attempt} of job {job_id}")

    def _exit(self, what: str) -> None:
        log.warning("zerorename fault: %s, task %s attempt %s (pid %s)", what,
                    self.partition_id, self.attempt, os.getpid())
        logging.shutdown()
        os._exit(EXIT_CODE)


class FaultProvider:
    """The :class:`zerorename.spark.hooks.TaskHookProvider` of the fault options."""

    def validate(self, rules: Mapping[str, str]) -> dict[str, str]:
        return validate(rules)

    def for_task(self, rules: Mapping[str, str], partition_id: int,
                 attempt: int) -> TaskFaults:
        return TaskFaults(rules, partition_id, attempt)


#: registered as ``fault`` in the entry-point group ``zerorename.spark_task_hooks``
PROVIDER = FaultProvider()


class DuplicateAttempt:
    """A duplicate attempt of task ``partition_id`` outside Spark, in a background thread.

    It writes ``batches`` to the same relative paths the real attempts use, then waits for
    :meth:`release` before calling ``commit_task`` — so a caller can commit it while the real
    attempt is still running (a speculative twin) or after the job committed (a partitioned
    executor waking up late).  A refused task commit is answered with ``abort_task``, as a
    real executor would.  ``error`` holds anything unexpected; ``committed`` whether the
    committer accepted the task commit (it may: the driver never uses the message).
    """

    def __init__(self, spec: WriteSpec, partition_id: int, batches: Iterable[object], *,
                 attempt: int = 1000) -> None:
        self.spec = spec
        self.partition_id = partition_id
        self.attempt = attempt
        self.batches = list(batches)
        self.written = threading.Event()
        self._release = threading.Event()
        self.error: BaseException | None = None
        self.committed: bool | None = None
        self._thread = threading.Thread(target=self._run, daemon=True,
                                        name=f"zerorename-duplicate-{partition_id}")

    def start(self, timeout: float = 120.0) -> DuplicateAttempt:
        """Start, and return once its files are written (not committed)."""
        self._thread.start()
        if not self.written.wait(timeout):
            raise TimeoutError(f"duplicate attempt of task {self.partition_id} did not write")
        if self.error is not None:
            raise self.error
        return self

    def release(self, timeout: float = 120.0) -> None:
        """Let it commit its task, and wait until it has."""
        self._release.set()
        self._thread.join(timeout)
        if self.error is not None:
            raise self.error

    def _run(self) -> None:
        import zerorename as zr
        from zerorename.spark.core import job_context, make_store, parquet_settings
        from zerorename.spark.parquet import PartitionedParquetWriter

        try:
            job = job_context(self.spec)
            task = job.task(task_id=self.partition_id, attempt=self.attempt)
            committer = zr.create_committer(self.spec.committer, make_store(self.spec), job,
                                            task=task)
            committer.setup_task()
            PartitionedParquetWriter(open_file=committer.open,
                                     file_stem=self.spec.file_stem(self.partition_id),
                                     partition_by=self.spec.partition_by,
                                     settings=parquet_settings(self.spec)
                                     ).write_all(self.batches)
        except BaseException as error:
            self.error = error
            return
        finally:
            self.written.set()
        self._release.wait()
        try:
            committer.commit_task()
            self.committed = True
        except zr.CommitError:
            self.committed = False
            try:
                committer.abort_task()
            except BaseException as error:
                self.error = error
        except BaseException as error:
            self.error = error
