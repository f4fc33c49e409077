"""Job commit safety: a failed job commit takes back what it published and keeps the only
copy of what it did not; a saved summary report never decides whether a published job
failed; a committed job cannot be committed again, whichever committer object tries.

The fault cases follow the issue's reproduction: three tasks of two files each, one thread,
and every publishing request (S3 CopyObject, or a local rename) failing with a 500 from the
third one on.  Afterwards the destination must hold exactly what it held before (nothing),
and both ways forward must end in an exact state: a rerun of ``commit_job`` once the store
works again publishes every file, and ``abort_job`` leaves nothing.
"""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

import zerorename as zr
from zerorename.urls import join

from .conftest_helpers import (
    ALL,
    ON_S3,
    Env,
    FaultyStore,
    JobRun,
    committer_backends,
    options,
    run_job,
)

pytestmark = pytest.mark.usefixtures("no_leaked_threads")

#: Three tasks, two files each (one of them nested): the issue's reproduction.
FILES = {t: {f"t{t}/a": bytes([65 + t]) * 300, f"t{t}/sub/b": bytes([97 + t]) * 40}
         for t in range(3)}
WRITTEN = {rel: data for task in FILES.values() for rel, data in task.items()}
COPY_RENAME = {"zerorename.fileoutput.rename-by-copy": "true"}


def _one_thread_opts(**extra: str) -> dict[str, str]:
    return options(**{"fs.s3a.committer.threads": "1",
                      "mapreduce.manifest.committer.io.threads": "1",
                      "fs.s3a.retry.limit": "1", **COPY_RENAME, **extra})


def _temporary(env: Env, dest: str, job_id: str) -> dict[str, bytes]:
    prefix = f"_temporary/{job_id}/"
    return {k: v for k, v in env.objects(dest).items() if k.startswith(prefix)}


def _assert_every_task_file_kept(env: Env, dest: str, run: JobRun) -> None:
    """Each written file's bytes are still under the job's temporary tree (its only copy,
    since nothing is visible)."""
    kept = _temporary(env, dest, run.job.id)
    for rel, data in WRITTEN.items():
        copies = [k for k, v in kept.items() if k.endswith("/" + rel) and v == data]
        assert copies, f"{rel}: its only copy was deleted by the failed job commit"


def _fail_publishing_from_the_third(env: Env, faulty: FaultyStore) -> None:
    """S3 publishes by CopyObject, LocalStore by rename: the third and every later one out
    of the job's temporary tree answers 500 (after the committer's retry)."""
    op = "copy" if env.kind == "moto" else "rename"
    faulty.fail(op, nth=3, times=None, status=500,
                match=lambda src: "/_temporary/" in src)  # not a revert's rename back


@pytest.mark.parametrize("then", ["rerun-same-object", "rerun-new-object-hadoop", "abort"])
@pytest.mark.parametrize("committer", ["manifest", "v1"])
def test_failed_publish_reverts_and_keeps_the_task_output(committer: str, then: str,
                                                          env: Env) -> None:
    """Issue 11 item 1: the job commit fails after publishing two files.  They are taken
    back (nothing visible, no ``_SUCCESS``), every other file is still in the job's
    temporary tree, and a rerun (same object or a new one, Spark's or Hadoop's protocol) or
    an ``abort_job`` ends in an exact state."""
    dest = env.dest()
    faulty = FaultyStore(env.store)
    run = run_job(committer, faulty, dest, FILES, opts=_one_thread_opts(), commit=False)
    _fail_publishing_from_the_third(env, faulty)
    with pytest.raises(zr.JobFailedError, match=r"reverted 2 published file") as info:
        run.driver.commit_job(run.messages)
    assert "kept" in info.value.reason
    assert faulty.faults[0].fired >= 1
    assert env.output(dest) == {}, "a failed job commit left part of its output visible"
    assert "_SUCCESS" not in env.objects(dest)
    _assert_every_task_file_kept(env, dest, run)

    faulty.faults.clear()
    if then == "abort":
        run.driver.abort_job()
        assert env.objects(dest) == {}
        assert env.uploads(dest) == []
        return
    if then == "rerun-same-object":
        success = run.driver.commit_job(run.messages)
    else:
        success = zr.create_committer(committer, env.store, run.job).commit_job(None)
    assert success.success
    assert env.output(dest) == WRITTEN
    assert set(env.objects(dest)) == set(WRITTEN) | {"_SUCCESS"}
    assert zr.read_success(env.store, dest).job_id == run.job.id


