"""The ways of committing a job's output to S3 that the side-by-side benchmark compares.

Each strategy runs the same job — tasks write their files, then commit, then the driver commits
the job with the messages the tasks returned (Spark's protocol) — through the same counted
boto3 client (:mod:`wire`).  Besides zerorename's committers (through the public API) there are
what users would pick instead, written here plainly on boto3 as their usual implementations
behave:

``minimal``
    The least any deferred-multipart committer can send: each task creates an upload per file
    and uploads its one part; the task commit sends nothing (the message carries upload ID and
    ETag); the driver completes every upload on ``threads`` threads and PUTs ``_SUCCESS``.
    3 requests per file + 1.  No durable task record, so no job-scoped abort after a lost
    driver and no Hadoop protocol: a floor, not a committer.
``rename-v1``
    Hadoop's FileOutputCommitter, algorithm 1, on a store whose rename is copy + delete (S3A):
    tasks PUT under ``_temporary/0/_temporary/<attempt>/``; task commit lists the attempt and
    "renames" it to ``_temporary/0/<task>/`` (a copy per file, deletes 1000 keys a request);
    job commit lists ``_temporary/``, copies every committed file to the destination, deletes
    ``_temporary/`` and PUTs ``_SUCCESS``.  Every byte is copied twice.
``rename-v2``
    Algorithm 2: task commit copies the attempt's files straight into the destination (then
    deletes them); job commit only lists and deletes ``_temporary/`` and PUTs ``_SUCCESS``.
    Every byte copied once; a failed job leaves partial output (why v2 is unsafe).
``<zerorename committer>``
    ``create_committer(name, S3Store(client), job)`` with the thread option set to ``threads``.

The s3fs transaction runs in a process of its own (:mod:`s3fs_job`), with the same counter.
Copies run on ``threads`` threads (S3A's rename copies in parallel too).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from botocore.exceptions import ClientError
from commit_costs import THREAD_OPTION

import zerorename as zr

__all__ = ["BASELINES", "ZERORENAME", "JobTarget", "Strategy", "make_strategy"]

PAGE = 1000  # keys per ListObjectsV2 page and per DeleteObjects request
SUCCESS = "_SUCCESS"
T = TypeVar("T")
R = TypeVar("R")


@dataclass(frozen=True)
class JobTarget:
    """Where the job writes: ``s3://bucket/prefix/``, through ``client``."""

    client: Any
    bucket: str
    prefix: str  # no trailing slash
    threads: int

    @property
    def dest(self) -> str:
        return f"s3://{self.bucket}/{self.prefix}"

    def key(self, relpath: str) -> str:
        return f"{self.prefix}/{relpath}"


class Strategy(Protocol):
    """One way to commit: the four phases, each sending its own requests."""

    name: str

    def setup_job(self) -> None: ...

    def write_task(self, task: int, paths: Sequence[str], body: bytes) -> Any:
        """Write a task's files; returns what its commit needs."""
        ...

    def commit_task(self, task: int, state: Any) -> Any:
        """Returns the message the driver receives."""
        ...

    def commit_job(self, messages: Sequence[Any]) -> None: ...


def parallel(threads: int, fn: Callable[[T], R], items: Iterable[T]) -> list[R]:
    items = list(items)
    if threads <= 1 or len(items) <= 1:
        return [fn(x) for x in items]
    with ThreadPoolExecutor(min(threads, len(items))) as pool:
        return list(pool.map(fn, items))


# -- plain boto3 helpers ------------------------------------------------------------------

#: attempts per request: S3A and boto3 repeat a request that met a server error or
#: throttling (the shared client has botocore's own retries switched off by S3Store)
ATTEMPTS = 5


