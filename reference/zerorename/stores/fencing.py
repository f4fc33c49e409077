"""Can this store fence commits?  The measured answer the ``fenced`` committer and ``auto`` use.

``fenced`` decides every commit with one ``If-None-Match: *`` PUT, so it is exactly as safe as
the store's conditional PUT *under racing writers*.  A store that accepts the header and ignores
it, or checks and then writes in two steps, lets two task attempts both commit.  This module
measures that once per store and process (:func:`fencing_support`): a sequential second PUT,
then :data:`GATE_RACERS` writers racing on one key for :data:`GATE_ROUNDS` rounds, all in a
throw-away directory inside the destination's hidden area.

Stores that are atomic by construction (the local file system's ``os.link``; in-memory test
stores) do not implement :class:`RaceProbed` and are not raced: only a remote server's word
needs checking.  Hadoop's switch ``fs.s3a.create.conditional.enabled=false`` is honoured without
probing.  A probe that cannot run at all (AccessDenied, NoSuchBucket, no network) raises
:class:`~zerorename.stores.probe.StoreProbeError`, never a silent "unsupported".
"""

from __future__ import annotations

import enum
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from zerorename import options as O
from zerorename.context import Options
from zerorename.errors import AccessDeniedError, PreconditionFailedError, StoreError
from zerorename.store import Store
from zerorename.stores.probe import (
    StoreProbeError,
    could_not_write,
    probe_area,
    remove_probe_area,
)
from zerorename.stores.probe_report import RaceOp, RaceResult, RaceVerdict
from zerorename.stores.race import race

__all__ = [
    "CHOICE_OPTION",
    "CONDITIONAL_OPTION",
    "GATE_RACERS",
    "GATE_ROUNDS",
    "STORE_CHECK_OPTION",
    "CommitterChoice",
    "FencingDecision",
    "FencingSupport",
    "RaceProbed",
    "auto_committer",
    "cached_fencing",
    "choose_committer",
    "clear_fencing_cache",
    "fencing_support",
    "remember_fencing",
    "store_diagnostics",
]

#: Hadoop S3A's switch for conditional creation (HADOOP-19256; default true): false says the
#: store does not support it, so nothing may rely on it.
CONDITIONAL_OPTION = O.CONDITIONAL_ENABLED.name
#: Why this job writes with its committer (set by whoever chose it: ``auto``, or the user by
#: name), copied into ``_SUCCESS``'s diagnostics.  ``fs.`` so that it passes through the
#: writer's options to the committer like any Hadoop committer option.
CHOICE_OPTION = O.COMMITTER_CHOICE.name
#: What ``fenced`` does on a store that let racing writers both win: ``refuse`` (the default:
#: ``RacyConditionalWritesError`` before anything is written; ``auto`` picks ``magic`` there)
#: or ``warn``, the user's explicit override: it runs, and the log says the risk.
STORE_CHECK_OPTION = O.FENCED_STORE_CHECK.name
GATE_RACERS = 16
GATE_ROUNDS = 3


@runtime_checkable
class RaceProbed(Protocol):
    """A store whose conditional writes are a remote server's promise, to be measured before
    ``fenced`` relies on them; ``race_probe_key`` names the server (one probe per key), or is
    None when the user declared the store's capabilities instead (nothing to measure)."""

    def race_probe_key(self) -> str | None: ...

    def races_documented(self) -> bool:
        """True where the server's operator documents conditional writes as atomic under
        concurrent writers (AWS S3): the probe then checks one writer, and races none."""
        ...

    def prober(self) -> Store:
        """A store on the same server with counters of its own, for the probe's requests:
        they are not the job's, and must not be counted as the committer's."""
        ...


class FencingSupport(enum.Enum):
    """Why a store can or cannot fence commits."""

    FENCES = "one winner in every round of racing If-None-Match writers"
    DOCUMENTED = ("refuses a second If-None-Match PUT, and is documented atomic under racing "
                  "writers (not raced)")
    ATOMIC = "has conditional writes, atomic by construction or declared by the user"
    IGNORES_HEADER = "accepts a second If-None-Match: * PUT over an existing object"
    RACY = "let two or more racing If-None-Match: * writers succeed on one key"
    REJECTS_HEADER = "does not declare conditional PUT"
    DENIED = ("denies conditional writes to this role (a PUT with If-None-Match: * answered "
              "403 AccessDenied, a plain PUT was allowed: a bucket or IAM policy)")
    DISABLED = f"conditional writes disabled ({CONDITIONAL_OPTION}=false)"

    @property
    def can_fence(self) -> bool:
        return self in (FencingSupport.FENCES, FencingSupport.DOCUMENTED, FencingSupport.ATOMIC)


@dataclass(frozen=True)
class FencingDecision:
    """The measured support and its evidence (the race, when one ran)."""

    store: str
    support: FencingSupport
    race: RaceResult | None = None

    @property
    def can_fence(self) -> bool:
        return self.support.can_fence

    def describe(self) -> str:
        """One line for a log and ``_SUCCESS``: the verdict and what it rests on."""
        text = f"{self.store} {self.support.value}"
        if self.race is not None:
            text += (f" ({self.race.writers} writers, {self.race.rounds} rounds: "
                     f"{self.race.histogram()})")
        return text


_CACHE: dict[str, FencingDecision] = {}
_LOCK = threading.Lock()


def clear_fencing_cache() -> None:
    """Forget every measured store (tests that reuse a key for another server)."""
    with _LOCK:
        _CACHE.clear()


