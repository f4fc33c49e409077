"""S3's ListObjectsV2 on a directory tree: keys sorted, paged, common prefixes by delimiter.

A directory is not an object (listing never reports one), and the store's own hidden files —
the emulated uploads' directory, in-flight temp files — are never listed, so neither shows up
as output.
"""

from __future__ import annotations

import os

from zerorename.errors import StoreError
from zerorename.store import ListPage, ObjectInfo
from zerorename.stores.local.files import TMP_PREFIX, UPLOADS_DIR, LocalFiles

__all__ = ["LocalListing"]


class LocalListing(LocalFiles):
    """Listing objects (listing uploads is :meth:`LocalMultipart.list_multipart_uploads
    <zerorename.stores.local.multipart.LocalMultipart.list_multipart_uploads>`)."""

    def _walk(self, prefix_path: str) -> list[str]:
        """Every file path starting with ``prefix_path`` (a raw string prefix), unsorted."""
        base = prefix_path if prefix_path.endswith("/") else os.path.dirname(prefix_path)
        base = base or "/"
        found: list[str] = []

        def may_hold(directory: str) -> bool:
            d = directory.rstrip("/") + "/"
            return d.startswith(prefix_path) or prefix_path.startswith(d)

        def on_error(exc: OSError) -> None:
            if not isinstance(exc, (FileNotFoundError, NotADirectoryError)):
                raise exc

        for top, dirs, files in os.walk(base, onerror=on_error):
            dirs[:] = [
                d for d in dirs if d != UPLOADS_DIR and may_hold(os.path.join(top, d))
            ]
            for name in files:
                if name.startswith(TMP_PREFIX):
                    continue
                full = os.path.join(top, name)
                if full.startswith(prefix_path):
                    found.append(full)
        return found

    def list_page(
        self, prefix: str, *, delimiter: str | None = None, token: str | None = None,
        max_keys: int = 1000,
    ) -> ListPage:
        """S3's listing on a directory tree: sorted by key, paged, ``token`` = last key returned.

        Each page walks the matching subtree again (O(n) per page): simple, and a directory
        tree changing between pages behaves like S3 (keys after the cursor appear).
        """
        self._counter.add("list_page")
        if max_keys < 1:
            raise StoreError(prefix, "max_keys must be >= 1", "InvalidArgument", 400)
        p = self._path(prefix)
        entries: dict[str, bool] = {}  # name -> is_common_prefix
        for full in self._walk(p):
            if delimiter:
                rest = full[len(p):]
                cut = rest.find(delimiter)
                if cut >= 0:
                    entries[p + rest[: cut + len(delimiter)]] = True
                    continue
            entries[full] = False
        names = sorted(n for n in entries if token is None or n > token)
        page, more = names[:max_keys], len(names) > max_keys
        objects: list[ObjectInfo] = []
        prefixes: list[str] = []
        for name in page:
            if entries[name]:
                prefixes.append(self._url(name))
                continue
            try:
                st = os.stat(name)
            except FileNotFoundError:
                continue  # deleted while we listed
            objects.append(ObjectInfo(self._url(name), st.st_size, self._etag(name, st),
                                      st.st_mtime))
        return ListPage(objects=objects, prefixes=prefixes, token=page[-1] if more else None)

