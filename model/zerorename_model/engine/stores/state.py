"""The truth of a model store and what lags it: the objects, the LIST index, the stale reads, the
pending visibility events, the uploads and the directories, and the three changes every
operation is made of (write, delete and read an object as the profile's consistency has it).

Every family of operations (:mod:`.conditions`, :mod:`.namespace`, :mod:`.listing`,
:mod:`.multipart`) is functions over this one state, and :class:`.store.ModelStore` is this state
with the store protocol on top: nothing here counts a request, so the families can compose these
changes (a rename is a delete and a write) without counting twice.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Callable

from zerorename_model.engine.stores.profiles import PROFILES, Profile
from zerorename_model.engine.stores.records import Obj, Upload, Visibility, etag_of


class StoreState:
    """What a model store holds, and how a change reaches (or lags behind) what clients see."""

    def __init__(self, profile: Profile | str, max_lag: int | None = None) -> None:
        """``max_lag``: at most this many visibility events pending at once; queuing one more
        first settles the oldest (see :meth:`_lag`).  None: no bound (the store's whole
        freedom)."""
        self.profile = PROFILES[profile] if isinstance(profile, str) else profile
        if max_lag is not None and max_lag < 1:
            raise ValueError(f"max_lag must be at least 1 (got {max_lag}): a store with no lag "
                             "is its consistent profile")
        self.max_lag = max_lag
        self.name = f"model:{self.profile.name}"
        self.objects: dict[str, Obj] = {}
        self.listed: set[str] = set()  # keys in the LIST index
        self.stale: dict[str, Obj | None] = {}  # what GET/HEAD still serve (None: 404)
        #: what the LIST index still shows of a deleted key until its list-del settles (the
        #: index keeps the entry's size and ETag; GET's stale cache is a separate lag)
        self.ghosts: dict[str, Obj] = {}
        self.pending: list[Visibility] = []
        self.uploads: dict[str, Upload] = {}
        #: the directories that exist (``profile.directories`` only): URLs without a slash
        self.dirs: set[str] = set()
        self.counts: Counter[str] = Counter()
        self.upload_counter: Counter[str] = Counter()
        self.inconsistent_answers = 0  # answers that differed from the truth
        self._next_upload = 0
        self._clock = 0
        #: called between the sub-steps of a non-atomic operation (GCS directory rename), so the
        #: harness can interleave other actors there; a no-op outside the harness.
        self.between_steps: Callable[[str], None] = lambda _what: None

    # -- visibility (the harness's side) ---------------------------------------------------------

    def settle(self, index: int) -> Visibility:
        """Make pending visibility event ``index`` take effect (chosen by the harness)."""
        event = self.pending.pop(index)
        if event.kind == "list-add":
            self.listed.add(event.url)
        elif event.kind == "list-del":
            self.listed.discard(event.url)
            self.ghosts.pop(event.url, None)
            if event.url in self.objects:
                # the key was written again while its deletion lagged: the index drops the
                # old entry now and lists the new object once this write's own entry settles
                # (before, nothing brought it back: a live key stayed out of every LIST)
                self._lag(Visibility("list-add", event.url))
            else:
                # written and deleted before its entry reached the index: the deletion, now
                # applied, supersedes that entry (before, the entry settling later left a
                # 0-byte phantom listed for good)
                self._drop(Visibility("list-add", event.url))
        else:
            self.stale.pop(event.url, None)
        return event

    def settle_all(self) -> None:
        while self.pending:
            self.settle(0)

    def snapshot(self) -> dict[str, bytes]:
        """The truth: every object and its bytes (what a consistent reader eventually sees)."""
        return {k: v.data for k, v in sorted(self.objects.items())}

    def digest(self) -> str:
        """A stable fingerprint of the whole state, truth and lag, for replay and pruning."""
        h = hashlib.sha256()
        for key, obj in sorted(self.objects.items()):
            h.update(f"o\0{key}\0{obj.etag}\0".encode())
        for key in sorted(self.listed):
            h.update(f"l\0{key}\0".encode())
        for key, ghost in sorted(self.ghosts.items()):
            h.update(f"g\0{key}\0{ghost.etag}\0".encode())
        for key, stale in sorted(self.stale.items()):
            h.update(f"s\0{key}\0{stale.etag if stale else '-'}\0".encode())
        for event in self.pending:
            h.update(f"p\0{event}\0".encode())
        for uid, up in sorted(self.uploads.items()):
            parts = ",".join(f"{n}:{etag_of(d)}" for n, d in sorted(up.parts.items()))
            h.update(f"u\0{uid}\0{up.url}\0{parts}\0".encode())
        return h.hexdigest()

    # -- the changes operations are made of (uncounted: the protocol counts requests) -----------

    def write_object(self, url: str, data: bytes) -> str:
        """Store ``data`` at ``url`` (the truth now), queuing what the profile lets lag: the
        LIST entry, a cached 404, the old object's stale reads.  Returns the new ETag."""
        old = self.objects.get(url)
        obj = Obj(data, etag_of(data))
        self.objects[url] = obj
        if self.profile.directories:  # like HDFS's create, the write makes the parents
            parts = url.split("/")
            self.dirs.update("/".join(parts[:i]) for i in range(4, len(parts)))
        self.ghosts.pop(url, None)  # the index shows the new object now
        p = self.profile
        if p.eventual_listing and url not in self.listed:
            self._lag(Visibility("list-add", url))
        elif not p.eventual_listing:
            self.listed.add(url)
        if url in self.stale and self.stale[url] is None and p.negative_cache:
            self._lag(Visibility("read", url))  # the cached 404 persists until settled
        elif old is not None and p.eventual_overwrite:
            self.stale[url] = old
            self._lag(Visibility("read", url))
        return obj.etag

    def delete_object(self, url: str, *, subtree: bool = False) -> None:
        """Delete ``url``; with real directories, the directory of that name too (and, with
        ``subtree``, every object below it at this moment: see
        :meth:`.store.ModelStore.delete_many`)."""
        if self.profile.directories:
            self.dirs = {d for d in self.dirs if d != url and not d.startswith(url + "/")}
            if subtree:
                for key in [k for k in self.objects if k.startswith(url.rstrip("/") + "/")]:
                    self.delete_object(key)
        old = self.objects.pop(url, None)
        if old is None:
            return
        p = self.profile
        if p.eventual_listing:
            if url in self.listed or Visibility("list-add", url) in self.pending:
                self.ghosts[url] = old  # what the index shows (or may yet show) until then
            self._lag(Visibility("list-del", url))
        else:
            self.listed.discard(url)
        if p.eventual_overwrite:
            self.stale[url] = old
            self._lag(Visibility("read", url))

    def read_object(self, url: str) -> Obj | None:
        """What a GET/HEAD of ``url`` answers now: the truth, or what still lags it (a stale
        object, a cached 404), counting an answer that differs from the truth."""
        truth = self.objects.get(url)
        if url in self.stale:
            served = self.stale[url]
            if served != truth:
                self.inconsistent_answers += 1
            return served
        if truth is None and self.profile.negative_cache:
            self.stale[url] = None  # remember the 404: S3 2018 cached negative lookups
        return truth

    def next_upload_time(self) -> int:
        """A new upload's initiation time: the store's logical clock, advanced."""
        self._next_upload += 1
        self._clock += 1
        return self._clock

    # -- the lag ---------------------------------------------------------------------------------

    def _lag(self, event: Visibility) -> None:
        if event in self.pending:
            return
        if self.max_lag is not None:
            # bounded staleness: an event takes effect before ``max_lag`` later events are
            # queued (the oldest goes first; settling a list-del may queue a list-add, which
            # the loop counts too)
            while len(self.pending) >= self.max_lag:
                self.settle(0)
        self.pending.append(event)

    def _drop(self, event: Visibility) -> None:
        if event in self.pending:
            self.pending.remove(event)
