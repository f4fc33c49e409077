"""``S3Store``: the store protocol on a boto3 S3 client (AWS, moto, Ceph RGW, other S3s).

Design points, each for a reason:

* **The bucket comes from every URL** (``s3://bucket/key``, ``s3a://bucket/key``), so one store
  serves a whole job whatever buckets it touches, and listings answer in the scheme asked.
* **ETags are returned bare** (MD5 hex, no quotes) so they compare equal across S3Store and
  LocalStore; If-Match accepts either spelling and sends the one the endpoint understands.
* **One retry loop** (:mod:`zerorename.retry`): throttling (503 SlowDown), 5xx and
  connection errors are repeated with full-jitter backoff; 4xx never are.  botocore's own
  retries are switched off on whatever client the store is given
  (:func:`disable_botocore_retries`), and under a committer the committer's loop is the only
  one that repeats, so ``fs.s3a.retry.limit`` + 1 bounds the HTTP requests of an operation.
  Every attempt is counted in :meth:`S3Store.request_counts`.
* **Errors are typed** (:mod:`zerorename.errors`): 404 → ``NotFoundError``, 412 →
  ``PreconditionFailedError``, 503 → ``ThrottledError``, the rest ``StoreError`` with the
  server's code and status; every message names the URL.
* **Server quirks are measured, not assumed** (:mod:`zerorename.stores.capabilities`):
  RGW's empty ETag from CompleteMultipartUpload is derived from the parts' ETags (S3's rule;
  a HEAD only where parts have no MD5 ETags); its refusal of quoted
  If-Match is worked around; its ignored If-None-Match on complete is reported by
  ``capabilities().conditional_complete == False`` and backed by a (non-atomic) HEAD check;
  list-uploads pagination stops on servers that ignore markers (moto) instead of looping.
* **No rename**: S3 has none.  :func:`rename_by_copy` is the explicit, O(data), non-atomic
  emulation, for callers (the manifest committer) that accept those costs.

``copy`` uses CopyObject, which S3 limits to 5 GiB sources; larger objects need
UploadPartCopy, which committers do not need (they never copy data they wrote) and is not
implemented.

The store is assembled from one mixin per concern over :class:`~.base.S3Requests` (the request
plumbing): :class:`~.conditional.S3ConditionalWrites` (PUT), :class:`~.listing.S3Listing`,
:class:`~.multipart.S3Multipart` (over the conditional writes, whose If-Match spelling
complete shares); this module adds the remaining object calls.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from zerorename.errors import NotFoundError, StoreError, UnsupportedOperationError
from zerorename.store import Store, list_all
from zerorename.stores.common import DeleteManyError, bare_etag
from zerorename.stores.s3.errors import KeysLeft, per_key_error
from zerorename.stores.s3.listing import S3Listing
from zerorename.stores.s3.multipart import S3Multipart
from zerorename.urls import dir_prefix, is_under

__all__ = ["DELETE_BATCH", "S3Store", "rename_by_copy"]

#: S3's limit on keys per DeleteObjects request (moto accepts more; AWS rejects them).
DELETE_BATCH = 1000


class S3Store(S3Listing, S3Multipart):
    """The store protocol over S3.  See the module docstring for the design.

    ``retry``: the :class:`RetryPolicy` (default: 5 attempts, full jitter) for the store used
    on its own; under a committer the committer's loop repeats instead (:mod:`zerorename.retry`:
    the outermost loop owns the retries).  ``client``: any boto3 S3 client; its botocore
    retries are switched off (:func:`disable_botocore_retries`), so one attempt is one HTTP
    request and the policy alone bounds an operation.  ``capabilities``:
    skip probing and report these.  ``probe_prefix``/``probe_bucket``: where the once-per-
    endpoint capability probe writes its few temporary objects (default: the bucket of the URL
    given to :meth:`capabilities`, under ``.zerorename-probe/``).  ``list_uploads_page_size``:
    MaxUploads per ListMultipartUploads page (server default 1000; small values exercise
    pagination).
    ``min_part_size``: the smallest non-final part the endpoint accepts, reported in
    :meth:`capabilities` with S3's other multipart limits so that committers refuse a smaller
    ``fs.s3a.multipart.size`` when they are built (not at job commit, with EntityTooSmall):
    S3's 5 MiB, lower only for a server configured lower (moto's ``S3_UPLOAD_PART_MIN_SIZE``,
    RGW's ``rgw_multipart_min_part_size``).
    """

    def prober(self) -> S3Store:
        """The same endpoint with its own request counters, for the fencing check
        (:mod:`zerorename.stores.fencing`): its requests are not the job's."""
        return S3Store(self.client, retry=self.retry, name=self.name,
                       min_part_size=self.min_part_size)

    def get(self, url: str) -> bytes:
        _, bucket, key = self._split(url)

        def once() -> bytes:
            # the body is read inside the attempt: a connection cut mid-body is retried too
            return bytes(self.client.get_object(Bucket=bucket, Key=key)["Body"].read())

        data = self._call("get", url, once)
        self._counter.add_bytes(read=len(data))
        return data

    def delete(self, url: str) -> None:
        """DeleteObject; a missing key is success (S3 semantics)."""
        _, bucket, key = self._split(url)
        self._call("delete", url, lambda: self.client.delete_object(Bucket=bucket, Key=key))

    def delete_many(self, urls: Sequence[str]) -> None:
        """DeleteObjects in batches of 1000 per bucket.

        Per-key errors that are transient (SlowDown, InternalError) are retried, with backoff,
        for just those keys; the rest are collected, every batch is still attempted, and a
        :class:`DeleteManyError` mapping each failed URL to its StoreError is raised at the end.
        """
        by_bucket: dict[tuple[str, str], list[str]] = {}
        for url in urls:
            scheme, bucket, key = self._split(url)
            by_bucket.setdefault((scheme, bucket), []).append(key)
        failures: dict[str, StoreError] = {}
        for (scheme, bucket), keys in by_bucket.items():
            for start in range(0, len(keys), DELETE_BATCH):
                batch = keys[start : start + DELETE_BATCH]
                failures.update(self._delete_batch(scheme, bucket, batch))
        if failures:
            raise DeleteManyError(failures, len(urls))

    def _delete_batch(self, scheme: str, bucket: str, keys: list[str]) -> dict[str, StoreError]:
        """One batch through the one retry loop: an answer listing transient per-key errors
        ends the attempt with :class:`KeysLeft`, and the next attempt sends just those keys,
        so a batch costs at most ``max_attempts`` requests like any operation.  Returns the
        keys that failed for good (and, when attempts run out, the transient ones)."""
        failed: dict[str, StoreError] = {}
        pending = list(keys)

        def once() -> None:
            nonlocal pending
            resp = self.client.delete_objects(
                Bucket=bucket, Delete={"Objects": [{"Key": k} for k in pending], "Quiet": True},
            )
            left: dict[str, tuple[str, StoreError]] = {}
            for e in resp.get("Errors", []):
                key = str(e.get("Key", ""))
                url = f"{scheme}://{bucket}/{key}"
                err = per_key_error(url, str(e.get("Code", "")), str(e.get("Message", "")))
                if self.retry.retryable(err):
                    left[url] = (key, err)
                else:
                    failed[url] = err
            if left:
                pending = [key for key, _ in left.values()]
                raise KeysLeft({url: err for url, (_, err) in left.items()})

        try:
            self._call("delete_many", f"{scheme}://{bucket}/{keys[0]}", once)
        except KeysLeft as exc:
            failed.update(exc.failures)
        return failed

    def copy(self, src: str, dst: str) -> str:
        """Server-side CopyObject (sources up to 5 GiB); returns the new bare ETag."""
        _, sb, sk = self._split(src)
        _, db, dk = self._split(dst)
        def once() -> Any:
            return self.client.copy_object(Bucket=db, Key=dk, CopySource={"Bucket": sb, "Key": sk})

        resp = self._call("copy", src, once)
        return bare_etag(str(resp.get("CopyObjectResult", {}).get("ETag", "")))

    def rename(self, src: str, dst: str) -> None:
        """S3 has no rename: always :class:`UnsupportedOperationError`.

        See :func:`rename_by_copy` for the explicit copy + delete emulation.
        """
        raise UnsupportedOperationError(
            src,
            f"S3 has no rename (to {dst}); use zerorename.stores.rename_by_copy "
            "(copy + delete: O(data), not atomic)",
        )


def rename_by_copy(store: Store, src: str, dst: str) -> int:
    """Emulate rename on a store without one: copy every object, then delete the sources.

    This is what S3A's rename does, with its costs: O(data) server-side copying, one copy
    request per object plus one delete per 1000, and **no atomicity** — a reader or a crash in
    between sees both copies (never neither: all copies finish before any delete starts, so an
    interrupted rename loses nothing and can be repeated).  ``src`` is a file if an object with
    that exact name exists, else a directory (every object under ``src/`` moves to ``dst/``).
    Returns the number of objects moved; a missing source is :class:`NotFoundError`.
    """
    if not src.endswith("/") and store.head(src) is not None:
        store.copy(src, dst)
        store.delete(src)
        return 1
    if is_under(dst, src):
        raise StoreError(src, f"cannot rename a directory into itself ({dst})",
                         code="InvalidRequest", status=400)
    src_dir, dst_dir = dir_prefix(src), dir_prefix(dst)
    objects = list(list_all(store, src_dir))
    if not objects:
        raise NotFoundError(src, f"rename source missing (rename to {dst})")
    for obj in objects:
        store.copy(obj.url, dst_dir + obj.url[len(src_dir):])
    store.delete_many([obj.url for obj in objects])
    return len(objects)
