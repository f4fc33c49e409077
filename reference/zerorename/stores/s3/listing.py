"""The two S3 listings, each paged: ListObjectsV2 (:meth:`S3Listing.list_page`, one page per
call, the caller holds the token) and ListMultipartUploads
(:meth:`S3Listing.list_multipart_uploads`, every page, defensively).

Listings are where S3-compatible servers differ most in paging (moto ignores the upload
markers, RGW treats KeyMarker as inclusive), so the loops that must terminate whatever the
server does are kept together.
"""

from __future__ import annotations

from typing import Any

from zerorename.errors import StoreError
from zerorename.store import ListPage, ObjectInfo, UploadInfo
from zerorename.stores.common import bare_etag
from zerorename.stores.s3.base import S3Requests

__all__ = ["S3Listing"]


class S3Listing(S3Requests):
    """Listing objects and incomplete multipart uploads."""

    def list_page(
        self, prefix: str, *, delimiter: str | None = None, token: str | None = None,
        max_keys: int = 1000,
    ) -> ListPage:
        """One ListObjectsV2 page; ``token`` is S3's ContinuationToken."""
        scheme, bucket, key = self._split(prefix)
        kwargs: dict[str, Any] = {"Bucket": bucket, "Prefix": key, "MaxKeys": max_keys}
        if delimiter:
            kwargs["Delimiter"] = delimiter
        if token:
            kwargs["ContinuationToken"] = token
        resp = self._call("list_page", prefix, lambda: self.client.list_objects_v2(**kwargs))
        base = f"{scheme}://{bucket}/"
        objects = [
            ObjectInfo(
                url=base + o["Key"],
                size=int(o.get("Size", 0)),
                etag=bare_etag(str(o.get("ETag", ""))),
                mtime=o["LastModified"].timestamp() if "LastModified" in o else None,
            )
            for o in resp.get("Contents", [])
        ]
        prefixes = [base + p["Prefix"] for p in resp.get("CommonPrefixes", []) if "Prefix" in p]
        next_token: str | None = None
        if resp.get("IsTruncated"):
            next_token = resp.get("NextContinuationToken")
            if not next_token:
                raise StoreError(prefix, "listing truncated without a continuation token",
                                 code="BadListing", status=0)
        return ListPage(objects=objects, prefixes=prefixes, token=next_token)

    def list_multipart_uploads(self, prefix: str) -> list[UploadInfo]:
        """Every incomplete upload under ``prefix``, following KeyMarker/UploadIdMarker.

        Defensive against servers that do not paginate as AWS does: moto ignores the markers
        (returns page 1 again), RGW treats KeyMarker as inclusive.  So uploads are de-duplicated
        by (key, upload id), and the loop stops when a page brings nothing new or the markers
        do not advance — it always terminates.
        """
        scheme, bucket, key = self._split(prefix)
        base = f"{scheme}://{bucket}/"
        seen: set[tuple[str, str]] = set()
        found: list[UploadInfo] = []
        markers: tuple[str, str] | None = None
        while True:
            kwargs: dict[str, Any] = {"Bucket": bucket, "Prefix": key}
            if self._uploads_page_size:
                kwargs["MaxUploads"] = self._uploads_page_size
            if markers is not None:
                kwargs["KeyMarker"], kwargs["UploadIdMarker"] = markers

            def once(kw: dict[str, Any] = kwargs) -> Any:
                return self.client.list_multipart_uploads(**kw)

            resp = self._call("list_multipart_uploads", prefix, once)
            uploads = resp.get("Uploads", [])
            new = 0
            for u in uploads:
                ident = (str(u["Key"]), str(u["UploadId"]))
                if ident in seen:
                    continue
                seen.add(ident)
                new += 1
                initiated = u["Initiated"].timestamp() if "Initiated" in u else None
                found.append(UploadInfo(base + ident[0], ident[1], initiated))
            if not resp.get("IsTruncated") or new == 0:
                break
            next_markers = (
                str(resp.get("NextKeyMarker") or ""), str(resp.get("NextUploadIdMarker") or "")
            )
            if not next_markers[0] and uploads:  # truncated without markers: use the last upload
                last = uploads[-1]
                next_markers = (str(last["Key"]), str(last["UploadId"]))
            if not next_markers[0] or next_markers == markers:
                break
            markers = next_markers
        return found

