"""Commit protocols of the model, one module each, reading like the papers' pseudo-code.

Every module registers a committer factory under the name the CLI and the suites use.  A
*variant* (a protocol with a known production bug reintroduced, or a deliberately broken one for
checker tests) registers under ``name+variant``; variants never appear in the verdict matrix
unless asked for.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import ClassVar, Protocol, TypeVar

from zerorename.store import Store
from zerorename_model.engine.scenario import CommitterFactory
from zerorename_model.systems.protocols.retrying import Retry, RetryingStore


class ModelCommitterFactory(CommitterFactory, Protocol):
    """A registered committer class: a :class:`CommitterFactory` that also says whether its
    output may be visible before job commit (the property suites skip that check for it)."""

    visible_before_job_commit: bool
    takes_messages: bool


class ModelCommitter:
    """Base of the model's committer classes: declares, with their defaults, the class
    attributes :func:`register` sets, so that a class is a :class:`ModelCommitterFactory`."""

    supports_recovery: ClassVar[bool] = False
    visible_before_job_commit: ClassVar[bool] = False
    takes_messages: ClassVar[bool] = True
    #: how its requests are repeated when their outcome is ambiguous (as the reference's
    #: one retry loop does); the harness puts :meth:`store_client` around its store
    retry: ClassVar[Retry] = Retry()

    @classmethod
    def store_client(cls, store: Store) -> Store:
        """The destination store as this committer's client sees it: in its retry loop."""
        return RetryingStore(store, cls.retry)


F = TypeVar("F", bound=ModelCommitterFactory)

COMMITTERS: dict[str, ModelCommitterFactory] = {}

#: modules imported on first lookup, so that registering stays next to each protocol
_MODULES = ("direct", "v1", "v2", "staging", "magic", "manifest", "stocator", "emr", "lakefs",
            "fenced", "fenced_variants")


def register(name: str, *, supports_recovery: bool = False,
             visible_before_job_commit: bool = False,
             takes_messages: bool = True) -> Callable[[F], F]:
    """Class decorator: register a committer class (constructed as ``cls(env, job, task,
    options)``) under ``name``.  ``visible_before_job_commit``: the protocol makes output
    visible in the destination before job commit (a task's writes or its task commit do), so
    it does not promise otherwise; the property suites check every other committer for it
    after every step.  ``takes_messages=False``: a Hadoop job committer, whose
    ``commitJob(JobContext)`` has no place for the task commit messages (Spark's
    ``HadoopMapReduceCommitProtocol`` keeps them), so the driver calls its ``commit_job(None)``
    under Spark's protocol too, and the verdict matrix explores its scopes once for both."""

    def wrap(cls: F) -> F:
        cls.supports_recovery = supports_recovery
        cls.visible_before_job_commit = visible_before_job_commit
        cls.takes_messages = takes_messages
        COMMITTERS[name] = cls
        return cls

    return wrap


def load_all() -> dict[str, ModelCommitterFactory]:
    for module in _MODULES:
        try:
            importlib.import_module(f"zerorename_model.systems.protocols.{module}")
        except ModuleNotFoundError as error:
            if error.name != f"zerorename_model.systems.protocols.{module}":
                raise
    return COMMITTERS


def get(name: str) -> ModelCommitterFactory:
    load_all()
    try:
        return COMMITTERS[name]
    except KeyError:
        raise KeyError(f"no model committer {name!r}; known: {sorted(COMMITTERS)}") from None
