"""Finding and aborting what a job owns — and nothing else.

The classic S3A cleanup listed every incomplete upload under the destination and aborted them
all.  That killed any other job writing to the same destination (HADOOP-17318), and a bare
string prefix (``out`` matching ``out10``) killed jobs writing to *adjacent* destinations
(the "dataset1 vs dataset10" bug).  zerorename scopes every abort to the job:

* uploads are found from the job's own records under its job root (``.pendingset`` files,
  ``.pending`` files, and *upload intents* written before each upload is created);
* an upload whose ID was never recorded — the writer died between creating it and writing
  its ``.pending``, or a CreateMultipartUpload was applied but its answer lost, so the retry
  made a second upload — is found by listing the uploads of the **exact keys** the job wrote
  to (named by its records and intents), never by a prefix.  Intents are therefore kept
  until the job ends, and job commit and abort sweep every key of the job, not only those
  whose intent lacks a ``.pending``;
* the committed set is never aborted, and job roots are treated as directories
  (``dir_prefix``) everywhere.

Aborting by exact key can still meet another job's upload to the very same key; two jobs
writing one key at once conflict anyway (the later complete wins), so this is documented
rather than solved.  The option ``fs.s3a.committer.abort.pending.uploads`` restores Hadoop's
destination-wide abort for users who want it.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from zerorename.committers.fenced_records import FencedCommitRecord
from zerorename.committers.layout import (
    FENCED_AREA,
    FENCED_COMMIT_RECORD,
    INTENT,
    MAGIC_AREA,
    PENDING,
    PENDINGSET,
    RENAME_AREA,
    STAGING_AREA,
    JobLayout,
    place_of,
)
from zerorename.errors import AccessDeniedError, CommitError, FormatError, NotFoundError
from zerorename.executor import BoundedExecutor
from zerorename.formats import PendingSet, SinglePendingCommit, UploadIntent, parse_json
from zerorename.store import Store, UploadInfo, list_dir
from zerorename.urls import dir_prefix, is_under, join

__all__ = [
    "AbortOutcome",
    "JobRecords",
    "OwnedUploads",
    "PendingUpload",
    "abort_found",
    "abort_owned",
    "abort_quietly",
    "abort_uploads",
    "list_uploads",
    "read_owned",
    "scan_job",
    "sweep_keys",
]

LOG = logging.getLogger(__name__)

#: Above this many keys, one listing of the destination beats one listing per key.
_PER_KEY_SWEEP_LIMIT = 8


@dataclass
class JobRecords:
    """Everything under one job root, classified by task attempt.

    Only URLs are kept (each string shared by ``urls`` and its class), not the listing's
    :class:`ObjectInfo`: a job of 10,000 magic tasks has ~30,000 records, and job commit
    needs their names, not their sizes or etags."""

    root: str
    urls: list[str] = field(default_factory=list)
    pendingsets: dict[str, list[str]] = field(default_factory=dict)
    pendings: dict[str, list[str]] = field(default_factory=dict)
    intents: dict[str, list[str]] = field(default_factory=dict)

    @property
    def attempts(self) -> set[str]:
        return set(self.pendingsets) | set(self.pendings) | set(self.intents)

    def pendingsets_of_job_attempt(self, job_attempt: int) -> list[str]:
        """The ``.pendingset`` files saved under job attempt ``job_attempt``."""
        prefix = dir_prefix(JobLayout(self.root, job_attempt).attempt_dir)
        return sorted(u for urls in self.pendingsets.values() for u in urls
                      if u.startswith(prefix))


def _attempt_of(root: str, url: str) -> str | None:
    """The task attempt a record belongs to, from its place in the job's layout."""
    place = place_of(root, url)
    return place.task_attempt if place is not None else None


def _is_task_intent(root: str, url: str) -> bool:
    """A task attempt's own intent (``tasks/<attempt>.intent``, the staging committers' one
    per task commit), not a file's (magic's, under the task's directory)."""
    place = place_of(root, url)
    return place is not None and place.in_tasks and place.task_level