def send(client: Any, operation: str, **kwargs: Any) -> Any:
    """One S3 request, repeated (up to :data:`ATTEMPTS`, backing off) on a 5xx or 429 answer
    — as S3A's and boto3's retry policies do.  Every attempt is counted at the client.
    (moto's threaded server can answer 500 to a listing racing a bulk delete in the same
    bucket.)"""
    for attempt in range(ATTEMPTS):
        try:
            return getattr(client, operation)(**kwargs)
        except ClientError as exc:
            status = int(exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode") or 0)
            if (status < 500 and status != 429) or attempt == ATTEMPTS - 1:
                raise
            time.sleep(0.05 * 2 ** attempt)
    raise AssertionError("unreachable")


def list_keys(client: Any, bucket: str, prefix: str) -> Iterator[str]:
    """Every key under ``prefix`` (ListObjectsV2, 1000 a page)."""
    kwargs: dict[str, Any] = {"Bucket": bucket, "Prefix": prefix, "MaxKeys": PAGE}
    while True:
        page = send(client, "list_objects_v2", **kwargs)
        for obj in page.get("Contents", ()):
            yield str(obj["Key"])
        if not page.get("IsTruncated"):
            return
        kwargs["ContinuationToken"] = page["NextContinuationToken"]


def delete_keys(client: Any, bucket: str, keys: Sequence[str]) -> None:
    """DeleteObjects, 1000 keys a request (S3A's bulk delete)."""
    for i in range(0, len(keys), PAGE):
        batch = keys[i:i + PAGE]
        out = send(client, "delete_objects", Bucket=bucket, Delete={
            "Objects": [{"Key": k} for k in batch], "Quiet": True})
        if out.get("Errors"):
            raise RuntimeError(f"delete of s3://{bucket}/{batch[0]}...: {out['Errors'][:3]}")


def rename_tree(target: JobTarget, src_prefix: str, dst_prefix: str,
                keys: Sequence[str] | None = None) -> int:
    """S3A's directory rename: list ``src_prefix`` (unless ``keys`` are known), copy each
    object to the same relative key under ``dst_prefix`` on ``threads`` threads, then delete
    the sources in bulk.  Returns the number of objects moved."""
    client, bucket = target.client, target.bucket
    sources = list(keys) if keys is not None else list(list_keys(client, bucket, src_prefix))

    def copy(key: str) -> None:
        send(client, "copy_object", Bucket=bucket, Key=dst_prefix + key[len(src_prefix):],
             CopySource={"Bucket": bucket, "Key": key})

    parallel(target.threads, copy, sources)
    delete_keys(client, bucket, sources)
    return len(sources)


# -- the baselines ------------------------------------------------------------------------


class MinimalMultipart:
    """Initiate + part in tasks; the driver completes.  See the module docstring."""

    name = "minimal"

    def __init__(self, target: JobTarget) -> None:
        self.t = target

    def setup_job(self) -> None:
        return None

    def write_task(self, task: int, paths: Sequence[str], body: bytes) -> Any:
        client, bucket = self.t.client, self.t.bucket
        pending: list[tuple[str, str, str]] = []
        for path in paths:
            key = self.t.key(path)
            upload = send(client, "create_multipart_upload", Bucket=bucket, Key=key)["UploadId"]
            etag = send(client, "upload_part", Bucket=bucket, Key=key, UploadId=upload,
                        PartNumber=1, Body=body)["ETag"]
            pending.append((key, upload, etag))
        return pending

    def commit_task(self, task: int, state: Any) -> Any:
        return state  # the message is the list of uploads: nothing to send

    def commit_job(self, messages: Sequence[Any]) -> None:
        client, bucket = self.t.client, self.t.bucket

        def complete(item: tuple[str, str, str]) -> None:
            key, upload, etag = item
            send(client, "complete_multipart_upload", Bucket=bucket, Key=key, UploadId=upload,
                 MultipartUpload={"Parts": [{"PartNumber": 1, "ETag": etag}]})

        parallel(self.t.threads, complete, [item for m in messages for item in m])
        send(client, "put_object", Bucket=bucket, Key=self.t.key(SUCCESS), Body=b"")


class RenameByCopy:
    """FileOutputCommitter on S3A, algorithm 1 or 2.  See the module docstring."""

    def __init__(self, target: JobTarget, algorithm: int) -> None:
        self.t = target
        self.algorithm = algorithm
        self.name = f"rename-v{algorithm}"
        self.temporary = target.key("_temporary/")
        self.job_dir = target.key("_temporary/0/")

    def _attempt_dir(self, task: int) -> str:
        return f"{self.job_dir}_temporary/attempt_{task:06d}_0/"

    def setup_job(self) -> None:
        return None  # directories are implicit on S3

    def write_task(self, task: int, paths: Sequence[str], body: bytes) -> Any:
        attempt = self._attempt_dir(task)
        for path in paths:
            send(self.t.client, "put_object", Bucket=self.t.bucket, Key=attempt + path, Body=body)
        return None

    def commit_task(self, task: int, state: Any) -> Any:
        attempt = self._attempt_dir(task)
        if self.algorithm == 1:  # into the job attempt's committed task directory
            return rename_tree(self.t, attempt, f"{self.job_dir}task_{task:06d}/")
        return rename_tree(self.t, attempt, self.t.key(""))  # straight into the destination

    def commit_job(self, messages: Sequence[Any]) -> None:
        client, bucket = self.t.client, self.t.bucket
        leftovers = list(list_keys(client, bucket, self.temporary))
        if self.algorithm == 1:  # mergePaths of every committed task directory
            committed = [k for k in leftovers
                         if k.startswith(self.job_dir + "task_")]

            def publish(key: str) -> None:
                rel = key[len(self.job_dir):].split("/", 1)[1]
                send(client, "copy_object", Bucket=bucket, Key=self.t.key(rel),
                     CopySource={"Bucket": bucket, "Key": key})

            parallel(self.t.threads, publish, committed)
        delete_keys(client, bucket, leftovers)  # cleanupJob: delete _temporary/
        send(client, "put_object", Bucket=bucket, Key=self.t.key(SUCCESS), Body=b"")


class ZeroRename:
    """A zerorename committer through its public API, over ``S3Store(target.client)``."""

    def __init__(self, name: str, target: JobTarget, store: zr.S3Store) -> None:
        self.name = name
        self.store = store
        self.job = zr.JobContext(dest=target.dest,
                                 options={THREAD_OPTION[name]: str(target.threads)})

    def setup_job(self) -> None:
        zr.create_committer(self.name, self.store, self.job).setup_job()

    def write_task(self, task: int, paths: Sequence[str], body: bytes) -> Any:
        tc = zr.create_committer(self.name, self.store, self.job, task=self.job.task(task))
        tc.setup_task()
        for path in paths:
            tc.write(path, body)
        return tc

    def commit_task(self, task: int, state: Any) -> Any:
        if not state.needs_task_commit():
            raise RuntimeError(f"{self.name}: task {task} wrote files but needs no commit")
        return state.commit_task()

    def commit_job(self, messages: Sequence[Any]) -> None:
        zr.create_committer(self.name, self.store, self.job).commit_job(list(messages))


BASELINES = ("minimal", "rename-v1", "rename-v2")
#: every zerorename committer that runs on S3 (v1/v2 need a real rename)
ZERORENAME = ("magic", "fenced", "directory", "partitioned", "manifest")


def make_strategy(name: str, target: JobTarget, store: zr.S3Store) -> Strategy:
    if name == "minimal":
        return MinimalMultipart(target)
    if name in ("rename-v1", "rename-v2"):
        return RenameByCopy(target, int(name[-1]))
    if name in ZERORENAME:
        return ZeroRename(name, target, store)
    raise ValueError(f"unknown strategy {name!r}; choose from "
                     f"{', '.join((*BASELINES, 's3fs', *ZERORENAME))}")
