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


@pytest.mark.parametrize("protocol", ["spark", "hadoop"])
@pytest.mark.parametrize("parent_first", [True, False], ids=["parent-first", "child-first"])
@pytest.mark.parametrize(("committer", "backend"), backends())
def test_nested_jobs_both_outputs_survive(backend_env: Env, committer: str, backend: str,
                                          parent_first: bool, protocol: str) -> None:
    """Jobs on ``t`` and ``t/date=1``, each with its tasks committed before either job
    commits; whichever commits first, under Spark's protocol (messages) or Hadoop's (the
    job finds its tasks by listing its records), both outputs are published and nothing is
    pending."""
    env = backend_env
    parent, child = env.dest("t"), env.dest("t/date=1")
    p = run_job(committer, env.store, parent, PARENT_FILES, commit=False)
    c = run_job(committer, env.store, child, CHILD_FILES, commit=False)
    order = [p, c] if parent_first else [c, p]
    for run in order:
        run.success = run.driver.commit_job(run.messages if protocol == "spark" else None)
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


# -- destinations no job can own ----------------------------------------------------------


def bucket_of(env: Env) -> str:
    return env.base.split("/data", 1)[0]  # s3://<bucket>


def other_team(env: Env) -> dict[str, bytes]:
    """Another team's data in the bucket, and one of its uploads in flight: every object's
    bytes and the upload, to compare byte for byte afterwards."""
    root = bucket_of(env)
    env.put(root, "README.txt", b"shared bucket\n")
    env.put(root, "other-team/table/part-0.parquet", b"PAR1 other team PAR1")
    env.put(root, "dataset10/part-0.csv", b"sibling\n")
    env.store.create_multipart(f"{root}/other-team/table/part-1.parquet")
    return snapshot(env)


def snapshot(env: Env) -> dict[str, bytes]:
    root = bucket_of(env)
    objects = {o.url: env.store.get(o.url) for o in zr.list_dir(env.store, root)}
    objects.update({f"upload:{u.url}": u.upload_id.encode()
                    for u in env.store.list_multipart_uploads(root + "/")})
    return objects


def without_job(env: Env, before: dict[str, bytes]) -> dict[str, bytes]:
    """The bucket as it is now, restricted to what was there before."""
    now = snapshot(env)
    return {k: now[k] for k in before if k in now}


DELETING_MODES = [
    pytest.param("directory", {"fs.s3a.committer.staging.conflict-mode": "replace"},
                 id="directory-replace"),
    pytest.param("partitioned", {"fs.s3a.committer.staging.conflict-mode": "replace"},
                 id="partitioned-replace"),
    pytest.param("magic", {"fs.s3a.committer.abort.pending.uploads": "true"},
                 id="magic-abort-all"),
]


@pytest.mark.parametrize(("committer", "extra"), DELETING_MODES)
def test_a_deleting_mode_at_a_bucket_root_is_refused_before_any_change(
        moto_env: Env, committer: str, extra: dict[str, str]) -> None:
    env = moto_env
    before = other_team(env)
    root = bucket_of(env)
    job = zr.JobContext(root, options={**options(), **extra})
    with pytest.raises(zr.CommitError) as raised:
        zr.create_committer(committer, env.store, job).setup_job()
    assert raised.value.path == root and "bucket root" in str(raised.value)
    assert f"{root}/<table>" in str(raised.value)
    assert snapshot(env) == before


@pytest.mark.parametrize("committer", S3_COMMITTERS)
def test_append_at_a_bucket_root_leaves_the_other_team_byte_for_byte(
        moto_env: Env, committer: str) -> None:
    """Appending at a root deletes nothing it did not write: another team's objects and its
    upload in flight are intact (fenced aborts no unrecorded upload at a root)."""
    env = moto_env
    before = other_team(env)
    root = bucket_of(env)
    run_job(committer, env.store, root, {0: {"mine/part-0.csv": b"mine\n"}})
    assert without_job(env, before) == before
    assert env.store.get(f"{root}/mine/part-0.csv") == b"mine\n"


@pytest.mark.parametrize("committer", EVERY)
@pytest.mark.parametrize("path", ["../x", "./x", "a//x", "a/../x", "a/."])
def test_dotted_or_empty_path_elements_are_refused(moto_env: Env, committer: str,
                                                   path: str) -> None:
    env = moto_env
    before = other_team(env)
    dest = f"{bucket_of(env)}/{path}"
    with pytest.raises(zr.CommitError) as raised:
        zr.create_committer(committer, env.store, zr.JobContext(dest, options=options()))
    assert raised.value.path == dest and "Write the path without them" in str(raised.value)
    assert snapshot(env) == before


# -- siblings, another team, a second job, a janitor ----------------------------------------


def other_data(env: Env) -> dict[str, bytes]:
    """Objects of neighbours of ``data/dataset1``: a sibling prefix, another team."""
    for rel, data in {"dataset10/part-0.csv": b"sibling 10\n",
                      "dataset1.bak/part-0.csv": b"backup\n",
                      "../other-team/t/part-0.parquet": b"PAR1 other PAR1"}.items():
        env.store.put(f"{env.base}/{rel}" if not rel.startswith("..")
                      else f"{env.base.rsplit('/', 1)[0]}/{rel[3:]}", data)
    return neighbours_now(env)


