"""The S3A committers' shared base (staging and magic): tasks leave uncompleted multipart
uploads to the final keys and a ``.pendingset`` naming them; job commit completes them.

Apart from :mod:`~zerorename.committers.base` because only these two committers keep
uploads open across task and job commit, and so own the scans, aborts and sweeps that find
every upload of a job (:mod:`~zerorename.committers.cleanup`) — the rename committers and
the fenced committer do not use them.
"""

from __future__ import annotations

from typing import Any, ClassVar

from zerorename import options as O
from zerorename import statistics as S
from zerorename.committers.base import BaseCommitter
from zerorename.committers.cleanup import (
    JobRecords,
    OwnedUploads,
    abort_all_under,
    abort_found,
    abort_owned,
    abort_quietly,
    read_owned,
    scan_job,
)
from zerorename.committers.deletes import delete_tree
from zerorename.committers.destinations import check_may_delete_at
from zerorename.committers.layout import PENDING, JobArea, JobLayout
from zerorename.committers.reliable import ReliableStore
from zerorename.committers.uploads import task_pendingset
from zerorename.context import JobContext, TaskContext
from zerorename.errors import CommitError, FormatError, JobFailedError, NotFoundError
from zerorename.formats import (
    PendingSet,
    SinglePendingCommit,
    SuccessData,
    parse_json,
)
from zerorename.messages import TaskCommitMessage
from zerorename.stages import (
    FilenameSample,
    Loaded,
    StageContext,
    StageRunner,
    TaskSource,
    complete_uploads,
    load_pendingsets,
)
from zerorename.store import Store, list_dir

__all__ = ["ABORT_ALL_OPTIONS", "S3ACommitter"]


ABORT_ALL_OPTIONS = (O.ABORT_PENDING_UPLOADS.name,
                     O.ABORT_PENDING_UPLOADS.aliases[0])


