"""The manifest committer's stages and options (Hadoop's manifest committer suites)."""

from __future__ import annotations

import pytest

import zerorename as zr
from zerorename.errors import StoreError
from zerorename.urls import join

from .conftest_helpers import (
    Env,
    FaultyStore,
    options,
    run_job,
)

pytestmark = pytest.mark.usefixtures("no_leaked_threads")

M = "mapreduce.manifest.committer."


class NoOverwriteRename(FaultyStore):
    """HDFS/ABFS semantics: rename refuses an existing destination."""

    def rename(self, src: str, dst: str) -> None:
        if self.inner.head(dst) is not None:
            raise StoreError(dst, "rename destination exists", code="DestinationExists",
                             status=409)
        super().rename(src, dst)


class CorruptingRename(FaultyStore):
    """A rename that lands one byte too many: what output validation must catch."""

    def rename(self, src: str, dst: str) -> None:
        super().rename(src, dst)
        self.inner.put(dst, self.inner.get(dst) + b"!")


def test_job_commit_stages_and_statistics_in_success(local_env: Env) -> None:
    """Hadoop: TestJobThroughManifestCommitter test_0430 / TestManifestCommitProtocol.
    testCommitLifecycle: _SUCCESS names the stage committer_commit_job; op_load_manifest
    counts manifests; files and bytes committed add up; each job stage ran once."""
    dest = local_env.dest("out put")
    files = {t: {f"dir-{t}/file-{i}": b"xy" for i in range(4)} for t in range(3)}
    run_job("manifest", local_env.store, dest, files, protocol="hadoop")
    success = zr.read_success(local_env.store, dest)
    assert success.diagnostics["stage"] == "committer_commit_job"
    assert success.counter("op_load_manifest") == 3
    assert success.counter("committer_files_committed") == 12
    assert success.counter("committer_bytes_committed") == 24
    for stage in ("job_stage_load_manifests", "job_stage_create_target_dirs",
                  "job_stage_rename_files", "committer_commit_job"):
        assert success.counter(stage) == 1, stage
    assert success.counter("committer_tasks_completed") == 3


def test_file_where_a_directory_must_go_is_deleted(local_env: Env) -> None:
    """Hadoop: TestCreateOutputDirectoriesStage.testPrepareDirtyTree: a file at a path where
    the output needs a directory is deleted before the renames."""
    dest = local_env.dest()
    local_env.put(dest, "level1", b"a file in the way")
    run_job("manifest", local_env.store, dest, {0: {"level1/level2/part": b"p"}})
    assert local_env.output(dest) == {"level1/level2/part": b"p"}


def test_delete_target_files_option(local_env: Env) -> None:
    """Hadoop: TestRenameStageFailure.testDeleteTargetPaths: on a store whose rename refuses
    an existing target, job commit fails unless delete.target.files is set."""
    dest = local_env.dest()
    local_env.put(dest, "source.txt", b"old")
    store = NoOverwriteRename(local_env.store)
    with pytest.raises(zr.CommitError, match="exists"):
        run_job("manifest", store, dest, {0: {"source.txt": b"data"}})
    assert local_env.store.get(join(dest, "source.txt")) == b"old"
    run_job("manifest", store, dest, {0: {"source.txt": b"data"}},
            opts=options(**{M + "delete.target.files": "true"}))
    assert local_env.output(dest) == {"source.txt": b"data"}


def test_validate_output_catches_a_bad_rename(local_env: Env) -> None:
    """Hadoop: TestJobThroughManifestCommitter test_0450 / ValidateRenamedFilesStage: with
    validate.output, a committed file whose length differs from its manifest fails the job."""
    dest = local_env.dest()
    store = CorruptingRename(local_env.store)
    run_job("manifest", store, local_env.dest("unvalidated"), {0: {"f": b"12345"}})
    with pytest.raises(zr.CommitError, match="output validation"):
        run_job("manifest", store, dest, {0: {"f": b"12345"}},
                opts=options(**{M + "validate.output": "true"}))


def test_cleanup_skipped_keeps_the_temporary_tree(local_env: Env) -> None:
    """Hadoop: mapreduce.fileoutputcommitter.cleanup.skipped (L8.7): the job's _temporary/<id>
    stays after commit; a later cleanup_job removes it."""
    dest = local_env.dest()
    run = run_job("manifest", local_env.store, dest, {0: {"f": b"1"}},
                  opts=options(**{"mapreduce.fileoutputcommitter.cleanup.skipped": "true"}))
    assert any(k.startswith(f"_temporary/{run.job.id}/") for k in local_env.objects(dest))
    run.driver.cleanup_job()
    assert set(local_env.objects(dest)) == {"f", "_SUCCESS"}


def test_summary_report_saved_even_when_the_job_fails(local_env: Env) -> None:
    """Hadoop: TestManifestCommitProtocol.testFailAbort / L6.7: with summary.report.directory
    set, a failed job commit still saves a report with success=false and the error."""
    dest = local_env.dest()
    reports = local_env.dest("reports")
    opts = options(**{M + "summary.report.directory": reports})
    run = run_job("manifest", local_env.store, dest, {0: {"f": b"1"}}, opts=opts, commit=False)
    local_env.store.put(run.messages[0].record, b"{broken")
    with pytest.raises(zr.FormatError):
        run.driver.commit_job(None)
    report = zr.SuccessData.from_bytes(
        local_env.store.get(join(reports, f"summary-{run.job.id}.json")), "report")
    assert report.success is False and "corrupt" in report.diagnostics["exception"]


def test_manifest_on_s3_renames_by_copy_and_counts_it(moto_env: Env) -> None:
    """On S3 the manifest committer's renames are copy + delete: it works, and _SUCCESS
    records the cost (one op_rename_by_copy per file)."""
    dest = moto_env.dest()
    files = {0: {"a": b"1" * 300, "b/c": b"2"}, 1: {"d": b""}}
    run_job("manifest", moto_env.store, dest, files)
    assert moto_env.output(dest) == {"a": b"1" * 300, "b/c": b"2", "d": b""}
    assert zr.read_success(moto_env.store, dest).counter("op_rename_by_copy") == 3
    assert set(moto_env.objects(dest)) == {"a", "b/c", "d", "_SUCCESS"}


def test_rename_recovered_when_a_retried_rename_already_happened(local_env: Env) -> None:
    """Hadoop: TestEtagRenameFailure.testRenameEtagRecovery, re-expressed: the first rename
    lands but reports a 503; the retry finds the source gone and the destination complete,
    and counts it as recovered instead of failing."""

    class LandThenFail(FaultyStore):
        def rename(self, src: str, dst: str) -> None:
            if "dir/" in dst and not self.calls["landed"]:
                self.calls["landed"] += 1
                self.inner.rename(src, dst)
                raise zr.ThrottledError(src, "503 after the rename happened")
            super().rename(src, dst)

    dest = local_env.dest()
    store = LandThenFail(local_env.store)
    run_job("manifest", store, dest, {0: {"dir/f": b"payload", "g": b"g"}})
    assert local_env.output(dest) == {"dir/f": b"payload", "g": b"g"}
    assert zr.read_success(local_env.store, dest).counter("commit_file_rename_recovered") == 1

