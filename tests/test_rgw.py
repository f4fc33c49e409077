"""Ceph RGW tier: behaviour only a real server shows (moto ignores these parameters).

All tests here are marked ``rgw`` and skip when RGW cannot start (see rgw_plugin.py).
"""

from __future__ import annotations

import time
from typing import Any

import pytest

import zerorename as zr
from zerorename.cli import main as cli_main

try:
    from rgw_plugin import RGWServer, rgw_bucket, rgw_client, rgw_server
except ModuleNotFoundError:  # pragma: no cover - tests/ imported as a package
    from tests.rgw_plugin import (  # type: ignore[no-redef]
        RGWServer,
        rgw_bucket,
        rgw_client,
        rgw_server,
    )

from zerorename.errors import PreconditionFailedError
from zerorename.stores import S3Store

__fixtures__ = (rgw_bucket, rgw_client, rgw_server)

pytestmark = pytest.mark.rgw


def test_server_is_local_and_fast_to_start(rgw_server: RGWServer) -> None:
    assert rgw_server.endpoint.startswith("http://127.0.0.1:")
    assert rgw_server.start_seconds < 300


def test_list_uploads_pages_for_real(rgw_client: Any, rgw_bucket: str) -> None:
    """MaxUploads=2 over 5 uploads (two sharing a key): several pages, each upload once."""
    keys = ["out/a", "out/a", "out/b", "out/c", "out/d"]
    created = [rgw_client.create_multipart_upload(Bucket=rgw_bucket, Key=k)["UploadId"]
               for k in keys]
    rgw_client.create_multipart_upload(Bucket=rgw_bucket, Key="out10/x")  # other directory
    first = rgw_client.list_multipart_uploads(Bucket=rgw_bucket, Prefix="out/", MaxUploads=2)
    assert first["IsTruncated"] and len(first["Uploads"]) == 2
    assert first["NextKeyMarker"] and first["NextUploadIdMarker"]

    store = S3Store(rgw_client, list_uploads_page_size=2)
    got = store.list_multipart_uploads(f"s3://{rgw_bucket}/out/")
    assert sorted(u.upload_id for u in got) == sorted(created)
    assert len(got) == 5
    assert store.request_counts()["list_multipart_uploads"] >= 3  # really paged
    # one page per request of 1 upload: still each upload exactly once
    one = S3Store(rgw_client, list_uploads_page_size=1).list_multipart_uploads(
        f"s3://{rgw_bucket}/out/")
    assert sorted(u.upload_id for u in one) == sorted(created)


def test_upload_initiated_is_real_time(rgw_client: Any, rgw_bucket: str) -> None:
    """RGW reports when an upload started (moto: always 2010), so age-based janitors work."""
    store = S3Store(rgw_client)
    url1, url2 = f"s3://{rgw_bucket}/aged/1", f"s3://{rgw_bucket}/aged/2"
    before = time.time()
    store.create_multipart(url1)
    time.sleep(1.1)
    store.create_multipart(url2)
    after = time.time()
    ups = {u.url: u for u in store.list_multipart_uploads(f"s3://{rgw_bucket}/aged/")}
    t1, t2 = ups[url1].initiated, ups[url2].initiated
    assert t1 is not None and t2 is not None
    assert time.gmtime(t1).tm_year != 2010
    assert before - 5 <= t1 <= t2 <= after + 5
    assert t2 - t1 >= 0.9


def test_quirks_are_handled_by_s3store(rgw_client: Any, rgw_bucket: str) -> None:
    """The raw quirks exist, and S3Store's answers are AWS-like anyway."""
    key = "q/obj"
    etag = rgw_client.put_object(Bucket=rgw_bucket, Key=key, Body=b"v1")["ETag"]
    with pytest.raises(rgw_client.exceptions.ClientError):  # quoted current ETag: 412 (quirk)
        rgw_client.put_object(Bucket=rgw_bucket, Key=key, Body=b"v2", IfMatch=etag)
    store = S3Store(rgw_client)
    url = f"s3://{rgw_bucket}/{key}"
    assert store.put(url, b"v2", if_match=etag)  # S3Store resends it bare
    uid = store.create_multipart(url)
    part = store.upload_part(url, uid, 1, b"mp")
    with pytest.raises(PreconditionFailedError):  # RGW would overwrite; HEAD check refuses
        store.complete_multipart(url, uid, [(1, part)], if_none_match=True)
    assert store.get(url) == b"v2"
    etag_mp = store.complete_multipart(url, uid, [(1, part)])  # RGW's response ETag is empty
    assert etag_mp.endswith("-1") and store.head(url).etag == etag_mp  # type: ignore[union-attr]


# -- age-based janitor (``zerorename uploads``) on real Initiated times -----------------------


def _cli(args: list[str], server: RGWServer, monkeypatch: pytest.MonkeyPatch,
         capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """Run ``zerorename <args>`` in process against RGW (keys through boto3's chain, as a user
    would give them); (exit status, stdout, stderr)."""
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", server.access_key)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", server.secret_key)
    monkeypatch.delenv("AWS_SESSION_TOKEN", raising=False)
    monkeypatch.delenv("AWS_PROFILE", raising=False)
    capsys.readouterr()
    status = cli_main([*args, "--endpoint-url", server.endpoint, "--region", server.region,
                       "--checksums", "when_required"])
    out, err = capsys.readouterr()
    return status, out, err


