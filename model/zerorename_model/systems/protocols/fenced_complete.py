"""``zerorename.fenced.complete``: how the fenced job commit completes its uploads, and whether
it first checks that no other writer's object holds one of its keys.

* ``overwrite`` (the model's ``fenced`` until session 24: ``fenced+overwrite``): an
  unconditional CompleteMultipartUpload.  Whatever object is at the key is replaced.
* ``if-none-match`` (the JVM ``fenced``'s rule until session 24): every complete
  carries ``If-None-Match: *``, so a job commit never replaces an object it did not write.  A
  412 (or, as before, NoSuchUpload) is done when the key holds this upload's data (the
  recorded ETag: a repeated complete, a roll-forward).  Otherwise the object is someone
  else's: it is kept, the other uploads are still completed, and the job fails *after* its
  commit point (:class:`JobCommitIncomplete`, naming the keys).  Nothing is reverted and the
  upload stays pending: once the object is moved away, a new attempt of the job rolls forward
  and completes it.
* ``check-first`` (the default: the rule the Python and the JVM ``fenced`` follow): before its
  commit point (after the task records are loaded, before the commit record is PUT) the job
  commit lists the destination once and refuses
  (:class:`JobCommitRefused`, naming the keys) when a key it would complete holds an object
  that is not this job's upload's data.  Nothing is published, the commit record is not
  written, so the driver's abort cleans up, and a rerun after the object is moved commits.
  After the commit point it completes as ``if-none-match`` does: an object written between
  the check and the complete (a race no listing can close) is kept, and the job is left
  committed but incomplete.  A roll-forward (the commit record found) does not check: the
  keys may hold this job's own objects, and the complete recognises them.
* ``check-first-overwrite``: the same check, then unconditional completes (``overwrite``): an
  object written between the check and the complete is replaced.

``fenced`` and ``fenced+messages`` (the latter the JVM ``fenced`` under Spark's protocol) take
``check-first``; ``fenced+<rule>`` and ``fenced+messages+<rule>`` take ``<rule>`` by default
(:func:`with_rule`; ``fenced+check-first`` is ``fenced`` under the rule's name).  The matrix's
scopes never put another writer's object at a key a job completes;
:mod:`zerorename_model.experiments.foreign_object` adds the scenarios that do
(docs/research/fenced-complete-condition.md has what exploration found).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TypeVar, cast

from zerorename.store import Store
from zerorename_model.engine.errors import ModelStoreError
from zerorename_model.systems.protocols.common import (
    CommitFailed,
    PendingCommit,
    commit_url,
    complete_pending,
    list_files,
)

__all__ = ["CHECK_FIRST", "CHECK_FIRST_OVERWRITE", "COMPLETE", "COMPLETE_MODES", "DEFAULT",
           "IF_NONE_MATCH", "OVERWRITE", "VARIANT_RULES", "CompleteRule", "JobCommitIncomplete",
           "JobCommitRefused", "complete_if_absent", "complete_one", "complete_rule",
           "complete_uploads", "with_rule"]

COMPLETE = "zerorename.fenced.complete"
OVERWRITE = "overwrite"
IF_NONE_MATCH = "if-none-match"
CHECK_FIRST = "check-first"
CHECK_FIRST_OVERWRITE = "check-first-overwrite"
COMPLETE_MODES = (OVERWRITE, IF_NONE_MATCH, CHECK_FIRST, CHECK_FIRST_OVERWRITE)
#: the rule of ``fenced`` and ``fenced+messages`` when the options do not say: the one both
#: implementations follow
DEFAULT = CHECK_FIRST
#: the rules a registered variant (``fenced+<rule>``, ``fenced+messages+<rule>``) takes
VARIANT_RULES = COMPLETE_MODES


class JobCommitIncomplete(CommitFailed):
    """The job passed its commit point, but an object it did not write holds one or more of
    its keys: those uploads are left pending, the object kept; the job is committed but
    incomplete until the object is moved and the job rerun (it rolls forward)."""


class JobCommitRefused(CommitFailed):
    """Before its commit point, the job commit found an object it did not write at one or
    more of its keys: nothing is committed or published; the job fails (its abort cleans up)
    and a rerun commits once the object is moved."""


@dataclass(frozen=True)
class CompleteRule:
    """What one value of ``zerorename.fenced.complete`` does."""

    mode: str
    #: list the destination before the commit point and refuse a key held by another writer
    checks_first: bool
    #: every complete carries ``If-None-Match: *``
    if_none_match: bool

    def check(self, fs: Store, dest: str, uploads: Sequence[PendingCommit]) -> None:
        """With ``checks_first``: one listing of ``dest``; any key of ``uploads`` holding an
        object whose ETag is not its upload's (each model file is one part, so a completed
        upload's object has the part's ETag) refuses the job commit, before its commit
        point (:class:`JobCommitRefused`, naming the keys)."""
        if not self.checks_first or not uploads:
            return
        listed = {o.url: o.etag for o in list_files(fs, dest)}
        held = sorted(url for url, etag in ((commit_url(u), u["etags"][0]) for u in uploads)
                      if url in listed and listed[url] != etag)
        if held:
            raise JobCommitRefused(
                held[0], f"{len(held)} key(s) the job would complete hold an object it did "
                f"not write ({', '.join(held)}): nothing is committed (the check precedes the "
                "commit point); move the object away, or write elsewhere, and rerun the job")

    def complete_all(self, uploads: Sequence[PendingCommit], record: str,
                     complete: Callable[[PendingCommit], str]) -> list[str]:
        """Complete ``uploads`` with ``complete`` (one upload): with ``if_none_match``, as
        :func:`complete_uploads`; otherwise in order, the first failure stopping the job."""
        if self.if_none_match:
            return complete_uploads(uploads, record, complete)
        return [complete(u) for u in uploads]


_RULES = {OVERWRITE: CompleteRule(OVERWRITE, False, False),
          IF_NONE_MATCH: CompleteRule(IF_NONE_MATCH, False, True),
          CHECK_FIRST: CompleteRule(CHECK_FIRST, True, True),
          CHECK_FIRST_OVERWRITE: CompleteRule(CHECK_FIRST_OVERWRITE, True, False)}


def complete_rule(options: dict[str, str], default: str, where: str) -> CompleteRule:
    """The rule ``options`` ask for (``default`` when they do not say); a value that is none
    of :data:`COMPLETE_MODES` is refused, naming the option and the values."""
    mode = options.get(COMPLETE, default)
    if mode not in _RULES:
        raise CommitFailed(where, f"{COMPLETE}={mode!r}: use one of {', '.join(COMPLETE_MODES)}")
    return _RULES[mode]


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


def complete_one(fs: Store, upload: PendingCommit, recognises_own: bool,
                 if_none_match: bool) -> str:
    """Complete one upload: with ``if_none_match``, :func:`complete_if_absent`; otherwise
    unconditionally, an upload already completed (NoSuchUpload) being done if its object has
    the recorded ETag (each file is one part, so the object's ETag is that part's)."""
    if if_none_match:
        return complete_if_absent(fs, upload, recognises_own)
    url = commit_url(upload)
    try:
        complete_pending(fs, upload)
        return url
    except ModelStoreError as error:
        if error.code != "NoSuchUpload" or not recognises_own:
            raise
    found = fs.head(url)
    if found is None or found.etag != upload["etags"][0]:
        raise CommitFailed(url, "upload gone, and the object is not the recorded one")
    return url


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


C = TypeVar("C", bound=type)


def with_rule(base: C, rule: str) -> C:
    """A subclass of the committer class ``base`` whose ``zerorename.fenced.complete`` is
    ``rule`` when the options do not say (its ``complete_default``)."""
    doc = f"{base.__name__} with ``{COMPLETE}={rule}`` by default."
    return cast(C, type(f"{base.__name__}[{rule}]", (base,),
                        {"complete_default": rule, "__doc__": doc,
                         "__module__": base.__module__}))
