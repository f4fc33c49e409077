"""The commit-cost benchmark (``bench/commit_costs.py``): a quick run, and the pieces it rests on.

No timing is asserted here (wall times depend on the machine and its load).  What is checked:
the quick run completes and writes a JSON of the documented shape; every committer sends at
least the requests its protocol needs (a committer below the minimum is skipping a step, or
the minimum is wrong — both are bugs); the minimum itself matches hand-derived numbers; and the
in-memory fake store the memory benchmark uses is as strict as it claims.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))

import commit_costs as cc  # noqa: E402
from fakes import MemoryStore  # noqa: E402

from zerorename.errors import (  # noqa: E402
    BadURLError,
    NotFoundError,
    PreconditionFailedError,
    StoreError,
    UnsupportedOperationError,
)
from zerorename.store import list_all  # noqa: E402


@pytest.fixture(scope="module")
def quick(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """One ``--quick`` run in a child process, written to a temporary directory (never over
    the committed results)."""
    out = tmp_path_factory.mktemp("commit_costs")
    proc = subprocess.run(
        [sys.executable, str(REPO / "bench" / "commit_costs.py"), "--quick", "--out-dir",
         str(out)],
        capture_output=True, text=True, timeout=300, check=False, cwd=REPO,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    report: dict[str, Any] = json.loads((out / "commit_costs.json").read_text())
    report["_markdown"] = (out / "commit_costs.md").read_text()
    return report


@pytest.mark.slow
def test_quick_run_writes_every_part(quick: dict[str, Any]) -> None:
    assert quick["benchmark"] == "commit_costs" and quick["mode"] == "quick"
    assert set(quick["environment"]) >= {"python", "cpus", "boto3", "moto",
                                         "load_average_at_start", "load_average_at_end"}
    seen = {(r["committer"], r["store"], r["protocol"]) for r in quick["requests_per_file"]}
    for name in cc.ON_LOCAL:
        assert {(name, "local", "spark"), (name, "local", "hadoop")} <= seen
    assert {("magic", "s3", "spark"), ("manifest", "s3", "spark")} <= seen
    for row in quick["requests_per_file"]:
        assert row["output"]["visible_files"] == row["files"]
        assert row["output"]["leftover_uploads"] == 0
        assert set(row["requests_by_phase"]) == {"setup_job", "tasks", "commit_job"}
        phase_sum: dict[str, int] = {}
        for counts in row["requests_by_phase"].values():
            for op, n in counts.items():
                phase_sum[op] = phase_sum.get(op, 0) + n
        assert phase_sum == row["requests"]
        assert row["total"] == sum(row["requests"].values())
    times = quick["commit_time"]
    assert [(r["committer"], r["threads"]) for r in times] == [("magic", 1), ("magic", 4)]
    for r in times:
        assert r["commit_seconds"] > 0 and r["commit_requests"] >= r["files"]
        assert r["output"]["visible_files"] == r["files"]
        assert "job_stage_complete_uploads" in r["stages_ms"]
    mem = quick["commit_memory"]
    assert {(r["committer"], r["protocol"]) for r in mem} == {
        (c, p) for c in ("magic", "manifest") for p in cc.PROTOCOLS}
    for r in mem:
        assert r["peak_bytes"] > 0 and r["bytes_per_task"] == round(r["peak_bytes"] / r["tasks"])
        assert r["files"] == r["tasks"] * r["files_per_task"]
        assert r["output"]["visible_files"] == r["files"]
        assert r["output"]["leftover_uploads"] == 0
        # a job commit must at least complete (magic) or rename (manifest) every file
        assert r["commit_requests"] >= r["files"]
    for name in ("magic", "manifest"):
        for protocol in cc.PROTOCOLS:
            mine = [r for r in mem if (r["committer"], r["protocol"]) == (name, protocol)]
            assert sum("marginal_bytes_per_task" in r for r in mine) == 1
            assert sum("marginal_bytes_per_file" in r for r in mine) == 1
    text = quick["_markdown"]
    for heading in ("## 1. Requests per committed file", "## 2. Job commit time",
                    "## 3. Peak memory"):
        assert heading in text


@pytest.mark.slow
def test_every_committer_sends_at_least_its_protocol_minimum(quick: dict[str, Any]) -> None:
    for row in quick["requests_per_file"]:
        layout = cc.Layout(row["tasks"], row["files"] // row["tasks"])
        minimum = cc.protocol_minimum(row["committer"], row["store"], row["protocol"], layout)
        where = f"{row['committer']} on {row['store']} ({row['protocol']})"
        assert row["minimum"] == minimum, where
        assert row["per_file"] >= row["minimum_per_file"], where
        assert row["below_minimum"] == {}, where
        assert cc.below_minimum(row["requests"], minimum) == {}, where


def test_protocol_minimum_matches_the_hand_derivation() -> None:
    layout = cc.Layout(tasks=4, files_per_task=5)  # 20 files over part=0/ and part=1/
    # magic: create + part + complete per file; pendingset per task; _SUCCESS; one bulk delete
    assert cc.protocol_minimum("magic", "s3", "spark", layout) == {
        "complete_multipart": 20, "create_multipart": 20, "delete_many": 1, "put": 5,
        "upload_part": 20}
    # Hadoop's protocol adds one LIST of the pendingsets and a GET of each
    assert cc.protocol_minimum("directory", "local", "hadoop", layout) == {
        "complete_multipart": 20, "create_multipart": 20, "delete_many": 1, "get": 4,
        "list_page": 1, "put": 5, "upload_part": 20}
    # manifest on S3: PUT per file, LIST + manifest per task, copy per file, sources and
    # manifests deleted in bulk
    assert cc.protocol_minimum("manifest", "s3", "spark", layout) == {
        "copy": 20, "delete_many": 1, "list_page": 4, "put": 25}
    assert cc.protocol_minimum("manifest", "local", "spark", layout) == {
        "delete_many": 1, "list_page": 4, "put": 25, "rename": 20}
    # v1: attempt-directory rename per task, then mergePaths: 2 partition directories move
    # whole with task 0, the other 15 files one by one
    assert cc.protocol_minimum("v1", "local", "spark", layout) == {
        "list_page": 2, "put": 21, "rename": 4 + 17}
    assert cc.protocol_minimum("v2", "local", "hadoop", layout) == {
        "list_page": 8, "put": 21, "rename": 17}
    with pytest.raises(ValueError):
        cc.protocol_minimum("v1", "s3", "spark", layout)
    big = cc.Layout(tasks=1500, files_per_task=1)
    assert cc.protocol_minimum("magic", "s3", "hadoop", big)["list_page"] == 2
    assert cc.protocol_minimum("magic", "s3", "hadoop", big)["delete_many"] == 2


def test_merge_renames_follows_hadoop_merge_paths() -> None:
    assert cc.merge_renames([["a/x", "a/y"], ["a/z"], ["b/w"]]) == 1 + 1 + 1
    assert cc.merge_renames([["x", "y"], ["z"]]) == 3  # files at the top move one by one
    assert cc.merge_renames([["a/b/x"], ["a/b/y"], ["a/c/z"]]) == 1 + 1 + 1
    assert cc.merge_renames([["a/b/x", "a/b/y"], ["a/b/z", "a/c/w"]]) == 1 + 2


def test_below_minimum_reports_each_shortfall_and_pools_deletes() -> None:
    need = {"put": 5, "delete_many": 2, "complete_multipart": 20}
    assert cc.below_minimum({"put": 5, "delete": 2, "complete_multipart": 20}, need) == {}
    assert cc.below_minimum({"put": 4, "delete_many": 1, "complete_multipart": 20}, need) == {
        "put": (4, 5), "delete_many": (1, 2)}
    assert cc.below_minimum({}, {"copy": 1}) == {"copy": (0, 1)}


# -- the fake store -----------------------------------------------------------------------


def test_fake_store_multipart_is_strict() -> None:
    store = MemoryStore()
    url = "mem://b/out/part-0"
    upload = store.create_multipart(url)
    etag = store.upload_part(url, upload, 1, b"abc")
    with pytest.raises(NotFoundError) as wrong_key:
        store.upload_part("mem://b/out/other", upload, 1, b"x")
    assert wrong_key.value.code == "NoSuchUpload"
    with pytest.raises(StoreError) as bad_part:
        store.complete_multipart(url, upload, [(1, "0" * 32)])
    assert bad_part.value.code == "InvalidPart"
    with pytest.raises(StoreError) as order:
        store.complete_multipart(url, upload, [(2, etag), (1, etag)])
    assert order.value.code == "InvalidPartOrder"
    assert store.head(url) is None  # nothing visible before completion
    final = store.complete_multipart(url, upload, [(1, etag)], if_none_match=True)
    assert store.get(url) == b"abc" and final.endswith("-1")
    with pytest.raises(NotFoundError):  # a completed upload is gone
        store.abort_multipart(url, upload)
    again = store.create_multipart(url)
    part = store.upload_part(url, again, 1, b"new")
    with pytest.raises(PreconditionFailedError):
        store.complete_multipart(url, again, [(1, part)], if_none_match=True)
    assert [u.upload_id for u in store.list_multipart_uploads("mem://b/out/")] == [again]
    assert store.list_multipart_uploads("mem://b/out10/") == []
    assert store.request_counts()["complete_multipart"] == 4  # failed requests count too


def test_fake_store_objects_listing_and_rename() -> None:
    store = MemoryStore(rename=True)
    urls = [f"mem://b/d/k{i:04d}" for i in range(2500)] + ["mem://b/d10/x", "mem://b/d/sub/y"]
    for u in urls:
        store.put(u, u.encode())
    listed = [o.url for o in list_all(store, "mem://b/d/")]
    assert listed == sorted(u for u in urls if u.startswith("mem://b/d/"))  # no d10, no dups
    page = store.list_page("mem://b/d/", delimiter="/", max_keys=1000)
    assert page.token is not None and len(page.objects) == 1000
    with pytest.raises(StoreError):
        store.list_page("mem://b/d/", max_keys=1001)
    with pytest.raises(PreconditionFailedError):
        store.put(urls[0], b"x", if_none_match=True)
    with pytest.raises(PreconditionFailedError):
        store.put(urls[0], b"x", if_match="0" * 32)
    with pytest.raises(BadURLError):
        store.put("s3://b/k", b"x")
    store.rename("mem://b/d/sub", "mem://b/e/sub")
    assert store.head("mem://b/d/sub/y") is None and store.get("mem://b/e/sub/y") == \
        b"mem://b/d/sub/y"
    snap = store.snapshot()
    store.delete_many(urls[:2000])
    assert store.request_counts()["delete_many"] == 2  # 1000 keys per request
    store.restore(snap)
    assert store.get(urls[0]) == urls[0].encode()
    with pytest.raises(UnsupportedOperationError):
        MemoryStore().rename("mem://b/a", "mem://b/c")
