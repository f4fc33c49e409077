"""The store's namespace: which directories exist (real ones on a store with ``directories``,
implied ones by the keys below them elsewhere), and rename, which moves a file or a directory
atomically or, where the profile says so, one object at a time with the harness free to run
other actors between the steps (GCS).  Listing asks here whether a directory exists."""

from __future__ import annotations

from zerorename_model.engine.errors import ModelStoreError, not_found
from zerorename_model.engine.stores.state import StoreState


def is_dir(state: StoreState, url: str) -> bool:
    """A directory exists: an existing (possibly empty) one of a store with real
    directories, or any prefix with a key below it."""
    url = url.rstrip("/")
    return url in state.dirs or any(k.startswith(url + "/") for k in state.objects)


def exists(state: StoreState, url: str) -> bool:
    """``url`` names something: an object, a real directory or a prefix with keys below it."""
    if state.profile.directories and url.rstrip("/") in state.dirs:
        return True
    return url in state.objects or any(k.startswith(url.rstrip("/") + "/")
                                       for k in state.objects)


def rename(state: StoreState, src: str, dst: str) -> None:
    """Atomic file rename; directory rename atomic only where the profile says so.

    The rename fails if ``src`` is missing or ``dst`` exists; except that, with real
    directories (HDFS's ``rename(src, dst)``), a ``dst`` that is an existing directory
    receives the source: it becomes ``dst/<name of src>`` (which must not exist).
    """
    if not state.profile.rename:
        raise ModelStoreError(src, "NotImplemented", 501, f"{state.profile.name} has no rename")
    if state.profile.directories and dst not in state.objects and is_dir(state, dst):
        dst = dst.rstrip("/") + "/" + src.rstrip("/").rsplit("/", 1)[-1]
    if exists(state, dst):
        raise ModelStoreError(dst, "DestinationExists", 409, "rename destination exists")
    if state.profile.directories and src not in state.objects and is_dir(state, src):
        _move_dirs(state, src, dst)
    if src in state.objects:
        _move(state, src, dst)
        return
    children = sorted(k for k in state.objects if k.startswith(src.rstrip("/") + "/"))
    if not children:
        raise not_found(src)
    for i, key in enumerate(children):
        if i and not state.profile.atomic_dir_rename:
            state.between_steps(f"rename {key}")
        if key in state.objects:  # another actor may have moved it meanwhile (GCS)
            _move(state, key, dst.rstrip("/") + key[len(src.rstrip("/")):])


def _move(state: StoreState, src: str, dst: str) -> None:
    obj = state.objects[src]
    state.delete_object(src)
    state.write_object(dst, obj.data)


def _move_dirs(state: StoreState, src: str, dst: str) -> None:
    """Rename the (real) directories at and below ``src`` to below ``dst``."""
    src, dst = src.rstrip("/"), dst.rstrip("/")
    below = {d for d in state.dirs if d == src or d.startswith(src + "/")}
    state.dirs = (state.dirs - below) | {dst + d[len(src):] for d in below}