def test_cli_aborts_only_uploads_older_than_the_limit(
        rgw_server: RGWServer, rgw_client: Any, rgw_bucket: str,
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """``zerorename uploads abort DEST --older-than 1.5s`` with ages the server measured: three
    uploads made 3 s before two others; ``list`` shows all five with ``source=store``,
    ``--dry-run`` aborts none, the real run aborts exactly the three old ones — and an old
    upload of the adjacent ``dest10`` is outside ``dest`` and survives.  (moto's Initiated is
    a constant from 2010, so there every upload is "old".)  Costs ~3.5 s, mostly the wait."""
    store = S3Store(rgw_client)
    dest = f"s3://{rgw_bucket}/dest"
    old = {f"{dest}/old-{i}": store.create_multipart(f"{dest}/old-{i}") for i in range(3)}
    neighbour = store.create_multipart(f"s3://{rgw_bucket}/dest10/old")
    time.sleep(3.0)
    new = {f"{dest}/new-{i}": store.create_multipart(f"{dest}/new-{i}") for i in range(2)}

    status, out, err = _cli(["uploads", "list", dest], rgw_server, monkeypatch, capsys)
    assert status == 0, err
    rows = [line.split("\t") for line in out.splitlines()]
    assert {(r[0], r[1]) for r in rows} == {*old.items(), *new.items()}
    assert all(r[3] == "source=store" for r in rows), rows
    assert "5 upload(s)" in err

    status, out, err = _cli(["uploads", "abort", dest, "--older-than", "1.5s", "--dry-run"],
                            rgw_server, monkeypatch, capsys)
    assert status == 0, err
    assert {line.split("\t")[1] for line in out.splitlines()} == set(old.values())
    assert "would abort 3 of the 3 upload(s) listed" in err
    assert len(store.list_multipart_uploads(f"s3://{rgw_bucket}/")) == 6  # nothing aborted

    status, _out, err = _cli(["uploads", "abort", dest, "--older-than", "1.5s"], rgw_server,
                             monkeypatch, capsys)
    assert status == 0, err
    assert "aborted 3 upload(s)" in err
    left = {(u.url, u.upload_id) for u in store.list_multipart_uploads(f"s3://{rgw_bucket}/")}
    assert left == {*new.items(), (f"s3://{rgw_bucket}/dest10/old", neighbour)}


# -- abort_job when the job's uploads span several ListMultipartUploads pages -----------------


def test_abort_job_pages_through_uploads_and_spares_the_other_job(rgw_client: Any,
                                                                  rgw_bucket: str) -> None:
    """A magic task attempt dies with ten files open (uploads with intents but no
    ``.pending``), so abort_job must find them by listing the destination's uploads —
    two per page here (``list_uploads_page_size=2``), with RGW's real KeyMarker/UploadIdMarker
    paging (inclusive KeyMarker included).  Another job's three open uploads, whose keys sort
    between ours, are on the same pages and must survive.  Afterwards the job owns zero
    uploads and zero objects.  Costs ~1 s."""
    store = S3Store(rgw_client, list_uploads_page_size=2, min_part_size=1)  # RGW set to 1
    dest = f"s3://{rgw_bucket}/out"
    opts = {"fs.s3a.multipart.size": "256", "fs.s3a.retry.interval": "0",
            "fs.s3a.committer.threads": "2"}

    def open_files(job_id: str, names: list[str]) -> tuple[zr.BaseCommitter, list[Any]]:
        job = zr.JobContext(dest, job_id=job_id, options=opts)
        driver = zr.create_committer("magic", store, job)
        driver.setup_job()
        task = zr.create_committer("magic", store, job, task=job.task(0))
        task.setup_task()
        streams = [task.open(name) for name in names]
        for stream in streams:
            stream.write(b"x" * 300)  # one full 256-byte part uploaded, the rest buffered
        return driver, streams

    ours = [f"part-{i:02d}a" for i in range(10)]
    theirs = [f"part-{i:02d}b" for i in (2, 5, 8)]  # interleaved with ours in key order
    driver, _dead = open_files("job-dying", ours)
    _other_driver, _other_streams = open_files("job-alive", theirs)
    before = {u.url.rsplit("/", 1)[1]: u.upload_id for u in store.list_multipart_uploads(dest)}
    assert set(before) == {*ours, *theirs}

    lists_before = store.request_counts().get("list_multipart_uploads", 0)
    driver.abort_job()
    lists = store.request_counts().get("list_multipart_uploads", 0) - lists_before
    assert lists >= 13 // 2, f"abort_job listed uploads in {lists} request(s): did it page?"

    left = {u.url.rsplit("/", 1)[1]: u.upload_id for u in store.list_multipart_uploads(dest)}
    assert left == {name: before[name] for name in theirs}
    raw = rgw_client.list_multipart_uploads(Bucket=rgw_bucket, Prefix="out/")
    assert sorted(u["Key"] for u in raw.get("Uploads", [])) == [f"out/{n}" for n in theirs]
    job_roots = [o.url for o in zr.list_dir(store, dest) if "job-dying" in o.url]
    assert job_roots == []
