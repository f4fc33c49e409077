"""Deleting objects in DeleteObjects pages: a list of keys (:func:`delete_pages`, in parallel
with a pool) or a directory's tree (:func:`delete_tree`).  Apart from :mod:`.cleanup`, which
decides *what* a job owns and may remove; this module only sends the deletes."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from zerorename.errors import StoreError
from zerorename.executor import BoundedExecutor
from zerorename.store import ObjectInfo, Store, list_dir
from zerorename.stores.common import DeleteManyError
from zerorename.urls import is_under

__all__ = ["DELETE_PAGE", "delete_pages", "delete_tree"]

#: Keys in one DeleteObjects request (S3's limit).
DELETE_PAGE = 1000


def delete_pages(store: Store, urls: Sequence[str],
                 pool: BoundedExecutor | None = None) -> None:
    """Delete ``urls`` in pages of 1,000 keys (a DeleteObjects request's limit).  With a
    ``pool`` the pages go out in parallel: on S3 a page is one request of tens of
    milliseconds, so 10 pages take one round trip instead of ten.

    Every page is tried, with or without a pool, even after one fails: what a failed page
    kept stays listed for a later pass, and the rest is gone.  Then the failure is raised —
    the pages' DeleteManyError failures merged into one that names every URL left (so a
    caller can say exactly what is still there), else the first page's error."""
    pages = [urls[start : start + DELETE_PAGE] for start in range(0, len(urls), DELETE_PAGE)]
    failures: list[BaseException] = []
    if pool is not None and len(pages) > 1:
        _, errors = pool.run_all(store.delete_many, pages)
        failures = [error for _, error in errors]
    else:
        for page in pages:
            try:
                store.delete_many(page)
            except StoreError as error:
                failures.append(error)
    if failures:
        raise _merged(failures, len(urls))


def _merged(failures: Sequence[BaseException], total: int) -> BaseException:
    """One error for the failed pages of a delete of ``total`` URLs."""
    partial = [f for f in failures if isinstance(f, DeleteManyError)]
    if len(failures) > 1 and len(partial) == len(failures):
        return DeleteManyError({url: e for f in partial for url, e in f.failures.items()}, total)
    return failures[0]


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