def scan_job(store: Store, root: str) -> JobRecords:
    """List ``root`` (as a directory) and classify the upload records found there."""
    records = JobRecords(root=root)
    for info in list_dir(store, root):
        url = info.url
        records.urls.append(url)
        attempt = _attempt_of(root, url)
        if attempt is None:
            continue
        if url.endswith(PENDINGSET):
            records.pendingsets.setdefault(attempt, []).append(url)
        elif url.endswith(PENDING):
            records.pendings.setdefault(attempt, []).append(url)
        elif url.endswith(INTENT):
            records.intents.setdefault(attempt, []).append(url)
    return records


@dataclass
class AbortOutcome:
    """What an abort did: uploads aborted, records unreadable, aborts that failed."""

    aborted: int = 0
    already_gone: int = 0
    unreadable: list[CommitError] = field(default_factory=list)
    failures: list[tuple[str, BaseException]] = field(default_factory=list)

    @property
    def clean(self) -> bool:
        """True when every upload the job owned is known to be gone."""
        return not self.failures and not self.unreadable


def abort_quietly(store: Store, url: str, upload_id: str) -> bool:
    """Abort one upload; an upload that is already gone (completed or aborted) is fine."""
    try:
        store.abort_multipart(url, upload_id)
    except NotFoundError:
        return False
    return True


def _read_ids(store: Store, url: str) -> list[tuple[str, str]]:
    """(destination, upload id) pairs recorded in a ``.pending`` or ``.pendingset`` file."""
    data = store.get(url)
    if url.endswith(PENDINGSET):
        pset = PendingSet.from_json(parse_json(data, url), url)
        return [(c.url, c.upload_id) for c in pset.commits]
    commit = SinglePendingCommit.from_json(parse_json(data, url), url)
    return [(commit.url, commit.upload_id)]


def _read_intent(store: Store, url: str) -> list[str]:
    return UploadIntent.from_bytes(store.get(url), url).urls


@dataclass
class OwnedUploads:
    """What a job's records say it owns (:func:`read_owned`): upload IDs to abort (id → key),
    every key it is known to have started an upload to, and the records that could not be
    read (their intents were read instead)."""

    ids: dict[str, str] = field(default_factory=dict)
    written: set[str] = field(default_factory=set)
    unreadable: list[CommitError] = field(default_factory=list)


def abort_owned(
    store: Store,
    records: JobRecords,
    pool: BoundedExecutor,
    *,
    committed_ids: set[str] | frozenset[str] = frozenset(),
    committed_attempts: set[str] | frozenset[str] = frozenset(),
    dest: str,
    records_store: Store | None = None,
) -> AbortOutcome:
    """Abort every upload this job owns, except the committed ones.

    Owned are the uploads ``records`` name, and every other upload on a key the job wrote
    to: a CreateMultipartUpload whose answer was lost (applied by the server, an error to
    us) is retried, and the first upload's ID is never recorded anywhere — only its key is
    known.  So every key the job wrote to is swept by *exact* key (never a prefix, so another
    job writing other keys of the destination is untouched), and the keys are gathered from:

    * the records read (``.pending``/``.pendingset`` of attempts not committed);
    * the intents not covered by such a record (a file opened but never closed, a task
      commit that failed), which are read;
    * for committed attempts, whose records are not read again: the keys of their uploads,
      found in one listing of the destination's uploads by their IDs (``committed_ids``).

    Everything that cannot be read is reported in ``unreadable`` (and its intents swept), so a
    corrupt record never hides an upload.  ``records_store`` is where the records are read
    (default: ``store``, where the uploads are).  (A job commit splits this in two around its
    completes: :func:`read_owned`, then :func:`abort_found`.)
    """
    owned = read_owned(store, records, pool, committed_attempts=committed_attempts,
                       records_store=records_store)
    for upload_id in committed_ids:
        owned.ids.pop(upload_id, None)
    listed: list[UploadInfo] | None = None
    try:
        if committed_ids:
            listed = store.list_multipart_uploads(dir_prefix(dest))
            owned.written.update(u.url for u in listed if u.upload_id in committed_ids)
        swept = sweep_keys(store, {u for u in owned.written if is_under(u, dest)}, dest=dest,
                           exclude=set(committed_ids) | set(owned.ids), listed=listed)
    except AccessDeniedError as exc:
        # A role without s3:ListBucketMultipartUploads: the uploads the records name are
        # still aborted; one whose ID no record holds (a create whose answer was lost) is
        # left to the lifecycle rule or the janitor (which aborts uploads of a job whose
        # root is gone).  Invisible, so the abort goes on rather than keep the records.
        LOG.warning("abort of the uploads under %s: could not list them to find those no "
                    "record names (%s); aborting the %d the records name", dest, exc,
                    len(owned.ids))
        swept = []
    return _abort_swept(store, owned, swept, pool)


