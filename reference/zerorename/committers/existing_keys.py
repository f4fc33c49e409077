"""The fenced job commit's check of its keys, before the commit point.

A key the job would complete may already hold an object another writer put there (another
tool, another job writing the same names).  Completing over it would destroy it, and
completing with ``If-None-Match: *`` alone would meet it only after the commit point, leaving
a job that is committed yet cannot finish.  So the job commit looks first: after loading the
task records and before saving its commit record, it finds which of its keys hold an object.
A key holding an object that is not this job's upload (:func:`holds`: another size, another
part count, another multipart ETag, or, on a store whose completed uploads always carry S3's
multipart ETag, an ETag without one: a single PUT's) refuses the job commit with
:class:`~zerorename.committers.fenced_records.JobCommitRefusedError`: nothing is committed,
the failed commit aborts the job's uploads and the object stays as it was.  A key holding the
upload's own data passes (the complete recognises it).

Which keys exist is found as the JVM committer's ``ExistingKeys`` finds it: one ListObjectsV2
without a delimiter under the longest common prefix of the keys, a page (1,000 keys) at a
time, ending at the first page that passes the greatest key.  Another page is listed only
while the pages listed so far are fewer than the keys they covered, so the listing plus a HEAD
for each key it did not reach costs at most one request more than a HEAD per key; the HEADs
run in parallel on the job's pool.  The store protocol's listing has no start-after, so the
listing starts at the prefix itself: objects sorting under the prefix before the first key
are listed too, and a destination holding thousands of them is checked with HEADs instead.

A look is not a lock: an object created between the check and the complete is met by the
complete's ``If-None-Match: *`` (the job then ends committed but incomplete, naming the key).
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from zerorename import statistics as S
from zerorename.committers.fenced_records import (
    JobCommitRefusedError,
    RecordedUpload,
    expected_multipart_etag,
)
from zerorename.executor import BoundedExecutor
from zerorename.stats import IOStatistics
from zerorename.store import ObjectInfo, Store

__all__ = ["ExistingKeys", "check_keys", "common_prefix", "complete_honours_condition",
           "find_existing", "gives_multipart_etags", "holds", "object_holds"]

LOG = logging.getLogger(__name__)


@dataclass(frozen=True)
class ExistingKeys:
    """What the check found: the objects at the job's keys, and through which key the
    listing was complete (``None``: every key was checked with a HEAD, or there were none)."""

    found: dict[str, ObjectInfo] = field(default_factory=dict)
    through: str | None = None

    def covers(self, url: str) -> bool:
        """Whether the listing answered for ``url`` (one of the job's keys)."""
        return self.through is not None and url <= self.through

    def absent(self, url: str) -> bool:
        """Whether the listing answered that no object is at ``url``."""
        return self.covers(url) and url not in self.found


def holds(info: ObjectInfo, upload: RecordedUpload, *, multipart_etags: bool) -> bool:
    """Does ``info`` hold ``upload``'s data?  :func:`object_holds` of its size and part ETags."""
    return object_holds(info, upload.size, upload.etags, multipart_etags=multipart_etags)


def object_holds(info: ObjectInfo, size: int, etags: Sequence[str], *,
                 multipart_etags: bool) -> bool:
    """Does ``info`` hold the data of an upload of ``size`` bytes whose parts have ``etags``?
    Its size, and its ETag where that tells:

    * an ETag ``…-N`` (a completed upload's) must name the upload's part count, and be the
      ETag its parts make when that is computable (not with SSE-KMS: part ETags are not MD5s);
    * an ETag without ``-N`` is another writer's single PUT where the store's completed
      uploads always carry S3's multipart ETag (``multipart_etags``,
      :attr:`~zerorename.store.StoreCapabilities.multipart_etags`); elsewhere (LocalStore,
      the model's stores) the size decides.

    The stream sink's logged uploads are judged by the same rule (``table_log``).
    """
    if info.size != size:
        return False
    etag = info.etag.strip('"')
    parts = _part_count(etag)
    if parts is None:
        return not multipart_etags
    if parts != len(etags):
        return False
    expected = expected_multipart_etag(etags)
    return expected is None or etag == expected


def _part_count(etag: str) -> int | None:
    """The N of a multipart ETag ``…-N``, or None when ``etag`` is not one."""
    head, dash, tail = etag.rpartition("-")
    return int(tail) if dash and head and tail.isdigit() else None


def gives_multipart_etags(store: Store, url: str) -> bool:
    """Whether ``store``'s completed uploads at ``url`` always carry S3's multipart ETag
    (:func:`holds`), asked as :func:`complete_honours_condition` asks: a store measuring its
    endpoint is asked for ``url``'s.  Reads the capabilities only: no request once measured."""
    if inspect.signature(store.capabilities).parameters:
        measured = store.capabilities
        return bool(measured(url).multipart_etags)  # type: ignore[call-arg]
    return store.capabilities().multipart_etags


def complete_honours_condition(store: Store, url: str) -> bool:
    """Whether ``store``'s complete honours ``If-None-Match: *`` at ``url``.  A store that
    measures its endpoint (``S3Store.capabilities(url)``: once per endpoint and process) is
    asked for ``url``'s, as its own complete would ask: its answer without a URL may be the
    conservative "unknown", which would drop the condition where the store honours it."""
    if inspect.signature(store.capabilities).parameters:
        measured = store.capabilities
        return bool(measured(url).conditional_complete)  # type: ignore[call-arg]
    return store.capabilities().conditional_complete


def common_prefix(a: str, b: str) -> str:
    """The longest common prefix of two strings (Python strings hold code points: no
    character is split)."""
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return a[:n]


def find_existing(store: Store, urls: Iterable[str], pool: BoundedExecutor,
                  stats: IOStatistics, job_id: str) -> ExistingKeys:
    """Which of ``urls`` (all of one bucket) hold an object: one listing, budgeted, and a
    HEAD each for the keys it did not reach.  Python orders strings by code point, which is
    the order of their UTF-8 bytes: S3's listing order."""
    keys = sorted(set(urls))
    if not keys:
        return ExistingKeys()
    wanted = set(keys)
    first, last = keys[0], keys[-1]
    prefix = common_prefix(first, last)
    found: dict[str, ObjectInfo] = {}
    pages = reached = 0
    through: str | None = None
    token: str | None = None
    while True:
        page = store.list_page(prefix, token=token)
        pages += 1
        for o in page.objects:
            if o.url in wanted:
                found[o.url] = o
        complete = page.token is None or any(o.url > last for o in page.objects)
        if complete:
            through, reached = last, len(keys)
            break
        if page.objects:
            through = max(o.url for o in page.objects)
            reached = sum(1 for k in keys if k <= through)
        if pages >= reached:
            break  # the budget: each page listed has saved a HEAD at least
        token = page.token
    rest = keys[reached:]
    stats.incr(S.COMMITTER_COMPLETE_LIST_PAGES, pages)
    stats.incr(S.COMMITTER_COMPLETE_KEYS_LISTED, reached)
    stats.incr(S.COMMITTER_COMPLETE_KEYS_HEADED, len(rest))
    for url, info in pool.imap(lambda u: (u, store.head(u)), rest):
        if info is not None:
            found[url] = info
    # INFO when it says something: HEADs were needed, or objects are there already
    LOG.log(logging.INFO if rest or found else logging.DEBUG,
            "job %s: %d LIST page(s) under %s answered for %d of %d key(s), %d HEAD(s) for "
            "the rest; %d exist already", job_id, pages, prefix, reached, len(keys),
            len(rest), len(found))
    return ExistingKeys(found, through if reached else None)


def check_keys(store: Store, uploads: Callable[[], Iterable[RecordedUpload]],
               pool: BoundedExecutor, stats: IOStatistics, job_id: str) -> ExistingKeys:
    """Refuse the job commit (:class:`JobCommitRefusedError`) when a key it would complete
    holds an object that is not its upload's; return what was found otherwise.  ``uploads``
    is called twice (the keys, then the judgement of the few found): a stream from the spool,
    so no object is held per upload."""
    existing = find_existing(store, (u.url for u in uploads()), pool, stats, job_id)
    if not existing.found:
        return existing
    refused: list[tuple[RecordedUpload, ObjectInfo]] = []
    etags = gives_multipart_etags(store, min(existing.found))
    for u in uploads():
        info = existing.found.get(u.url)
        if info is not None and not holds(info, u, multipart_etags=etags):
            refused.append((u, info))
    if refused:
        refused.sort(key=lambda r: r[0].url)
        raise _refusal(job_id, refused)
    return existing


def _refusal(job_id: str, refused: Sequence[tuple[RecordedUpload, ObjectInfo]]
             ) -> JobCommitRefusedError:
    upload, info = refused[0]
    return JobCommitRefusedError(
        upload.url, f"{len(refused)} key(s) job {job_id} would complete hold an object it did "
        f"not write (here {info.size} bytes, ETag {info.etag}; the job's upload: {upload.size} "
        "bytes): nothing is committed, as this check precedes the commit point, and the "
        "object is kept.  Move the object away, or write elsewhere, and rerun the job",
        keys=[u.url for u, _ in refused])
