"""Part 4 of ``bench/commit_costs.py``: the driver's peak RSS, measured as a driver.

What is checked (no timing, no memory figure beyond sanity): the store served by
``bench/store_server.py`` answers the store protocol across the socket — values, listings and
:mod:`zerorename.errors` exceptions with their path, reason, code and status — and a small job
measured through :func:`commit_rss.measure` runs in three processes (store server, tasks'
phase, driver), the driver holding neither the store nor the tasks' leftovers, and commits
every file.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))

import commit_rss  # noqa: E402
import store_server  # noqa: E402

from zerorename import errors  # noqa: E402
from zerorename.store import ListPage, ObjectInfo, list_all  # noqa: E402


@pytest.fixture
def remote(tmp_path: Path) -> Iterator[store_server.RemoteStore]:
    key = os.urandom(16).hex()
    address = str(tmp_path / "store.sock")
    server = subprocess.Popen(
        [sys.executable, str(REPO / "bench" / "store_server.py"), "--address", address],
        stdout=subprocess.PIPE, text=True, env=os.environ | {store_server.AUTHKEY_ENV: key})
    try:
        assert server.stdout is not None and server.stdout.readline().strip() == "ready"
        yield store_server.RemoteStore(address, bytes.fromhex(key))
    finally:
        server.terminate()
        server.wait(10)


def test_every_error_class_survives_the_trip() -> None:
    for cls in vars(errors).values():
        if not (isinstance(cls, type) and issubclass(cls, errors.CommitError)):
            continue
        exc = cls("s3://b/k", "why")  # every class takes (path, reason)
        back = store_server._unpack(store_server._pack(exc))
        assert type(back) is cls and str(back) == str(exc) and back.args == exc.args
        assert vars(back) == vars(exc)
    exc = errors.NotFoundError("s3://b/k", "no upload", code="NoSuchUpload")
    back = store_server._unpack(store_server._pack(exc))
    assert (back.path, back.reason, back.code, back.status) == (  # type: ignore[attr-defined]
        "s3://b/k", "no upload", "NoSuchUpload", 404)


def test_the_store_protocol_across_the_socket(remote: store_server.RemoteStore) -> None:
    etag = remote.put("mem://b/d/a", b"x")
    assert remote.head("mem://b/d/a") == ObjectInfo("mem://b/d/a", 1, etag)
    assert remote.head("mem://b/d/none") is None
    assert remote.get("mem://b/d/a") == b"x"
    with pytest.raises(errors.NotFoundError) as nf:
        remote.get("mem://b/d/none")
    assert (nf.value.path, nf.value.code, nf.value.status) == ("mem://b/d/none", "NoSuchKey", 404)
    with pytest.raises(errors.PreconditionFailedError) as pf:
        remote.put("mem://b/d/a", b"y", if_none_match=True)
    assert (pf.value.path, pf.value.status, pf.value.reason) == (
        "mem://b/d/a", 412, "If-None-Match: object exists")
    with pytest.raises(errors.UnsupportedOperationError):
        remote.rename("mem://b/d/a", "mem://b/d/c")
    with pytest.raises(errors.BadURLError):
        remote.get("s3://b/a")
    with pytest.raises(TypeError):  # the store's own check, not the client's
        remote.put("mem://b/d/s", "text")  # type: ignore[arg-type]
    for i in range(3):
        remote.put(f"mem://b/d/p{i}", b"z")
    page = remote.list_page("mem://b/d/", max_keys=2)
    assert isinstance(page, ListPage) and len(page.objects) == 2 and page.token is not None
    assert [o.url for o in list_all(remote, "mem://b/d/", max_keys=2)] == [
        "mem://b/d/a", "mem://b/d/p0", "mem://b/d/p1", "mem://b/d/p2"]
    uid = remote.create_multipart("mem://b/d/m")
    part = remote.upload_part("mem://b/d/m", uid, 1, memoryview(b"abc"))
    assert [u.upload_id for u in remote.list_multipart_uploads("mem://b/")] == [uid]
    with pytest.raises(errors.StoreError) as bad:
        remote.complete_multipart("mem://b/d/m", uid, [(1, "0" * 32)])
    assert bad.value.code == "InvalidPart"
    remote.complete_multipart("mem://b/d/m", uid, [(1, part)])
    assert remote.get("mem://b/d/m") == b"abc" and remote.upload_count() == 0
    remote.delete_many([f"mem://b/d/p{i}" for i in range(3)])
    assert remote.object_count() == 2
    assert remote.request_counts()["put"] == 5
    assert remote.server_status()["pid"] != os.getpid()


@pytest.mark.parametrize(("committer", "protocol"), [("magic", "spark"), ("manifest", "hadoop")])
def test_a_small_job_measured_as_a_driver(committer: str, protocol: str) -> None:
    tasks, files_per_task = 20, 5
    row = commit_rss.measure(committer, protocol, tasks, files_per_task, timeout=120)
    assert row["method"] == commit_rss.METHOD  # the high-water mark could be reset
    assert (row["committer"], row["protocol"], row["files"]) == (committer, protocol, 100)
    for key in ("rss_before_messages_mb", "rss_before_mb", "peak_rss_mb", "rss_after_mb"):
        assert row[key] > 0, key
    assert row["peak_rss_mb"] >= row["rss_before_mb"]
    assert row["peak_increase_mb"] == pytest.approx(row["peak_rss_mb"] - row["rss_before_mb"],
                                                    abs=0.11)
    assert row["output"] == {"visible_files": 100, "leftover_hidden_objects": 0,
                             "leftover_uploads": 0}
    assert row["commit_requests"] >= row["files"]  # a complete (magic) or rename per file
    assert row["messages_loaded"] == (tasks if protocol == "spark" else 0)
    # three processes; the store's objects are in the server's, not the driver's
    server = row["store_server"]
    assert len({os.getpid(), row["driver_pid"], server["pid"], row["task_phase_pid"]}) == 4
    assert row["driver_holds_store"] is False
    if committer == "magic":  # 100 pending uploads, the task records (.pendingset)
        assert server["uploads_before_commit"] == 100 and server["objects_before_commit"] >= 20
    else:  # every file written under the job's attempt directory
        assert server["objects_before_commit"] >= 100
    # a fresh interpreter with zerorename and boto3 takes about 40 MB here; the in-process
    # measurement (the store, the task phase's leftovers) took 236-353 MB at 100,000 files;
    # 150 MB leaves room for another allocator or Python build, and none for a store
    assert row["rss_before_mb"] < 150


def test_in_process_is_kept_for_comparison() -> None:
    row = commit_rss.measure("manifest", "spark", 4, 2, timeout=60, in_process=True)
    assert row["method"] == commit_rss.METHOD_IN_PROCESS
    assert row["output"]["visible_files"] == 8
