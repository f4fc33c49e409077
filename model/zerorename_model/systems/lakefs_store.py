"""A lakeFS repository modelled on top of an ordinary model store (seed 003, the lakeFS committer
proposal): branches, and a merge that publishes a branch's changes into ``main`` atomically and
fails on a conflict.

Design (the simplest one that keeps the merge atomic in the model):

* **main is the plain bucket.**  ``s3://bucket/out/part-0`` on ``main`` is the store's key
  ``s3://bucket/out/part-0``, so the harness, the property checkers and any reader observe
  ``main`` exactly as they observe every other committer's destination.  No store profile is
  added: lakeFS runs over the scenario's own store (normally ``s3``).
* **Branches live under a hidden prefix**: the data a branch adds is stored at
  ``s3://bucket/.lakefs/branches/<branch>/<path>``, its metadata at
  ``s3://bucket/.lakefs/refs/<branch>``.  Names starting with ``.`` are not output, and the
  prefix is outside every job's destination.  Writing an object to a branch is an ordinary
  PUT there (lakeFS stores object data in the underlying store), so it is one harness step.
* **Every lakeFS API call is one atomic step.**  Creating, deleting and merging branches are
  requests to the lakeFS server, which applies them under its own lock.  In the model the
  request is one harness step (a pause point where the scheduler may interleave, crash or
  partition), and the server's whole effect happens inside that step, on the *unstepped* store:
  no actor can observe, or crash into, a half-done merge.  That is the property the proposal
  relies on ("the merge is performed by lakeFS so it is atomic"); modelling the server as
  separate store steps would model a different system.
* **All server state is in the store** (branch metadata objects), so the harness's state
  fingerprint covers it and replay and pruning stay sound.
* **Conflicts** are three-way, per path, as in lakeFS: a branch records at creation the view of
  its source (``base``: path -> ETag).  Merging it into a target fails if, for some path the
  branch changed (wrote or deleted), the target changed it too since then, to something else.
  Two jobs writing the same destination both write ``_SUCCESS``, so the second merge fails.
* **Claims** (lakeFS commit metadata plus the proposal's "merge-if"): a merge may claim a
  name, and fails if another branch already merged a claim of that name into the target.  The
  committer claims ``task <id>`` so that at most one attempt of a task reaches the job branch.
* **Epochs** fence off stale writers: a restarted job attempt raises the job branch's epoch,
  releasing (and removing the output of) every claim it did not recover; a merge carrying an
  older epoch, from an attempt of the previous job attempt, is then refused.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol, TypedDict, TypeVar, cast, runtime_checkable

from zerorename.store import Store
from zerorename_model.engine.stores.records import Obj
from zerorename_model.engine.stores.store import ModelStore
from zerorename_model.systems.protocols.common import CommitFailed

T = TypeVar("T")

LAKEFS_DIR = ".lakefs"
MAIN = "main"


class LakeFSError(CommitFailed):
    """A lakeFS request failed (no such branch, or a merge conflict)."""


class MergeConflict(LakeFSError):
    pass


class Claim(TypedDict):
    """A claim merged into a branch: the branch that merged it and the paths that merge
    wrote (released with it when a restarted job attempt fences the branch)."""

    by: str
    paths: list[str]


@dataclass
class BranchMeta:
    name: str
    source: str
    base: dict[str, str] = field(default_factory=dict)  # path -> ETag of the source at creation
    deleted: list[str] = field(default_factory=list)  # paths of base this branch deleted
    claims: dict[str, Claim] = field(default_factory=dict)
    epoch: int = 0  # merges carrying an older epoch are refused (fencing)

    def encode(self) -> bytes:
        return json.dumps(self.__dict__, sort_keys=True).encode()

    @classmethod
    def decode(cls, data: bytes) -> BranchMeta:
        return cls(**json.loads(data))


class LakeFSServer:
    """The lakeFS server over the raw store.  Each public method is one API call: it runs to
    completion without pausing and returns a short status string for the trace."""

    def __init__(self, raw: ModelStore, root: str) -> None:
        self.raw = raw  # an unstepped ModelStore: these operations are not harness steps
        self.root = root.rstrip("/")

    # -- naming ----------------------------------------------------------------------------------

    def url(self, branch: str, path: str) -> str:
        """Where ``path`` of ``branch`` is stored: main is the plain bucket."""
        if branch == MAIN:
            return f"{self.root}/{path}"
        return f"{self.root}/{LAKEFS_DIR}/branches/{branch}/{path}"

    def _meta_url(self, branch: str) -> str:
        return f"{self.root}/{LAKEFS_DIR}/refs/{branch}"

    # -- reading state (the server's metadata store is consistent: read the truth) ---------------

    def meta(self, branch: str) -> BranchMeta | None:
        obj = self.raw.objects.get(self._meta_url(branch))
        return None if obj is None else BranchMeta.decode(obj.data)

    def _own(self, branch: str) -> dict[str, Obj]:
        """path -> stored object, for what ``branch`` itself wrote (main: every plain key)."""
        prefix = self.url(branch, "")
        hidden = f"{self.root}/{LAKEFS_DIR}/"
        return {k[len(prefix):]: o for k, o in self.raw.objects.items()
                if k.startswith(prefix) and not (branch == MAIN and k.startswith(hidden))}

    def view(self, branch: str) -> dict[str, str]:
        """What ``branch`` holds now, as path -> ETag."""
        own = {p: o.etag for p, o in self._own(branch).items()}
        if branch == MAIN:
            return own
        meta = self._require(branch)
        view = {p: e for p, e in meta.base.items() if p not in meta.deleted}
        view.update(own)
        return view

    def _require(self, branch: str) -> BranchMeta:
        meta = self.meta(branch)
        if meta is None:
            raise LakeFSError(self._meta_url(branch), f"no branch {branch!r}")
        return meta

    def _save(self, meta: BranchMeta) -> None:
        self.raw.put(self._meta_url(meta.name), meta.encode())

    # -- API calls -------------------------------------------------------------------------------

    def create_branch(self, name: str, source: str, reset: bool) -> str:
        """Branch ``name`` from ``source``'s current state.  An existing branch is kept
        (the proposal: "repurposing it if the same job ID is requested again") unless
        ``reset``, which drops it first."""
        if self.meta(name) is not None:
            if not reset:
                return f"reuse {name}"
            self.delete_branches(name)
        self._save(BranchMeta(name, source, base=self.view(source)))
        return f"created {name} from {source}"

    def delete_branches(self, name: str) -> str:
        """Drop ``name`` and every branch named ``name--…`` (a job's task branches)."""
        refs = f"{self.root}/{LAKEFS_DIR}/refs/"
        names = sorted(k[len(refs):] for k in self.raw.objects if k.startswith(refs)
                       and (k[len(refs):] == name or k[len(refs):].startswith(name + "--")))
        for branch in names:
            for key in [k for k in self.raw.objects if k.startswith(self.url(branch, ""))]:
                self.raw.delete(key)
            self.raw.delete(self._meta_url(branch))
        return f"deleted {len(names)} branches"

    def delete_prefix(self, branch: str, prefix: str) -> str:
        """Delete, on ``branch``, every path under ``prefix`` it inherited (overwrite mode)."""
        meta = self._require(branch)
        gone = sorted(p for p in meta.base if p.startswith(prefix) and p not in meta.deleted)
        meta.deleted = sorted({*meta.deleted, *gone})
        self._save(meta)
        return f"deleted {len(gone)} paths on {branch}"

    def fence(self, branch: str, epoch: int, keep: list[str]) -> str:
        """Start a new epoch on ``branch``: merges from older epochs are refused from now on,
        and every claim not in ``keep`` is released, its paths removed from the branch."""
        meta = self._require(branch)
        released = sorted(set(meta.claims) - set(keep))
        for claim in released:
            for path in meta.claims.pop(claim)["paths"]:
                self.raw.delete(self.url(branch, path))
        meta.epoch = max(meta.epoch, epoch)
        self._save(meta)
        return f"epoch {meta.epoch} on {branch}; released {released}"

    def merge(self, source: str, target: str, claim: str | None = None,
              epoch: int | None = None) -> str:
        """Apply ``source``'s changes to ``target`` in one step, or nothing on a conflict."""
        src = self.meta(source)
        if src is None:
            return f"error: no branch {source!r}"
        tgt = None if target == MAIN else self.meta(target)
        if target != MAIN and tgt is None:
            return f"error: no branch {target!r}"
        if tgt is not None and epoch is not None and epoch < tgt.epoch:
            return f"conflict: {target} is at epoch {tgt.epoch}, this merge is from {epoch}"
        changes = self._own(source)
        now = self.view(target)
        conflicts = []
        for path in sorted(set(changes) | set(src.deleted)):
            wanted = changes[path].etag if path in changes else None
            if now.get(path) not in (src.base.get(path), wanted):
                conflicts.append(f"{path} changed on {target}")
        held = tgt.claims.get(claim) if claim and tgt else None
        holder = source if held is None else held.get("by", source)
        if holder != source:
            conflicts.append(f"{target} already has {claim!r} from {holder}")
        if conflicts:
            return f"conflict: {'; '.join(conflicts)}"
        for path, obj in sorted(changes.items()):
            self.raw.put(self.url(target, path), obj.data)
        for path in src.deleted:
            self.raw.delete(self.url(target, path))
        if tgt is not None:
            tgt.deleted = sorted(({*tgt.deleted, *src.deleted} & set(tgt.base)) - set(changes))
            if claim:
                tgt.claims[claim] = {"by": source, "paths": sorted(changes)}
            self._save(tgt)
        return f"merged {len(changes)} writes, {len(src.deleted)} deletes into {target}"


class HasStore(Protocol):
    """What the client needs of its environment: the store the branches live in (a
    committer's :class:`~zerorename_model.engine.scenario.CommitterEnv`, or a bare namespace in
    tests)."""

    @property
    def store(self) -> Store: ...


@runtime_checkable
class _Stepping(Protocol):
    """An environment that can make a service call one harness step (``Env.step``)."""

    def step(self, what: str, action: Callable[[], T]) -> T: ...


def _stepper(env: HasStore) -> Callable[[str, Callable[[], str]], str]:
    """One harness step that is not a store operation (``Env.step``); outside the harness the
    action just runs."""
    if not isinstance(env, _Stepping):
        return lambda _what, action: action()
    return env.step


class LakeFS:
    """The client a committer uses: object writes are ordinary (stepped) PUTs into the branch's
    storage; every API call is one step executed by :class:`LakeFSServer`."""

    def __init__(self, env: HasStore, root: str) -> None:
        self.env = env
        self.store = env.store
        # the server works on the store under the harness's steps (``SteppedStore.unstepped``,
        # untyped in the harness), which must be a ModelStore: it reads the objects directly
        raw = cast(ModelStore, getattr(env.store, "unstepped", env.store))
        self.server = LakeFSServer(raw, root)

    def _call(self, what: str, action: Callable[[], str]) -> str:
        status = _stepper(self.env)(f"lakefs {what}", action)
        if status.startswith("conflict"):
            raise MergeConflict(self.server.root, f"{what}: {status}")
        if status.startswith("error"):
            raise LakeFSError(self.server.root, f"{what}: {status}")
        return status

    def create_branch(self, name: str, source: str = MAIN, *, reset: bool = False) -> str:
        return self._call(f"create branch {name} from {source}",
                          lambda: self._guard(lambda: self.server.create_branch(name, source,
                                                                                reset)))

    def delete_branches(self, name: str) -> str:
        return self._call(f"delete branch {name}", lambda: self.server.delete_branches(name))

    def delete_prefix(self, branch: str, prefix: str) -> str:
        return self._call(f"delete {prefix}* on {branch}",
                          lambda: self._guard(lambda: self.server.delete_prefix(branch, prefix)))

    def merge(self, source: str, target: str = MAIN, *, claim: str | None = None,
              epoch: int | None = None) -> str:
        return self._call(f"merge {source} into {target}",
                          lambda: self.server.merge(source, target, claim, epoch))

    def fence(self, branch: str, epoch: int, keep: list[str]) -> str:
        return self._call(f"fence {branch} at epoch {epoch}",
                          lambda: self._guard(lambda: self.server.fence(branch, epoch, keep)))

    def put(self, branch: str, path: str, data: bytes) -> None:
        self.store.put(self.server.url(branch, path), data)

    @staticmethod
    def _guard(action: Callable[[], str]) -> str:
        """Report a missing branch as a failed request (a status), so the step is recorded."""
        try:
            return action()
        except LakeFSError as error:
            return f"error: {error.reason}"
