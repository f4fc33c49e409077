"""Errors raised by model stores and the harness.

The model does not import the reference package (DESIGN: either side can change without the
other), so model stores raise :class:`ModelStoreError` carrying the same error codes S3 uses.
``property_tests/adapters.py`` translates them into ``zerorename`` errors when a reference
committer runs on a model store.
"""

from __future__ import annotations


class ModelStoreError(Exception):
    """A model store request failed with an S3-style ``code`` and HTTP ``status``."""

    def __init__(self, url: str, code: str, status: int, reason: str = "") -> None:
        super().__init__(f"{url}: {code} ({status}){': ' + reason if reason else ''}")
        self.url = url
        self.code = code
        self.status = status
        self.reason = reason or code


def not_found(url: str, code: str = "NoSuchKey") -> ModelStoreError:
    return ModelStoreError(url, code, 404)


def precondition_failed(url: str, reason: str) -> ModelStoreError:
    return ModelStoreError(url, "PreconditionFailed", 412, reason)


class ActorCrashed(BaseException):
    """Raised inside an actor at a store boundary when the harness crashes it.

    A ``BaseException`` so that protocol code's ``except Exception`` cannot swallow a crash.
    """


class RunAborted(BaseException):
    """Raised inside every live actor when the harness abandons a run (pruned or finished)."""


class JobAlreadyCommitted(Exception):
    """Raised by a committer's ``setup_job`` in a restarted job attempt when an earlier attempt
    of the job passed its commit point and this set-up finished publishing it (rolled
    forward): the job is committed, and its tasks must not run again."""
