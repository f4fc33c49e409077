"""The model store: the store protocol (``zerorename.store.Store``) over a
:class:`~.state.StoreState`.  Each method counts the request under its protocol name, then hands
it to the state's changes or to its family's module (:mod:`.conditions`, :mod:`.namespace`,
:mod:`.listing`, :mod:`.multipart`); see the package's docstring for the stores' semantics."""

from __future__ import annotations

from collections.abc import Sequence

# the store protocol's value types, defined once, in the production package's types-only
# module: the one thing the model imports from it (tests/test_towers.py)
from zerorename.store import ListPage, ObjectInfo, StoreCapabilities, UploadInfo
from zerorename_model.engine.errors import not_found
from zerorename_model.engine.stores import listing, multipart, namespace
from zerorename_model.engine.stores.conditions import check_conditions, conditional_gap
from zerorename_model.engine.stores.state import StoreState


class ModelStore(StoreState):
    """An in-memory store with the semantics of ``profile``; see the package docstring."""

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
        check_conditions(self, url, if_none_match, if_match)
        conditional_gap(self, url, if_none_match or if_match is not None)
        return self.write_object(url, bytes(data))

    def get(self, url: str) -> bytes:
        self.counts["get"] += 1
        obj = self.read_object(url)
        if obj is None:
            raise not_found(url)
        return obj.data

    def head(self, url: str) -> ObjectInfo | None:
        self.counts["head"] += 1
        obj = self.read_object(url)
        return None if obj is None else ObjectInfo(url, len(obj.data), obj.etag)

    def list_page(
        self, prefix: str, *, delimiter: str | None = None, token: str | None = None,
        max_keys: int = 1000,
    ) -> ListPage:
        self.counts["list_page"] += 1
        return listing.list_page(self, prefix, delimiter=delimiter, token=token,
                                 max_keys=max_keys)

    def delete(self, url: str) -> None:
        self.counts["delete"] += 1
        self.delete_object(url)

    def delete_many(self, urls: Sequence[str]) -> None:
        """Delete every key named.  With real directories, a directory named together with
        keys below it is a recursive delete (a LIST found it, then the DELETE): HDFS's is
        atomic, so it takes everything below the directory when it runs, what was moved in
        after the LIST too.  A directory the LIST found empty is not emptied: that is Hadoop's
        ``if exists(path) delete(path, recursive)`` (FileOutputCommitter's task commit)."""
        self.counts["delete_many"] += 1
        for url in urls:
            below = url.rstrip("/") + "/"
            self.delete_object(url, subtree=self.profile.directories
                               and any(u.startswith(below) for u in urls))

    def copy(self, src: str, dst: str) -> str:
        self.counts["copy"] += 1
        obj = self.read_object(src)
        if obj is None:
            raise not_found(src)
        return self.write_object(dst, obj.data)

    def rename(self, src: str, dst: str) -> None:
        """See :func:`.namespace.rename`."""
        self.counts["rename"] += 1
        namespace.rename(self, src, dst)

    def create_multipart(self, url: str) -> str:
        self.counts["create_multipart"] += 1
        return multipart.create(self, url)

    def upload_part(self, url: str, upload_id: str, part_number: int, data: bytes) -> str:
        self.counts["upload_part"] += 1
        return multipart.upload_part(self, url, upload_id, part_number, data)

    def complete_multipart(
        self, url: str, upload_id: str, parts: Sequence[tuple[int, str]], *,
        if_none_match: bool = False, if_match: str | None = None,
    ) -> str:
        self.counts["complete_multipart"] += 1
        return multipart.complete(self, url, upload_id, parts, if_none_match=if_none_match,
                                  if_match=if_match)

    def abort_multipart(self, url: str, upload_id: str) -> None:
        self.counts["abort_multipart"] += 1
        multipart.abort(self, url, upload_id)

    def list_multipart_uploads(self, prefix: str) -> list[UploadInfo]:
        self.counts["list_multipart_uploads"] += 1
        return multipart.list_uploads(self, prefix)

    # -- the harness's side ------------------------------------------------------------------------

    def reset_counts(self) -> None:
        self.counts.clear()

    def upload_urls(self) -> list[str]:
        return [u.url for u in self.uploads.values()]
