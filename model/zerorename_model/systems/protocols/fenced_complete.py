"""``zerorename.fenced.complete``: how the fenced job commit completes its uploads.

* ``overwrite`` (the default, the model's ``fenced`` as it always was): an unconditional
  CompleteMultipartUpload.  Whatever object is at the key is replaced.
* ``if-none-match``: the JVM ``fenced``'s rule (``CompleteUploadsStage``): every complete
  carries ``If-None-Match: *``, so a job commit never replaces an object it did not write.  A
  412 (or, as before, NoSuchUpload) is done when the key holds this upload's data (the
  recorded ETag: a repeated complete, a roll-forward).  Otherwise the object is someone
  else's: it is kept, the other uploads are still completed, and the job fails *after* its
  commit point (:class:`JobCommitIncomplete`, naming the keys).  Nothing is reverted and the
  upload stays pending: once the object is moved away, a new attempt of the job rolls forward
  and completes it.

``fenced+if-none-match`` and ``fenced+messages+if-none-match`` (the JVM ``fenced`` under
Spark's protocol) take ``if-none-match`` by default.  The matrix's scopes never put another
writer's object at a key a job completes; :mod:`zerorename_model.experiments.foreign_object`
adds the scenario that does (docs/research/fenced-complete-condition.md has what exploration
found).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from zerorename.store import Store
from zerorename_model.engine.errors import ModelStoreError
from zerorename_model.systems.protocols.common import CommitFailed, PendingCommit, commit_url

__all__ = ["COMPLETE", "COMPLETE_MODES", "IF_NONE_MATCH", "OVERWRITE", "JobCommitIncomplete",
           "complete_if_absent", "complete_mode", "complete_uploads"]

COMPLETE = "zerorename.fenced.complete"
OVERWRITE = "overwrite"
IF_NONE_MATCH = "if-none-match"
COMPLETE_MODES = (OVERWRITE, IF_NONE_MATCH)


class JobCommitIncomplete(CommitFailed):
    """The job passed its commit point, but an object it did not write holds one or more of
    its keys: those uploads are left pending, the object kept; the job is committed but
    incomplete until the object is moved and the job rerun (it rolls forward)."""


def complete_mode(options: dict[str, str], default: str, where: str) -> bool:
    """Whether ``options`` ask for ``if-none-match`` (else ``overwrite``); a value that is
    neither is refused, naming the option and the values."""
    mode = options.get(COMPLETE, default)
    if mode not in COMPLETE_MODES:
        raise CommitFailed(where, f"{COMPLETE}={mode!r}: use one of {', '.join(COMPLETE_MODES)}")
    return mode == IF_NONE_MATCH


def complete_uploads(uploads: Iterable[PendingCommit], record: str,
                     complete_one: Callable[[PendingCommit], str]) -> list[str]:
    """``if-none-match``: complete every upload (each with :func:`complete_if_absent` via
    ``complete_one``); the keys another writer's object holds are collected, and once every
    other upload is completed the job fails with :class:`JobCommitIncomplete` naming them.
    Any other failure stops at once, as the default loop does."""
    done: list[str] = []
    taken: list[str] = []
    for upload in uploads:
        try:
            done.append(complete_one(upload))
        except _KeyTaken as taken_key:
            taken.append(taken_key.path)
    if taken:
        raise JobCommitIncomplete(
            taken[0], f"the job is committed ({record}) but {len(taken)} key(s) hold an "
            f"object it did not write ({', '.join(sorted(taken))}): kept, their uploads left "
            "pending; move the object away and rerun the job (same job ID) to complete them")
    return done


def complete_if_absent(fs: Store, upload: PendingCommit, recognises_own: bool) -> str:
    """Complete one upload with ``If-None-Match: *``.  A 412 or NoSuchUpload is done when the
    object at the key is this upload's (its recorded ETag: each model file is one part);
    a 412 over anything else is another writer's object (:class:`_KeyTaken`)."""
    url = commit_url(upload)
    parts = [(number, etag) for number, etag in enumerate(upload["etags"], start=1)]
    try:
        fs.complete_multipart(url, upload["uploadId"], parts, if_none_match=True)
        return url
    except ModelStoreError as error:
        if error.code not in ("NoSuchUpload", "PreconditionFailed") or not recognises_own:
            raise
        refused = error.code == "PreconditionFailed"
    found = fs.head(url)
    if found is not None and found.etag == upload["etags"][0]:
        return url
    if refused:
        raise _KeyTaken(url, "If-None-Match: an object this job did not write is there")
    raise CommitFailed(url, "upload gone, and the object is not the recorded one")


class _KeyTaken(CommitFailed):
    """One complete refused: another writer's object holds the key."""
