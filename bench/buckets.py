"""One server's counted client and the bucket each side-by-side run gets on it: created with
the store's capability probe done, checked after the job, then emptied — or, on a throw-away
RGW, kept (see :data:`RGW_KEEP_BYTES`).  Nothing here is counted by a phase."""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from quiet import QuietPolicy
from servers import S3Endpoint
from wire import WireCounter

import zerorename as zr

#: the data a throw-away RGW keeps instead of emptying each run's bucket (its memstore OSD holds
#: 4 GiB, scripts/rgw-start.sh).  Emptying made the server itself drift: on 2026-11-25 the
#: emptying of three successive 10,000-file buckets took 6.9, 9.8 and 14.1 s (in the
#: invocation of 02:30 the time between RGW runs grew from 2.5 to 3.5 minutes), and a
#: ``ceph-osd`` busy after it is what the quiet wait was added for.  Kept buckets go with the
#: server when it stops; moto, which holds its objects in its own heap, is always emptied.
RGW_KEEP_BYTES = 3 * 2**30


class Server:
    """One server's counted client and store, shared by every run on it."""

    def __init__(self, endpoint: S3Endpoint, max_threads: int, slots: int,
                 pids: Callable[[], list[int]] = list,
                 quiet: QuietPolicy | None = None, keep_bytes: int = 0) -> None:
        self.endpoint = endpoint
        self.keep_bytes = keep_bytes  # see bucket()
        self.pids = pids  # the server's processes, waited for before each run (``quiet``)
        self.quiet = quiet
        self.counter = WireCounter()
        # every task's copies or uploads may run on T threads at once: no client-side queue
        pool = min(256, max(32, slots * max_threads))
        self.client = self.counter.attach(zr.make_s3_client(
            endpoint.url, access_key=endpoint.access_key, secret_key=endpoint.secret_key,
            max_pool_connections=pool))
        self.store = zr.S3Store(self.client, name=endpoint.name)
        self._probed = False

    @contextlib.contextmanager
    def bucket(self, data_bytes: int = 0) -> Iterator[str]:
        """A fresh bucket (its capability probe done, uncounted by any phase), emptied and
        removed afterwards — unless its ``data_bytes`` still fit in ``keep_bytes``: a
        throw-away RGW keeps its buckets (:data:`RGW_KEEP_BYTES`)."""
        name = f"zr-side-{uuid.uuid4().hex[:10]}"
        self.client.create_bucket(Bucket=name)
        if not self._probed:
            self.store.capabilities(f"s3://{name}/probe")
            self._probed = True
        try:
            yield name
        finally:
            if 0 < data_bytes <= self.keep_bytes:
                self.keep_bytes -= data_bytes
            else:
                empty_bucket(self.client, name)


def empty_bucket(client: Any, bucket: str, threads: int = 8) -> None:
    """Abort, delete and remove, uncounted.  The pages of keys are deleted ``threads`` at a
    time: one after another, emptying an RGW bucket of 10,000 objects took longer than the run
    that filled it (the invocation of 2026-11-25 02:30 spent 2,551 of its 4,810 s on RGW
    outside the runs)."""
    for upload in client.list_multipart_uploads(Bucket=bucket).get("Uploads", ()):
        client.abort_multipart_upload(Bucket=bucket, Key=upload["Key"],
                                      UploadId=upload["UploadId"])
    keys = [o["Key"] for page in client.get_paginator("list_objects_v2").paginate(Bucket=bucket)
            for o in page.get("Contents", ())]

    def delete(start: int) -> None:
        client.delete_objects(Bucket=bucket, Delete={
            "Objects": [{"Key": k} for k in keys[start:start + 1000]], "Quiet": True})

    with ThreadPoolExecutor(threads) as pool:
        list(pool.map(delete, range(0, len(keys), 1000)))
    client.delete_bucket(Bucket=bucket)


def check_output(client: Any, bucket: str, prefix: str, files: int) -> dict[str, int]:
    """What a reader sees after the job (not counted: read after the phases)."""
    visible = hidden = success = 0
    for page in client.get_paginator("list_objects_v2").paginate(Bucket=bucket,
                                                                 Prefix=prefix + "/"):
        for obj in page.get("Contents", ()):
            rel = obj["Key"][len(prefix) + 1:]
            if rel == "_SUCCESS":
                success += 1
            elif any(p.startswith(("_", ".")) for p in rel.split("/")):
                hidden += 1
            else:
                visible += 1
    uploads = len(client.list_multipart_uploads(Bucket=bucket).get("Uploads", ()))
    if visible != files or not success:
        raise RuntimeError(f"s3://{bucket}/{prefix}: {visible} files visible (expected {files}),"
                           f" _SUCCESS {'present' if success else 'missing'}")
    return {"visible_files": visible, "leftover_hidden_objects": hidden,
            "leftover_uploads": uploads}
