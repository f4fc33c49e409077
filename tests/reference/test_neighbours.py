"""The neighbours a job must leave alone: what a user shares a bucket with.

Each test sets up a neighbour — a job whose destination is nested in this one's (or the other
way round), another team's data, a sibling prefix (``dataset1``/``dataset10``), a second job
on the same destination — runs a job beside it, and checks the neighbour byte for byte.  Every
committer that runs on the store, on moto and LocalStore, and on Ceph RGW (marked ``rgw``).
"""

from __future__ import annotations

from typing import Any

import pytest

import zerorename as zr

from .conftest_helpers import ALL, ON_S3, Env, options, run_job

#: every committer, and on which backends it runs (fenced needs conditional PUT: moto,
#: LocalStore and RGW all honour it)
S3_COMMITTERS = (*ON_S3, "fenced")
EVERY = (*ALL, "fenced")


def backends(rgw: bool = True) -> list[Any]:
    params = []
    for name in EVERY:
        if name in S3_COMMITTERS:
            params.append(pytest.param(name, "moto", id=f"{name}-moto"))
        params.append(pytest.param(name, "local", id=f"{name}-local"))
        if rgw and name in S3_COMMITTERS:
            params.append(pytest.param(name, "rgw", id=f"{name}-rgw", marks=pytest.mark.rgw))
    return params


PARENT_FILES = {0: {"date=1/parent-0.csv": b"parent row 0\n"},
                1: {"date=2/parent-1.csv": b"parent row 1\n" * 40}}
CHILD_FILES = {0: {"child-0.csv": b"child row 0\n" * 40},
               1: {"child-1.csv": b"child row 1\n"}}


def visible(env: Env, dest: str) -> dict[str, bytes]:
    return env.output(dest)


@pytest.mark.parametrize("parent_first", [True, False], ids=["parent-first", "child-first"])
@pytest.mark.parametrize(("committer", "backend"), backends())
def test_nested_jobs_both_outputs_survive(backend_env: Env, committer: str, backend: str,
                                          parent_first: bool) -> None:
    """Jobs on ``t`` and ``t/date=1``, each with its tasks committed before either job
    commits; whichever commits first, both outputs are published and nothing is pending."""
    env = backend_env
    parent, child = env.dest("t"), env.dest("t/date=1")
    p = run_job(committer, env.store, parent, PARENT_FILES, commit=False)
    c = run_job(committer, env.store, child, CHILD_FILES, commit=False)
    order = [p, c] if parent_first else [c, p]
    for run in order:
        run.success = run.driver.commit_job(run.messages)
    expected = {rel: data for files in PARENT_FILES.values() for rel, data in files.items()}
    expected.update({f"date=1/{rel}": data
                     for files in CHILD_FILES.values() for rel, data in files.items()})
    assert visible(env, parent) == expected
    assert env.uploads(parent) == []


@pytest.mark.parametrize(("committer", "backend"), backends(rgw=False))
def test_nested_job_aborted_leaves_the_other_job_whole(backend_env: Env, committer: str,
                                                       backend: str) -> None:
    """The child job aborts while the parent is between task commits and job commit (and
    the other way round): the surviving job publishes everything it committed."""
    env = backend_env
    parent, child = env.dest("t"), env.dest("t/date=1")
    p = run_job(committer, env.store, parent, PARENT_FILES, commit=False)
    c = run_job(committer, env.store, child, CHILD_FILES, commit=False)
    c.driver.abort_job()
    c.driver.cleanup_job()
    p.driver.commit_job(p.messages)
    expected = {rel: data for files in PARENT_FILES.values() for rel, data in files.items()}
    got = visible(env, parent)
    assert {rel: got.get(rel) for rel in expected} == expected
    if committer != "v2":  # v2 publishes at task commit: an aborted job's tasks stay (Hadoop)
        assert got == expected
    assert env.uploads(parent) == []


def test_options_are_the_test_defaults() -> None:
    """The jobs above run with the suite's small parts (multi-part files on every store)."""
    assert int(options()["fs.s3a.multipart.size"]) < len(CHILD_FILES[0]["child-0.csv"])
    assert zr.JobContext("s3://b/t").dest == "s3://b/t"


@pytest.mark.parametrize("committer", ["directory", "partitioned"])
@pytest.mark.parametrize("backend", ["moto", "local"])
def test_replace_mode_leaves_a_nested_job_in_flight_whole(backend_env: Env, committer: str,
                                                          backend: str) -> None:
    """A parent job in conflict mode ``replace`` deletes the output it replaces — the older
    files of ``date=1`` — but not the records of a job writing ``date=1`` at that moment:
    that job commits afterwards (from its records) and publishes all of its output."""
    env = backend_env
    parent, child = env.dest("t"), env.dest("t/date=1")
    env.put(parent, "date=1/old.csv", b"old\n")
    replace = {**options(), "fs.s3a.committer.staging.conflict-mode": "replace"}
    c = run_job("magic", env.store, child, CHILD_FILES, commit=False)
    run_job(committer, env.store, parent, PARENT_FILES, opts=replace)
    c.driver.commit_job(None)  # Hadoop's protocol: the child finds its tasks by its records
    got = visible(env, parent)
    assert "date=1/old.csv" not in got
    for files in CHILD_FILES.values():
        for rel, data in files.items():
            assert got[f"date=1/{rel}"] == data
    assert got["date=2/parent-1.csv"] == PARENT_FILES[1]["date=2/parent-1.csv"]
    assert env.uploads(parent) == []