@pytest.mark.parametrize("committer", ["manifest", "v1"])
def test_file_and_directory_with_one_name_fail_without_publishing(committer: str,
                                                                  local_env: Env) -> None:
    """Issue 11 item 1 on LocalStore: one task writes ``t0/a`` as a file, another
    ``t0/a/x`` (a file inside a directory of that name).  Only one of them can be renamed
    into place; the job commit fails, takes back what it renamed, keeps every task file,
    fails the same way when rerun, and ``abort_job`` then leaves nothing."""
    dest = local_env.dest()
    files = {0: {"t0/a": b"file", "t0/b": b"b0"}, 1: {"t1/a": b"a1", "t1/b": b"b1"},
             2: {"t2/a": b"a2", "t0/a/x": b"inside"}}
    run = run_job(committer, local_env.store, dest, files, opts=_one_thread_opts(),
                  commit=False)
    for _ in range(2):  # the first commit, then a rerun: the clash is permanent
        with pytest.raises(zr.CommitError, match=r"t0/a"):
            run.driver.commit_job(run.messages)
        assert local_env.output(dest) == {}
        kept = _temporary(local_env, dest, run.job.id)
        for rel, data in {r: d for t in files.values() for r, d in t.items()}.items():
            assert any(k.endswith("/" + rel) and v == data for k, v in kept.items()), rel
    run.driver.abort_job()
    assert local_env.objects(dest) == {}


@pytest.mark.parametrize("then", ["rerun", "abort"])
def test_a_file_that_cannot_be_taken_back_stays_named_then_rerun_or_abort(then: str,
                                                                        local_env: Env) -> None:
    """The revert itself fails for one file (its rename back answers 500): that file is
    named in the error and stays visible (its only copy: it is never deleted), the rest is
    taken back.  A rerun adopts it (source gone, destination complete) and finishes the job
    exactly; ``abort_job`` on the same committer object deletes it with the task output."""
    dest = local_env.dest()
    faulty = FaultyStore(local_env.store)
    run = run_job("manifest", faulty, dest, FILES, opts=_one_thread_opts(), commit=False)
    _fail_publishing_from_the_third(local_env, faulty)
    faulty.fail("rename", times=None, status=500,
                match=lambda src: src == join(dest, "t0/a"))  # t0/a cannot be moved back
    with pytest.raises(zr.JobFailedError, match=r"reverted 1 published file.*1 could not be "
                                                r"reverted and stay visible") as info:
        run.driver.commit_job(run.messages)
    assert join(dest, "t0/a") in info.value.reason
    assert local_env.output(dest) == {"t0/a": WRITTEN["t0/a"]}
    faulty.faults.clear()
    if then == "rerun":
        run.driver.commit_job(run.messages)
        assert local_env.output(dest) == WRITTEN
        assert run.driver.stats.counter("commit_file_rename_recovered") == 1
    else:
        run.driver.abort_job()
        assert local_env.objects(dest) == {}


def test_v1_task_recovery_after_a_failed_job_commit(local_env: Env) -> None:
    """Issue 11 item 1, v1's recovery: job attempt 0's commit fails part-way; attempt 1
    recovers every committed task and commits exactly the job's output."""
    dest = local_env.dest()
    faulty = FaultyStore(local_env.store)
    opts = _one_thread_opts()
    run = run_job("v1", faulty, dest, FILES, opts=opts, job_id="job-recover", commit=False)
    _fail_publishing_from_the_third(local_env, faulty)
    with pytest.raises(zr.JobFailedError):
        run.driver.commit_job(None)
    job1 = zr.JobContext(dest, job_id="job-recover", attempt=1, options=opts)
    driver1 = zr.create_committer("v1", local_env.store, job1)
    driver1.setup_job()
    for task_id in FILES:
        zr.create_committer("v1", local_env.store, job1,
                            task=job1.task(task_id)).recover_task(job1.task(task_id))
    driver1.commit_job(None)
    assert local_env.output(dest) == WRITTEN