class S3ACommitter(BaseCommitter):
    """Shared by the staging and magic committers: tasks leave uncompleted multipart uploads
    to the final keys and a ``.pendingset`` listing them; job commit completes them.

    Records live under a per-job root (``job_area``), one subdirectory per job attempt;
    ``pendingsets/<attempt id>.pendingset`` is named per task *attempt*, so a duplicate
    attempt can never overwrite a committed one (HADOOP-17258), and Hadoop-protocol job commit
    picks the last committed attempt of each task.
    """

    tasks_counter: ClassVar[str] = S.COMMITTER_TASKS_SUCCEEDED
    #: the family's job roots in the destination (a subclass names its own)
    job_area: ClassVar[JobArea]

    def __init__(self, store: Store, job: JobContext, task: TaskContext | None = None, *,
                 records: Store | None = None) -> None:
        super().__init__(store, job, task)
        #: where records live; uploads always go to ``store``
        self.records = (ReliableStore(records, self.store.policy, self.stats)
                        if records is not None else self.store)
        if not self.caps.multipart:
            raise CommitError(self.dest, f"the {self.name} committer needs multipart uploads, "
                                         f"which store {store.name} does not offer")
        self.abort_all_uploads = self.opts.get_bool(*ABORT_ALL_OPTIONS, default=False)
        if self.abort_all_uploads:
            check_may_delete_at(self.dest, f"{ABORT_ALL_OPTIONS[0]}=true")
        self.layout = JobLayout(self._job_root(), job.attempt)

    def _job_root(self) -> str:
        return self.job_area.root(self.dest, self.job.id)

    def job_layout(self) -> JobLayout:
        return self.layout

    def records_store(self) -> ReliableStore:
        return self.records

    # -- job -------------------------------------------------------------------------------

    def _setup_job(self) -> None:
        self.check_conflicts_at_setup()
        self.write_marker()

    def check_conflicts_at_setup(self) -> None:
        return None

    def prepare_destination(self, ctx: Any, loaded: Any) -> None:
        """Conflict resolution before any upload completes (staging committers)."""
        return None

    def _commit_job(self, messages: list[TaskCommitMessage] | None) -> SuccessData:
        runner = StageRunner(self.stats, self.job)
        with self.executor("commit") as pool:
            ctx = StageContext(self.store, self.job, self.stats, pool, runner, self.name,
                               records_store=self.records)
            records: JobRecords | None = None  # Spark's protocol: scanned beside the completes
            if messages is None:
                records = runner.run(S.JOB_STAGE_SCAN_RECORDS,
                                     lambda: scan_job(self.records, self.layout.root))
                if self.layout.marker not in records.urls:
                    raise NotFoundError(self.layout.marker, "job attempt directory does not "
                                        f"exist: job {self.job.id} was never set up, or was "
                                        "already committed or aborted")
                sources = [TaskSource(url=u)
                           for u in records.pendingsets_of_job_attempt(self.job.attempt)]
            else:
                sources = [TaskSource(message=m) for m in messages]
            loaded = runner.run(S.JOB_STAGE_LOAD_PENDINGSETS, lambda: load_pendingsets(
                ctx, sources, self.check_in_destination))
            with loaded.spool:
                runner.run(S.JOB_STAGE_PREPARE_DESTINATION,
                           lambda: self.prepare_destination(ctx, loaded))
                filenames = FilenameSample()
                completed = [False]
                try:
                    owned = self._complete_reading_owned(ctx, records, loaded, filenames,
                                                         completed)
                    outcome = runner.run(S.JOB_STAGE_ABORT_UNCOMMITTED, lambda: abort_found(
                        self.store, owned, pool, committed_ids=loaded.committed_ids,
                        committed_keys=loaded.committed_among, dest=self.dest))
                    success = self.job_success(filenames, loaded)
                    if outcome.unreadable:
                        success.diagnostics["unreadable.records"] = "; ".join(
                            str(e) for e in outcome.unreadable[:10])
                    if outcome.failures:
                        success.diagnostics["abort.failures"] = "; ".join(
                            f"{what}: {exc}" for what, exc in outcome.failures[:10])
                    self.save_success(success, runner)
                except Exception as exc:  # (a crash — BaseException — must not touch the store)
                    if completed[0] and not self.published:
                        self._take_back(ctx, loaded, exc)
                    raise
            known = [self.layout.marker, *(m.record for m in messages or [] if m.record)]
            self.clean_up_published(success, runner, lambda: self._cleanup(
                not outcome.failures, loaded.committed_ids, known))
        return success

    def _take_back(self, ctx: StageContext, loaded: Loaded, exc: Exception) -> None:
        """Every upload is completed (visible) but a later stage failed before the commit
        point (``_SUCCESS``): a listing or read the commit needs was refused (a role without
        ``s3:ListBucketMultipartUploads`` or ``s3:ListBucket``), or ``_SUCCESS`` could not be
        saved.  The job is failed, so it takes back what it published: the completed objects
        are deleted, as when a complete fails (:func:`~zerorename.stages.complete_uploads`).
        What could not be deleted is named in a note of ``exc``."""
        urls = sorted({str(r["u"]) for r in loaded.winning_records()})
        left: list[str] = []
        for start in range(0, len(urls), 1000):
            batch = urls[start : start + 1000]
            try:
                self.store.delete_many(batch)
            except CommitError as failed:
                exc.add_note(f"taking back the completed files also failed: {failed}")
                left.extend(batch)
        reverted = len(urls) - len(left)
        ctx.stats.incr(S.COMMITTER_COMMITS_REVERTED, reverted)
        exc.add_note(f"the job was not committed: the {reverted} file(s) it had completed "
                     "were deleted (taken back)" + (f", {len(left)} could not be" if left
                                                     else ""))

    def _complete_reading_owned(self, ctx: StageContext, records: JobRecords | None,
                                loaded: Loaded, filenames: FilenameSample,
                                completed: list[bool]) -> OwnedUploads:
        """Complete the uploads and, meanwhile, read what the job owns besides them (the
        records of attempts not committed, the intents; first the listing of the job root,
        unless Hadoop's protocol needed it to find the tasks): those requests used to hold
        back the first complete.  Reading only — nothing is aborted until every complete is
        done (:func:`abort_found`), and a committed upload is never aborted.  The reads run
        beside the pool (``BoundedExecutor.beside``: a worker of the pool's own backend, so a
        harness can interleave them); with one thread (an inline pool) they come first."""
        def read() -> OwnedUploads:
            found = records
            if found is None:
                with ctx.stats.duration(S.JOB_STAGE_SCAN_RECORDS):
                    found = scan_job(self.records, self.layout.root)
            with ctx.stats.duration(S.JOB_STAGE_READ_OWNED):  # timed, not a serial stage
                return read_owned(self.store, found, ctx.pool,
                                  committed_attempts=loaded.winners,
                                  records_store=self.records)

        def complete() -> None:
            ctx.runner.run(S.JOB_STAGE_COMPLETE_UPLOADS,
                           lambda: complete_uploads(ctx, loaded, filenames))
            completed[0] = True  # from here a failure before _SUCCESS takes them back

        with ctx.pool.beside(read) as reading:  # inline: ``read`` runs first, in the caller
            complete()
        return reading.result()

    def _cleanup(self, delete_records: bool, keep_ids: set[str], known: list[str]) -> None:
        self._abort_local()
        if self.abort_all_uploads:
            self.stats.incr(S.COMMITTER_COMMITS_ABORTED,
                            abort_all_under(self.store, self.dest, keep_ids))
        if delete_records:
            delete_tree(self.records, self.layout.root, known=known)
            # Attempts still finishing (speculative, or ones the driver gave up on) may have
            # written records while we cleaned: sweep them too, never touching the committed.
            self._sweep_root(keep_ids, passes=2)

    def _abort_job(self, *, failed: bool) -> None:
        records = scan_job(self.records, self.layout.root)
        with self.executor("abort") as pool:
            outcome = abort_owned(self.store, records, pool, dest=self.dest,
                                  records_store=self.records)
        self.stats.incr(S.COMMITTER_COMMITS_ABORTED, outcome.aborted)
        if self.abort_all_uploads:
            self.stats.incr(S.COMMITTER_COMMITS_ABORTED, abort_all_under(self.store, self.dest))
        self._abort_local()
        if outcome.failures:
            what, first = outcome.failures[0]
            raise JobFailedError(what, f"could not abort {len(outcome.failures)} upload(s) of "
                                       f"job {self.job.id} ({first}); its records are kept "
                                       f"under {self.layout.root} for a retry of abort_job")
        delete_tree(self.records, self.layout.root, listed_urls=records.urls,
                    known=[self.layout.marker])
        self._sweep_root(set(), passes=2)

    def _sweep_root(self, keep_ids: set[str], *, passes: int) -> None:
        """Re-list the job root up to ``passes`` times; abort and delete whatever appeared
        since the last listing (records of attempts that were still running).  This narrows,
        but cannot close, the window of a process that keeps writing after its job ended."""
        for _ in range(passes):
            records = scan_job(self.records, self.layout.root)
            if not records.urls:
                return
            with self.executor("sweep") as pool:
                outcome = abort_owned(self.store, records, pool, dest=self.dest,
                                      committed_ids=keep_ids, records_store=self.records)
            self.stats.incr(S.COMMITTER_COMMITS_ABORTED, outcome.aborted)
            if outcome.failures:
                return  # keep the records for a later abort_job
            delete_tree(self.records, self.layout.root, listed_urls=records.urls)

    def _abort_local(self) -> None:
        """Remove local data of this job in this process (staging committers)."""
        return None

    # -- task ------------------------------------------------------------------------------

    def save_pendingset(self, task: TaskContext, commits: list[Any]) -> TaskCommitMessage:
        """Save this attempt's pendingset (attempt-unique name) and build its message."""
        stats = self.count_task_success()
        pset = task_pendingset(self.name, task, commits, stats, self.clock.now_millis())
        url = self.layout.pendingset(task.attempt_id)
        with self.stats.duration(S.TASK_STAGE_SAVE_PENDINGSET):
            self.records.put(url, pset.to_bytes())
        return self.make_message(task, "pendingset", {"pendingset": pset.to_json()}, url, stats)

    def abort_recorded(self, task: TaskContext, known: dict[str, str]) -> None:
        """Abort the uploads this attempt recorded (its pendingset, its ``.pending`` files and
        ``known`` id → url), then delete those records.  Intents are kept: the job sweeps
        their keys, which also finds an upload whose create answer was lost (its ID is in no
        record); a task must not sweep, as a sibling attempt may be writing the same key."""
        ids = dict(known)
        to_delete: list[str] = []
        pset_url = self.layout.pendingset(task.attempt_id)
        try:
            pset = PendingSet.from_json(parse_json(self.records.get(pset_url), pset_url),
                                        pset_url)
            ids.update({c.upload_id: c.url for c in pset.commits})
            to_delete.append(pset_url)
        except NotFoundError:
            pass
        listed = [o.url for o in list_dir(self.records, self.layout.task_dir(task.attempt_id))]
        pendings = [u for u in listed if u.endswith(PENDING)]
        with self.executor("abort-task") as pool:
            def read(url: str) -> tuple[str, SinglePendingCommit | None]:
                try:
                    return url, SinglePendingCommit.from_bytes(self.records.get(url), url)
                except (NotFoundError, FormatError):
                    return url, None

            for url, commit in pool.imap(read, pendings):
                if commit is not None:
                    ids[commit.upload_id] = commit.url
                    to_delete.append(url)

            def abort(item: tuple[str, str]) -> bool:
                return abort_quietly(self.store, item[1], item[0])

            _results, errors = pool.run_all(abort, sorted(ids.items()))
        if errors:
            (uid, url), exc = errors[0]
            raise CommitError(url, f"could not abort upload {uid} of task attempt "
                                   f"{task.attempt_id}: {exc}")
        existing = set(listed) | {pset_url}
        self.records.delete_many(sorted(u for u in set(to_delete) if u in existing))
