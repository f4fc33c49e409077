"""``zerorename probe``: measure what a store does for the committers, in the destination itself.

Everything runs under a throw-away directory in the destination's own hidden area
(``<dest>/.zerorename-probe/<uuid>/``), so it needs no permission the job would not need, and it
is removed afterwards, even when a step fails.  The steps, through the store protocol (the way
the committers see the store, retry loop and landed checks included):

* the sequential conditional checks of the capability probe;
* racing writers (:mod:`zerorename.stores.race`) on If-None-Match and If-Match PUTs and on
  If-None-Match and If-Match completes;
* read-after-write, read-after-overwrite, list-after-write, list-after-delete;
* the multipart uploads the store lists back, the smallest accepted non-final part, and
  which key lengths a PUT accepts.

If the very first write fails (AccessDenied, NoSuchBucket, no network), nothing was measured and
:class:`StoreProbeError` says why; a later step that fails is recorded as ``unknown`` with a note.
"""

from __future__ import annotations

import contextlib
import functools
import os
import time
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from zerorename.errors import CommitError, PreconditionFailedError, StoreError
from zerorename.store import Store, list_all
from zerorename.stores.probe_report import (
    Answer,
    ConformanceReport,
    ConsistencyChecks,
    RaceOp,
    SequentialChecks,
    Trials,
)
from zerorename.stores.race import race
from zerorename.urls import dir_prefix, parse_url

__all__ = [
    "DEFAULT_RACERS",
    "DEFAULT_ROUNDS",
    "KEY_LENGTHS",
    "PART_SIZES",
    "PROBE_AREA",
    "ProbeSettings",
    "StoreProbeError",
    "could_not_write",
    "probe_area",
    "remove_probe_area",
    "run_probe",
]

#: The destination-relative directory every probe writes under (hidden: Hadoop's ``.`` rule).
PROBE_AREA = ".zerorename-probe/"
#: Racing writers per round: versitygw's POSIX backend was caught by 32 writers, SeaweedFS's
#: by concurrent writers of any number (docs/user/stores.md cites both); 16 finds both on our
#: stand-ins in every run.
DEFAULT_RACERS = 16
DEFAULT_ROUNDS = 5
#: Non-final part sizes tried, smallest first: 1 KiB, then S3's documented minimum of 5 MiB.
PART_SIZES = (1 << 10, 5 << 20)
#: Key lengths tried, in UTF-8 bytes: S3's documented limit is 1,024 bytes.
KEY_LENGTHS = (1024, 1025)
_CONSISTENCY_TRIALS = 5
_UPLOADS = 3


class StoreProbeError(CommitError):
    """The probe could not run at all: its first write in the destination's hidden area failed
    (AccessDenied, NoSuchBucket, a network error…).  Nothing was measured, so nothing is
    concluded about the store's conditional writes; ``cause`` is the store's error code."""

    def __init__(self, path: str, reason: str, cause: str = "") -> None:
        super().__init__(path, reason)
        self.cause = cause


def could_not_write(url: str, exc: StoreError, consequence: str) -> StoreProbeError:
    """The error for a probe whose first write failed, naming the store's cause."""
    cause = exc.code or (str(exc.status) if exc.status else type(exc).__name__)
    return StoreProbeError(url, f"the store probe could not write in the destination's hidden "
                           f"area ({cause}: {exc.reason}); {consequence}", cause)


@dataclass(frozen=True)
class ProbeSettings:
    """How hard to probe: racing ``racers`` writers for ``rounds`` rounds per race, which
    races (``races``), and whether to measure part sizes and key lengths (``limits``)."""

    racers: int = DEFAULT_RACERS
    rounds: int = DEFAULT_ROUNDS
    races: tuple[RaceOp, ...] = tuple(RaceOp)
    limits: bool = True


def probe_area(dest: str) -> str:
    """A fresh throw-away directory URL inside ``dest``'s hidden area."""
    return f"{dir_prefix(dest)}{PROBE_AREA}{uuid.uuid4().hex}/"