def test_success_marker_failure_reverts_every_published_file(env: Env) -> None:
    """A manifest job commit that renamed every file but could not save ``_SUCCESS`` failed:
    the renamed files are taken back too, and a rerun finishes the job."""
    dest = env.dest()
    faulty = FaultyStore(env.store)
    run = run_job("manifest", faulty, dest, FILES, opts=_one_thread_opts(), commit=False)
    faulty.fail("put", times=None, status=500, match=lambda url: url.endswith("/_SUCCESS"))
    with pytest.raises(zr.JobFailedError, match=r"reverted 6 published file"):
        run.driver.commit_job(run.messages)
    assert env.output(dest) == {}
    _assert_every_task_file_kept(env, dest, run)
    faulty.faults.clear()
    run.driver.commit_job(run.messages)
    assert env.output(dest) == WRITTEN


# -- item 2: the summary report ------------------------------------------------------------


REPORT_OPTIONS = ("fs.s3a.committer.summary.report.directory",
                  "mapreduce.manifest.committer.summary.report.directory")


@pytest.mark.parametrize("option", REPORT_OPTIONS)
@pytest.mark.parametrize("committer", ALL)
def test_summary_report_on_another_store(committer: str, option: str, moto_env: Env,
                                         tmp_path: Path) -> None:
    """Issue 11 item 2: an S3 destination with ``summary.report.directory`` =
    ``file:///…`` (the manifest committer document's example).  The report is written
    through a store for its own scheme, and the job commit succeeds."""
    dest = moto_env.dest()
    reports = f"file://{tmp_path}/reports"
    run = run_job(committer, moto_env.store, dest, {0: {"p": b"1" * 300}, 1: {"q": b"2"}},
                  opts=options(**{option: reports}, **COPY_RENAME))
    assert run.success is not None and run.success.success
    assert moto_env.output(dest) == {"p": b"1" * 300, "q": b"2"}
    saved = (tmp_path / "reports" / f"summary-{run.job.id}.json").read_bytes()
    report = zr.SuccessData.from_bytes(saved, "report")
    assert report.success and report.job_id == run.job.id
    assert sorted(report.filenames) == [join(dest, "p"), join(dest, "q")]


@pytest.mark.parametrize("committer", ALL)
def test_unsavable_summary_report_never_fails_a_published_job(
        committer: str, local_env: Env, tmp_path: Path,
        caplog: pytest.LogCaptureFixture) -> None:
    """Issue 11 item 2: when the report cannot be saved (its directory is under a regular
    file), the published job is still reported as committed; the failure is recorded in the
    returned SuccessData and the committer's statistics, and logged as a warning."""
    dest = local_env.dest()
    blocker = tmp_path / "not-a-directory"
    blocker.write_bytes(b"a file")
    opts = options(**{REPORT_OPTIONS[0]: f"file://{blocker}/reports"})
    with caplog.at_level(logging.WARNING, logger="zerorename"):
        run = run_job(committer, local_env.store, dest, {0: {"p": b"1"}}, opts=opts)
    assert run.success is not None and run.success.success
    assert local_env.output(dest) == {"p": b"1"}
    assert zr.read_success(local_env.store, dest).job_id == run.job.id
    assert str(blocker) in run.success.diagnostics["summary.report.failure"]
    assert run.driver.stats.counter("committer_summary_report_failures") == 1
    assert any("summary report" in r.getMessage() for r in caplog.records)


def test_summary_report_in_an_unknown_scheme_is_a_warning(moto_env: Env,
                                                          caplog: pytest.LogCaptureFixture
                                                          ) -> None:
    """A report directory no store here serves (``mem://``) is refused with the reason, as a
    warning: the job itself committed."""
    dest = moto_env.dest()
    opts = options(**{REPORT_OPTIONS[1]: "mem://reports/here"})
    with caplog.at_level(logging.WARNING, logger="zerorename"):
        run = run_job("magic", moto_env.store, dest, {0: {"p": b"1"}}, opts=opts)
    assert run.success is not None and run.success.success
    assert "mem://reports/here" in run.success.diagnostics["summary.report.failure"]
    assert moto_env.output(dest) == {"p": b"1"}


# -- item 7: committing a committed job again ----------------------------------------------


@pytest.mark.parametrize(("committer", "backend"),
                         committer_backends(ALL, moto=("magic", "manifest")))