def read_owned(store: Store, records: JobRecords, pool: BoundedExecutor, *,
               committed_attempts: set[str] | frozenset[str] = frozenset(),
               records_store: Store | None = None) -> OwnedUploads:
    """Read the records of the attempts not in ``committed_attempts`` and the intents not
    covered by a record: the upload IDs and keys the job owns.  Reads only (GETs): a job
    commit runs it beside its completes."""
    owned = OwnedUploads()
    rstore = records_store if records_store is not None else store
    pending_names = {u for urls in records.pendings.values() for u in urls}
    to_read: list[str] = []
    intents_to_read: list[str] = []
    for attempt in sorted(records.attempts):
        committed = attempt in committed_attempts
        if not committed:
            to_read.extend(records.pendingsets.get(attempt, []))
            to_read.extend(records.pendings.get(attempt, []))
        for intent in records.intents.get(attempt, []):
            if _intent_covered(intent, attempt, records, pending_names, committed):
                continue
            intents_to_read.append(intent)

    unreadable_pendings: set[str] = set()

    def read(url: str) -> tuple[str, list[tuple[str, str]] | None, CommitError | None]:
        try:
            return url, _read_ids(rstore, url), None
        except NotFoundError:
            return url, [], None  # deleted meanwhile: nothing to abort through it
        except CommitError as exc:
            return url, None, exc

    for url, pairs, error in pool.imap(read, to_read):
        if error is not None or pairs is None:
            owned.unreadable.append(error or CommitError(url, "unreadable"))
            unreadable_pendings.add(url)
            continue
        for dest_url, upload_id in pairs:
            owned.written.add(dest_url)
            owned.ids[upload_id] = dest_url
    # A corrupt record hides its upload IDs: sweep their keys through the intents instead
    # (beside a magic .pending; the task's intent for a staging .pendingset).
    all_intents = {u for urls in records.intents.values() for u in urls}
    for url in unreadable_pendings:
        if url.endswith(PENDING):
            candidates = [url[: -len(PENDING)] + INTENT]
        else:
            attempt = _attempt_of(records.root, url) or ""
            candidates = [u for u in records.intents.get(attempt, [])
                          if _is_task_intent(records.root, u)]
        for intent in candidates:
            if intent in all_intents and intent not in intents_to_read:
                intents_to_read.append(intent)

    def read_intent(url: str) -> tuple[str, list[str] | None, CommitError | None]:
        try:
            return url, _read_intent(rstore, url), None
        except NotFoundError:
            return url, [], None
        except CommitError as exc:
            return url, None, exc

    for url, urls, error in pool.imap(read_intent, intents_to_read):
        if error is not None or urls is None:
            owned.unreadable.append(error or CommitError(url, "unreadable"))
            continue
        owned.written.update(urls)
    return owned


