"""Count what a botocore client sends: HTTP requests by operation, bytes uploaded, bytes the
server copies — and, on demand, add a fixed latency to every request.

Why at the client's event hooks: the side-by-side benchmark compares strategies written on
plain boto3, zerorename's committers (S3Store over a boto3 client) and s3fs (aiobotocore, in
another virtualenv); counting where botocore sends each request counts all of them the same
way, every retry included, whatever layer above decided to send it.  ``before-send`` fires
once per HTTP request (its event name ends with the operation), so that is what is counted.

Bytes copied server-side cannot be read off a CopyObject request (it names only its source),
so the counter remembers the size of every object written through the client (PutObject,
CompleteMultipartUpload of parts it uploaded, CopyObject of a known source) and adds the
source's size at each CopyObject / UploadPartCopy.  A copy whose source it never saw written
is counted in ``copies_of_unknown_size`` rather than guessed.

The injected latency (``delay_seconds``) sleeps in ``before-send``: the calling thread waits
as it would for a distant server, without holding the GIL.  It is for synchronous botocore
clients only (an asyncio client would block its event loop).

Needs only the standard library (and is handed botocore's event system), so the s3fs child
process, which runs with its own botocore, imports it too.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote

__all__ = ["WireCounter", "WireSnapshot"]

#: operations that make the server copy bytes it already holds
COPY_OPERATIONS = ("CopyObject", "UploadPartCopy")


@dataclass(frozen=True)
class WireSnapshot:
    """The counter at one moment; differences of two snapshots measure a phase."""

    requests: dict[str, int] = field(default_factory=dict)
    bytes_uploaded: int = 0
    bytes_copied: int = 0
    copies_of_unknown_size: int = 0

    @property
    def total(self) -> int:
        return sum(self.requests.values())

    def minus(self, earlier: WireSnapshot) -> WireSnapshot:
        return WireSnapshot(
            {op: n - earlier.requests.get(op, 0) for op, n in sorted(self.requests.items())
             if n - earlier.requests.get(op, 0)},
            self.bytes_uploaded - earlier.bytes_uploaded,
            self.bytes_copied - earlier.bytes_copied,
            self.copies_of_unknown_size - earlier.copies_of_unknown_size)

    def as_dict(self) -> dict[str, Any]:
        return {"requests": dict(self.requests), "total": self.total,
                "bytes_uploaded": self.bytes_uploaded, "bytes_copied": self.bytes_copied,
                "copies_of_unknown_size": self.copies_of_unknown_size}


def _body_size(body: Any) -> int:
    if body is None:
        return 0
    if isinstance(body, (bytes, bytearray, memoryview, str)):
        return len(body)
    try:  # a seekable stream: its size without moving it
        position = body.tell()
        end = int(body.seek(0, 2))
        body.seek(position)
        return end - int(position)
    except (AttributeError, OSError, ValueError):
        return 0


def _copy_source(source: Any) -> tuple[str, str] | None:
    """(bucket, key) of a CopySource given as a dict or as ``bucket/key`` (URL-encoded)."""
    if isinstance(source, dict):
        return str(source.get("Bucket")), str(source.get("Key"))
    if isinstance(source, str):
        bucket, _, key = unquote(source.split("?versionId=")[0]).lstrip("/").partition("/")
        return bucket, key
    return None


class WireCounter:
    """Counts requests and bytes of every client it is attached to (thread-safe)."""

    def __init__(self, delay_seconds: float = 0.0) -> None:
        self.delay_seconds = delay_seconds
        self._lock = threading.Lock()
        self._requests: Counter[str] = Counter()
        self._uploaded = 0
        self._copied = 0
        self._unknown_copies = 0
        self._sizes: dict[tuple[str, str], int] = {}
        self._parts: dict[str, dict[int, int]] = {}  # upload id -> part number -> size

    def attach(self, client: Any) -> Any:
        """Hook ``client`` (a botocore/boto3/aiobotocore S3 client); returns it."""
        events = client.meta.events
        events.register("before-send.s3", self._on_send)
        events.register("provide-client-params.s3", self._on_params)
        return client

    def snapshot(self) -> WireSnapshot:
        with self._lock:
            return WireSnapshot(dict(sorted(self._requests.items())), self._uploaded,
                                self._copied, self._unknown_copies)

    # -- hooks ----------------------------------------------------------------------------

    def _on_send(self, event_name: str = "", **_: Any) -> None:
        with self._lock:
            self._requests[event_name.rsplit(".", 1)[-1]] += 1
        if self.delay_seconds > 0:
            time.sleep(self.delay_seconds)

    def _on_params(self, params: dict[str, Any], model: Any = None, **_: Any) -> None:
        op = getattr(model, "name", "")
        bucket, key = str(params.get("Bucket", "")), str(params.get("Key", ""))
        with self._lock:
            if op == "PutObject":
                size = _body_size(params.get("Body"))
                self._uploaded += size
                self._sizes[(bucket, key)] = size
            elif op == "UploadPart":
                size = _body_size(params.get("Body"))
                self._uploaded += size
                self._parts.setdefault(str(params.get("UploadId")), {})[
                    int(params.get("PartNumber", 0))] = size
            elif op == "CompleteMultipartUpload":
                parts = self._parts.pop(str(params.get("UploadId")), {})
                listed = (params.get("MultipartUpload") or {}).get("Parts") or []
                numbers = [int(p.get("PartNumber", 0)) for p in listed] or list(parts)
                self._sizes[(bucket, key)] = sum(parts.get(n, 0) for n in numbers)
            elif op in COPY_OPERATIONS:
                source = _copy_source(params.get("CopySource"))
                known = self._sizes.get(source) if source is not None else None
                if known is None:
                    self._unknown_copies += 1
                else:
                    self._copied += known
                    if op == "CopyObject":
                        self._sizes[(bucket, key)] = known
