"""Committers from outside the tree: how ``check``, ``trace replay`` and the pytest plugin find
a committer class the user wrote.

A ``--committer`` name is one of:

* a built-in name (``fenced``, ``magic``… for ``--target reference``; the model's protocols
  for ``--target model``);
* the name of an entry point in :data:`REFERENCE_GROUP` (``zerorename.committers``: a class
  with the built-in committers' constructor ``(store, job, task)`` and the contract of
  docs/user/api.md, usually a :class:`zerorename.BaseCommitter` subclass) or in
  :data:`MODEL_GROUP` (``zerorename_research.model_committers``: a model committer class,
  constructed as ``cls(env, job, task, options)``, usually a
  :class:`zerorename_model.systems.protocols.ModelCommitter` subclass) — a package registers
  its committers there in its ``pyproject.toml``;
* ``module:Class`` (``my_committer.committers:EagerCommitter``), imported from the
  environment;
* ``hadoop:<class>``: a JVM ``PathOutputCommitter`` (:func:`load_hadoop`; not yet
  available).

A name travels as text through the verdict matrix's worker processes and into the header of
every witness trace; :func:`reference_resolver` and :func:`model_resolver` (module-level, so
that worker processes can import them) turn it back into a factory, and ``zerorename trace
replay`` does the same for a witness, so a plug-in's witness replays with the class that
produced it.
"""

from __future__ import annotations

import enum
import importlib
from collections.abc import Sequence
from dataclasses import dataclass
from importlib.metadata import entry_points
from typing import Any

import zerorename as zr
from zerorename.errors import CommitError
from zerorename_bridge.adapters import HARNESS_OPTIONS, ReferenceCommitter, TranslatingStore
from zerorename_model.check.explore import Backend
from zerorename_model.engine.harness.workers import DEFAULT_WIDTH
from zerorename_model.engine.scenario import CommitterFactory, JobSpec, TaskSpec

__all__ = ["HADOOP_PREFIX", "MODEL_GROUP", "REFERENCE_GROUP", "CommitterSpec",
           "PluginCommitterError", "PluginReferenceFactory", "Source", "Target",
           "check_names", "load_hadoop", "model_factory", "model_resolver", "parse",
           "reference_factory", "reference_resolver", "registered"]

#: the entry-point group of reference committer classes, ``(store, job, task)``
REFERENCE_GROUP = "zerorename.committers"
#: the entry-point group of model committer classes, ``(env, job, task, options)``
MODEL_GROUP = "zerorename_research.model_committers"
#: the prefix of a JVM committer class's name
HADOOP_PREFIX = "hadoop:"

#: what a reference committer class must have (docs/user/api.md, "The calls")
REFERENCE_METHODS = ("setup_job", "setup_task", "open", "needs_task_commit", "commit_task",
                     "abort_task", "commit_job", "abort_job", "cleanup_job")
#: what a model committer class must have (zerorename_model.engine.scenario.Committer)
MODEL_METHODS = ("setup_job", "setup_task", "write", "needs_task_commit", "commit_task",
                 "abort_task", "commit_job", "abort_job", "cleanup_job")


class PluginCommitterError(CommitError):
    """A ``--committer`` name that names no usable committer class: not built in, not an
    entry point, not an importable ``module:Class``, or a class without the contract's
    methods or declarations.  Its path is the name as given."""


class Target(enum.Enum):
    """Which tower a committer class belongs to."""

    REFERENCE = "reference"
    MODEL = "model"


class Source(enum.Enum):
    """Where a committer name is resolved."""

    BUILTIN = "builtin"
    ENTRY_POINT = "entry-point"
    IMPORT = "import"
    HADOOP = "hadoop"


@dataclass(frozen=True)
class CommitterSpec:
    """A ``--committer`` name, parsed: ``location`` is ``module:Class`` (an entry point's
    value, or the name itself), the JVM class name (``hadoop:``), or the built-in name."""

    name: str
    target: Target
    source: Source
    location: str


def _group(target: Target) -> str:
    return REFERENCE_GROUP if target is Target.REFERENCE else MODEL_GROUP


def _builtins(target: Target) -> tuple[str, ...]:
    if target is Target.REFERENCE:
        from zerorename_bridge.adapters import NO_LANDED_CHECK
        from zerorename_bridge.verdicts import REFERENCE_COMMITTERS

        return (*REFERENCE_COMMITTERS, *(c + NO_LANDED_CHECK for c in REFERENCE_COMMITTERS))
    from zerorename_model.systems.protocols import load_all

    return tuple(load_all())


def registered(target: Target) -> dict[str, str]:
    """The committers installed packages register for ``target``: name -> ``module:Class``."""
    return {ep.name: ep.value for ep in entry_points(group=_group(target))}