def abort_found(store: Store, owned: OwnedUploads, pool: BoundedExecutor, *,
                committed_ids: set[str] | frozenset[str],
                committed_keys: Callable[[set[str]], set[str]], dest: str) -> AbortOutcome:
    """The second half of a job commit's abort, once its uploads are completed: list the
    uploads under ``dest`` (the completed ones are gone, so the listing holds only what is
    left: strays and other jobs' uploads) and abort those the job owns — named by its
    records, or at a key it wrote to.  ``committed_keys(urls)`` answers which of ``urls`` are
    keys the job committed (streamed from the job's records, so no set of every committed
    key is held).  The committed uploads are never aborted."""
    for upload_id in committed_ids:
        owned.ids.pop(upload_id, None)
    listed = store.list_multipart_uploads(dir_prefix(dest))
    exclude = set(committed_ids) | set(owned.ids)
    candidates = {u.url for u in listed if u.upload_id not in exclude and is_under(u.url, dest)
                  and u.url not in owned.written}
    wanted = {u for u in owned.written if is_under(u, dest)}
    if candidates:
        wanted |= committed_keys(candidates)
    swept = sweep_keys(store, wanted, dest=dest, exclude=exclude, listed=listed)
    return _abort_swept(store, owned, swept, pool)


def _abort_swept(store: Store, owned: OwnedUploads, swept: Sequence[UploadInfo],
                 pool: BoundedExecutor) -> AbortOutcome:
    outcome = AbortOutcome(unreadable=list(owned.unreadable))
    ids = dict(owned.ids)
    for upload in swept:
        ids[upload.upload_id] = upload.url
    _abort_ids(store, ids, pool, outcome)
    return outcome


def _intent_covered(intent: str, attempt: str, records: JobRecords, pending_names: set[str],
                    committed: bool) -> bool:
    """Is the upload(s) an intent names also recorded with an ID we will see?"""
    if _is_task_intent(records.root, intent):  # staging: one intent per task commit
        return committed or bool(records.pendingsets.get(attempt))
    return intent[: -len(INTENT)] + PENDING in pending_names  # magic: one per file


def _abort_ids(store: Store, ids: dict[str, str], pool: BoundedExecutor,
               outcome: AbortOutcome) -> None:
    def abort(item: tuple[str, str]) -> bool:
        upload_id, url = item
        return abort_quietly(store, url, upload_id)

    results, errors = pool.run_all(abort, sorted(ids.items()))
    outcome.aborted += sum(1 for r in results if r)
    outcome.already_gone += sum(1 for r in results if not r)
    outcome.failures.extend((f"{url} upload {uid}", exc) for (uid, url), exc in errors)


def sweep_keys(store: Store, urls: Iterable[str], *, dest: str,
               exclude: set[str] | frozenset[str] = frozenset(),
               listed: Sequence[UploadInfo] | None = None) -> list[UploadInfo]:
    """Incomplete uploads whose key is *exactly* one of ``urls``, minus ``exclude`` IDs.

    ``listed`` reuses a listing of the destination's uploads already made; otherwise a few
    keys are listed one by one, and many in one (paged) listing of the destination."""
    wanted = set(urls)
    if not wanted:
        return []
    if listed is None:
        if len(wanted) <= _PER_KEY_SWEEP_LIMIT:
            listed = []
            for url in sorted(wanted):
                listed.extend(store.list_multipart_uploads(url))
        else:
            listed = store.list_multipart_uploads(dir_prefix(dest))
    seen: set[str] = set()
    found: list[UploadInfo] = []
    for upload in listed:
        if upload.url in wanted and upload.upload_id not in exclude \
                and upload.upload_id not in seen:
            seen.add(upload.upload_id)
            found.append(upload)
    return found


def abort_all_under(store: Store, directory: str,
                    exclude: set[str] | frozenset[str] = frozenset()) -> int:
    """Hadoop's ``fs.s3a.committer.abort.pending.uploads``: abort every upload under the
    *directory* ``directory`` (any job's!) except ``exclude``.  Returns how many."""
    count = 0
    for upload in store.list_multipart_uploads(dir_prefix(directory)):
        if upload.upload_id not in exclude and abort_quietly(store, upload.url,
                                                              upload.upload_id):
            count += 1
    return count


