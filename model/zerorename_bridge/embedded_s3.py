"""An embedded S3 (moto's ThreadedMotoServer on 127.0.0.1) that counts what it is asked.

Why count at the server: in a Spark job requests come from many processes (the writer-planning
worker, every task's Python worker, the commit worker), and the Data Source API returns nothing
from the commit worker to the caller.  The server sees every request from every process, so its
per-operation counts are the honest cost of a committer, and they are in S3's vocabulary
(``PutObject``, ``UploadPart``, ``CopyObject``…).  For ``CopyObject``/``UploadPartCopy`` the
server also adds up the bytes copied (looked up in moto's in-memory backend, which lives in this
process), because server-side copy is exactly the cost a rename-free committer avoids.

It needs moto, so it lives in the research distribution (a dependency there, never of
zerorename): for the demo, tests and benchmarks only.
Multiple processes can use the server (state lives in this process); ``moto-api`` requests
are not counted.

**Our test server's conditional writes are atomic; stock moto's are not.**  moto checks
If-None-Match / If-Match and then writes, in two Python steps, so two racing conditional
writers can both win (measured: ``docs/user/stores.md``), and ``fenced`` refuses such a store by
default.  :func:`make_conditional_writes_atomic` (called by :meth:`EmbeddedS3.start`, and by the
test suite for every moto it runs) holds a lock, one per key, around moto's handling of every
PutObject and CompleteMultipartUpload that carries a condition, which makes the check and the
write one step for racing conditional writers of a key, as AWS documents them, while writes of
other keys go on.  It is a property of our test server, not of moto: the conformance table
measures stock moto, in a process that never calls it.
"""

from __future__ import annotations

import functools
import logging
import os
import threading
from collections import Counter
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, unquote

if TYPE_CHECKING:  # the WSGI types are typeshed's; moto and boto3 load when a server starts
    from _typeshed.wsgi import StartResponse, WSGIApplication, WSGIEnvironment
    from moto.server import ThreadedMotoServer
    from mypy_boto3_s3 import S3Client

__all__ = ["EmbeddedS3", "classify", "conditional_writes_atomic", "key_lock",
           "make_conditional_writes_atomic"]

#: moto's module-level minimum for non-final parts (read from the environment at import).
_MIN_PART = "S3_UPLOAD_PART_MIN_SIZE"


def classify(method: str, path: str, query: str, copy_source: str | None) -> str | None:
    """The S3 API operation of a path-style request, or ``None`` for moto's own API."""
    if path.startswith("/moto-api"):
        return None
    params = parse_qs(query, keep_blank_values=True)
    is_object = "/" in path.strip("/")
    if method == "GET":
        if not is_object:
            if "uploads" in params:
                return "ListMultipartUploads"
            return "ListObjectsV2" if params.get("list-type") == ["2"] else "ListObjects"
        return "ListParts" if "uploadId" in params else "GetObject"
    if method == "HEAD":
        return "HeadObject" if is_object else "HeadBucket"
    if method == "PUT":
        if not is_object:
            return "CreateBucket"
        if "partNumber" in params:
            return "UploadPartCopy" if copy_source else "UploadPart"
        return "CopyObject" if copy_source else "PutObject"
    if method == "POST":
        if "delete" in params:
            return "DeleteObjects"
        if "uploads" in params:
            return "CreateMultipartUpload"
        return "CompleteMultipartUpload" if "uploadId" in params else "PostObject"
    if method == "DELETE":
        if not is_object:
            return "DeleteBucket"
        return "AbortMultipartUpload" if "uploadId" in params else "DeleteObject"
    return method


#: A lock per (bucket, key) for the conditional writes moto handles in this process (all its
#: servers and ``mock_aws``): racers on one key take turns, writes of other keys go on (as on
#: S3, where a job's conditional completes of its files run side by side; one lock for all
#: made them take turns on our server, a multipart complete of a large file at a time).
_KEY_LOCKS: dict[tuple[str, str], threading.Lock] = {}
_KEY_LOCKS_GUARD = threading.Lock()
#: For a request whose bucket and key cannot be told: every such write takes turns.
_CONDITIONAL_LOCK = threading.Lock()
#: moto's S3 handlers that check a condition and then write (moto 5.2: PutObject, and the POST
#: on a key that completes a multipart upload).
_CONDITIONAL_HANDLERS = ("put_object", "_key_response_post")
_ATOMIC_MARK = "__zerorename_atomic_conditions__"


def _conditional(headers: Any) -> bool:
    return headers is not None and (headers.get("If-None-Match") is not None
                                    or headers.get("If-Match") is not None)


def key_lock(bucket: str, key: str) -> threading.Lock:
    """The lock conditional writes of ``key`` in ``bucket`` hold while moto checks and writes."""
    with _KEY_LOCKS_GUARD:
        return _KEY_LOCKS.setdefault((bucket, key), threading.Lock())


def _target(handler_name: str, response: Any, args: tuple[Any, ...],
            kwargs: dict[str, Any]) -> threading.Lock:
    """The lock of the object ``handler_name`` writes: ``put_object(self)`` reads it from the
    request, ``_key_response_post(self, request, body, bucket_name, query, key_name)`` is
    given it."""
    try:
        if handler_name == "put_object":
            return key_lock(str(response.bucket_name), str(response.parse_key_name()))
        bucket = kwargs["bucket_name"] if "bucket_name" in kwargs else args[2]
        key = kwargs["key_name"] if "key_name" in kwargs else args[4]
        return key_lock(str(bucket), str(key))
    except (AttributeError, IndexError, KeyError, TypeError):  # another moto's signature
        return _CONDITIONAL_LOCK