def neighbours_now(env: Env) -> dict[str, bytes]:
    root = env.base.rsplit("/", 1)[0]
    return {o.url: env.store.get(o.url) for o in zr.list_dir(env.store, root)
            if not o.url.startswith(env.dest("dataset1") + "/")}


@pytest.mark.parametrize(("committer", "backend"), backends())
def test_sibling_prefixes_and_another_team_are_untouched(backend_env: Env, committer: str,
                                                         backend: str) -> None:
    """A job on ``dataset1`` beside ``dataset10`` (with a job in flight there, its uploads
    pending), ``dataset1.bak`` and another team's table: committing, then aborting a second
    job, leaves every neighbour byte for byte and the job in flight whole."""
    env = backend_env
    before = other_data(env)
    sibling = run_job(committer, env.store, env.dest("dataset10"), CHILD_FILES, commit=False)
    mid = neighbours_now(env)
    run_job(committer, env.store, env.dest("dataset1"), PARENT_FILES)
    failed = run_job(committer, env.store, env.dest("dataset1"), {0: {"y.csv": b"y\n"}},
                     commit=False)
    failed.driver.abort_job()
    failed.driver.cleanup_job()
    assert neighbours_now(env) == mid
    sibling.driver.commit_job(sibling.messages)
    after = neighbours_now(env)
    assert {k: after[k] for k in before} == before
    assert env.output(env.dest("dataset10")) == {
        "part-0.csv": b"sibling 10\n",
        **{rel: data for files in CHILD_FILES.values() for rel, data in files.items()}}
    assert env.uploads(env.base) == []


@pytest.mark.parametrize(("committer", "backend"), backends(rgw=False))
def test_a_janitor_run_while_a_job_is_in_flight_leaves_it_whole(
        backend_env: Env, committer: str, backend: str, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """``zerorename uploads abort`` on the table (and on the bucket's data directory above
    it) while a job on the table's partition is between task commits and job commit: the job's
    uploads are kept, and its commit publishes everything.  A stray upload no job can own is
    aborted."""
    from zerorename import cli

    env = backend_env
    table, part = env.dest("t"), env.dest("t/date=1")
    job = run_job(committer, env.store, part, CHILD_FILES, commit=False)
    pending = len(env.uploads(part))
    stray = f"{env.dest('u')}/stray.csv"
    env.store.create_multipart(stray)
    monkeypatch.setattr(cli, "_store_for", lambda url, args: env.store)
    for dest in (table, env.base):
        assert cli.main(["uploads", "abort", dest]) == 0
    err = capsys.readouterr().err
    assert len(env.uploads(part)) == pending
    if pending:
        assert "a job in flight may own" in err
    assert [u.url for u in env.uploads(env.dest("u"))] == []
    job.driver.commit_job(job.messages)
    assert env.output(part) == {rel: data for files in CHILD_FILES.values()
                                for rel, data in files.items()}
    assert env.uploads(env.base) == []


def spark_job(env: Env, committer: str, dest: str, mode: str, parts: int = 2) -> Any:
    """The Spark writer's driver (:class:`JobDriver`) with tasks run in process: set up,
    tasks written and committed; returns ``(driver, outcomes)`` for a later commit."""
    from zerorename.spark.core import JobDriver, TaskOutcome, job_context, spec_from_options

    spec = spec_from_options({"path": dest, "committer": committer, "mode": mode,
                              "abort_grace_seconds": 0, "part_size": str(PART_SIZE)})
    driver = JobDriver(spec, env.store)
    spec = driver.setup()
    job = job_context(spec)
    outcomes = []
    for p in range(parts):
        task = zr.create_committer(spec.committer, env.store, job, task=job.task(p))
        task.setup_task()
        task.write(f"part-{p:05d}-{spec.job_id}.csv", f"{mode} {p}\n".encode() * 40)
        message = task.commit_task()
        outcomes.append(TaskOutcome(p, 0, message.compressed(), 1, 1, 1, {}, 0.0))
    return driver, outcomes


PART_SIZE = 5 * 1024 * 1024


@pytest.mark.parametrize(("committer", "backend"), backends(rgw=False))
def test_a_second_job_in_overwrite_mode_leaves_a_job_in_flight_whole(
        backend_env: Env, committer: str, backend: str) -> None:
    """Job A is between task commits and job commit when job B overwrites the destination:
    B deletes the older *published* output only; A's records and uploads survive, and A's
    later commit publishes all of A's files beside B's."""
    env = backend_env
    dest = env.dest("t")
    env.put(dest, "old.csv", b"old\n")
    first, first_out = spark_job(env, committer, dest, "append")
    second, second_out = spark_job(env, committer, dest, "overwrite")
    second.commit(second_out)
    # partitioned replaces only the partitions it writes: files at the root are appended
    assert ("old.csv" in env.output(dest)) == (committer == "partitioned")
    first.commit(first_out)
    names = sorted(n for n in env.output(dest) if n != "old.csv")
    # v2 published A's tasks at task commit, so B's overwrite replaced them (as Hadoop's)
    assert sum(first.spec.job_id in n for n in names) == (0 if committer == "v2" else 2)
    assert sum(second.spec.job_id in n for n in names) == 2
    assert len(names) == (2 if committer == "v2" else 4)
    assert env.uploads(dest) == []