# -- the ``zerorename uploads`` command ---------------------------------------------------


@dataclass(frozen=True)
class PendingUpload:
    """An incomplete upload under a destination, with its age and where the age came from
    (``store``: the upload's Initiated time; ``record``: the job's own record; ``unknown``)."""

    url: str
    upload_id: str
    age: float | None
    age_source: str
    job_id: str | None = None


#: The committers' job areas searched for a job's records by ``zerorename uploads --job`` (the
#: fenced committer's task records are ``.pendingset`` files under ``<NN>/tasks/``).
UPLOAD_RECORD_AREAS = (MAGIC_AREA, STAGING_AREA, FENCED_AREA, RENAME_AREA)


def list_uploads(store: Store, dest: str, *, job_id: str | None = None,
                 older_than: float | None = None, now: float | None = None
                 ) -> list[PendingUpload]:
    """Incomplete uploads under the directory ``dest``; with ``job_id``, only those the
    job's records show it owns; with ``older_than`` (seconds), only older ones."""
    clock = time.time() if now is None else now
    uploads = store.list_multipart_uploads(dir_prefix(dest))
    owned: dict[str, float | None] | None = None
    if job_id is not None:
        owned = _owned_by_job(store, dest, job_id)
    found: list[PendingUpload] = []
    for upload in uploads:
        created: float | None = None
        if owned is not None:
            if upload.upload_id not in owned and upload.url not in owned:
                continue
            created = owned.get(upload.upload_id) or owned.get(upload.url)
        if created is not None:
            age: float | None = clock - created
            source = "record"
        elif upload.initiated is not None:
            age, source = clock - upload.initiated, "store"
        else:
            age, source = None, "unknown"
        if older_than is not None and (age is None or age < older_than):
            continue
        found.append(PendingUpload(upload.url, upload.upload_id, age, source, job_id))
    return found


def _owned_by_job(store: Store, dest: str, job_id: str) -> dict[str, float | None]:
    """Upload IDs (and intent keys) recorded by ``job_id`` → creation time (s) if known."""
    owned: dict[str, float | None] = {}
    for area in UPLOAD_RECORD_AREAS:
        root = area.root(dest, job_id)
        records = scan_job(store, root)
        for urls in list(records.pendings.values()) + list(records.pendingsets.values()):
            for url in urls:
                try:
                    data = parse_json(store.get(url), url)
                    if url.endswith(PENDINGSET):
                        commits = PendingSet.from_json(data, url).commits
                    else:
                        commits = [SinglePendingCommit.from_json(data, url)]
                except CommitError:
                    continue
                for c in commits:
                    owned[c.upload_id] = c.created / 1000 if c.created else None
        for urls in records.intents.values():
            for url in urls:
                try:
                    intent = UploadIntent.from_bytes(store.get(url), url)
                except CommitError:
                    continue
                for u in intent.urls:
                    owned.setdefault(u, intent.created / 1000 if intent.created else None)
    for upload_id in _fenced_commit_uploads(store, dest, job_id):
        owned.setdefault(upload_id, None)
    return owned


def _fenced_commit_uploads(store: Store, dest: str, job_id: str) -> set[str]:
    """The uploads a fenced job's commit record names: once its job commit has passed the
    commit point the task records are deleted, and an upload not completed yet (the commit
    failed after that point) is named there only.  Empty without a readable record."""
    url = join(FENCED_AREA.root(dest, job_id), FENCED_COMMIT_RECORD)
    try:
        record = FencedCommitRecord.from_bytes(store.get(url), url, job_id=job_id, dest=dest)
    except (NotFoundError, FormatError):  # not a fenced job, nothing committed, or not ours
        return set()
    return record.upload_ids


def abort_uploads(store: Store, uploads: Iterable[PendingUpload | UploadInfo]) -> int:
    """Abort each upload (already-gone ones are skipped); returns how many were aborted."""
    return sum(1 for u in uploads if abort_quietly(store, u.url, u.upload_id))
