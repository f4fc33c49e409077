"""Errors raised by zerorename committers and stores.

Every failure a user can meet is a :class:`CommitError` subclass whose message names the path
involved and the reason, so that a failed pipeline says *what* to look at, not just *that* it
failed.  Store failures keep the store's own error code (``NoSuchKey``, ``PreconditionFailed``,
``SlowDown``…) in :attr:`StoreError.code` so retry and conflict logic can branch on it without
parsing messages.
"""

from __future__ import annotations


class CommitError(Exception):
    """Base class: a commit, abort or store operation failed for a named path."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason


class StoreError(CommitError):
    """A store request failed; ``code`` is the store's error code, ``status`` the HTTP status."""

    def __init__(self, path: str, reason: str, code: str = "", status: int = 0) -> None:
        super().__init__(path, reason)
        self.code = code
        self.status = status

    @property
    def retryable(self) -> bool:
        """Throttling and server errors may succeed when repeated; client errors will not."""
        return self.status in (500, 502, 503, 504) or self.code in _RETRYABLE_CODES


_RETRYABLE_CODES = frozenset(
    {"SlowDown", "Throttling", "ThrottlingException", "RequestTimeout", "InternalError",
     "ServiceUnavailable", "503", "500"}
)


class AccessDeniedError(StoreError):
    """The store refused a request for want of permission (403 AccessDenied): the
    credentials are valid, the policy does not allow this call.  ``actions`` are the IAM
    actions the call needs (``s3:ListBucketMultipartUploads``…), named in the message; add
    them to the role's policy (docs/user/operations.md, "Permissions")."""

    def __init__(self, path: str, reason: str, actions: tuple[str, ...] = (),
                 code: str = "AccessDenied") -> None:
        super().__init__(path, reason, code=code, status=403)
        self.actions = actions


class CredentialsError(StoreError):
    """The store did not accept the credentials at all: an unknown access key
    (InvalidAccessKeyId), a wrong secret key (SignatureDoesNotMatch), an expired or invalid
    session token.  Every request fails the same way; fix the client's credentials."""

    def __init__(self, path: str, reason: str, code: str = "InvalidAccessKeyId",
                 status: int = 403) -> None:
        super().__init__(path, reason, code=code, status=status)


class NotFoundError(StoreError):
    """The object, upload or directory does not exist (404)."""

    def __init__(self, path: str, reason: str = "not found", code: str = "NoSuchKey") -> None:
        super().__init__(path, reason, code=code, status=404)


class PreconditionFailedError(StoreError):
    """A conditional write lost: the key exists (If-None-Match) or changed (If-Match) (412)."""

    def __init__(self, path: str, reason: str = "precondition failed") -> None:
        super().__init__(path, reason, code="PreconditionFailed", status=412)


class ThrottledError(StoreError):
    """The store asked us to slow down (503 SlowDown); retried with backoff before surfacing."""

    def __init__(self, path: str, reason: str = "throttled (503 SlowDown)") -> None:
        super().__init__(path, reason, code="SlowDown", status=503)


class UnsupportedOperationError(StoreError):
    """The store cannot do this at all (rename on S3, conditional writes on an old endpoint)."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(path, reason, code="NotImplemented", status=501)


class ClientSideError(StoreError):
    """The store's client refused to send the request at all: a parameter it rejects (a bucket
    name S3 cannot have, a malformed argument), no credentials, no region.  Never retried —
    the same request would be refused again — and ``code`` is the client's exception name
    (e.g. ``ParamValidationError``), ``status`` 0 (no HTTP exchange took place)."""

    def __init__(self, path: str, reason: str, code: str = "ClientSideError") -> None:
        super().__init__(path, reason, code=code, status=0)


class BadURLError(CommitError):
    """A URL could not be parsed, or names a scheme/bucket this store does not serve."""


class DestinationEscapeError(CommitError):
    """A manifest entry or written path resolves outside the job's destination directory."""


class KeyTooLongError(BadURLError):
    """A path would make a key longer than a store can hold (S3: 1,024 bytes of UTF-8);
    raised before anything is written for it."""


class FormatError(CommitError):
    """A persisted file (.pending, .pendingset, manifest, _SUCCESS, message) is corrupt,
    truncated, of an unknown version, or written by another job."""


class ConflictError(CommitError):
    """Output already exists and the conflict mode is ``fail`` (or save mode ``error``)."""


class DuplicateDestinationError(CommitError):
    """Two files in one commit target the same destination key."""


class JobFailedError(CommitError):
    """A job commit could not complete; what it owned has been aborted."""


class CallOrderError(CommitError):
    """A committer method was called where its protocol does not allow it: ``open`` or
    ``commit_task`` before ``setup_task``, ``commit_job`` of a job never set up, a second
    commit, a call after an abort.  Raised before any request: nothing was changed."""


class OptionValueError(CommitError):
    """An option's value is outside what the store or committer can use (a multipart part
    size below the store's minimum); ``path`` is the option's name, the message its value."""