def remember_fencing(store: Store, decision: FencingDecision) -> None:
    """Adopt a decision measured in another process (the Spark driver's) for ``store``."""
    key = store.race_probe_key() if isinstance(store, RaceProbed) else None
    if key is not None:
        with _LOCK:
            _CACHE.setdefault(key, decision)


def cached_fencing(store: Store) -> FencingDecision | None:
    """The decision already measured for ``store`` in this process, if any."""
    key = store.race_probe_key() if isinstance(store, RaceProbed) else None
    if key is None:
        return None
    with _LOCK:
        return _CACHE.get(key)


def store_diagnostics(store: Store, options: Options) -> dict[str, str]:
    """For ``_SUCCESS``: why the committer was chosen, and the store's measured fencing."""
    out: dict[str, str] = {}
    choice = options.get_str(CHOICE_OPTION)
    if choice:
        out["committer.choice"] = choice
    decision = cached_fencing(store)
    if decision is not None:
        out["store.fencing"] = decision.describe()
    return out


def fencing_support(store: Store, dest: str,
                    options: Options | Mapping[str, Any] | None = None) -> FencingDecision:
    """Whether ``store`` can fence commits into ``dest`` (measured once per store and process,
    in ``dest``'s hidden area).  Raises :class:`StoreProbeError` when the probe cannot run."""
    opts = options if isinstance(options, Options) else Options(options)
    if not opts.get_bool(CONDITIONAL_OPTION, default=True):
        return FencingDecision(store.name, FencingSupport.DISABLED)
    probed = store if isinstance(store, RaceProbed) else None
    key = probed.race_probe_key() if probed is not None else None
    if probed is None or key is None:
        declared = store.capabilities().conditional_put
        return FencingDecision(store.name, FencingSupport.ATOMIC if declared
                               else FencingSupport.REJECTS_HEADER)
    with _LOCK:
        if key in _CACHE:
            return _CACHE[key]
        decision = _measure(probed.prober(), dest, documented=probed.races_documented())
        _CACHE[key] = decision
        return decision


def _measure(store: Store, dest: str, *, documented: bool) -> FencingDecision:
    area = probe_area(dest)
    first = f"{area}fence"
    try:
        try:
            store.put(first, b"zerorename fencing probe: first\n", if_none_match=True)
        except AccessDeniedError as exc:
            if _plain_put_allowed(store, first):
                # a policy that denies conditional writes and allows plain ones: the store
                # cannot fence for this role (auto picks magic), and that is known
                return FencingDecision(store.name, FencingSupport.DENIED)
            raise could_not_write(first, exc, "nothing is known about the store's conditional "
                                  "writes, so no committer was chosen") from exc
        except StoreError as exc:
            raise could_not_write(first, exc, "nothing is known about the store's conditional "
                                  "writes, so no committer was chosen") from exc
        try:
            store.put(first, b"zerorename fencing probe: second\n", if_none_match=True)
        except PreconditionFailedError:
            pass
        except StoreError as exc:
            if exc.status in (400, 501) or exc.code in ("NotImplemented", "InvalidArgument"):
                return FencingDecision(store.name, FencingSupport.REJECTS_HEADER)
            raise StoreProbeError(first, f"the fencing probe failed ({exc.code or exc.status}"
                                  f": {exc.reason})", exc.code) from exc
        else:
            return FencingDecision(store.name, FencingSupport.IGNORES_HEADER)
        if documented:
            return FencingDecision(store.name, FencingSupport.DOCUMENTED)
        try:
            result = race(store, area, RaceOp.PUT_IF_NONE_MATCH, writers=GATE_RACERS,
                          rounds=GATE_ROUNDS)
        except StoreError as exc:  # its read-back refused (no s3:GetObject): nothing measured
            raise StoreProbeError(first, f"the fencing probe could not read back its racing "
                                  f"writes ({exc.code or exc.status}: {exc.reason})",
                                  exc.code) from exc
    finally:
        remove_probe_area(store, area, known=[first])
    if result.verdict is RaceVerdict.EXCLUSIVE and not result.lost_writes:
        return FencingDecision(store.name, FencingSupport.FENCES, result)
    if result.verdict is RaceVerdict.NO_WINNER:
        raise StoreProbeError(first, "the fencing probe's racing writers all failed "
                              f"({result.error_count} errors, e.g. {result.errors[:1]})",
                              "RaceFailed")
    return FencingDecision(store.name, FencingSupport.RACY, result)


def _plain_put_allowed(store: Store, url: str) -> bool:
    """After a 403 on a conditional PUT: does a plain PUT of ``url`` succeed?  (Then a policy
    denies conditional writes only.)"""
    try:
        store.put(url, b"zerorename fencing probe: plain\n")
    except StoreError:
        return False
    return True


def auto_committer(decision: FencingDecision) -> str:
    """``auto``'s pick: ``fenced`` where the store fences, ``magic`` otherwise."""
    return "fenced" if decision.can_fence else "magic"


@dataclass(frozen=True)
class CommitterChoice:
    """``auto``'s decision: the committer, and the reason the log and ``_SUCCESS`` give."""

    committer: str
    decision: FencingDecision

    @property
    def reason(self) -> str:
        if self.decision.can_fence:
            return f"auto chose fenced: {self.decision.describe()}"
        return (f"auto chose magic, not fenced: {self.decision.describe()}, so one conditional "
                "PUT cannot decide a commit there")


def choose_committer(store: Store, dest: str,
                     options: Options | Mapping[str, Any] | None = None) -> CommitterChoice:
    """``auto``: measure (or recall) the store's fencing and pick the committer.  Raises
    :class:`StoreProbeError` when the probe cannot run, rather than guess."""
    decision = fencing_support(store, dest, options)
    return CommitterChoice(auto_committer(decision), decision)
