"""Deleting objects in DeleteObjects pages: a list of keys (:func:`delete_pages`, in parallel
with a pool) or a directory's tree (:func:`delete_tree`).  Apart from :mod:`.cleanup`, which
decides *what* a job owns and may remove; this module only sends the deletes."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from zerorename.executor import BoundedExecutor
from zerorename.store import ObjectInfo, Store, list_dir
from zerorename.urls import is_under

__all__ = ["DELETE_PAGE", "delete_pages", "delete_tree"]

#: Keys in one DeleteObjects request (S3's limit).
DELETE_PAGE = 1000


def delete_pages(store: Store, urls: Sequence[str],
                 pool: BoundedExecutor | None = None) -> None:
    """Delete ``urls`` in pages of 1,000 keys (a DeleteObjects request's limit).  With a
    ``pool`` the pages go out in parallel: on S3 a page is one request of tens of
    milliseconds, so 10 pages take one round trip instead of ten.  The first failure is raised
    after every page has been tried (what was not deleted stays listed for a later pass)."""
    pages = [urls[start : start + DELETE_PAGE] for start in range(0, len(urls), DELETE_PAGE)]
    if pool is None or len(pages) < 2:
        for page in pages:
            store.delete_many(page)
        return
    _, errors = pool.run_all(store.delete_many, pages)
    if errors:
        raise errors[0][1]


def delete_tree(store: Store, directory: str, *, objects: Sequence[ObjectInfo] | None = None,
                listed_urls: Sequence[str] | None = None, known: Iterable[str] = ()) -> int:
    """Delete every object under ``directory`` (a directory: ``out/`` never ``out10/``).

    ``objects`` or ``listed_urls`` reuses a listing already made; ``known`` adds URLs the
    caller knows exist (deleted in the same batches, so a listing that lags — eventually
    consistent stores — cannot hide them).  Returns the number of *listed* objects deleted.
    """
    if listed_urls is None:
        source = objects if objects is not None else list_dir(store, directory)
        listed_urls = [o.url for o in source]
    listed = [u for u in listed_urls if is_under(u, directory)]
    delete_pages(store, sorted({*listed, *(u for u in known if is_under(u, directory))}))
    return len(listed)