def parse(name: str, target: Target) -> CommitterSpec:
    """Where ``name`` is to be found (nothing is imported yet)."""
    if name.startswith(HADOOP_PREFIX):
        return CommitterSpec(name, target, Source.HADOOP, name[len(HADOOP_PREFIX):])
    if name in _builtins(target):
        return CommitterSpec(name, target, Source.BUILTIN, name)
    plugins = registered(target)
    if name in plugins:
        return CommitterSpec(name, target, Source.ENTRY_POINT, plugins[name])
    if ":" in name:
        return CommitterSpec(name, target, Source.IMPORT, name)
    other = Target.MODEL if target is Target.REFERENCE else Target.REFERENCE
    hint = (f"; {name!r} is a {other.value} committer (--target {other.value})"
            if name in registered(other) else "")
    raise PluginCommitterError(name, (
        f"unknown committer {name!r} (--target {target.value}){hint}: known are the built-in "
        f"{sorted(n for n in _builtins(target) if '+no-landed-check' not in n)}, "
        f"the entry points of group {_group(target)!r} "
        f"{sorted(plugins)}, or give module:Class of a class installed in this environment"))


def _import(spec: CommitterSpec) -> type:
    module_name, _, attribute = spec.location.partition(":")
    if not module_name or not attribute:
        raise PluginCommitterError(spec.name, f"{spec.location!r} is not module:Class")
    try:
        module = importlib.import_module(module_name)
    except ImportError as error:
        raise PluginCommitterError(spec.name, (
            f"cannot import module {module_name!r} ({error}); install the package that "
            "provides it into this environment (pip install -e <its directory>)")) from error
    found: Any = module
    for part in attribute.split("."):
        found = getattr(found, part, None)
        if found is None:
            raise PluginCommitterError(spec.name, f"module {module_name!r} has no "
                                                  f"{attribute!r}")
    if not isinstance(found, type):
        raise PluginCommitterError(spec.name, f"{spec.location} is a "
                                              f"{type(found).__name__}, not a class")
    return found


def _check_class(spec: CommitterSpec, cls: type, methods: Sequence[str],
                 declarations: Sequence[str]) -> None:
    missing = [m for m in methods if not callable(getattr(cls, m, None))]
    if missing:
        raise PluginCommitterError(spec.name, (
            f"{cls.__module__}.{cls.__qualname__} lacks {', '.join(missing)} of the "
            f"{spec.target.value} committer contract"
            + (" (docs/user/api.md; subclass zerorename.BaseCommitter)"
               if spec.target is Target.REFERENCE else
               " (zerorename_model.engine.scenario.Committer; subclass "
               "zerorename_model.systems.protocols.ModelCommitter)")))
    for attribute in declarations:
        if not isinstance(getattr(cls, attribute, None), bool):
            raise PluginCommitterError(spec.name, (
                f"{cls.__module__}.{cls.__qualname__} does not declare {attribute} (a bool "
                "class attribute): the suites check the promises a committer makes and no "
                "others, so it must say which it makes"))


def load_hadoop(spec: CommitterSpec) -> CommitterFactory:
    """A JVM committer class (``hadoop:<class>``) is explored through the Hadoop driver, on
    the real store it writes (``check --target hadoop``, :mod:`zerorename_bridge.hadoop.check`),
    not on the model's or the reference's stores: named elsewhere, it is refused with the way
    there."""
    raise PluginCommitterError(spec.name, (
        f"JVM committers ({HADOOP_PREFIX}<class>) run in the research JVM driver, on its own "
        f"stores: check them with --target hadoop --committer {spec.name} (add their jars "
        "with --jar), not with --target " + spec.target.value))


# -- reference committers ------------------------------------------------------------------


class PluginReferenceCommitter(ReferenceCommitter):
    """The harness's Committer interface over one instance of a user's reference committer
    class, built as ``cls(store, job, task)`` with the harness's options."""

    def __init__(self, cls: type, store: Any, job: JobSpec, task: TaskSpec | None,
                 options: dict[str, str], pools: Any = None) -> None:
        self.context = zr.JobContext(dest=job.dest, job_id=job.job_id, attempt=job.attempt,
                                     options={**HARNESS_OPTIONS, **options},
                                     pool_backend=pools)
        self.task = self.context.task(task.task_id, task.attempt) if task else None
        self.committer = cls(store, self.context, self.task)


class PluginReferenceFactory:
    """The harness's factory for a user's reference committer class.  ``workers``: the
    actors each of its pools runs on (1: inline)."""

    supports_recovery = False
    takes_messages = True

    def __init__(self, name: str, workers: int = DEFAULT_WIDTH) -> None:
        self.name = name
        self.workers = workers
        self.cls: Any = reference_class(name)

    @property
    def visible_before_job_commit(self) -> bool:
        return bool(self.cls.visible_before_job_commit)  # checked when the class was loaded

    def __call__(self, env: Any, job: JobSpec, task: TaskSpec | None,
                 options: dict[str, str]) -> PluginReferenceCommitter:
        pools = env.worker_pools(self.workers) if self.workers > 1 else None
        return PluginReferenceCommitter(self.cls, TranslatingStore(env.store), job, task,
                                        options, pools)


