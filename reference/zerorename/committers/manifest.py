"""The manifest committer (Hadoop's ``ManifestCommitter``, for ABFS/GCS-like stores).

Task attempts write files under ``<dest>/_temporary/<job id>/<NN>/tasks/<attempt id>/``.
Task commit lists that directory and saves a *manifest* — the files to rename, with sizes and
etags, and the directories they need — as ``manifests/<attempt id>-manifest.json``; no data
moves.  Job commit runs as stages (see :mod:`zerorename.rename_stages`): load the manifests in
parallel, make room for the destination directories, rename every file in parallel,
optionally validate the result, save ``_SUCCESS``, clean up.

Store requirements (Hadoop's manifest protocol): consistent listing and atomic file rename.
On a store without rename (S3) every "rename" is a server-side copy: job commit becomes O(data),
the sources are deleted with the job's temporary tree once ``_SUCCESS`` is saved, and a crash
mid-commit leaves both copies, though never neither.  It works, and ``_SUCCESS`` counts the
copies (``op_rename_by_copy``), but the magic or staging committers are the right choice there.

A job commit that fails before ``_SUCCESS`` is saved takes back every file it published and
keeps the task output for a rerun or ``abort_job`` (see :mod:`zerorename.committers.fileoutput`).

Options (Hadoop names): ``mapreduce.manifest.committer.io.threads`` (default 16),
``…validate.output`` (false), ``…delete.target.files`` (false),
``mapreduce.fileoutputcommitter.cleanup.skipped`` (false),
``mapreduce.fileoutputcommitter.marksuccessfuljobs`` (true), ``…writer.queue.capacity``
(manifests loaded ahead of processing; default twice the threads),
``…summary.report.directory`` (unset: report saved there even when the job fails; on any
store, and a report that cannot be saved is a warning, never a failed job).
"""

from __future__ import annotations

from typing import ClassVar

from zerorename import options as O
from zerorename import statistics as S
from zerorename.committers.deletes import DELETE_PAGE, delete_pages
from zerorename.committers.fileoutput import TARGET_EXISTS, RenameCommitter
from zerorename.committers.layout import SUCCESS_MARKER
from zerorename.committers.paths import check_destination, dest_url
from zerorename.context import TaskContext
from zerorename.errors import FormatError, NotFoundError, StoreError
from zerorename.formats import DirEntry, FileEntry, SuccessData, TaskManifest, parse_json
from zerorename.messages import TaskCommitMessage
from zerorename.rename_stages import (
    Publication,
    create_directories,
    load_manifests,
    rename_files,
    validate_output,
)
from zerorename.stages import (
    SAVED_KEY,
    TASK_ATTEMPT_NUMBER_KEY,
    FilenameSample,
    StageContext,
    StageRunner,
    TaskSource,
)
from zerorename.store import list_dir
from zerorename.urls import join

__all__ = ["ManifestCommitter"]

MANIFEST_SUFFIX = "-manifest.json"