def run_probe(store: Store, dest: str, settings: ProbeSettings = ProbeSettings(), *,
              extras: Callable[[str], dict[str, bool]] | None = None) -> ConformanceReport:
    """Measure ``store`` under a throw-away area in ``dest``; always clean the area up.

    ``extras(area)``: store-specific measurements (the S3 capability probe's fields), run
    first under the same area.  Raises :class:`StoreProbeError` when the probe cannot write."""
    area = probe_area(dest)
    before = sum(store.request_counts().values())
    started = time.monotonic()
    run = _Run(store, area)
    try:
        run.first_write()
        s3 = run.extras(extras) if extras is not None else None
        sequential = run.sequential()
        races = tuple(race(store, area, op, writers=settings.racers, rounds=settings.rounds)
                      for op in settings.races)
        consistency = run.consistency()
        uploads = run.uploads_listed()
        min_part = run.min_part_size() if settings.limits else None
        keys = run.key_lengths() if settings.limits else ()
    finally:
        cleaned = remove_probe_area(store, area)
    return ConformanceReport(
        store=store.name, area=area, sequential=sequential, races=races,
        consistency=consistency, uploads_listed=uploads,
        uploads_page_size=getattr(store, "_uploads_page_size", None),
        min_part_size=min_part, part_sizes_tried=PART_SIZES if settings.limits else (),
        key_lengths=keys, cleaned_up=cleaned,
        requests=sum(store.request_counts().values()) - before,
        seconds=time.monotonic() - started, s3=s3, notes=tuple(run.notes))


def remove_probe_area(store: Store, area: str, known: Iterable[str] = ()) -> bool:
    """Delete every object and abort every upload under ``area``; True when nothing is left.
    Never raises: a probe must not fail the job it was run for over its own litter.
    ``known``: keys the probe wrote, deleted by name first, so that a role that may not list
    (no ``s3:ListBucket``) still removes them."""
    for url in known:
        with contextlib.suppress(StoreError):
            store.delete(url)
    with contextlib.suppress(StoreError):
        for upload in store.list_multipart_uploads(area):
            with contextlib.suppress(StoreError):
                store.abort_multipart(upload.url, upload.upload_id)
    with contextlib.suppress(StoreError):
        urls = [o.url for o in list_all(store, area)]
        if urls:
            store.delete_many(urls)
    if parse_url(area).scheme == "file":
        _remove_empty_dirs(parse_url(area).key)
    try:
        return not any(True for _ in list_all(store, area)) and not store.list_multipart_uploads(
            area)
    except StoreError:
        return False


def _remove_empty_dirs(path: str) -> None:
    """The local file system keeps empty directories (S3 has none): remove the area's, and the
    ``.zerorename-probe`` directory above it when no other probe is using it."""
    root = "/" + path.strip("/")
    for directory, _dirs, _files in sorted(os.walk(root), key=lambda t: -len(t[0])):
        with contextlib.suppress(OSError):
            os.rmdir(directory)
    with contextlib.suppress(OSError):
        os.rmdir(os.path.dirname(root))