def _atomic(handler: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(handler)
    def locked(self: Any, *args: Any, **kwargs: Any) -> Any:
        if _conditional(getattr(self, "headers", None)):
            with _target(handler.__name__, self, args, kwargs):
                return handler(self, *args, **kwargs)
        return handler(self, *args, **kwargs)

    setattr(locked, _ATOMIC_MARK, True)
    return locked


def make_conditional_writes_atomic() -> None:
    """Make moto's conditional PutObject and CompleteMultipartUpload atomic in this process
    (idempotent; see the module docstring for why, and why only our test server)."""
    from moto.s3.responses import S3Response

    for name in _CONDITIONAL_HANDLERS:
        handler = getattr(S3Response, name)
        if not getattr(handler, _ATOMIC_MARK, False):
            setattr(S3Response, name, _atomic(handler))


def conditional_writes_atomic() -> bool:
    """Whether :func:`make_conditional_writes_atomic` is in effect in this process."""
    from moto.s3.responses import S3Response

    return all(getattr(getattr(S3Response, n), _ATOMIC_MARK, False)
               for n in _CONDITIONAL_HANDLERS)


class EmbeddedS3:
    """Start/stop a moto server on ``127.0.0.1`` (port 0 = any free port) that counts requests.

    ``part_min_size`` lowers moto's 5 MiB minimum for non-final multipart parts, so tests can
    exercise multi-part uploads with small data; it is applied to the in-process moto module and
    restored on :meth:`stop` (it is process-global state).  Its conditional writes are made
    atomic (:func:`make_conditional_writes_atomic`), for as long as the process lives.
    """

    def __init__(self, port: int = 0, *, part_min_size: int | None = None) -> None:
        self.port = port
        self.part_min_size = part_min_size
        self._counts: Counter[str] = Counter()
        self._copied_bytes = 0
        self._lock = threading.Lock()
        self._server: ThreadedMotoServer | None = None
        self._saved_min: int | None = None
        self.endpoint = ""

    # -- lifecycle ----------------------------------------------------------------------

    def start(self) -> EmbeddedS3:
        for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
            os.environ.setdefault(name, "testing")  # moto accepts any; boto3 needs some
        os.environ.setdefault("AWS_DEFAULT_REGION", "us-east-1")
        from moto.s3 import models as s3_models
        from moto.server import ThreadedMotoServer

        if self.part_min_size is not None:  # moto binds it at import: patch the module
            self._saved_min = int(getattr(s3_models, _MIN_PART))
            setattr(s3_models, _MIN_PART, self.part_min_size)
        logging.getLogger("werkzeug").setLevel(logging.ERROR)
        make_conditional_writes_atomic()
        server = self._server = ThreadedMotoServer(ip_address="127.0.0.1", port=self.port,
                                                   verbose=False)
        server.start()
        wsgi = server._server  # werkzeug server: wrap its app to count requests
        assert wsgi is not None  # start() made it
        wsgi.app = self._middleware(wsgi.app)
        host, port = server.get_host_and_port()
        self.endpoint = f"http://{host}:{port}"
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.stop()
            self._server = None
        if self._saved_min is not None:
            from moto.s3 import models as s3_models

            setattr(s3_models, _MIN_PART, self._saved_min)
            self._saved_min = None

    def __enter__(self) -> EmbeddedS3:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- clients ------------------------------------------------------------------------

    def client(self) -> S3Client:
        """A boto3 client configured as zerorename's stores expect (path style, no retries)."""
        from zerorename.stores import make_s3_client

        return make_s3_client(endpoint_url=self.endpoint, region="us-east-1")

    def create_bucket(self, name: str) -> str:
        self.client().create_bucket(Bucket=name)
        return name

    # -- counting -----------------------------------------------------------------------

    def counts(self) -> dict[str, int]:
        """Requests received so far, by S3 operation."""
        with self._lock:
            return dict(self._counts)

    @property
    def copied_bytes(self) -> int:
        """Bytes copied server-side (CopyObject and UploadPartCopy) so far."""
        with self._lock:
            return self._copied_bytes

    def snapshot(self) -> tuple[dict[str, int], int]:
        with self._lock:
            return dict(self._counts), self._copied_bytes

    def _middleware(self, app: WSGIApplication) -> WSGIApplication:
        def counting_app(environ: WSGIEnvironment, start_response: StartResponse
                         ) -> Iterable[bytes]:
            copy_source = environ.get("HTTP_X_AMZ_COPY_SOURCE")
            op = classify(environ.get("REQUEST_METHOD", ""), environ.get("PATH_INFO", ""),
                          environ.get("QUERY_STRING", ""), copy_source)
            if op is not None:
                copied = self._copy_size(copy_source, environ.get("HTTP_X_AMZ_COPY_SOURCE_RANGE"))
                with self._lock:
                    self._counts[op] += 1
                    self._copied_bytes += copied
            return app(environ, start_response)

        return counting_app

    @staticmethod
    def _copy_size(copy_source: str | None, byte_range: str | None) -> int:
        """Size of a copy's source (the range, for UploadPartCopy), from moto's backend."""
        if not copy_source:
            return 0
        if byte_range and byte_range.startswith("bytes="):
            start, _, end = byte_range[len("bytes="):].partition("-")
            return int(end) - int(start) + 1
        source = unquote(copy_source.split("?", 1)[0]).lstrip("/")
        bucket, _, key = source.partition("/")
        try:
            from moto.core import models as core_models
            from moto.s3.models import s3_backends

            account = str(core_models.DEFAULT_ACCOUNT_ID)
            obj = s3_backends[account]["aws"].get_object(bucket, key)
            return int(obj.size) if obj is not None else 0
        except Exception:  # a missing source fails the copy itself; count nothing
            return 0
