"""What a job says at INFO: one line per job stage and per decision, in a dozen lines, with
the counts ``_SUCCESS`` has; DEBUG adds one line per request; no secret ever appears."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

import zerorename as zr
from zerorename.errors import OptionValueError, ThrottledError
from zerorename.retry import RetryPolicy

SECRETS = {"fs.s3a.access.key": "AKIAEXAMPLEKEY00001", "fs.s3a.secret.key": "s3cr3t-value-xyz",
           "fs.s3a.session.token": "token-value-abc"}


def _job(dest: str, committer: str = "fenced", tasks: int = 3) -> zr.SuccessData:
    store = zr.LocalStore()
    job = zr.JobContext(dest=dest, job_id="job-logging-1", attempt=0, options={})
    driver = zr.create_committer(committer, store, job)
    driver.setup_job()
    messages = []
    for task_id in range(tasks):
        task = zr.create_committer(committer, store, job, task=job.task(task_id, 0))
        task.setup_task()
        with task.open(f"year=2024/part-{task_id:05d}.csv") as out:
            out.write(b"0123456789")
        messages.append(task.commit_task())
    return driver.commit_job(messages)


def _lines(caplog: pytest.LogCaptureFixture, level: int) -> list[str]:
    return [r.getMessage() for r in caplog.records
            if r.name.startswith("zerorename") and r.levelno >= level]


def test_a_job_at_info_says_each_stage_and_its_counts(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="zerorename")
    success = _job(f"file://{tmp_path}/out")
    lines = _lines(caplog, logging.INFO)
    job = "job job-logging-1: "
    assert all(line.startswith(job) for line in lines), lines
    stages = [line[len(job):].split(" done in ")[0] for line in lines]
    assert stages == ["setup", "load pendingsets", "check keys", "save commit record",
                      "complete uploads", "save success marker", "cleanup", "job commit"], stages
    assert len(lines) <= 12
    setup = lines[0]
    assert "committer fenced" in setup and f"destination file://{tmp_path}/out" in setup
    assert "job ID from" in setup and "threads 8" in setup
    complete = next(line for line in lines if "complete uploads" in line)
    assert "3 files, 30 bytes, 3 requests" in complete
    whole = lines[-1]
    files = success.counter("committer_files_committed")
    assert f"{files} files, 30 bytes" in whole and files == 3


def test_the_staging_committers_say_their_conflict_mode(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="zerorename")
    _job(f"file://{tmp_path}/out", committer="directory", tasks=1)
    setup = next(line for line in _lines(caplog, logging.INFO) if "setup done" in line)
    assert "committer directory" in setup and "conflict mode append" in setup


def test_debug_adds_a_line_per_request(tmp_path: Path,
                                       caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="zerorename")
    success = _job(f"file://{tmp_path}/out")
    requests = [r.getMessage() for r in caplog.records if r.name == "zerorename.store"]
    puts = [line for line in requests if ": put " in line]
    assert puts and all(" ms" in line for line in puts)
    # the job committer's own requests, one line each (tasks log theirs as they run)
    assert len(requests) >= success.counter("store_complete_multipart") == 3


def test_no_credential_or_secret_option_is_ever_logged(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """Credentials given as options are refused (the client has them), and neither the refusal
    nor anything logged shows their values."""
    caplog.set_level(logging.DEBUG, logger="zerorename")
    for name, value in SECRETS.items():
        with pytest.raises(OptionValueError, match="credentials are never taken") as refused:
            zr.JobContext(dest=f"file://{tmp_path}/out", job_id="j", attempt=0,
                          options={name: value})
        assert value not in str(refused.value) and name in str(refused.value)
    _job(f"file://{tmp_path}/out")
    _job(f"file://{tmp_path}/other", committer="magic")
    text = "\n".join(r.getMessage() for r in caplog.records)
    assert caplog.records, "nothing was logged: the check below would prove nothing"
    for value in SECRETS.values():
        assert value not in text


def test_a_retry_loop_that_gives_up_says_so(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="zerorename")
    policy = RetryPolicy(max_attempts=3, sleep=lambda _s: None)

    def throttled() -> None:
        raise ThrottledError("s3://bucket/key")

    with pytest.raises(ThrottledError):
        policy.call(throttled)
    (line,) = _lines(caplog, logging.WARNING)
    assert "gave up after 3 attempts: ThrottledError" in line and "s3://bucket/key" in line


def test_a_retry_that_ends_with_a_final_answer_is_no_warning(
        caplog: pytest.LogCaptureFixture) -> None:
    """A conditional write that met a conflict and then lost the race (RGW's racing If-Match
    writers): the loop stopped on an answer, it did not give up."""
    caplog.set_level(logging.INFO, logger="zerorename")
    policy = RetryPolicy(max_attempts=5, sleep=lambda _s: None)
    answers = iter([ThrottledError("s3://bucket/key"),
                    zr.PreconditionFailedError("s3://bucket/key", "ETag changed")])

    def racing() -> None:
        raise next(answers)

    with pytest.raises(zr.PreconditionFailedError):
        policy.call(racing)
    assert _lines(caplog, logging.WARNING) == []
    (line,) = _lines(caplog, logging.INFO)
    assert "attempt 2 of a repeated request ended it: PreconditionFailedError" in line


def test_a_failed_stage_is_a_warning(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="zerorename")
    store = zr.LocalStore()
    job = zr.JobContext(dest=f"file://{tmp_path}/out", job_id="job-logging-2", attempt=0,
                        options={})
    (tmp_path / "out").write_bytes(b"a file where the destination directory should be")
    with pytest.raises(zr.CommitError):
        zr.create_committer("magic", store, job).setup_job()
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert any("setup FAILED" in line for line in warnings), warnings


def test_auto_says_which_committer_it_chose_and_why(caplog: pytest.LogCaptureFixture) -> None:
    pytest.importorskip("pyspark")
    from zerorename.spark.core import default_committer

    caplog.set_level(logging.INFO, logger="zerorename")
    assert default_committer(zr.LocalStore(), "file:///tmp/events") == "fenced"
    (line,) = _lines(caplog, logging.INFO)
    assert "auto chose fenced" in line and "writing file:///tmp/events with fenced" in line
