"""What the job driver decides about a destination before ``setup_job``: whether it holds
output (Spark's save modes, :func:`output_exists`) and which committer ``auto`` picks there
(:func:`resolve_committer`, said in the log)."""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping
from dataclasses import replace

from zerorename.store import Store, list_dir
from zerorename.stores.fencing import CHOICE_OPTION, CommitterChoice, choose_committer
from zerorename.urls import is_hidden, relative_to

from .spec import AUTO, WriteSpec

__all__ = ["choose_and_say", "default_committer", "output_exists", "resolve_committer"]

log = logging.getLogger("zerorename.spark")


def output_exists(store: Store, dest: str) -> bool:
    """True if ``dest`` holds output a reader would see, or a ``_SUCCESS`` marker.

    Hidden names (``_``/``.``, e.g. another job's staging) do not count: Spark's
    ``ErrorIfExists`` asks "is there a dataset here", not "is the prefix empty".
    """
    for obj in list_dir(store, dest):
        rel = relative_to(obj.url, dest)
        if rel == "_SUCCESS" or not is_hidden(rel):
            return True
    return False


_FALLBACK_LOGGED: set[str] = set()
_FALLBACK_LOCK = threading.Lock()


def default_committer(store: Store, dest: str) -> str:
    """``auto``'s pick for ``dest`` (:func:`~zerorename.stores.fencing.choose_committer`):
    ``fenced`` where the store fences under racing writers, ``magic`` otherwise, the fallback
    said once per store in the log.  Raises ``StoreProbeError`` when the probe cannot run."""
    return choose_and_say(store, dest, {}).committer


def choose_and_say(store: Store, dest: str, options: Mapping[str, str]) -> CommitterChoice:
    """``auto``'s choice, logged for every job: a fallback to ``magic`` as a warning the first
    time for a store, at info level after that and for ``fenced``."""
    choice = choose_committer(store, dest, options)
    level = logging.INFO
    if not choice.decision.can_fence:
        with _FALLBACK_LOCK:
            if store.name not in _FALLBACK_LOGGED:
                _FALLBACK_LOGGED.add(store.name)
                level = logging.WARNING
    log.log(level, "zerorename: %s; writing %s with %s", choice.reason, dest, choice.committer)
    return choice


def resolve_committer(spec: WriteSpec, store: Store) -> WriteSpec:
    """The spec with ``auto`` decided, and why, in its committer options (for ``_SUCCESS``):
    done where the job is set up, so the decision is in that process's log.  A committer the
    user named is kept, and said to be the user's."""
    if CHOICE_OPTION in spec.committer_options:
        return spec  # decided already (by the driver, for a worker)
    options = dict(spec.committer_options)
    if spec.committer == AUTO:
        choice = choose_and_say(store, spec.dest, spec.job_options())
        options[CHOICE_OPTION] = choice.reason
        return replace(spec, committer=choice.committer, committer_options=options)
    options[CHOICE_OPTION] = f"{spec.committer}, named by the user"
    return replace(spec, committer_options=options)
