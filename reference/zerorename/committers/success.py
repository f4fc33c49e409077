"""A job's ``_SUCCESS`` and summary report: what every committer writes when a job commit
publishes (or the failure report when it does not).

A mixin of :class:`~zerorename.committers.base.BaseCommitter`, apart from the lifecycle because
the report is its own contract — Hadoop's ``SuccessData`` JSON, read by tools and tests — and
its one rule differs from the lifecycle's: saving the summary report never fails the job.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import ClassVar

from zerorename import options as O
from zerorename import statistics as S
from zerorename.clock import Clock
from zerorename.committers.layout import SUCCESS_MARKER
from zerorename.committers.paths import same_scheme
from zerorename.committers.reliable import ReliableStore
from zerorename.committers.replaced import record_deleted
from zerorename.context import JobContext, Options, hostname
from zerorename.errors import CommitError
from zerorename.formats import SuccessData
from zerorename.stages import FilenameSample, Loaded, StageRunner
from zerorename.stats import IOStatistics
from zerorename.store import Store
from zerorename.stores import store_for_url
from zerorename.stores.fencing import store_diagnostics
from zerorename.urls import join, parse_url

__all__ = ["SUMMARY_DIR_OPTIONS", "JobReports"]

LOG = logging.getLogger(__name__)

SUMMARY_DIR_OPTIONS = (
    O.SUMMARY_DIR.name,
    O.SUMMARY_DIR.aliases[0],
)


class JobReports:
    """``_SUCCESS`` data, its saving stage and the summary report, for the committer that
    mixes it in (whose attributes are declared below)."""

    name: ClassVar[str]
    hadoop_class: ClassVar[str]
    job: JobContext
    dest: str
    opts: Options
    clock: Clock
    stats: IOStatistics
    store: ReliableStore
    raw_store: Store
    threads: int
    part_size: int
    mark_success: bool
    _published: bool
    _commit_started: float | None
    #: files the job deleted to replace them (a staging committer's conflict mode
    #: ``replace``): named in ``_SUCCESS``
    replaced: Sequence[str] = ()

    def success_data(self, filenames: list[str], *, stage: str, success: bool = True,
                     task_stats: IOStatistics | None = None) -> SuccessData:
        stats = IOStatistics(self.clock)
        stats.aggregate(self.stats)
        stats.aggregate(task_stats)
        if stage == S.COMMITTER_COMMIT_JOB and self._commit_started is not None:
            # this commit, timed up to now: _SUCCESS is written before the commit returns
            stats.record_duration(stage, self.clock.monotonic() - self._commit_started,
                                  failed=not success)
        data = SuccessData(
            committer=self.name, job_id=self.job.id, job_id_source=self.job.job_id_source,
            timestamp=self.clock.now_millis(),
            hostname=hostname(),
            description=f"zerorename {self.name} committer, job attempt {self.job.attempt}",
            success=success, filenames=filenames, stage=stage,
            state="SUCCEEDED" if success else "FAILED",
            diagnostics={
                "committer.class": f"{type(self).__module__}.{type(self).__name__}",
                "hadoop.committer": self.hadoop_class,
                "stage": stage,
                "threads": str(self.threads),
                O.PART_SIZE.name: str(self.part_size),
                "destination": self.dest,
                **store_diagnostics(self.raw_store, self.opts),
            },
            iostatistics=stats.snapshot(),
        )
        if self.replaced:
            record_deleted(data.diagnostics, self.dest, self.replaced, job_id=self.job.id)
        return data

    def job_success(self, filenames: FilenameSample, loaded: Loaded) -> SuccessData:
        """The ``_SUCCESS`` of a job commit that published the tasks in ``loaded``, with
        their totals and the duplicate task commits it resolved; counts the job completed."""
        self.stats.incr(S.COMMITTER_JOBS_COMPLETED)
        success = self.success_data(filenames.names, stage=S.COMMITTER_COMMIT_JOB,
                                    task_stats=loaded.task_stats)
        success.metrics.update({"files": loaded.files, "bytes": loaded.bytes,
                                "tasks": len(loaded.winners)})
        if loaded.duplicates_resolved:
            success.diagnostics["duplicate.task.commits"] = "; ".join(
                loaded.duplicates_resolved)
        return success

    def save_success(self, data: SuccessData, runner: StageRunner) -> None:
        """The SaveSuccess stage: ``_SUCCESS`` (unless marksuccessfuljobs=false), which
        publishes the job, then the optional summary report, which cannot fail it."""
        def save() -> None:
            if self.mark_success:
                self.store.put(join(self.dest, SUCCESS_MARKER), data.to_bytes())
            self._published = True
            self._save_report(data)

        runner.run(S.JOB_STAGE_SAVE_SUCCESS_MARKER, save)

    def clean_up_published(self, data: SuccessData, runner: StageRunner,
                           cleanup: Callable[[], object]) -> None:
        """The cleanup stage of a job already published (``_SUCCESS`` saved, or the
        committer's own commit point passed).  Its failure must not report the job failed:
        the output is visible and whole, and a caller told otherwise would rerun or discard a
        committed job.  What it leaves (temporary records, uploads the job did not commit) is
        recorded — ``cleanup.failure`` in ``data``'s diagnostics, statistic
        ``committer_cleanup_failures`` — logged as a warning, and removed by ``abort_job`` or
        the next job's sweep of the destination.  A crash (BaseException) still stops here."""
        try:
            runner.run(S.JOB_STAGE_CLEANUP, cleanup)
        except Exception as exc:
            self.stats.incr(S.COMMITTER_CLEANUP_FAILURES)
            data.diagnostics["cleanup.failure"] = f"{type(exc).__name__}: {exc}"
            LOG.warning("job %s is committed, but its cleanup failed (abort_job or the next "
                        "job's sweep removes what it left): %s", self.job.id, exc,
                        exc_info=not isinstance(exc, CommitError))

    def _save_report(self, data: SuccessData) -> Exception | None:
        """Save ``data`` as ``summary-<job id>.json`` in the summary report directory, if one
        is set, through a store for that directory's own scheme (Hadoop's documented example
        is a ``file:///`` directory beside an S3 destination).

        Never raises: whether the job failed is decided before the report is written.  A
        report that cannot be saved is recorded (``summary.report.failure`` in ``data``'s
        diagnostics, statistic ``committer_summary_report_failures``), logged as a warning and
        returned."""
        directory = self.opts.get_str(*SUMMARY_DIR_OPTIONS)
        if not directory:
            return None
        url = join(directory, f"summary-{self.job.id}.json")
        try:
            self.report_store(directory).put(url, data.to_bytes())
        except Exception as exc:
            self.stats.incr(S.COMMITTER_SUMMARY_REPORT_FAILURES)
            data.diagnostics["summary.report.failure"] = f"{url}: {exc}"
            LOG.warning("job %s: the summary report %s could not be saved: %s", self.job.id,
                        url, exc)
            return exc
        return None

    def report_store(self, directory: str) -> Store:
        """The store for the summary report directory: the destination's own store when the
        directory has its scheme (``s3a`` counts as ``s3``), else a new one for the
        directory's scheme with default settings (:func:`zerorename.stores.store_for_url`)."""
        scheme = parse_url(directory).scheme
        dest_scheme = parse_url(self.dest).scheme
        if same_scheme(scheme, dest_scheme):
            return self.store
        return ReliableStore(store_for_url(directory), self.store.policy, self.stats)

