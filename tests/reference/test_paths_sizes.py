"""Awkward paths and sizes around the part boundary, for every committer."""

from __future__ import annotations

import math

import pytest

import zerorename as zr

from .conftest_helpers import (
    PART,
    RGW,
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