def reference_class(name: str) -> type:
    """The user's reference committer class ``name`` (an entry point or ``module:Class``),
    checked for the contract's methods and declarations."""
    spec = parse(name, Target.REFERENCE)
    if spec.source is Source.BUILTIN:
        return zr.COMMITTERS[name]
    if spec.source is Source.HADOOP:
        load_hadoop(spec)
    cls = _import(spec)
    _check_class(spec, cls, REFERENCE_METHODS, ("visible_before_job_commit",))
    return cls


def reference_factory(name: str) -> CommitterFactory:
    """The harness's factory for reference committer ``name``, built-in or not."""
    from zerorename_bridge.adapters import ReferenceFactory

    spec = parse(name, Target.REFERENCE)
    if spec.source is Source.BUILTIN:
        return ReferenceFactory(name)
    if spec.source is Source.HADOOP:
        return load_hadoop(spec)
    return PluginReferenceFactory(name)


def reference_resolver(committer: str, store: str) -> tuple[CommitterFactory, Backend]:
    """Like :func:`zerorename_bridge.verdicts.resolve`, for any reference committer name."""
    from zerorename_bridge.backends import moto_backend

    return reference_factory(committer), (moto_backend if store == "moto" else None)


# -- model committers ----------------------------------------------------------------------


def model_factory(name: str) -> CommitterFactory:
    """The model committer ``name``: a registered protocol, an entry point of
    :data:`MODEL_GROUP` or ``module:Class``."""
    from zerorename_model.systems.protocols import get

    spec = parse(name, Target.MODEL)
    if spec.source is Source.BUILTIN:
        return get(name)
    if spec.source is Source.HADOOP:
        return load_hadoop(spec)
    cls = _import(spec)
    _check_class(spec, cls, (), ("visible_before_job_commit", "takes_messages",
                                 "supports_recovery"))
    # the class is its own factory: cls(env, job, task, options) makes the committer, whose
    # methods are checked here on the class
    _check_class(spec, cls, MODEL_METHODS, ())
    factory: CommitterFactory = cls  # type: ignore[assignment]
    return factory


def model_resolver(committer: str, store: str) -> tuple[CommitterFactory, Backend]:
    """Like :func:`zerorename_model.experiments.verdicts.model_resolver`, for any model
    committer name."""
    return model_factory(committer), None


def check_names(names: Sequence[str], target: Target) -> list[str]:
    """``names`` with each one checked now (parsed, and a plug-in's class loaded), so that a
    bad name fails before any exploration starts, with :class:`PluginCommitterError`."""
    for name in names:
        if target is Target.REFERENCE:
            reference_factory(name)
        else:
            model_factory(name)
    return list(names)


def is_plugin(name: str, target: Target) -> bool:
    """Whether ``name`` is a committer from outside the tree (not a built-in)."""
    return parse(name, target).source is not Source.BUILTIN


# -- witnesses -----------------------------------------------------------------------------


def mark_reference(path: str) -> None:
    """Mark a witness trace as a reference committer's (its header's ``target``), so that
    ``zerorename trace replay`` runs it with the reference committer it names."""
    from zerorename_bridge.reference_ambiguous import TARGET
    from zerorename_model.experiments.trace import read_trace, write_trace

    events = read_trace(path)
    events[0] = {**events[0], "target": TARGET}
    write_trace(path, events)


@dataclass(frozen=True)
class Replayed:
    """A witness run again from its recorded choices, and whether it ended the same."""

    same: bool
    recorded_digest: str
    replayed_digest: str
    result: Any


def replay_any(path: str) -> Replayed:
    """Run a witness again with the committer its header names — a model protocol, a
    reference committer (header ``target: reference``), or a class from outside the tree —
    and compare the final states' digests."""
    from zerorename_bridge.reference_ambiguous import is_reference_trace
    from zerorename_model.engine.json_values import json_object
    from zerorename_model.experiments.trace import read_trace, run_recorded

    events = read_trace(path)
    ends = [e for e in events if e.get("t") == "end"]
    recorded = str(ends[-1]["digest"]) if ends else ""
    if events and events[0].get("target") == "hadoop":  # check --target hadoop's witness
        from zerorename_bridge.hadoop.check import replay

        again = replay(path)
        return Replayed(again.same, again.recorded_digest, again.replayed_digest, again.result)
    committer = str(json_object(events[0]["scenario"])["committer"])
    factory = (reference_factory(committer) if is_reference_trace(events)
               else model_factory(committer))
    result = run_recorded(events, factory, source=str(path))
    return Replayed(result.digest == recorded, recorded, result.digest, result)
