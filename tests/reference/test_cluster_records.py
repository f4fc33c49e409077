"""The staging committers with their records on a cluster store (the paper's Section VI.1):
intents, pendingsets and the job marker live on a consistent store shared by driver and tasks,
so job commit and abort never depend on listing (or reading back) the destination store."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import zerorename as zr
from zerorename.errors import CommitError
from zerorename.store import ListPage, Store, list_dir

from .conftest_helpers import Env, options

pytestmark = pytest.mark.usefixtures("no_leaked_threads")

STAGING = ("directory", "partitioned")
TMP_PATH = "fs.s3a.committer.staging.tmp.path"


class BlindListing:
    """A destination store whose listings never show anything (an eventually consistent
    store at its worst): a committer that relies on listing it loses track of its work."""

    def __init__(self, inner: Store) -> None:
        self.inner = inner
        self.name = f"blind:{inner.name}"

    def list_page(self, prefix: str, *, delimiter: str | None = None,
                  token: str | None = None, max_keys: int = 1000) -> ListPage:
        return ListPage([])

    def __getattr__(self, op: str) -> Any:
        return getattr(self.inner, op)


def _cluster(tmp_path: Path) -> tuple[zr.LocalStore, str]:
    return (zr.LocalStore(root=tmp_path / "cluster-root"),
            f"file://{tmp_path}/cluster/tmp/staging")


def _committer(name: str, store: Any, job: zr.JobContext, cluster: zr.LocalStore,
               task: zr.TaskContext | None = None) -> zr.BaseCommitter:
    return zr.create_committer(name, store, job, task=task, cluster_store=cluster)


@pytest.mark.parametrize("committer", STAGING)
@pytest.mark.parametrize("protocol", ["spark", "hadoop"])
def test_records_on_the_cluster_store_never_listed_on_the_destination(
        committer: str, protocol: str, local_env: Env, tmp_path: Path) -> None:
    """Destination listings show nothing, yet both protocols commit every task, and nothing
    of the job's records is ever written under the destination."""
    cluster, tmp = _cluster(tmp_path)
    blind = BlindListing(local_env.store)
    dest = local_env.dest()
    job = zr.JobContext(dest, options=options(**{TMP_PATH: tmp}))
    driver = _committer(committer, blind, job, cluster)
    driver.setup_job()
    messages = []
    for t in range(2):
        tc = _committer(committer, blind, job, cluster, job.task(t))
        tc.setup_task()
        tc.write(f"year=202{t}/part-{t}", bytes([65 + t]) * 300)
        messages.append(tc.commit_task())
    assert all(m.record.startswith(tmp) for m in messages)
    driver.commit_job(messages if protocol == "spark" else None)
    assert local_env.objects(dest) == {"year=2020/part-0": b"A" * 300,
                                       "year=2021/part-1": b"B" * 300,
                                       "_SUCCESS": local_env.store.get(f"{dest}/_SUCCESS")}
    assert local_env.uploads(dest) == []
    assert list(list_dir(cluster, tmp)) == [], "the job's records outlived its commit"


@pytest.mark.parametrize("committer", STAGING)
def test_abort_finds_every_upload_through_the_cluster_records(
        committer: str, local_env: Env, tmp_path: Path) -> None:
    """A committed task and one that died mid-commit (upload created, no pendingset): a fresh
    driver's abort_job finds both through the cluster records, though the destination's
    listings show nothing."""
    cluster, tmp = _cluster(tmp_path)
    blind = BlindListing(local_env.store)
    dest = local_env.dest()
    job = zr.JobContext(dest, options=options(**{TMP_PATH: tmp}))
    _committer(committer, blind, job, cluster).setup_job()
    done = _committer(committer, blind, job, cluster, job.task(0))
    done.setup_task()
    done.write("a", b"1" * 300)
    done.commit_task()

    class DiesAtPendingset:
        """The cluster store of a task process that dies before saving its pendingset."""

        def __getattr__(self, op: str) -> Any:
            if op == "put":
                def put(url: str, data: bytes, **kw: Any) -> str:
                    if url.endswith(".pendingset"):
                        raise KeyboardInterrupt("task process killed")
                    return cluster.put(url, data, **kw)
                return put
            return getattr(cluster, op)

    dying = zr.create_committer(committer, blind, job, task=job.task(1),
                                cluster_store=DiesAtPendingset())  # type: ignore[arg-type]
    dying.setup_task()
    dying.write("b", b"2" * 300)
    with pytest.raises(KeyboardInterrupt):
        dying.commit_task()
    assert len(local_env.uploads(dest)) == 2
    _committer(committer, blind, job, cluster).abort_job()
    assert local_env.uploads(dest) == []
    assert local_env.objects(dest) == {}
    assert list(list_dir(cluster, tmp)) == []


def test_a_cluster_store_needs_a_tmp_path_and_a_staging_committer(local_env: Env,
                                                                  tmp_path: Path) -> None:
    cluster, tmp = _cluster(tmp_path)
    job = zr.JobContext(local_env.dest(), options=options())
    with pytest.raises(CommitError, match=TMP_PATH):
        zr.create_committer("directory", local_env.store, job, cluster_store=cluster)
    job = zr.JobContext(local_env.dest(), options=options(**{TMP_PATH: tmp}))
    with pytest.raises(CommitError, match="only the staging committers"):
        zr.create_committer("magic", local_env.store, job, cluster_store=cluster)
