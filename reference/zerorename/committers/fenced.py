"""The fenced committer: magic's uploads, with every commit decision made by one conditional PUT.

Why it exists.  Every other S3 committer records a task commit with a plain PUT (or rename)
whose *name* decides which attempt wins.  A task attempt that the driver has given up on (a
network partition) can still finish its task commit afterwards, and the job commit then
publishes that attempt's output — the race of the paper's Section VIII.C (HADOOP-17258 is the
same family).  Here the store itself arbitrates: ``If-None-Match: *`` lets exactly one writer
create a key, atomically, so

* **task commit** is one conditional PUT of the task's record at a key named by the job, the
  job attempt and the task — never the task *attempt*: the first attempt to commit a task wins,
  every later one meets 412 and learns who won;
* **job commit** first checks its keys (:mod:`~zerorename.committers.existing_keys`: a key
  holding another writer's object refuses the job, ``JobCommitRefusedError``, before anything
  is committed), then is one conditional PUT of the job's commit record (every upload to
  complete) at a key named by the job alone: that PUT is the commit point.  Whatever happens
  after it — completing the uploads, ``_SUCCESS``, cleanup — a new job attempt finishes (rolls
  forward); whatever happened before it, a new attempt undoes (rolls back).

Layout, under ``<dest>/__fenced_job-<job id>/``::

    commit.json                   the job commit record: kept for the retention (it fences
                                  late task commits), then expired by a later job
    <NN>/_job.json                job attempt NN's marker and capability probe
    <NN>/tasks/<task name>.pendingset   one task record per task per job attempt NN

Per committed file a task makes *create + part(s)* requests and job commit one *complete*
(with ``If-None-Match: *``: it never replaces an object it did not write): 3 requests for a
file of one part.  No ``.pending`` or intent is written per file: the upload
IDs, part ETags and sizes stay in the task's memory until its record is PUT.  Per task: the
record PUT and one GET of the commit record.  Per job: O(1) more (probe, the check's LIST of
its keys — a page per 1,000 objects under their common prefix —, record, ``_SUCCESS``,
cleanup listings).

The price of keeping nothing per file: an attempt that dies before its task commit leaves
uploads no record names.  They are found by key: a retry of the task writes the same keys
(Spark names files by task and job), so cleanup aborts every upload at a committed key that is
not the committed one; and every other upload under the destination is this job's and is
aborted when no other job (of any committer) is active above the destination, in it, or in
a directory between it and the upload's key — a nested job's root with a live marker makes
its uploads not ours (see :mod:`~zerorename.committers.neighbours`).  See
``docs/user/committers.md``.

Stores must honour ``If-None-Match: *`` on PUT.  ``setup_job`` checks it before writing any
output (:class:`ConditionalWriteUnsupportedError`, never a silent fallback).
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, fields
from typing import Any

from zerorename import statistics as S
from zerorename.committers.cleanup import abort_quietly
from zerorename.committers.deletes import delete_pages
from zerorename.committers.destinations import is_store_root
from zerorename.committers.existing_keys import (
    ExistingKeys,
    check_keys,
    complete_honours_condition,
    gives_multipart_etags,
    holds,
)
from zerorename.committers.fenced_records import (
    CommittedFile,
    ConditionalWriteUnsupportedError,
    FencedCommitRecord,
    FencedSuccessData,
    JobAlreadyCommittedError,
    JobCommitIncompleteError,
    RacyConditionalWritesError,
    RecordedUpload,
)
from zerorename.committers.fenced_task import FencedFile, FencedTaskCommitter
from zerorename.committers.neighbours import Neighbours
from zerorename.committers.records import (
    DEFAULT_RETENTION,
    RETENTION_OPTION,
    delete_expired,
    find_expired,
    list_fenced_roots,
)
from zerorename.errors import (
    CommitError,
    FormatError,
    JobFailedError,
    NotFoundError,
    PreconditionFailedError,
    StoreError,
    UnsupportedOperationError,
)
from zerorename.executor import BoundedExecutor
from zerorename.formats import PendingSet, SuccessData
from zerorename.messages import TaskCommitMessage
from zerorename.stages import (
    FilenameSample,
    Loaded,
    StageContext,
    StageRunner,
    TaskSource,
    load_pendingsets,
)
from zerorename.store import ObjectInfo, UploadInfo, list_dir
from zerorename.stores.fencing import STORE_CHECK_OPTION, FencingSupport, fencing_support
from zerorename.urls import dir_prefix

__all__ = ["CommittedUploads", "FencedCommitter", "FencedFile"]

LOG = logging.getLogger(__name__)


@dataclass(frozen=True)
class CommittedUploads:
    """The uploads a commit record names, as a stream: from the job commit's spool (one JSON
    line per file on local disk) or from a parsed record being rolled forward.  A 100,000-file
    job commit therefore holds no object per upload while it saves its record, completes and
    cleans up — only the list of committed files that ``_SUCCESS`` names."""

    uploads: Callable[[], Iterable[RecordedUpload]]
    count: int

    @staticmethod
    def of(record: FencedCommitRecord | None) -> CommittedUploads:
        uploads = record.uploads if record is not None else []
        return CommittedUploads(lambda: uploads, len(uploads))

    def among(self, ids: set[str], urls: set[str]) -> tuple[set[str], set[str]]:
        """Which of ``ids`` are committed upload IDs, and which of ``urls`` committed keys:
        one pass over the uploads."""
        kept: set[str] = set()
        keys: set[str] = set()
        if not ids and not urls:
            return kept, keys
        for u in self.uploads():
            if u.upload_id in ids:
                kept.add(u.upload_id)
            if u.url in urls:
                keys.add(u.url)
        return kept, keys


def _uploads_in(loaded: Loaded) -> Iterator[RecordedUpload]:
    """The winning uploads of a load stage, from its spool, each attempt ID shared."""
    for r in loaded.winning_records():
        yield RecordedUpload(loaded.attempts[r["a"]].attempt_id, r["u"], r["i"],
                             tuple(r["e"]), int(r["z"]))


class FencedCommitter(FencedTaskCommitter):
    """See the module docstring."""

    # -- job setup: probe, then roll forward or back ----------------------------------------

    def _setup_job(self) -> None:
        self._check_store_fences()
        created = self._probe_conditional_put()
        try:
            commit = self._read_commit_record()
            if commit is not None:
                success = self._roll_forward(commit)
                raise JobAlreadyCommittedError(
                    self.commit_record_url, f"job {self.job.id} was already committed by job "
                    f"attempt {commit.job_attempt}; its output is published (rolled forward): "
                    "do not run its tasks again", success)
            self._clear(None, CommittedUploads.of(None), keep_marker=True)
        except JobAlreadyCommittedError:
            raise
        except Exception as exc:  # (a crash — BaseException — must not touch the store)
            # A failed setup takes back the marker it created (no task can have run under
            # it), so the job leaves nothing; one an earlier setup wrote is not ours to delete.
            if created:
                try:
                    self.store.delete(self.marker)
                except CommitError as again:
                    exc.add_note(f"removing the job marker {self.marker} also failed: {again}")
            raise

    def _check_store_fences(self) -> None:
        """Check the store before anything is written
        (:func:`~zerorename.stores.fencing.fencing_support`: once per store and process, in
        the destination's hidden area).  Refuse one that ignores If-None-Match, or where
        ``fs.s3a.create.conditional.enabled=false``.  Refuse one that let racing writers both
        win too (``RacyConditionalWritesError``), unless the user set
        ``fs.zerorename.fenced.store-check=warn``: then it runs, with the risk in the log.  A
        probe that could not run raises ``StoreProbeError``."""
        decision = fencing_support(self.raw_store, self.dest, self.opts)
        if decision.can_fence or decision.support is FencingSupport.REJECTS_HEADER:
            return  # declared without conditional PUT: the request below finds out, as ever
        if decision.support is not FencingSupport.RACY or decision.race is None:
            raise self._unsupported(decision.describe())
        if self.opts.get_str(STORE_CHECK_OPTION, default="refuse").lower() == "warn":
            LOG.warning("zerorename: fenced committer on %s although %s: two attempts of one "
                        "task could both commit there; running because %s=warn overrides the "
                        "check (auto would pick magic)", self.dest, decision.describe(),
                        STORE_CHECK_OPTION)
            return
        race = decision.race
        raise RacyConditionalWritesError(
            self.dest, f"store {decision.store} cannot fence commits: {race.max_winners} of "
            f"{race.writers} racing If-None-Match: * writers won one key "
            f"({race.rounds} rounds: {race.histogram()}), so two attempts of one task could "
            "both commit.  Use the magic committer (auto picks it here), or set "
            f"{STORE_CHECK_OPTION}=warn to run fenced anyway, accepting that risk",
            store=decision.store, winners=race.max_winners, writers=race.writers,
            rounds=race.rounds, override=f"{STORE_CHECK_OPTION}=warn")

    def _probe_conditional_put(self) -> bool:
        """Create the job marker with ``If-None-Match: *``, then try to create it again: the
        store must refuse.  A marker left by an earlier attempt answers 412 at once, which is
        the proof too.  Distinct bodies, so a retried PUT cannot mistake the second write for
        the first (``ReliableStore`` accepts a 412 on a retry when the object holds its bytes).
        Returns whether this call created the marker (not an earlier attempt's)."""
        def body(n: int) -> bytes:
            return json.dumps({"jobId": self.job.id, "jobAttempt": self.job.attempt,
                               "committer": self.name,
                               "probe": n}).encode("utf-8")

        created = False
        try:
            self.store.put(self.marker, body(1), if_none_match=True)
            created = True
            self.store.put(self.marker, body(2), if_none_match=True)
        except PreconditionFailedError:
            self.stats.incr(S.COMMITTER_CONDITIONAL_PUT_PROBE_REFUSED)
            return created
        except UnsupportedOperationError as exc:
            raise self._unsupported(f"it rejected If-None-Match ({exc.reason})") from None
        except StoreError as exc:
            if exc.status in (400, 501) or exc.code in ("NotImplemented", "InvalidArgument"):
                raise self._unsupported(f"it rejected If-None-Match ({exc.code or exc.status}:"
                                        f" {exc.reason})") from None
            raise
        self.store.delete(self.marker)
        raise self._unsupported("it accepted a second PUT with If-None-Match: * over an "
                                "existing object")

    def _unsupported(self, why: str) -> ConditionalWriteUnsupportedError:
        return ConditionalWriteUnsupportedError(
            self.marker, f"store {self.raw_store.name} cannot fence commits: {why}.  The "
            "fenced committer needs conditional PUT (If-None-Match: *); use the magic "
            "committer on this store")

    # -- job commit --------------------------------------------------------------------------

    def _commit_job(self, messages: list[TaskCommitMessage] | None) -> SuccessData:
        runner = StageRunner(self.stats, self.job)
        with self.executor("commit") as pool:
            ctx = StageContext(self.store, self.job, self.stats, pool, runner, self.name)
            if messages is None:
                sources = runner.run(S.JOB_STAGE_LIST_TASK_RECORDS, self._task_sources)
            else:
                sources = [TaskSource(message=m) for m in messages]
            loaded = runner.run(S.JOB_STAGE_LOAD_PENDINGSETS, lambda: load_pendingsets(
                ctx, sources, self.check_in_destination))
            with loaded.spool:
                record = self._record_from(loaded, sources)
                committed = CommittedUploads(lambda: _uploads_in(loaded), loaded.files)
                # before the commit point: a refusal leaves nothing committed (the failure
                # path aborts every upload) and another writer's object untouched
                existing = runner.run(S.JOB_STAGE_CHECK_KEYS, lambda: check_keys(
                    self.store, committed.uploads, pool, self.stats, self.job.id))
                runner.run(S.JOB_STAGE_SAVE_COMMIT_RECORD,
                           lambda: self._save_commit_record(record, committed))
                self._published = True  # the commit point: from here on, roll forward only
                success = self._publish(record, committed, pool, runner, loaded.task_stats,
                                        existing)
        return success

    def _task_sources(self) -> list[TaskSource]:
        """Hadoop's protocol: the task records of this job attempt, found by listing (the
        marker was checked by ``commit_job``)."""
        return [TaskSource(url=o.url) for o in list_dir(self.store, self.tasks_dir())
                if o.url.endswith(".pendingset")]

    def _record_from(self, loaded: Loaded, sources: Sequence[TaskSource]
                     ) -> FencedCommitRecord:
        """The commit record's header: its uploads stay in the spool (see
        :class:`CommittedUploads`), not one object per file in memory."""
        tasks = {meta.task_name: meta.attempt_id for meta in loaded.attempts.values()
                 if meta.attempt_id in loaded.winners}
        inside = dir_prefix(self.root)
        records = [s.message.record if s.message is not None else s.url for s in sources]
        return FencedCommitRecord(job_id=self.job.id, job_attempt=self.job.attempt,
                                  destination=self.dest, committed=self.clock.now_millis(),
                                  tasks=tasks, uploads=[],
                                  records=[r for r in records if r.startswith(inside)])

    def _save_commit_record(self, record: FencedCommitRecord,
                            committed: CommittedUploads) -> None:
        """The commit point.  On 412, the record there is either ours (an answer was lost) or
        another driver's: then this job was committed elsewhere and our uploads are garbage."""
        data = record.encode(committed.uploads())
        try:
            self.store.put(self.commit_record_url, data, if_none_match=True)
            return
        except PreconditionFailedError:
            existing = self.store.get(self.commit_record_url)
        if existing == data:
            return
        other = FencedCommitRecord.from_bytes(existing, self.commit_record_url,
                                              job_id=self.job.id, dest=self.dest)
        raise CommitError(self.commit_record_url, f"job {self.job.id} was already committed "
                          f"by job attempt {other.job_attempt}; this commit publishes nothing "
                          "and its uploads are aborted")

    def _publish(self, record: FencedCommitRecord, committed: CommittedUploads,
                 pool: BoundedExecutor, runner: StageRunner,
                 task_stats: Any = None, existing: ExistingKeys | None = None) -> SuccessData:
        """After the commit point: complete, ``_SUCCESS``, clean up.  Every step is
        idempotent, so a crash anywhere here is finished by the next attempt's roll-forward.
        ``existing``: what the check found (None on a roll-forward, which does not check)."""
        filenames = FilenameSample()
        files = runner.run(S.JOB_STAGE_COMPLETE_UPLOADS,
                           lambda: self._complete_all(committed, pool, filenames, existing))
        self.stats.incr(S.COMMITTER_JOBS_COMPLETED)
        base = self.success_data(filenames.names, stage=S.COMMITTER_COMMIT_JOB,
                                 task_stats=task_stats)
        success = FencedSuccessData(**{f.name: getattr(base, f.name) for f in fields(base)},
                                    files=files)
        success.metrics.update({"files": len(files), "bytes": sum(f.size for f in files),
                                "tasks": len(record.tasks)})
        success.diagnostics["fenced.commit.record"] = self.commit_record_url
        success.diagnostics["fenced.job.attempt"] = str(record.job_attempt)

        self.save_success(success, runner)
        def cleanup() -> None:
            roots = list_fenced_roots(self.store, self.dest)  # ours and the others', one LIST
            self._clear(record, committed, keep_marker=False, roots=roots)
            self._expire_records(roots)

        self.clean_up_published(success, runner, cleanup)
        return success

    def _complete_all(self, committed: CommittedUploads, pool: BoundedExecutor,
                      filenames: FilenameSample, existing: ExistingKeys | None
                      ) -> list[CommittedFile]:
        # On a store whose complete ignores If-None-Match (RGW: the store emulates it with a
        # HEAD), a key the check's listing found absent is completed without it, as the JVM
        # does; a key the listing did not reach keeps the (emulated) condition.
        listed = existing if existing is not None and \
            not complete_honours_condition(self.raw_store, self.dest) else ExistingKeys()

        def complete(upload: RecordedUpload) -> CommittedFile:
            etag = self._complete_one(upload, condition=not listed.absent(upload.url))
            self.stats.incr(S.COMMITTER_COMMITS_COMPLETED)
            self.stats.incr(S.COMMITTER_FILES_COMMITTED)
            self.stats.incr(S.COMMITTER_BYTES_COMMITTED, upload.size)
            filenames.add(upload.url)
            return CommittedFile(upload.url, upload.size, etag)

        results, errors = pool.run_all(complete, committed.uploads())
        if errors:
            upload, exc = min(errors, key=lambda e: e[0].url)
            held = sum(1 for _, e in errors if isinstance(e, PreconditionFailedError))
            why = (f"; {held} key(s) hold an object another writer created after the check "
                   "(kept): move it away first" if held else "")
            raise JobCommitIncompleteError(
                upload.url, f"job {self.job.id} is committed (record {self.commit_record_url})"
                f" but {len(errors)} of {committed.count} upload(s) could not be completed "
                f"now ({type(exc).__name__}: {exc}); nothing was reverted{why}: setup_job of "
                "a new attempt of this job completes them")
        results.sort(key=lambda f: f.url)
        return results

    def _complete_one(self, upload: RecordedUpload, *, condition: bool = True) -> str:
        """Complete with ``If-None-Match: *`` (unless ``condition`` is False); an upload
        already gone, or a key already there (412), is done when the object holds its data
        (:func:`~zerorename.committers.existing_keys.holds`).  Another writer's object is
        kept: the 412 is raised, the upload stays pending."""
        try:
            return self.store.complete_multipart(upload.url, upload.upload_id, upload.parts,
                                                 if_none_match=condition)
        except (NotFoundError, PreconditionFailedError):
            info = self.store.head(upload.url)
            if info is None or not holds(info, upload, multipart_etags=gives_multipart_etags(
                    self.raw_store, self.dest)):
                raise
            self.stats.incr(S.STORE_COMPLETE_RECOVERED)
            return info.etag.strip('"')

    def _roll_forward(self, commit: FencedCommitRecord) -> SuccessData:
        runner = StageRunner(self.stats, self.job)
        with self.executor("roll-forward") as pool:
            success = self._publish(commit, CommittedUploads.of(commit), pool, runner)
        self.stats.incr(S.COMMITTER_JOBS_ROLLED_FORWARD)
        self.last_success = success
        self._job_committed = True  # commit_job on this object is refused: nothing to do
        return success

    # -- abort and cleanup -------------------------------------------------------------------

    def _abort_job(self, *, failed: bool) -> None:
        commit = self._read_commit_record()
        self._clear(commit, CommittedUploads.of(commit), keep_marker=False)

    def _clear(self, commit: FencedCommitRecord | None, committed: CommittedUploads, *,
               keep_marker: bool, roots: Sequence[ObjectInfo] | None = None) -> None:
        """Abort every upload this job owns that ``commit`` does not name, and delete its
        records (never the commit record, which fences late task commits).

        Owned uploads: those in any task record under the job root (any job attempt), any
        other upload at a key those records or ``commit`` name, and every other upload under
        the destination that no other job may own (none active above the destination, in it,
        or between it and the upload's key).  The committed uploads
        (``committed``) are streamed once against the few IDs and keys in question, not held
        as sets of every upload.
        """
        inside = dir_prefix(self.root)
        listed = ([o.url for o in roots if o.url.startswith(inside)] if roots is not None
                  else [o.url for o in list_dir(self.store, self.root)])
        committed_records = set(commit.records) if commit is not None else set()
        records = [u for u in listed if u.endswith(".pendingset") and u not in committed_records]
        recovered = set(self._recovered.values()) if keep_marker else set()
        owned: dict[str, str] = {}
        unreadable: list[str] = []
        with self.executor("clear") as pool:
            def read(url: str) -> tuple[str, PendingSet | None]:
                try:
                    return url, PendingSet.from_bytes(self.store.get(url), url)
                except NotFoundError:
                    return url, None
                except FormatError:
                    unreadable.append(url)
                    return url, None

            psets = dict(pool.imap(read, records))
            uploads = self.store.list_multipart_uploads(dir_prefix(self.dest))
            recorded = [c for pset in psets.values() if pset is not None for c in pset.commits]
            keep, keys = committed.among({c.upload_id for c in recorded}
                                         | {u.upload_id for u in uploads},
                                         {u.url for u in uploads})
            for url in recovered:  # kept: a recovered task's uploads are committed work
                kept = psets.get(url)
                keep |= {c.upload_id for c in kept.commits} if kept is not None else set()
            for c in recorded:
                keys.add(c.url)
                if c.upload_id not in keep:
                    owned[c.upload_id] = c.url
            strays = [u for u in uploads if u.upload_id not in keep
                      and u.upload_id not in owned]
            at_keys = [u for u in strays if u.url in keys]
            others = [u for u in strays if u.url not in keys]
            # Listed after the uploads: a job that started before any upload we saw has its
            # job root visible here (above, at or below the destination).
            # At a bucket root "the destination" is the bucket: nothing unrecorded is ours.
            neighbours = Neighbours(self.store, self.root)
            mine = [] if is_store_root(self.dest) else \
                [u for u in others if neighbours.may_own(self.dest, u.url)]
            at_keys.extend(mine)
            _warn_unrecorded(self.job.id, self.dest, mine)
            if len(mine) < len(others):
                self.stats.incr(S.COMMITTER_UPLOADS_UNATTRIBUTED, len(others) - len(mine))
            for u in at_keys:
                owned[u.upload_id] = u.url

            def abort(item: tuple[str, str]) -> bool:
                return abort_quietly(self.store, item[1], item[0])

            results, errors = pool.run_all(abort, sorted(owned.items()))
        self.stats.incr(S.COMMITTER_COMMITS_ABORTED, sum(1 for r in results if r))
        if errors:
            (uid, url), exc = errors[0]
            raise JobFailedError(url, f"could not abort {len(errors)} upload(s) of job "
                                      f"{self.job.id} (upload {uid}: {exc}); its records are "
                                      f"kept under {self.root} for a retry of abort_job")
        doomed = sorted(u for u in listed if u != self.commit_record_url
                        and u != self.marker and u not in unreadable and u not in recovered)
        if not keep_marker:
            doomed.append(self.marker)
        delete_pages(self.store, doomed)
        if unreadable:
            raise FormatError(unreadable[0], f"{len(unreadable)} unreadable task record(s) of "
                                             f"job {self.job.id} kept: their uploads could "
                                             "not be identified")

    def _expire_records(self, roots: Sequence[ObjectInfo]) -> None:
        """Delete the commit records of earlier finished jobs on this destination past the
        retention (see :mod:`~zerorename.committers.records`), found in ``roots`` (the
        cleanup's listing): a DELETE only when something expired."""
        retention = self.opts.get_seconds(RETENTION_OPTION, default=DEFAULT_RETENTION)
        expired = find_expired(self.store, self.dest, older_than=retention, now=time.time(),
                               keep_root=self.root, listed=roots)
        if expired:
            self.stats.incr(S.COMMITTER_RECORDS_EXPIRED, delete_expired(self.store, expired))


def _warn_unrecorded(job_id: str, dest: str, uploads: Sequence[UploadInfo]) -> None:
    """Each upload aborted only because no job can own it (no record names it, no job root
    above or beside it) is logged at WARNING, key and start time: it may be another tool's
    (``aws s3 cp`` in progress under the destination), which nothing in S3 tells apart from a
    dead task attempt's upload (ListMultipartUploads returns no metadata)."""
    for upload in uploads:
        started = (time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(upload.initiated))
                   if upload.initiated is not None else "unknown")
        LOG.warning("job %s: aborting incomplete upload %s (upload %s, initiated %s) under %s: "
                    "no record of any job names it, and no other job is active there",
                    job_id, upload.url, upload.upload_id, started, dest)
