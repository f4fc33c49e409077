"""LIST, one page at a time: what the (possibly lagging) LIST index shows below a prefix,
grouped by a delimiter, with the entries of deleted keys the index still holds.  Its own module
because it is the one read of the index, and the one place an eventually consistent listing
is counted as an answer that differed from the truth."""

from __future__ import annotations

from zerorename.store import ListPage, ObjectInfo
from zerorename_model.engine.errors import not_found
from zerorename_model.engine.stores.namespace import is_dir
from zerorename_model.engine.stores.records import Obj, etag_of
from zerorename_model.engine.stores.state import StoreState


def list_page(state: StoreState, prefix: str, *, delimiter: str | None = None,
              token: str | None = None, max_keys: int = 1000) -> ListPage:
    """One page of the keys below ``prefix`` after ``token``, as the store's index has them;
    with real directories, a delimited listing of a missing directory fails, and one of an
    existing directory shows its subdirectories even when they are empty (HDFS's
    ``listStatus``: a task directory whose files were all renamed away is still listed)."""
    real_dirs = delimiter == "/" and state.profile.directories
    if real_dirs and not is_dir(state, prefix):
        raise not_found(prefix.rstrip("/"), "FileNotFound")
    index = state.listed if state.profile.eventual_listing else set(state.objects)
    truth = {k for k in state.objects if k.startswith(prefix)}
    entries = set(index)
    if real_dirs:  # a directory's own entry, spelt as a key that the delimiter groups
        entries |= {d + "/" for d in state.dirs if d.startswith(prefix) and d + "/" != prefix}
    keys = sorted(k for k in entries if k.startswith(prefix) and (token is None or k > token))
    if {k for k in index if k.startswith(prefix)} != truth:
        state.inconsistent_answers += 1
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
        obj = state.objects.get(key) or state.ghosts.get(key) or Obj(b"", etag_of(b""))
        objects.append(ObjectInfo(key, len(obj.data), obj.etag))
    return ListPage(objects, prefixes, None)