def test_recommit_by_a_new_committer_object_is_refused(committer: str, backend: str,
                                                       backend_env: Env,
                                                       tmp_path: Path) -> None:
    """Issue 11 item 7: a new committer object with the same job ID and the same messages
    cannot commit the job again.  It fails before any request that changes the store:
    ``_SUCCESS``, the output and the saved summary report stay as the first commit left
    them."""
    env = backend_env
    dest = env.dest()
    reports = f"file://{tmp_path}/reports"
    opts = options(**{REPORT_OPTIONS[0]: reports}, **COPY_RENAME)
    run = run_job(committer, env.store, dest, {0: {"p": b"1" * 300}, 1: {"q/r": b"2"}},
                  opts=opts)
    before = env.objects(dest)
    faulty = FaultyStore(env.store)
    again = zr.create_committer(committer, faulty, run.job)
    with pytest.raises(zr.CommitError, match=r"already committed"):
        again.commit_job([zr.TaskCommitMessage.from_json(m.dumps()) for m in run.messages])
    changing = {"put", "delete", "delete_many", "copy", "rename", "complete_multipart",
                "abort_multipart", "create_multipart", "upload_part"}
    assert [call for call in faulty.log if call[0] in changing] == []
    assert env.objects(dest) == before
    report = zr.SuccessData.from_bytes(
        (tmp_path / "reports" / f"summary-{run.job.id}.json").read_bytes(), "report")
    assert report.success


def test_recommit_refused_when_manifest_cleanup_is_skipped(local_env: Env) -> None:
    """Issue 11 item 7 with ``mapreduce.fileoutputcommitter.cleanup.skipped``: the job's
    temporary tree stays, but the job is still known as committed."""
    dest = local_env.dest()
    opts = options(**{"mapreduce.fileoutputcommitter.cleanup.skipped": "true"})
    run = run_job("manifest", local_env.store, dest, {0: {"p": b"1"}}, opts=opts)
    success_before = local_env.store.get(join(dest, "_SUCCESS"))
    for protocol_messages in (run.messages, None):
        again = zr.create_committer("manifest", local_env.store, run.job)
        with pytest.raises(zr.CommitError, match=r"already committed"):
            again.commit_job(protocol_messages)
    assert local_env.store.get(join(dest, "_SUCCESS")) == success_before
    assert local_env.output(dest) == {"p": b"1"}


def test_manifest_on_s3_with_cleanup_skipped_leaves_no_second_copy(moto_env: Env) -> None:
    """On S3 job commit copies and leaves each source to the job's cleanup; with cleanup
    skipped, the copied sources (and the marker) are still deleted once the job is committed:
    the kept temporary tree holds records, not a second copy of the output."""
    dest = moto_env.dest()
    opts = options(**{"mapreduce.fileoutputcommitter.cleanup.skipped": "true"})
    run = run_job("manifest", moto_env.store, dest, FILES, opts=opts)
    assert moto_env.output(dest) == WRITTEN
    kept = _temporary(moto_env, dest, run.job.id)
    assert kept, "cleanup skipped: the manifests stay"
    assert all(k.endswith("-manifest.json") for k in kept), sorted(kept)


@pytest.mark.parametrize(("committer", "backend"),
                         committer_backends((*ALL, "fenced"), moto=(*ON_S3, "fenced")))
def test_a_cleanup_that_fails_after_publishing_never_fails_the_job(
        committer: str, backend: str, backend_env: Env,
        caplog: pytest.LogCaptureFixture) -> None:
    """Once ``_SUCCESS`` is saved the job is committed: every delete of its cleanup failing
    (403, not retried) must not make ``commit_job`` raise — a caller told the job failed
    would rerun or discard committed output.  The failure is recorded in the returned
    SuccessData and the statistics, and logged."""
    env = backend_env
    dest = env.dest()
    faulty = FaultyStore(env.store)
    published = lambda _url: env.store.head(join(dest, "_SUCCESS")) is not None  # noqa: E731
    for op in ("delete", "delete_many"):
        faulty.fail(op, times=None, status=403, match=published)
    opts = options(**COPY_RENAME)
    with caplog.at_level(logging.WARNING, logger="zerorename"):
        run = run_job(committer, faulty, dest, FILES, opts=opts)
    assert run.success is not None and run.success.success
    assert env.output(dest) == WRITTEN
    assert zr.read_success(env.store, dest).job_id == run.job.id
    assert "403" in run.success.diagnostics["cleanup.failure"]
    assert run.driver.stats.counter("committer_cleanup_failures") == 1
    assert any("cleanup failed" in r.getMessage() for r in caplog.records)