class ManifestCommitter(RenameCommitter):
    """See the module docstring."""

    name: ClassVar[str] = "manifest"
    hadoop_class: ClassVar[str] = \
        "org.apache.hadoop.mapreduce.lib.output.committer.manifest.ManifestCommitter"
    allow_copy_rename: ClassVar[bool] = True
    default_threads: ClassVar[int] = 16
    tasks_counter: ClassVar[str] = S.COMMITTER_TASKS_COMPLETED

    _earlier: dict[str, set[str]] | None = None
    _own_success: bool | None = None

    def _needs_task_commit(self, task: TaskContext) -> bool:
        return True  # Hadoop: an empty task still commits an (empty) manifest

    def _commit_task(self, task: TaskContext) -> TaskCommitMessage:
        task_dir = self._work_path(task)
        files: list[FileEntry] = []
        dirs: dict[str, DirEntry] = {}
        for rel, info in self.task_files(task):
            final = dest_url(self.dest, rel)
            check_destination(final, self.dest, info.url)
            files.append(FileEntry(info.url, final, info.size, info.etag or None))
            parts = rel.split("/")[:-1]
            for level in range(1, len(parts) + 1):
                path = dest_url(self.dest, "/".join(parts[:level]))
                dirs.setdefault(path, DirEntry(path, 0, level))
        self.stats.sample(S.COMMITTER_TASK_FILE_COUNT, len(files))
        self.stats.sample(S.COMMITTER_TASK_DIRECTORY_COUNT, len(dirs))
        self.stats.incr(S.COMMITTER_TASK_FILE_SIZE, sum(f.size for f in files))
        stats = self.count_task_success()
        manifest = TaskManifest(
            job_id=self.job_id, job_attempt=self.job.attempt, task_id=task.task_name,
            task_attempt_id=task.attempt_id, task_attempt_dir=task_dir, files=files,
            directories=sorted(dirs.values(), key=lambda d: (d.level, d.dest)),
            extra_data={TASK_ATTEMPT_NUMBER_KEY: str(task.attempt),
                        SAVED_KEY: str(self.clock.now_millis()), "zerorename.committer": self.name},
            iostatistics=stats,
        )
        url = self.layout.manifest(task.attempt_id)
        with self.stats.duration(S.TASK_STAGE_SAVE_MANIFEST):
            self.store.put(url, manifest.to_bytes())
        return self.make_message(task, "manifest", {"manifest": manifest.to_json()}, url, stats)

    def _commit_job(self, messages: list[TaskCommitMessage] | None) -> SuccessData:
        runner = StageRunner(self.stats, self.job)
        if messages is None:
            self.require_marker()
            sources = [TaskSource(url=o.url)
                       for o in list_dir(self.store, self.layout.manifests_dir)
                       if o.url.endswith(MANIFEST_SUFFIX)]
        else:
            sources = [TaskSource(message=m) for m in messages]

        filenames = FilenameSample()
        capacity = self.opts.get_int(O.MANIFEST_QUEUE_CAPACITY.name, default=2 * self.threads)
        with self.publishing(replace=False) as publication:
            with self.executor("commit", capacity=max(1, capacity)) as pool:
                ctx = StageContext(self.store, self.job, self.stats, pool, runner, self.name)
                loaded = runner.run(S.JOB_STAGE_LOAD_MANIFESTS, lambda: load_manifests(
                    ctx, sources, self.check_in_destination, self.layout.task_dir))
                with loaded.spool:
                    if self.native_rename:
                        runner.run(S.JOB_STAGE_CREATE_TARGET_DIRS,
                                   lambda: create_directories(ctx, loaded))
                    runner.run(S.JOB_STAGE_RENAME_FILES, lambda: rename_files(
                        ctx, loaded, filenames,
                        delete_target=self.opts.get_bool(O.MANIFEST_DELETE_TARGET.name),
                        publication=publication))
                    if self.opts.get_bool(O.MANIFEST_VALIDATE_OUTPUT.name):
                        runner.run(S.JOB_STAGE_OPTIONAL_VALIDATE_OUTPUT,
                                   lambda: validate_output(ctx, loaded))
            success = self.job_success(filenames, loaded)
            self.save_success(success, runner)
            skipped = self.opts.get_bool(O.CLEANUP_SKIPPED.name)
            self.clean_up_published(success, runner, lambda: (
                self._close_skipped_cleanup(publication) if skipped
                else self._cleanup(publication)))
        return success

    def _move_once(self, src: str, dst: str) -> None:
        """A job commit's rename.  After a driver restart the crashed job attempt's commit may
        already have renamed some files of this job into the destination (or all of them, and
        saved ``_SUCCESS``, and crashed while cleaning up); a store whose rename refuses an
        existing target would then fail every rerun of the job for ever.  A target that is
        this job's own output is replaced: its etag is the one a manifest of an *earlier
        attempt of this job* recorded for it, or the destination's ``_SUCCESS`` names this job.
        Any other target still fails."""
        try:
            super()._move_once(src, dst)
        except StoreError as exc:
            if exc.code not in TARGET_EXISTS or not self._published_by_earlier_attempt(dst):
                raise
            self.store.delete(dst)
            super()._move_once(src, dst)
            self.stats.incr(S.COMMIT_FILE_RENAME_REPLACED_EARLIER_ATTEMPT)

    def _published_by_earlier_attempt(self, dst: str) -> bool:
        info = self.store.head(dst)
        etag = (info.etag or "").strip('"') if info is not None else ""
        if etag and etag in self._earlier_etags().get(dst, set()):
            return True
        return self._committed_by_this_job()

    def _committed_by_this_job(self) -> bool:
        """Whether ``_SUCCESS`` in the destination is this job's (an earlier attempt committed
        it, then its driver died before Spark learnt so); read once."""
        if self._own_success is None:  # no lock held across requests (see _earlier_etags)
            url = join(self.dest, SUCCESS_MARKER)
            try:
                success = SuccessData.from_json(parse_json(self.store.get(url), url), url)
                self._own_success = success.job_id == self.job_id
            except (NotFoundError, FormatError):
                self._own_success = False
        return self._own_success

    def _earlier_etags(self) -> dict[str, set[str]]:
        """Destination -> the etags the manifests of this job's earlier attempts recorded
        for it; read on the first refused rename (never on a first attempt's commit).  No lock
        is held across the reads: pool workers may be greenlets of one thread (the harness),
        where a worker blocking on a lock another paused in holds would hang them all; two
        workers refused at once merely both read."""
        if self._earlier is None:
            found: dict[str, set[str]] = {}
            for attempt in range(self.job.attempt):
                directory = join(self.layout.attempt_dir_of(attempt), "manifests")
                for obj in list_dir(self.store, directory):
                    if not obj.url.endswith(MANIFEST_SUFFIX):
                        continue
                    try:
                        manifest = TaskManifest.from_json(
                            parse_json(self.store.get(obj.url), obj.url), obj.url)
                    except NotFoundError:
                        continue
                    for entry in manifest.files:
                        if entry.etag:
                            found.setdefault(entry.dest, set()).add(entry.etag.strip('"'))
            self._earlier = found
        return self._earlier

    def _close_skipped_cleanup(self, publication: Publication) -> None:
        """With cleanup skipped the temporary tree stays, but two things go: the job marker
        (so the committed job cannot be committed again, by any committer object) and, on a
        store without rename, the sources that were copied (they are now the destination's
        files)."""
        with self.executor("cleanup") as pool:
            delete_pages(self.store, [self.layout.marker, *publication.copied_sources()], pool)

    def _cleanup(self, publication: Publication) -> None:
        """Delete the job's temporary tree.  On a store without rename it still holds a
        source beside each published copy: F objects, ⌈F/1000⌉ DeleteObjects pages, and as
        many pages of listing to find them.  The journal knows them, so once they fill a page
        they are deleted first, their pages in parallel; the listing of the tree that follows
        then finds only the manifests and the marker.  The serial requests after the last
        copy stay a handful whatever F is (F = 10,000 at 20 ms a request: 25 serial requests
        before, 5 and one parallel round now), and no request is added (fewer sources are
        left to the listing's one page, as before)."""
        sources = publication.copied_sources()
        if len(sources) >= DELETE_PAGE:
            with self.executor("cleanup") as pool:
                delete_pages(self.store, sources, pool)
        self._abort_job(failed=False)

    def _abort_task(self, task: TaskContext) -> None:
        super()._abort_task(task)
        self.store.delete(self.layout.manifest(task.attempt_id))
