"""Model object stores: HDFS, S3 as of 2018, S3 today, GCS, ABFS (docs/research/design.md,
"Stores").

One class, :class:`ModelStore`, parameterised by a :class:`Profile`.  The truth is a dict of
objects; what a client *observes* may lag it:

* ``eventual_listing``: a new key enters the LIST index, and a deleted key leaves it, only when
  the harness settles that visibility event (S3 before December 2020).
* ``eventual_overwrite``: after an overwrite or delete, GET/HEAD may keep returning the old object
  until settled.
* ``negative_cache``: a GET/HEAD that found nothing is cached, so a later PUT of that key stays
  invisible to GET/HEAD until settled (the "404 caching" of S3 2018).

Nothing here calls ``random``: the pending visibility events are a list, and *which* one becomes
visible next is a choice the harness makes (:meth:`ModelStore.settle`).  Every operation counts
as a request under its protocol name.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

# the store protocol's value types, defined once, in the production package's types-only
# module: the one thing the model imports from it (tests/test_towers.py)
from zerorename.store import ListPage, ObjectInfo, StoreCapabilities, UploadInfo
from zerorename_model.engine.errors import ModelStoreError, not_found, precondition_failed


@dataclass(frozen=True)
class Profile:
    """The semantics of one store (see the table in docs/research/design.md)."""

    name: str
    eventual_listing: bool = False
    eventual_overwrite: bool = False
    negative_cache: bool = False
    rename: bool = False
    atomic_dir_rename: bool = False
    conditional_put: bool = False
    conditional_complete: bool = False
    multipart: bool = True
    #: a conditional write is check-then-act: the condition is checked, then other requests
    #: may run, then the object is written (two racers can both pass the check)
    conditional_race: bool = False
    #: the store accepts If-None-Match / If-Match and ignores them: every write succeeds
    ignores_conditions: bool = False
    #: real directories, as HDFS has them: a directory exists from the first file written
    #: below it (HDFS's ``create`` makes the parents) until it is deleted or renamed, even once
    #: empty; deleting a directory found non-empty deletes everything below it at once (what
    #: was moved in after the caller listed it too: :meth:`ModelStore.delete_many`); a rename
    #: onto an existing directory moves the source *into* it; and a listing of
    #: the directory's children (a delimited LIST: ``FileSystem.listStatus``) of a directory
    #: that does not exist fails with "not found" instead of answering nothing
    directories: bool = False

    @property
    def consistent(self) -> bool:
        return not (self.eventual_listing or self.eventual_overwrite or self.negative_cache)


PROFILES: dict[str, Profile] = {
    p.name: p
    for p in (
        Profile("hdfs", rename=True, atomic_dir_rename=True, conditional_put=True,
                multipart=False, directories=True),
        Profile("s3-2018", eventual_listing=True, eventual_overwrite=True, negative_cache=True),
        Profile("s3", conditional_put=True, conditional_complete=True),
        Profile("gcs", rename=True, atomic_dir_rename=False, conditional_put=True,
                conditional_complete=True),
        Profile("abfs", rename=True, atomic_dir_rename=True),
        # S3-compatible stores that claim conditional writes and cannot fence with them
        # (issue 34: reported for some MinIO, SeaweedFS and versitygw configurations, GCS's
        # XML API, Backblaze B2): outside the matrix's columns, for fenced's rows
        Profile("s3-check-then-act", conditional_put=True, conditional_complete=True,
                conditional_race=True),
        Profile("s3-ignores-conditions", conditional_put=True, conditional_complete=True,
                ignores_conditions=True),
    )
}


#: the cluster filesystem of the staging committers (and the actors' local disks): HDFS as the
#: model had it before its directories (no rename into a directory, a missing directory lists
#: empty), because the S3A staging committers that list it are not in the Hadoop jars the
#: conformance suite runs, so nothing has yet checked what they do on a missing directory
CLUSTER_PROFILE = Profile("hdfs", rename=True, atomic_dir_rename=True, conditional_put=True,
                          multipart=False)


@dataclass(frozen=True)
class Obj:
    data: bytes
    etag: str


@dataclass(frozen=True)
class Visibility:
    """A pending visibility event: ``kind`` is list-add, list-del, read (stale read ends)."""

    kind: str
    url: str

    def __str__(self) -> str:
        return f"{self.kind} {self.url}"


@dataclass
class Upload:
    url: str
    parts: dict[int, bytes]
    initiated: int


def etag_of(data: bytes) -> str:
    return hashlib.md5(data).hexdigest()


class ModelStore:
    """An in-memory store with the semantics of ``profile``; see the module docstring."""

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

    # -- protocol --------------------------------------------------------------------------------

    def capabilities(self) -> StoreCapabilities:
        p = self.profile
        return StoreCapabilities(
            rename=p.rename, atomic_dir_rename=p.atomic_dir_rename,
            conditional_put=p.conditional_put, conditional_complete=p.conditional_complete,
            consistent_listing=not p.eventual_listing, multipart=p.multipart,
        )

    def request_counts(self) -> dict[str, int]:
        return dict(self.counts)

    def put(
        self, url: str, data: bytes, *, if_none_match: bool = False, if_match: str | None = None
    ) -> str:
        self.counts["put"] += 1
        self._check_conditions(url, if_none_match, if_match)
        self._conditional_gap(url, if_none_match or if_match is not None)
        return self._write(url, bytes(data))

    def get(self, url: str) -> bytes:
        self.counts["get"] += 1
        obj = self._read(url)
        if obj is None:
            raise not_found(url)
        return obj.data

    def head(self, url: str) -> ObjectInfo | None:
        self.counts["head"] += 1
        obj = self._read(url)
        return None if obj is None else ObjectInfo(url, len(obj.data), obj.etag)

    def list_page(
        self, prefix: str, *, delimiter: str | None = None, token: str | None = None,
        max_keys: int = 1000,
    ) -> ListPage:
        self.counts["list_page"] += 1
        if delimiter == "/" and self.profile.directories and not self._is_dir(prefix):
            raise not_found(prefix.rstrip("/"), "FileNotFound")
        index = self.listed if self.profile.eventual_listing else set(self.objects)
        truth = {k for k in self.objects if k.startswith(prefix)}
        keys = sorted(k for k in index if k.startswith(prefix) and (token is None or k > token))
        if {k for k in index if k.startswith(prefix)} != truth:
            self.inconsistent_answers += 1
        objects: list[ObjectInfo] = []
        prefixes: list[str] = []
        last: str | None = None
        for key in keys:
            if len(objects) + len(prefixes) >= max_keys:
                return ListPage(objects, prefixes, last)
            last = key
            rest = key[len(prefix):]
            if delimiter and delimiter in rest:
                common = prefix + rest.split(delimiter, 1)[0] + delimiter
                if common not in prefixes:
                    prefixes.append(common)
                continue
            obj = self.objects.get(key) or self.ghosts.get(key) or Obj(b"", etag_of(b""))
            objects.append(ObjectInfo(key, len(obj.data), obj.etag))
        return ListPage(objects, prefixes, None)

    def delete(self, url: str) -> None:
        self.counts["delete"] += 1
        self._delete(url)

    def delete_many(self, urls: Sequence[str]) -> None:
        """Delete every key named.  With real directories, a directory named together with
        keys below it is a recursive delete (a LIST found it, then the DELETE): HDFS's is
        atomic, so it takes everything below the directory when it runs, what was moved in
        after the LIST too.  A directory the LIST found empty is not emptied: that is Hadoop's
        ``if exists(path) delete(path, recursive)`` (FileOutputCommitter's task commit)."""
        self.counts["delete_many"] += 1
        for url in urls:
            below = url.rstrip("/") + "/"
            self._delete(url, subtree=self.profile.directories
                         and any(u.startswith(below) for u in urls))

    def copy(self, src: str, dst: str) -> str:
        self.counts["copy"] += 1
        obj = self._read(src)
        if obj is None:
            raise not_found(src)
        return self._write(dst, obj.data)

    def rename(self, src: str, dst: str) -> None:
        """Atomic file rename; directory rename atomic only where the profile says so.

        The rename fails if ``src`` is missing or ``dst`` exists; except that, with real
        directories (HDFS's ``rename(src, dst)``), a ``dst`` that is an existing directory
        receives the source: it becomes ``dst/<name of src>`` (which must not exist).
        """
        self.counts["rename"] += 1
        if not self.profile.rename:
            raise ModelStoreError(src, "NotImplemented", 501, f"{self.profile.name} has no rename")
        if self.profile.directories and dst not in self.objects and self._is_dir(dst):
            dst = dst.rstrip("/") + "/" + src.rstrip("/").rsplit("/", 1)[-1]
        if self._exists(dst):
            raise ModelStoreError(dst, "DestinationExists", 409, "rename destination exists")
        if self.profile.directories and src not in self.objects and self._is_dir(src):
            self._move_dirs(src, dst)
        if src in self.objects:
            self._move(src, dst)
            return
        children = sorted(k for k in self.objects if k.startswith(src.rstrip("/") + "/"))
        if not children:
            raise not_found(src)
        for i, key in enumerate(children):
            if i and not self.profile.atomic_dir_rename:
                self.between_steps(f"rename {key}")
            if key in self.objects:  # another actor may have moved it meanwhile (GCS)
                self._move(key, dst.rstrip("/") + key[len(src.rstrip("/")):])

    def create_multipart(self, url: str) -> str:
        self.counts["create_multipart"] += 1
        self._require_multipart(url)
        self._next_upload += 1
        self._clock += 1
        # IDs depend only on the key and how many uploads it has had, not on global order, so
        # schedules that differ only in the order of independent uploads reach the same state.
        self.upload_counter[url] += 1
        upload_id = f"up-{etag_of(url.encode())[:8]}-{self.upload_counter[url]}"
        self.uploads[upload_id] = Upload(url, {}, self._clock)
        return upload_id

    def upload_part(self, url: str, upload_id: str, part_number: int, data: bytes) -> str:
        self.counts["upload_part"] += 1
        upload = self._upload(url, upload_id)
        upload.parts[part_number] = bytes(data)
        return etag_of(data)

    def complete_multipart(
        self, url: str, upload_id: str, parts: Sequence[tuple[int, str]], *,
        if_none_match: bool = False, if_match: str | None = None,
    ) -> str:
        self.counts["complete_multipart"] += 1
        upload = self._upload(url, upload_id)
        for number, etag in parts:
            if etag_of(upload.parts.get(number, b"\0missing")) != etag.strip('"'):
                raise ModelStoreError(url, "InvalidPart", 400, f"part {number} does not match")
        if (if_none_match or if_match is not None) and self.profile.conditional_complete:
            self._check_conditions(url, if_none_match, if_match)
            self._conditional_gap(url, True)
            self._upload(url, upload_id)  # it may have been completed or aborted meanwhile
        del self.uploads[upload_id]
        return self._write(url, b"".join(upload.parts[n] for n, _ in sorted(parts)))

    def abort_multipart(self, url: str, upload_id: str) -> None:
        self.counts["abort_multipart"] += 1
        self._upload(url, upload_id)
        del self.uploads[upload_id]

    def list_multipart_uploads(self, prefix: str) -> list[UploadInfo]:
        self.counts["list_multipart_uploads"] += 1
        return [UploadInfo(u.url, uid, float(u.initiated)) for uid, u in self.uploads.items()
                if u.url.startswith(prefix)]

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

    def reset_counts(self) -> None:
        self.counts.clear()

    def upload_urls(self) -> list[str]:
        return [u.url for u in self.uploads.values()]

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

    # -- internals -------------------------------------------------------------------------------

    def _check_conditions(self, url: str, if_none_match: bool, if_match: str | None) -> None:
        if not (if_none_match or if_match):
            return
        if not self.profile.conditional_put:
            raise ModelStoreError(url, "NotImplemented", 501,
                                  f"{self.profile.name} has no conditional writes")
        if self.profile.ignores_conditions:
            return
        current = self.objects.get(url)  # conditions are checked against the truth
        if if_none_match and current is not None:
            raise precondition_failed(url, "If-None-Match: the key exists")
        if if_match is not None:
            if current is None:
                raise not_found(url)
            if current.etag != if_match.strip('"'):
                raise precondition_failed(url, "If-Match: the ETag changed")

    def _conditional_gap(self, url: str, conditional: bool) -> None:
        """On a check-then-act store, the moment between a conditional write's check and its
        write, where the harness may run other requests (a racer's check among them)."""
        if conditional and self.profile.conditional_race and not self.profile.ignores_conditions:
            self.between_steps(f"put {url}")

    def _write(self, url: str, data: bytes) -> str:
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

    def _delete(self, url: str, *, subtree: bool = False) -> None:
        """Delete ``url``; with real directories, the directory of that name too (and, with
        ``subtree``, every object below it at this moment: see :meth:`delete_many`)."""
        if self.profile.directories:
            self.dirs = {d for d in self.dirs if d != url and not d.startswith(url + "/")}
            if subtree:
                for key in [k for k in self.objects if k.startswith(url.rstrip("/") + "/")]:
                    self._delete(key)
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

    def _move(self, src: str, dst: str) -> None:
        obj = self.objects[src]
        self._delete(src)
        self._write(dst, obj.data)

    def _read(self, url: str) -> Obj | None:
        truth = self.objects.get(url)
        if url in self.stale:
            served = self.stale[url]
            if served != truth:
                self.inconsistent_answers += 1
            return served
        if truth is None and self.profile.negative_cache:
            self.stale[url] = None  # remember the 404: S3 2018 cached negative lookups
        return truth

    def _is_dir(self, url: str) -> bool:
        """A directory exists: an existing (possibly empty) one of a store with real
        directories, or any prefix with a key below it."""
        url = url.rstrip("/")
        return url in self.dirs or any(k.startswith(url + "/") for k in self.objects)

    def _move_dirs(self, src: str, dst: str) -> None:
        """Rename the (real) directories at and below ``src`` to below ``dst``."""
        src, dst = src.rstrip("/"), dst.rstrip("/")
        below = {d for d in self.dirs if d == src or d.startswith(src + "/")}
        self.dirs = (self.dirs - below) | {dst + d[len(src):] for d in below}

    def _exists(self, url: str) -> bool:
        if self.profile.directories and url.rstrip("/") in self.dirs:
            return True
        return url in self.objects or any(k.startswith(url.rstrip("/") + "/") for k in self.objects)

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

    def _require_multipart(self, url: str) -> None:
        if not self.profile.multipart:
            raise ModelStoreError(url, "NotImplemented", 501,
                                  f"{self.profile.name} has no multipart uploads")

    def _upload(self, url: str, upload_id: str) -> Upload:
        upload = self.uploads.get(upload_id)
        if upload is None or upload.url != url:
            raise not_found(url, "NoSuchUpload")
        return upload


class ObjectSnapshot:
    """The objects of a store, read-only: a reader that changes nothing it looks at (no request
    counted, no lagging write made visible), for checking what a reader of a record would see
    in a given state of a run."""

    def __init__(self, objects: Mapping[str, bytes | Obj]) -> None:
        """``objects``: url -> bytes (a run's final state) or stored object (a live store's)."""
        self.objects = {k: v.data if isinstance(v, Obj) else v for k, v in objects.items()}

    def get(self, url: str) -> bytes:
        if url not in self.objects:
            raise not_found(url)
        return self.objects[url]
