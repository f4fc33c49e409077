"""Bounded hidden state: a finished fenced job's commit record is kept for the retention, then
expired by a later job's cleanup or by ``zerorename records expire``; an aborted job of any
committer leaves no record."""

from __future__ import annotations

import pytest

import zerorename as zr
from zerorename.committers.records import RETENTION_OPTION, find_expired

from .conftest_helpers import Env, options, run_job

FILES = {0: {"part-0.csv": b"a\n"}, 1: {"x=1/part-1.csv": b"b\n" * 50}}


def hidden(env: Env, dest: str) -> list[str]:
    return sorted(k for k in env.objects(dest) if k not in env.output(dest))


def test_hidden_objects_do_not_grow_with_the_number_of_jobs(env: Env) -> None:
    dest = env.dest()
    opts = options(**{RETENTION_OPTION.replace(".", "__"): "0"})
    counts = []
    for _ in range(5):
        run = run_job("fenced", env.store, dest, FILES, opts=opts)
        counts.append(len(hidden(env, dest)))
    # _SUCCESS and the last job's record (it still fences that job's late task commits)
    assert counts == [2] * 5
    assert hidden(env, dest) == ["_SUCCESS", f"__fenced_job-{run.job.id}/commit.json"]


def test_records_within_the_retention_are_kept(env: Env) -> None:
    dest = env.dest()
    jobs = [run_job("fenced", env.store, dest, FILES).job.id for _ in range(3)]
    assert hidden(env, dest) == ["_SUCCESS", *sorted(f"__fenced_job-{j}/commit.json"
                                                      for j in jobs)]


def test_a_job_in_flight_or_not_completed_is_never_expired(env: Env) -> None:
    dest = env.dest()
    in_flight = run_job("fenced", env.store, dest, FILES, commit=False)
    done = run_job("fenced", env.store, dest, {0: {"other-0.csv": b"c\n"}})
    expired = find_expired(env.store, dest, older_than=0, now=1e12)
    assert [r.job_id for r in expired] == [done.job.id]  # the in-flight root is kept
    in_flight.driver.commit_job(in_flight.messages)
    assert env.uploads(dest) == []


@pytest.mark.parametrize("committer", ["magic", "directory", "partitioned", "fenced",
                                       "manifest"])
def test_an_aborted_job_leaves_no_record(env: Env, committer: str) -> None:
    dest = env.dest()
    run = run_job(committer, env.store, dest, FILES, commit=False)
    run.driver.abort_job()
    run.driver.cleanup_job()
    assert env.objects(dest) == {}
    assert env.uploads(dest) == []


def test_options_reach_the_committer() -> None:
    job = zr.JobContext("s3://b/t", options=options(**{RETENTION_OPTION.replace(".", "__"): "7"}))
    assert job.opts.get_seconds(RETENTION_OPTION) == 7.0


# -- the commands ---------------------------------------------------------------------------


def cli(env: Env, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        *argv: str) -> tuple[int, str, str]:
    from zerorename import cli as zcli

    monkeypatch.setattr(zcli, "_store_for", lambda url, args: env.store)
    code = zcli.main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_records_expire_dry_run_then_expire(env: Env, monkeypatch: pytest.MonkeyPatch,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    dest = env.dest()
    jobs = [run_job("fenced", env.store, dest, FILES).job.id for _ in range(3)]
    in_flight = run_job("fenced", env.store, dest, {0: {"late.csv": b"z\n"}}, commit=False)
    code, out, err = cli(env, monkeypatch, capsys, "records", "list", dest)
    assert code == 0 and "3 finished job record(s)" in err
    assert {line.split("\t")[1] for line in out.splitlines()} == {f"job={j}" for j in jobs}
    # within the default retention (1 day): nothing expires
    before = hidden(env, dest)
    code, out, err = cli(env, monkeypatch, capsys, "records", "expire", dest)
    assert "removed 0 expired record(s)" in err and hidden(env, dest) == before
    code, out, err = cli(env, monkeypatch, capsys, "records", "expire", dest,
                         "--older-than", "0s", "--dry-run")
    assert "dry run: would remove 3 expired record(s)" in err and len(out.splitlines()) == 3
    assert hidden(env, dest) == before
    code, out, err = cli(env, monkeypatch, capsys, "records", "expire", dest,
                         "--older-than", "0s")
    assert code == 0 and "removed 3 expired record(s)" in err
    running = sorted(k for k in env.objects(dest)
                     if k.startswith(f"__fenced_job-{in_flight.job.id}/"))
    assert running and hidden(env, dest) == ["_SUCCESS", *running]
    in_flight.driver.commit_job(in_flight.messages)  # the job in flight was left whole
    assert env.output(dest)["late.csv"] == b"z\n"


@pytest.mark.parametrize("committer", ["magic", "fenced", "directory"])
def test_uploads_abort_job_leaves_no_record(env: Env, committer: str,
                                            monkeypatch: pytest.MonkeyPatch,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    """A crashed job (tasks committed, the driver gone): ``uploads abort --job`` aborts its
    uploads and removes its records; another job's are untouched."""
    dest = env.dest()
    crashed = run_job(committer, env.store, dest, FILES, commit=False)
    other = run_job(committer, env.store, dest, {0: {"other.csv": b"o\n" * 40}}, commit=False)
    code, _out, err = cli(env, monkeypatch, capsys, "uploads", "abort", dest, "--job",
                          crashed.job.id, "--dry-run")
    assert "dry run: would remove" in err and f"job {crashed.job.id}" in err
    code, _out, err = cli(env, monkeypatch, capsys, "uploads", "abort", dest, "--job",
                          crashed.job.id)
    assert code == 0 and f"record(s) of job {crashed.job.id}" in err
    assert not any(crashed.job.id in k for k in env.objects(dest))
    other.driver.commit_job(other.messages)
    assert env.output(dest) == {"other.csv": b"o\n" * 40}
    assert env.uploads(dest) == []