class _Run:
    """The steps of one probe; each step records a note instead of failing the probe."""

    def __init__(self, store: Store, area: str) -> None:
        self.store = store
        self.area = area
        self.notes: list[str] = []

    def first_write(self) -> None:
        url = f"{self.area}hello"
        try:
            self.store.put(url, b"zerorename probe\n")
        except StoreError as exc:
            raise could_not_write(url, exc, "nothing was measured") from exc

    def extras(self, measure: Callable[[str], dict[str, bool]]) -> dict[str, bool] | None:
        try:
            return measure(self.area)
        except StoreError as exc:
            self.notes.append(f"store-specific probe: {type(exc).__name__}: {exc}")
            return None

    def _step(self, what: str, fn: Callable[[], bool]) -> Answer:
        try:
            return Answer.of(fn())
        except StoreError as exc:
            self.notes.append(f"{what}: {type(exc).__name__}: {exc}")
            return Answer.UNKNOWN

    def _refused(self, fn: Callable[[], object]) -> bool:
        try:
            fn()
        except PreconditionFailedError:
            return True
        return False

    # -- sequential -------------------------------------------------------------------------

    def sequential(self) -> SequentialChecks:
        s = self.store
        url = f"{self.area}sequential"
        etag = s.put(url, b"first\n")
        put_inm = self._step("put If-None-Match", lambda: self._refused(
            lambda: s.put(url, b"second\n", if_none_match=True)))
        stale = "0" * 32 if etag != "0" * 32 else "1" * 32
        current = s.head(url)
        etag = current.etag if current is not None else etag
        put_stale = self._step("put If-Match stale", lambda: self._refused(
            lambda: s.put(url, b"third\n", if_match=stale)))
        put_current = self._step("put If-Match current", lambda: not self._refused(
            lambda: s.put(url, b"fourth\n", if_match=etag)))
        complete = self._step("complete If-None-Match", lambda: self._complete_refused(
            url, b"fifth\n", if_none_match=True))
        current = s.head(url)
        etag = current.etag if current is not None else etag
        complete_stale = self._step("complete If-Match stale", lambda: self._complete_refused(
            url, b"sixth\n", if_match=stale))
        current = s.head(url)
        etag = current.etag if current is not None else etag
        complete_current = self._step("complete If-Match current", lambda: not (
            self._complete_refused(url, b"seventh\n", if_match=etag)))
        return SequentialChecks(put_inm, put_stale, put_current, complete, complete_stale,
                                complete_current)

    def _complete_refused(self, url: str, body: bytes, *, if_none_match: bool = False,
                          if_match: str | None = None) -> bool:
        """Complete a fresh one-part upload of ``body`` under the conditions: refused (412)?"""
        upload = self.store.create_multipart(url)
        part = self.store.upload_part(url, upload, 1, body)
        try:
            self.store.complete_multipart(url, upload, [(1, part)], if_none_match=if_none_match,
                                          if_match=if_match)
        except PreconditionFailedError:
            with contextlib.suppress(StoreError):
                self.store.abort_multipart(url, upload)
            return True
        return False

    # -- consistency ------------------------------------------------------------------------

    def consistency(self) -> ConsistencyChecks:
        counts = {"raw": 0, "rao": 0, "law": 0, "lad": 0}
        total = 0
        for i in range(_CONSISTENCY_TRIALS):
            url = f"{self.area}consistency/{i:02d}"
            try:
                first, second = f"a{i}\n".encode(), f"b{i}\n".encode()
                self.store.put(url, first)
                counts["raw"] += self.store.get(url) == first
                counts["law"] += self._listed(url)
                self.store.put(url, second)
                counts["rao"] += self.store.get(url) == second
                self.store.delete(url)
                counts["lad"] += not self._listed(url) and self.store.head(url) is None
                total += 1
            except StoreError as exc:
                self.notes.append(f"consistency trial {i}: {type(exc).__name__}: {exc}")
        return ConsistencyChecks(
            read_after_write=Trials(counts["raw"], total),
            read_after_overwrite=Trials(counts["rao"], total),
            list_after_write=Trials(counts["law"], total),
            list_after_delete=Trials(counts["lad"], total))

    def _listed(self, url: str) -> bool:
        return any(o.url == url for o in self.store.list_page(url).objects)

    # -- multipart ---------------------------------------------------------------------------

    def uploads_listed(self) -> Trials:
        """Create uploads (two on one key), list them back, abort them."""
        keys = [f"{self.area}uploads/{k}" for k in ("a", "b", "b")][:_UPLOADS]
        created: list[tuple[str, str]] = []
        try:
            created = [(k, self.store.create_multipart(k)) for k in keys]
            listed = {u.upload_id for u in self.store.list_multipart_uploads(
                f"{self.area}uploads/")}
            return Trials(sum(1 for _k, u in created if u in listed), len(created))
        except StoreError as exc:
            self.notes.append(f"list uploads: {type(exc).__name__}: {exc}")
            return Trials(0, 0)
        finally:
            for key, upload in created:
                with contextlib.suppress(StoreError):
                    self.store.abort_multipart(key, upload)

    def min_part_size(self) -> int | None:
        """The smallest of :data:`PART_SIZES` a two-part upload completes with as part 1."""
        for size in PART_SIZES:
            url = f"{self.area}part-size-{size}"
            upload = self.store.create_multipart(url)
            try:
                p1 = self.store.upload_part(url, upload, 1, b"p" * size)
                p2 = self.store.upload_part(url, upload, 2, b"last\n")
                self.store.complete_multipart(url, upload, [(1, p1), (2, p2)])
                return size
            except StoreError as exc:
                self.notes.append(f"a {size}-byte first part: {exc.code or exc.status}")
                with contextlib.suppress(StoreError):
                    self.store.abort_multipart(url, upload)
        return None

    # -- keys --------------------------------------------------------------------------------

    def key_lengths(self) -> tuple[tuple[int, Answer], ...]:
        return tuple((n, self._step(f"a {n}-byte key", functools.partial(self._put_key, n)))
                     for n in KEY_LENGTHS)

    def _put_key(self, length: int) -> bool:
        url = _url_with_key_length(self.area, f"key-{length}/", length)
        try:
            self.store.put(url, b"k\n")
        except StoreError as exc:
            if exc.status in (400, 414) or "long" in f"{exc.code} {exc.reason}".lower():
                return False
            raise
        return True


def _url_with_key_length(area: str, stem: str, length: int) -> str:
    """A URL under ``area`` whose key is exactly ``length`` UTF-8 bytes, in path elements of
    at most 200 bytes (a file system's limit per element is 255; S3's is the whole key)."""
    base = f"{area}{stem}"
    pad = length - len(parse_url(base).key.encode("utf-8"))
    if pad < 1:
        raise ValueError(f"the probe area's key is already {length - pad} bytes")
    elements = []
    while pad > 0:
        n = min(pad, 200)
        if pad - n == 1:  # never leave a lone "/" as the last element
            n -= 1
        elements.append("k" * n)
        pad -= n + 1  # the element and the "/" after it (none after the last: pad ends -1)
    return base + "/".join(elements)

