"""Awkward paths and sizes around the part boundary, for every committer."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

import zerorename as zr
from zerorename.errors import KeyTooLongError, StoreError
from zerorename.urls import parse_url

from .conftest_helpers import (
    PART,
    RGW,
    S3A,
    Env,
    FaultyStore,
    committer_backends,
    options,
    run_job,
)

pytestmark = pytest.mark.usefixtures("no_leaked_threads")

NAMES = [
    "plain",
    "dir with space/file with space.csv",  # HADOOP-17112
    "percent%20literal/100%.txt",
    "plus+sign/a+b=c.parquet",
    "unicodé/日本語/ファイル.bin",
    "deeply/nested/dir/tree/of/partitions/year=2024/month=01/part.orc",
    "tilde~and'quote\"/x",
]
SIZES = [0, 1, PART - 1, PART, PART + 1, 3 * PART + 5]


def _data(i: int, size: int) -> bytes:
    return bytes((i * 31 + k) % 251 for k in range(size))


@pytest.mark.parametrize(("committer", "backend"),
                         committer_backends(moto=("magic", "directory", "manifest"),
                                            rgw=("magic", "directory", "partitioned",
                                                 "manifest")))
def test_awkward_names_and_part_boundary_sizes(committer: str, backend: str,
                                               backend_env: Env) -> None:
    """Hadoop: ITestCommitOperations.testBulkCommitFiles ("file3 with space", HADOOP-17112),
    testCommitEmptyFile/testCommitSmallFile; TestStagingCommitter's 100-byte parts.  Every
    byte arrives, names round-trip through the JSON records, and multipart uploads use equal
    parts of fs.s3a.multipart.size except the last."""
    env = backend_env
    dest = env.dest("out put")  # a space in the destination too (TestJobThroughManifest...)
    faulty = FaultyStore(env.store)
    files = {0: {f"{name}-{size}": _data(i, size) for i, name in enumerate(NAMES)
                 for size in SIZES[i % 2::2]},
             1: {f"second/{size}.bin": _data(size, size) for size in SIZES}}
    # v2's Hadoop-protocol job commit never sees the files, so _SUCCESS lists them only with
    # Spark's protocol
    run = run_job(committer, faulty, dest, files,
                  protocol="spark" if committer == "v2" else "hadoop")
    expected = {rel: data for task in files.values() for rel, data in task.items()}
    assert env.output(dest) == expected
    assert run.success is not None
    assert len(zr.read_success(env.store, dest).filenames) == len(expected)
    if committer in ("magic", "directory", "partitioned"):
        for rel, data in expected.items():
            sizes = faulty.part_sizes[f"{dest}/{rel}"]
            assert len(sizes) == max(1, math.ceil(len(data) / PART)), rel
            assert all(s == PART for s in sizes[:-1]) and sum(sizes) == len(data), rel


@pytest.mark.parametrize("committer", ["magic", "manifest", "v1"])
def test_files_larger_than_a_part_stream_with_bounded_buffers(committer: str,
                                                              local_env: Env) -> None:
    """Written in many small writes, a file of many parts arrives intact (the writers buffer
    at most one part)."""
    dest = local_env.dest()
    job = zr.JobContext(dest, options=options())
    driver = zr.create_committer(committer, local_env.store, job)
    driver.setup_job()
    tc = zr.create_committer(committer, local_env.store, job, task=job.task(0))
    tc.setup_task()
    chunks = [bytes([i % 256]) * 37 for i in range(100)]
    with tc.open("big.bin") as f:
        for chunk in chunks:
            f.write(chunk)
        assert f.tell() == 3700
    driver.commit_job([tc.commit_task()])
    assert local_env.output(dest) == {"big.bin": b"".join(chunks)}


@pytest.mark.parametrize("backend", ["moto", RGW])
def test_bucket_root_as_destination(backend: str, backend_env: Env) -> None:
    """A destination may be a whole bucket (s3://bucket): paths are still relative to it."""
    env = backend_env
    bucket_root = env.base.rsplit("/", 1)[0]
    run_job("magic", env.store, bucket_root, {0: {"at-root": b"r", "d/x": b"x"}})
    assert env.store.get(f"{bucket_root}/at-root") == b"r"
    assert env.store.get(f"{bucket_root}/d/x") == b"x"
    assert env.uploads(bucket_root) == []


# -- keys near S3's 1,024-byte limit ----------------------------------------------------------

#: S3's documented limit: a key is at most 1,024 bytes of UTF-8.
MAX_KEY_BYTES = 1024


class KeyLimitStore(FaultyStore):
    """Refuses any request naming a key longer than S3's limit, as S3 does (400
    KeyTooLongError); moto and LocalStore do not enforce it."""

    def _enter(self, op: str, url: str) -> None:
        key = parse_url(url).key if url else ""
        if len(key.encode("utf-8")) > MAX_KEY_BYTES:
            raise StoreError(url, f"{op}: key of {len(key.encode('utf-8'))} bytes",
                             code="KeyTooLongError", status=400)
        super()._enter(op, url)


def _rel_of_key_bytes(dest: str, total: int, element: int = 200) -> str:
    """A relative path (elements of at most ``element`` UTF-8 bytes, some multi-byte) that
    makes ``dest/<rel>`` a key of exactly ``total`` bytes."""
    budget = total - len(parse_url(dest).key.rstrip("/").encode("utf-8")) - 1
    elements: list[str] = []
    while budget > 0:
        size = min(element, budget) if budget - element != 1 else element - 1
        name = "é" * (size // 4) + "x" * (size - 2 * (size // 4))  # é is 2 bytes
        elements.append(name)
        budget -= len(name.encode("utf-8")) + 1  # and the '/' before the next element
    rel = "/".join(elements)
    assert len(f"{parse_url(dest).key.rstrip('/')}/{rel}".encode()) == total
    return rel


@pytest.mark.parametrize(("committer", "backend"),
                         committer_backends(S3A, moto=S3A, rgw=S3A))
def test_a_key_of_exactly_1024_bytes_is_committed(committer: str, backend: str,
                                                  backend_env: Env) -> None:
    """A key of S3's maximum length is valid: the committer's own records (the magic intent
    and .pending, the staging local file) must not be longer than the user's key.  (Ceph RGW
    answers CompleteMultipartUpload with a 500 for keys over about 983 bytes — measured on
    the test server: 982 completes, 986 fails — so there the key is 980 bytes, still far too
    long for a record of the key plus ~150 bytes.)"""
    env = backend_env
    dest = env.dest()
    rel = _rel_of_key_bytes(dest, 980 if backend == "rgw" else MAX_KEY_BYTES)
    store = KeyLimitStore(env.store)
    run_job(committer, store, dest, {0: {rel: b"long" * 100, "short": b"s"}},
            protocol="hadoop")
    assert env.output(dest) == {rel: b"long" * 100, "short": b"s"}
    assert env.uploads(dest) == []


@pytest.mark.parametrize("committer", ["directory", "partitioned"])
def test_staging_path_element_longer_than_a_local_file_name(committer: str,
                                                            moto_env: Env) -> None:
    """A 300-byte path element is a valid S3 key but no valid local file name (255 bytes on
    most file systems): the staging committers' local files must not mirror the key."""
    dest = moto_env.dest()
    rel = f"year=2024/{'p' * 300}/part-0.parquet"
    run_job(committer, moto_env.store, dest, {0: {rel: b"x" * 700}})
    assert moto_env.output(dest) == {rel: b"x" * 700}
    assert moto_env.uploads(dest) == []


@pytest.mark.parametrize(("committer", "backend"),
                         committer_backends(S3A, moto=("magic", "directory"), rgw=()))
def test_a_key_over_1024_bytes_is_refused_when_opened(committer: str, backend: str,
                                                      backend_env: Env) -> None:
    """A key S3 cannot hold is refused by ``open`` with a typed error naming the user's path,
    before any request; the task goes on and commits its other files."""
    env = backend_env
    dest = env.dest()
    rel = _rel_of_key_bytes(dest, MAX_KEY_BYTES + 1)
    store = FaultyStore(env.store)
    job = zr.JobContext(dest, options=options())
    driver = zr.create_committer(committer, store, job)
    driver.setup_job()
    tc = zr.create_committer(committer, store, job, task=job.task(0))
    tc.setup_task()
    calls_before = sum(store.calls.values())
    with pytest.raises(KeyTooLongError) as info:
        tc.open(rel)
    assert info.value.path == rel
    assert "1025" in info.value.reason and "1024" in info.value.reason
    assert sum(store.calls.values()) == calls_before, "a request was made for a bad key"
    tc.write("fine", b"f")
    driver.commit_job([tc.commit_task()])
    assert env.output(dest) == {"fine": b"f"}
    assert env.uploads(dest) == []


@pytest.mark.parametrize("committer", ["directory", "partitioned"])
def test_staging_file_written_directly_with_a_too_long_key(committer: str,
                                                           local_env: Env) -> None:
    """A file put in ``local_work_dir`` directly (pyarrow's way) whose key would exceed 1,024
    bytes fails task commit with a typed error naming it, before anything is uploaded."""
    dest = local_env.dest()
    store = FaultyStore(local_env.store)
    job = zr.JobContext(dest, options=options())
    driver = zr.create_committer(committer, store, job)
    driver.setup_job()
    tc = zr.create_committer(committer, store, job, task=job.task(0))
    tc.setup_task()
    tc.write("fine", b"f")
    rel = _rel_of_key_bytes(dest, MAX_KEY_BYTES + 1)
    local = tc.local_work_dir  # type: ignore[attr-defined]
    assert isinstance(local, Path)
    (local / rel).parent.mkdir(parents=True)
    (local / rel).write_bytes(b"direct")
    with pytest.raises(KeyTooLongError) as info:
        tc.commit_task()
    assert info.value.path.endswith(rel)
    assert store.calls["create_multipart"] == 0 and store.calls["put"] == 1  # the job marker
    driver.abort_job()
    assert local_env.objects(dest) == {}
