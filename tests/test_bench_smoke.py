"""The benchmarks' quick runs, and the pieces they rest on.

No timing is asserted here (wall times depend on the machine and its load).  What is checked:
the commit-cost quick run completes and writes a JSON of the documented shape; every committer
sends at least the requests its protocol needs (a committer below the minimum is skipping a
step, or the minimum is wrong — both are bugs); the minimum itself matches hand-derived
numbers; the in-memory fake store the memory benchmark uses is as strict as it claims; the
side-by-side quick run (``bench/side_by_side.py --quick``) measures every strategy with the
request counts each must send; the latency quick run delays every request of the commit; and
bench/README.md's performance block (and README.md's summary) is what the committed results
render to.
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
import commit_rss  # noqa: E402
import render  # noqa: E402
import side_by_side as sbs  # noqa: E402
from fakes import MemoryStore  # noqa: E402
from s3fs_job import S3FS_PINS, find_s3fs_python  # noqa: E402

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
    rss = quick["commit_rss"]
    assert {(r["committer"], r["protocol"]) for r in rss} == {
        (c, p) for c in ("magic", "manifest") for p in cc.PROTOCOLS}
    for r in rss:
        assert r["method"] == commit_rss.METHOD and r["driver_holds_store"] is False
        assert r["output"]["leftover_uploads"] == 0
        assert r["peak_rss_mb"] > 0 and r["rss_before_mb"] > 0
        assert r["peak_increase_mb"] == pytest.approx(r["peak_rss_mb"] - r["rss_before_mb"],
                                                      abs=0.11)
        assert r["output"]["visible_files"] == r["files"] == r["tasks"] * r["files_per_task"]
        assert r["commit_requests"] >= r["files"]
    text = quick["_markdown"]
    for heading in ("## 1. Requests per committed file", "## 2. Job commit time",
                    "## 3. Peak memory", "## 4. Peak RSS"):
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


# -- side by side -------------------------------------------------------------------------

KIB4 = 4096


def _run(script: str, out: Path, *extra: str) -> None:
    proc = subprocess.run(
        [sys.executable, str(REPO / "bench" / script), "--quick", "--out-dir", str(out), *extra],
        capture_output=True, text=True, timeout=300, check=False, cwd=REPO)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]


@pytest.fixture(scope="module")
def side_quick(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], Path]:
    """``side_by_side.py --quick`` into a temporary directory (s3fs runs when an interpreter
    with it is already there; the test never creates the virtualenv)."""
    out = tmp_path_factory.mktemp("side_by_side")
    _run("side_by_side.py", out, "--no-s3fs-venv")
    report: dict[str, Any] = json.loads((out / "side_by_side.json").read_text())
    return report, out


def _phase(row: dict[str, Any], phase: str) -> dict[str, int]:
    counts: dict[str, int] = row["phases"][phase]["requests"]
    return counts


@pytest.mark.slow
def test_side_by_side_quick_measures_every_strategy(
        side_quick: tuple[dict[str, Any], Path]) -> None:
    report, out = side_quick
    assert report["benchmark"] == "side_by_side" and report["mode"] == "quick"
    assert set(report["environment"]) >= {"python", "cpus", "boto3", "moto", "radosgw",
                                          "load_average_at_start", "load_average_at_end"}
    rows = report["rows"]
    assert not [r for r in rows if "error" in r]
    ran = {r["strategy"] for r in rows}
    assert ran >= set(sbs.STRATEGIES) - {"s3fs"}
    if "s3fs" not in ran:  # skipped: the report must say which pins to install
        assert report["s3fs"]["python"] is None
        assert all(pin in report["s3fs"]["note"] for pin in S3FS_PINS)
    for r in rows:
        assert r["server"] == "moto" and r["file_bytes"] == KIB4
        assert list(r["phases"]) == list(sbs.PHASES)
        assert r["requests_total"] == sum(p["total"] for p in r["phases"].values())
        assert r["requests_total"] == sum(sum(p["requests"].values())
                                          for p in r["phases"].values())
        assert r["requests_per_file"] == round(r["requests_total"] / r["files"], 3)
        assert r["job_commit_requests"] == r["phases"]["commit_job"]["total"]
        assert r["copies_of_unknown_size"] == 0
        assert r["output"]["visible_files"] == r["files"]
        assert r["output"]["leftover_uploads"] == 0
        assert (r["threads"] is None) == (r["strategy"] == "s3fs")
        if r["strategy"] != "minimal":
            base = next(m for m in rows if m["strategy"] == "minimal")
            assert r["ratio_to_minimal"]["job_commit_requests"] == round(
                r["job_commit_requests"] / base["job_commit_requests"], 2)
    text = (out / "side_by_side.md").read_text()
    assert "## moto, F = 24" in text
    assert (out / "side_by_side.png").read_bytes()[:4] == b"\x89PNG"


@pytest.mark.slow
def test_side_by_side_request_counts(side_quick: tuple[dict[str, Any], Path]) -> None:
    """The baselines send exactly what their algorithms need; every committer publishes each
    file once (a complete, or manifest's copy) and uploads its bytes once."""
    rows = {r["strategy"]: r for r in side_quick[0]["rows"]}
    files, tasks = rows["minimal"]["files"], rows["minimal"]["tasks"]
    assert _phase(rows["minimal"], "write") == {"CreateMultipartUpload": files,
                                                "UploadPart": files}
    assert _phase(rows["minimal"], "commit_task") == {}
    assert _phase(rows["minimal"], "commit_job") == {"CompleteMultipartUpload": files,
                                                     "PutObject": 1}
    for v in ("rename-v1", "rename-v2"):
        assert _phase(rows[v], "write") == {"PutObject": files}
        assert _phase(rows[v], "commit_task") == {"ListObjectsV2": tasks, "CopyObject": files,
                                                  "DeleteObjects": tasks}
    assert _phase(rows["rename-v1"], "commit_job") == {
        "ListObjectsV2": 1, "CopyObject": files, "DeleteObjects": 1, "PutObject": 1}
    assert _phase(rows["rename-v2"], "commit_job") == {"ListObjectsV2": 1, "PutObject": 1}
    assert rows["rename-v1"]["bytes_copied"] == 2 * files * KIB4
    assert rows["rename-v2"]["bytes_copied"] == files * KIB4
    if "s3fs" in rows:
        assert _phase(rows["s3fs"], "write") == {"CreateMultipartUpload": files,
                                                 "UploadPart": files}
        assert _phase(rows["s3fs"], "commit_job") == {"CompleteMultipartUpload": files,
                                                      "PutObject": 1}
    for name in ("magic", "fenced", "directory", "partitioned"):
        r = rows[name]
        assert _phase(r, "commit_job")["CompleteMultipartUpload"] == files, name
        assert sum(p["requests"].get("CreateMultipartUpload", 0)
                   for p in r["phases"].values()) == files, name
        assert r["bytes_copied"] == 0, name
    assert _phase(rows["manifest"], "commit_job")["CopyObject"] == files
    assert rows["manifest"]["bytes_copied"] == files * KIB4
    for r in rows.values():  # each file's bytes go up once, plus small records
        assert files * KIB4 <= r["phases"]["write"]["bytes_uploaded"] + \
            r["phases"]["commit_task"]["bytes_uploaded"] < files * KIB4 * 1.5, r["strategy"]


def test_missing_s3fs_names_the_pins() -> None:
    python, note = find_s3fs_python("/nonexistent/python", create_venv=False)
    assert python is None
    assert all(pin in note for pin in S3FS_PINS) and "--s3fs-python" in note


def test_cells_from_options() -> None:
    assert sbs.parse_cells([], [1000, 10000], [1, 8]) == [(1000, [1, 8], None),
                                                          (10000, [1, 8], None)]
    assert sbs.parse_cells(["1000:1,8,32", "10000:32"], [5], [2]) == [
        (1000, [1, 8, 32], None), (10000, [32], None)]
    assert sbs.parse_cells(["500"], [5], [2, 4]) == [(500, [2, 4], None)]
    runs = ["1000:1,8", "moto@10000:32x1"]
    assert sbs.parse_cells(runs, [5], [2], "moto") == [(1000, [1, 8], None), (10000, [32], 1)]
    assert sbs.parse_cells(runs, [5], [2], "rgw") == [(1000, [1, 8], None)]
    with pytest.raises(SystemExit):
        sbs.parse_cells(["x:1"], [5], [2])
    with pytest.raises(SystemExit):
        sbs.parse_cells(["1000:8xa"], [5], [2])


@pytest.mark.slow
def test_latency_quick_delays_every_commit_request(tmp_path: Path) -> None:
    _run("latency.py", tmp_path)
    report = json.loads((tmp_path / "latency.json").read_text())
    assert report["benchmark"] == "latency" and report["delay_ms"] == 20.0
    rows = report["rows"]
    assert {(r["committer"], r["threads"]) for r in rows} == {
        (c, t) for c in ("magic", "fenced", "directory", "partitioned", "manifest")
        for t in (8, 32)}
    for r in rows:
        assert r["files"] == report["files"] == 200
        assert r["bound_seconds"] == round(-(-r["files"] // r["threads"]) * 0.02, 3)
        assert r["delayed_requests"] == r["commit_requests"] >= r["files"]
    assert (tmp_path / "latency.png").read_bytes()[:4] == b"\x89PNG"
    assert "| magic | 8 |" in (tmp_path / "latency.md").read_text()


def test_readme_block_is_what_the_results_render_to() -> None:
    block = render.readme_section((REPO / "bench" / "README.md").read_text())
    assert block is not None, "bench/README.md lost its performance markers"
    assert block == render.current_block(), "stale: run .venv/bin/python bench/render.py"


def test_the_top_readmes_cost_summary_is_what_the_results_render_to() -> None:
    """One generated paragraph in README.md; a changed figure changes it."""
    summary = render.readme_section((REPO / "README.md").read_text(), render.SUMMARY_BEGIN,
                                    render.SUMMARY_END)
    assert summary is not None, "README.md lost its cost markers"
    assert summary == render.current_summary(), "stale: run .venv/bin/python bench/render.py"
    side = json.loads((REPO / "bench" / "results" / "side_by_side.json").read_text())
    for row in side["rows"]:
        if row["strategy"] == "fenced" and "error" not in row:
            row["requests_per_file"] += 1
    assert render.summary_block(side) != summary



# -- CPU per file and critical path ---------------------------------------------------------


def test_commit_cpu_quick_traces_every_committers_critical_path(tmp_path: Path) -> None:
    """``commit_cpu.py --quick`` (memory store, no delay): a row per committer and the
    minimal strategy, CPU per file measured, and a critical path read off the request trace
    — every file published, the S3A committers listing no upload before their last complete
    (what bench/README.md's before/after figures rest on).  Asserts no time."""
    _run("commit_cpu.py", tmp_path, "--delays-ms", "0", "--threads", "4")
    report: dict[str, Any] = json.loads((tmp_path / "commit_cpu.json").read_text())
    rows = {r["committer"]: r for r in report["rows"]}
    assert set(rows) == {"minimal", "magic", "fenced", "directory", "partitioned", "manifest"}
    for name, row in rows.items():
        assert row["cpu_seconds"] > 0 and row["threads"] == 4, name
        publish = "copy" if name == "manifest" else "complete_multipart"
        assert row["commit_requests_by_op"][publish] == report["files"], name
        path = row["critical_path"]
        # (no bound on the fill: with no latency a complete is microseconds, and the pool
        # mostly waits for the thread that feeds it)
        assert path["mean_in_flight"] is not None and path["pool_fill"] is not None, name
        assert path["publishing_ms"] > 0, name
        if name in ("magic", "directory", "partitioned"):
            assert "list_multipart_uploads" not in path["requests_before_first_publish"], name


def test_targets_table_marks_each_committer_above_its_target() -> None:
    def row(strategy: str, commit: float | None, requests: float = 1.0) -> dict[str, Any]:
        r: dict[str, Any] = {"server": "moto", "files": 1000, "threads": 8, "repeats": 2,
                             "strategy": strategy, "job_commit_seconds": 3.0,
                             "job_commit_requests": 1009}
        if commit is not None:
            r["ratio_to_minimal"] = {"job_commit_seconds": commit,
                                     "requests_per_file": requests}
        return r

    report = {"rows": [row("minimal", None), row("magic", 1.15), row("fenced", 1.16),
                       row("directory", 0.9, requests=1.06), row("partitioned", 1.0),
                       row("manifest", 1.3)]}
    lines = render.targets_markdown(report)
    line = next(x for x in lines if x.startswith("| moto |"))
    cells = [c.strip() for c in line.strip("|").split("|")]
    assert cells[:5] == ["moto", "1,000", "8", "2", "3.00"]
    assert cells[5:10] == ["1.15", "1.16 ✗", "0.90", "1.00", "1.30"]  # manifest: no time target
    assert cells[10] == "1.00–1.06 ✗"
    assert cells[11] == "9"
