"""Task hooks: the seam through which tests and the demo make a Spark write's tasks fail.

Local Spark cannot produce the failures a committer exists for (it never speculates, and tasks
fail only when told to), so the writer lets something act at two points of every task attempt:
after each batch it writes, and between "every byte written" and ``commit_task``.  *What* acts
there — raising, killing the worker, sleeping — is test machinery, not production code, so it
is not in this package: a provider registered under the entry-point group
:data:`ENTRY_POINT_GROUP` supplies it (zerorename-research registers
``zerorename_bridge.spark_faults``).  This module holds only the two Protocols, the option
namespace and the no-op, and never imports a provider by name.

Options named ``zerorename.fault.<kind>`` go to that provider, which validates them when the
write is planned (a bad rule fails the write before any task runs) and builds each task
attempt's hooks.  A write without such options loads nothing and its hooks do nothing; a write
that asks for hooks when no provider is installed is refused — a fault asked for must never be
silently skipped, or a test would pass without its fault.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from importlib.metadata import entry_points
from typing import Protocol, runtime_checkable

from zerorename.errors import CommitError

#: The option namespace of task hooks: ``zerorename.fault.<kind>`` (the kinds are the
#: provider's).
OPTION_PREFIX = "zerorename.fault."
#: The entry-point group a provider registers in, under the name :data:`PROVIDER_NAME`.
ENTRY_POINT_GROUP = "zerorename.spark_task_hooks"
PROVIDER_NAME = "fault"
#: Where the provider comes from, for the message when it is missing.
PROVIDER_DISTRIBUTION = "zerorename-research"
PROVIDER_INSTALL = "pip install -e ./model, from a zerorename clone's top directory"


@runtime_checkable
class TaskHooks(Protocol):
    """What one task attempt calls while it writes."""

    def batch_hook(self) -> Callable[[], None] | None:
        """A callable run after each batch is written, or ``None`` (nothing to run)."""
        ...

    def after_write(self, job_id: str) -> None:
        """Run once every file is written, before ``commit_task``; an exception here takes
        the task's failure path (``abort_task``)."""
        ...


@runtime_checkable
class TaskHookProvider(Protocol):
    """Turns ``zerorename.fault.*`` options into task hooks; registered as an entry point."""

    def validate(self, rules: Mapping[str, str]) -> dict[str, str]:
        """``rules`` (kind → rule, the option prefix removed) checked; ``ValueError`` naming
        the bad kind or rule otherwise."""
        ...

    def for_task(self, rules: Mapping[str, str], partition_id: int,
                 attempt: int) -> TaskHooks:
        """The hooks of one task attempt under validated ``rules``."""
        ...


class TaskHookOptionError(CommitError, ValueError):
    """A ``zerorename.fault.*`` option that cannot be honoured: no provider is installed, or
    the provider refused the rule.  Also a ``ValueError``, as every bad writer option is."""


class NoHooks:
    """The hooks of a task with no ``zerorename.fault.*`` option: nothing runs."""

    def batch_hook(self) -> Callable[[], None] | None:
        return None

    def after_write(self, job_id: str) -> None:
        return None


NO_HOOKS = NoHooks()


@functools.cache
def _provider() -> TaskHookProvider | str:
    """The installed provider, or why there is none (cached: a worker loads it once)."""
    found = {ep.value: ep for ep in entry_points(group=ENTRY_POINT_GROUP, name=PROVIDER_NAME)}
    if not found:
        return (f"{OPTION_PREFIX}* options are test hooks provided by the "
                f"{PROVIDER_DISTRIBUTION} distribution, which is not installed "
                f"({PROVIDER_INSTALL})")
    if len(found) > 1:
        return (f"several providers of {OPTION_PREFIX}* options are installed "
                f"({', '.join(sorted(found))}); keep one")
    [entry] = found.values()
    provider = entry.load()
    if not isinstance(provider, TaskHookProvider):
        return f"{entry.value} (entry point {ENTRY_POINT_GROUP}) is not a TaskHookProvider"
    return provider


def parse_options(dest: str, options: Mapping[str, object]) -> dict[str, str]:
    """The validated hook rules among a write's ``options`` (names already lower case):
    kind → rule, empty when there are none (the provider is then never loaded)."""
    rules = {name[len(OPTION_PREFIX):]: str(value) for name, value in options.items()
             if name.startswith(OPTION_PREFIX)}
    if not rules:
        return {}
    provider = _provider()
    if isinstance(provider, str):
        raise TaskHookOptionError(dest, provider)
    try:
        return provider.validate(rules)
    except ValueError as error:
        raise TaskHookOptionError(dest, str(error)) from error


def for_task(rules: Mapping[str, str], partition_id: int, attempt: int) -> TaskHooks:
    """One task attempt's hooks: :data:`NO_HOOKS` unless the write set hook options."""
    if not rules:
        return NO_HOOKS
    provider = _provider()
    if isinstance(provider, str):  # validated on the driver, but this worker lacks it
        raise TaskHookOptionError("<task hooks>", provider)
    return provider.for_task(rules, partition_id, attempt)
