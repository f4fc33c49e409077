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

import enum
from collections.abc import Mapping
from http import HTTPStatus
from types import MappingProxyType

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
    AccessDeniedError,
    ClientSideError,
    CredentialsError,
    NotFoundError,
    PreconditionFailedError,
    StoreError,
    ThrottledError,
)

__all__ = [
    "CREDENTIALS_CODES",
    "IAM_ACTIONS",
    "IamAction",
    "KeysLeft",
    "iam_actions_of",
    "per_key_error",
    "translate_botocore_error",
    "translate_client_error",
]


class IamAction(enum.StrEnum):
    """The IAM actions the committers need (docs/user/operations.md, "Permissions")."""

    PUT_OBJECT = "s3:PutObject"
    GET_OBJECT = "s3:GetObject"
    LIST_BUCKET = "s3:ListBucket"
    DELETE_OBJECT = "s3:DeleteObject"
    ABORT_MULTIPART_UPLOAD = "s3:AbortMultipartUpload"
    LIST_BUCKET_MULTIPART_UPLOADS = "s3:ListBucketMultipartUploads"


#: The IAM actions each operation of the S3 store needs (AWS S3 API reference, "Permissions" of
#: each call), keyed by the operation's name as the store counts it: the one place an
#: AccessDenied is turned into the action to add to a policy.
IAM_ACTIONS: Mapping[str, tuple[IamAction, ...]] = MappingProxyType({
    "head": (IamAction.GET_OBJECT,),
    "get": (IamAction.GET_OBJECT,),
    "put": (IamAction.PUT_OBJECT,),
    "create_multipart": (IamAction.PUT_OBJECT,),
    "upload_part": (IamAction.PUT_OBJECT,),
    "complete_multipart": (IamAction.PUT_OBJECT,),
    "list_page": (IamAction.LIST_BUCKET,),
    "list_multipart_uploads": (IamAction.LIST_BUCKET_MULTIPART_UPLOADS,),
    "delete": (IamAction.DELETE_OBJECT,),
    "delete_many": (IamAction.DELETE_OBJECT,),
    "abort_multipart": (IamAction.ABORT_MULTIPART_UPLOAD,),
    "copy": (IamAction.GET_OBJECT, IamAction.PUT_OBJECT),
})

#: Error codes that say the credentials themselves were refused, whatever the request.
CREDENTIALS_CODES = frozenset({"InvalidAccessKeyId", "SignatureDoesNotMatch", "ExpiredToken",
                               "InvalidToken", "TokenRefreshRequired", "InvalidClientTokenId"})


def iam_actions_of(op: str) -> tuple[IamAction, ...]:
    """The IAM actions store operation ``op`` needs (empty for one this table does not know)."""
    return IAM_ACTIONS.get(op, ())


def _denied_reason(op: str, head: str, actions: tuple[IamAction, ...], bodiless: bool) -> str:
    names = " and ".join(actions)
    needs = (f"the role's policy does not allow {names} (IAM action needed by {op}); add it "
             "to the policy (docs/user/operations.md, \"Permissions\")" if actions
             else "the role's policy does not allow this request")
    if IamAction.GET_OBJECT in actions and op in ("head", "get"):
        needs += ("; S3 also answers 403 for a missing key when s3:ListBucket is not "
                  "allowed")
    if bodiless:
        return (f"{head} (a HEAD answer carries no error code): either the credentials are "
                f"wrong (unknown access key, wrong secret key, expired token), or {needs}")
    return f"{head}: {needs}"

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
    bodiless = not code or code == str(status)  # a HEAD's answer: the status alone
    if bodiless and status:
        code = code or str(status)
        try:
            said = HTTPStatus(status).phrase
        except ValueError:
            said = ""
        reason = f"{op} failed: {status}" + (f" {said}" if said else "")
    else:
        reason = f"{op} failed: {status} {code}" + (f" ({message})" if message else "")
    if code in CREDENTIALS_CODES:
        return CredentialsError(url, f"{reason}: the store did not accept the credentials "
                                "(access key, secret key or session token): check them",
                                code=code, status=status)
    if code == "AccessDenied" or (status == 403 and bodiless):
        actions = iam_actions_of(op)
        return AccessDeniedError(url, _denied_reason(op, reason, actions, bodiless),
                                 tuple(str(a) for a in actions), code=code)
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
    if code == "AccessDenied":
        actions = iam_actions_of("delete_many")
        return AccessDeniedError(url, _denied_reason("delete_many", reason, actions, False),
                                 tuple(str(a) for a in actions))
    return StoreError(url, reason, code=code, status=status)


class KeysLeft(StoreError):
    """A DeleteObjects answer listed transient per-key errors: the attempt failed for those
    keys only.  Transient like its first error, so the retry loop repeats the attempt."""

    def __init__(self, failures: dict[str, StoreError]) -> None:
        first_url, first = next(iter(failures.items()))
        super().__init__(first_url, f"{len(failures)} keys not deleted yet: {first.reason}",
                         code=first.code, status=first.status)
        self.failures = failures
