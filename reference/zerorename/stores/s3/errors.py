"""S3's answers as :mod:`zerorename.errors` classes: what the retry loop and the committers
decide on.

Every error names the URL it concerns.  404 → ``NotFoundError``, 412 →
``PreconditionFailedError``, 503 → ``ThrottledError``, the rest ``StoreError`` with the
server's code and status; a botocore error around the HTTP exchange is transient (a dropped or
damaged response) or a :class:`ClientSideError` (refused before sending: never retried).  Apart
from the store so that the capability probe, which handles botocore's exceptions itself, judges
them by the same rules.
"""

from __future__ import annotations

from botocore.exceptions import (
    BotoCoreError,
    ChecksumError,
    ClientError,
    FlexibleChecksumError,
    HTTPClientError,
    IncompleteReadError,
)
from botocore.exceptions import ConnectionError as BotoConnectionError

from zerorename.errors import (
    ClientSideError,
    NotFoundError,
    PreconditionFailedError,
    StoreError,
    ThrottledError,
)

__all__ = ["KeysLeft", "per_key_error", "translate_botocore_error", "translate_client_error"]

_NOT_FOUND_CODES = frozenset({"NoSuchKey", "NoSuchUpload", "NoSuchBucket", "NotFound", "404"})
_THROTTLE_CODES = frozenset({"SlowDown", "Throttling", "ThrottlingException", "503",
                             "ServiceUnavailable", "RequestLimitExceeded"})
_KNOWN_STATUS = {"AccessDenied": 403, "InternalError": 500, "SlowDown": 503,
                 "ServiceUnavailable": 503, "NoSuchKey": 404, "NoSuchBucket": 404}


def translate_client_error(exc: ClientError, url: str, op: str) -> StoreError:
    """A botocore ClientError as the matching :mod:`zerorename.errors` class, naming ``url``."""
    err = exc.response.get("Error", {})
    code = str(err.get("Code", "") or "")
    message = str(err.get("Message", "") or "")
    meta = exc.response.get("ResponseMetadata", {})
    status = int(meta.get("HTTPStatusCode", 0) or 0) or _KNOWN_STATUS.get(code, 0)
    reason = f"{op} failed: {status} {code}" + (f" ({message})" if message else "")
    if status == 404 or code in _NOT_FOUND_CODES:
        return NotFoundError(url, reason, code=code or "NoSuchKey")
    if status == 412 or code == "PreconditionFailed":
        return PreconditionFailedError(url, reason)
    if status == 503 or code in _THROTTLE_CODES:
        return ThrottledError(url, reason)
    return StoreError(url, reason, code=code, status=status)


#: botocore errors raised while a response was being read: the request was sent, the answer
#: arrived damaged or incomplete — transient, as a dropped connection is.
_TRANSIENT_BOTOCORE = (BotoConnectionError, HTTPClientError, IncompleteReadError, ChecksumError,
                       FlexibleChecksumError)


def translate_botocore_error(exc: BotoCoreError, url: str, op: str) -> StoreError:
    """A botocore error raised *before* or *around* the HTTP exchange (not a ClientError) as a
    :mod:`zerorename.errors` class naming ``url``: connection and damaged-response failures
    are transient (code ``ConnectionError``, retried); anything else — parameter validation
    such as an invalid bucket name, missing credentials or region — is a
    :class:`ClientSideError` (never retried) whose reason is botocore's own message."""
    if isinstance(exc, _TRANSIENT_BOTOCORE):
        return StoreError(url, f"{op} failed: {type(exc).__name__}: {exc}",
                          code="ConnectionError")
    detail = " ".join(str(exc).split())  # botocore's messages span lines
    return ClientSideError(url, f"{op} refused by the S3 client before sending: {detail}",
                           code=type(exc).__name__)


def per_key_error(url: str, code: str, message: str) -> StoreError:
    """An entry of DeleteObjects' ``Errors`` (no HTTP status of its own) as a StoreError."""
    status = _KNOWN_STATUS.get(code, 0)
    reason = f"delete failed: {code}" + (f" ({message})" if message else "")
    if code in _THROTTLE_CODES:
        return ThrottledError(url, reason)
    return StoreError(url, reason, code=code, status=status)


class KeysLeft(StoreError):
    """A DeleteObjects answer listed transient per-key errors: the attempt failed for those
    keys only.  Transient like its first error, so the retry loop repeats the attempt."""

    def __init__(self, failures: dict[str, StoreError]) -> None:
        first_url, first = next(iter(failures.items()))
        super().__init__(first_url, f"{len(failures)} keys not deleted yet: {first.reason}",
                         code=first.code, status=first.status)
        self.failures = failures
