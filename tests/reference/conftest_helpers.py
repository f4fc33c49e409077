"""Shared fixtures and helpers for tests/reference (imported by each test module).

* ``env``: one backend per test — ``moto`` (in-process ``mock_aws``, S3Store) or ``local``
  (LocalStore in ``tmp_path``) — with a fresh base URL.  moto's 5 MiB minimum part size is
  lowered for the test (module attribute patched, so import order does not matter) so that
  multi-part files stay small.
* ``rgw_env``: a real S3 — the session's throw-away Ceph RADOS Gateway (``tests/rgw_plugin``;
  started with a 1-byte minimum part size) — with a fresh bucket per test, emptied and removed
  afterwards.  Tests reach it through ``env_with_rgw`` (``env`` plus the ``rgw`` kind) or the
  ``rgw=`` argument of :func:`committer_backends`; both mark the case ``rgw``, so
  ``-m "not rgw"`` deselects it and it skips when RGW cannot start.
* :class:`FaultyStore`: wraps a store and injects failures (one-shot 503s, permanent 500s)
  on chosen operations, recording every call and the thread that made it.
* :func:`run_job`: the whole protocol in one call, returning what the tests inspect.
* ``no_leaked_threads``: fails a test that leaves committer threads running.
"""

from __future__ import annotations

import os
import threading
import uuid
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

os.environ.setdefault("S3_UPLOAD_PART_MIN_SIZE", "64")  # before moto is first imported
os.environ.setdefault("AWS_ACCESS_KEY_ID", "testing")
os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "testing")
os.environ.setdefault("AWS_DEFAULT_REGION", "us-east-1")

import moto.s3.models
from moto import mock_aws

import zerorename as zr
from zerorename.errors import StoreError, ThrottledError
from zerorename.executor import THREAD_PREFIX
from zerorename.store import ListPage, ObjectInfo, Store, StoreCapabilities, UploadInfo
from zerorename.urls import dir_prefix, is_hidden, join

try:  # tests/ on sys.path (rootdir layout) or tests as a package
    from rgw_plugin import RGWServer, empty_and_delete_bucket
except ModuleNotFoundError:  # pragma: no cover
    from tests.rgw_plugin import RGWServer, empty_and_delete_bucket  # type: ignore[no-redef]

__all__ = [
    "PART",
    "RGW",
    "S3A",
    "Env",
    "FaultyStore",
    "JobRun",
    "SimulatedCrash",
    "env",
    "env_with_rgw",
    "local_env",
    "moto_env",
    "no_leaked_threads",
    "options",
    "rgw_env",
    "run_job",
]

#: Part size used by the tests (moto's minimum is patched below it).
PART = 256
S3A = ("magic", "directory", "partitioned")
RENAME = ("v1", "v2", "manifest")
ALL = S3A + RENAME


def options(**extra: Any) -> dict[str, Any]:
    """Test defaults: small parts, no retry sleeps, a few threads."""
    base: dict[str, Any] = {
        "fs.s3a.multipart.size": str(PART),
        "fs.s3a.retry.interval": "0",
        "fs.s3a.committer.threads": "4",
        "mapreduce.manifest.committer.io.threads": "4",
    }
    base.update({k.replace("__", "."): v for k, v in extra.items()})
    return base


@dataclass
class Env:
    """A backend ready for one test: ``store``, a unique ``base`` URL, and helpers."""

    kind: str
    store: Store
    base: str
    client: Any = None

    def dest(self, name: str = "out") -> str:
        return join(self.base, name)

    def uploads(self, dest: str) -> list[UploadInfo]:
        """Incomplete uploads under the *directory* ``dest``."""
        return self.store.list_multipart_uploads(dir_prefix(dest))

    def objects(self, dest: str) -> dict[str, bytes]:
        """Every object under ``dest`` (relative path → bytes), hidden ones included."""
        base = dir_prefix(dest)
        return {o.url[len(base):]: self.store.get(o.url) for o in zr.list_dir(self.store, dest)}

    def output(self, dest: str) -> dict[str, bytes]:
        """What a reader sees: objects whose path has no ``_`` or ``.`` element."""
        return {k: v for k, v in self.objects(dest).items() if not is_hidden(k)}

    def put(self, dest: str, rel: str, data: bytes) -> None:
        self.store.put(join(dest, rel), data)


@pytest.fixture
def moto_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[Env]:
    monkeypatch.setattr(moto.s3.models, "S3_UPLOAD_PART_MIN_SIZE", 64)
    with mock_aws():
        client = zr.make_s3_client()
        bucket = f"zr-{uuid.uuid4().hex[:12]}"
        client.create_bucket(Bucket=bucket)
        store = zr.S3Store(client, retry=zr.RetryPolicy(max_attempts=1), min_part_size=64)
        yield Env("moto", store, f"s3://{bucket}/data", client)


@pytest.fixture
def local_env(tmp_path: Path) -> Env:
    store = zr.LocalStore(root=tmp_path / "store-root")
    return Env("local", store, f"file://{tmp_path}/data")


@pytest.fixture
def rgw_env(request: pytest.FixtureRequest) -> Iterator[Env]:
    """The session's Ceph RGW (skips when it cannot start), one fresh bucket for this test.
    No retries (``max_attempts=1``), as on moto: a failing request shows, not hides."""
    server: RGWServer = request.getfixturevalue("rgw_server")
    client = zr.make_s3_client(server.endpoint, server.region, access_key=server.access_key,
                               secret_key=server.secret_key)
    bucket = f"zr-{uuid.uuid4().hex[:12]}"
    client.create_bucket(Bucket=bucket)
    store = zr.S3Store(client, name="rgw", retry=zr.RetryPolicy(max_attempts=1),
                       min_part_size=1)  # the test RGW's rgw_multipart_min_part_size
    yield Env("rgw", store, f"s3://{bucket}/data", client)
    empty_and_delete_bucket(client, bucket)  # memstore keeps every byte in RAM


_ENV_FIXTURES = {"moto": "moto_env", "local": "local_env", "rgw": "rgw_env"}
#: the ``rgw`` kind as a parameter: marked, so ``-m rgw`` / ``-m "not rgw"`` select it
RGW = pytest.param("rgw", marks=pytest.mark.rgw, id="rgw")


@pytest.fixture(params=["moto", "local"])
def env(request: pytest.FixtureRequest) -> Env:
    value: Env = request.getfixturevalue(_ENV_FIXTURES[request.param])
    return value


@pytest.fixture(params=["moto", "local", RGW])
def env_with_rgw(request: pytest.FixtureRequest) -> Env:
    """``env`` plus a real S3 (Ceph RGW): for tests whose point is how a store answers."""
    value: Env = request.getfixturevalue(_ENV_FIXTURES[request.param])
    return value


@pytest.fixture
def no_leaked_threads() -> Iterator[None]:
    before = threading.active_count()
    yield
    leaked = [t.name for t in threading.enumerate() if t.name.startswith(THREAD_PREFIX)]
    assert not leaked, f"committer threads still alive: {leaked}"
    assert threading.active_count() <= before, "the test left extra threads running"


#: Committers that run on S3 (moto): v1/v2 refuse stores without rename.
ON_S3 = ("magic", "directory", "partitioned", "manifest")


def committer_backends(names: Sequence[str] = ALL, moto: Sequence[str] = ON_S3,
                       rgw: Sequence[str] = ()) -> list[Any]:
    """(committer, backend) parameters: every committer on LocalStore, those in ``moto`` also
    on moto, and those in ``rgw`` also on Ceph RGW (marked ``rgw``).  moto in-process costs
    ~10-30 ms a request on CI-sized machines and RGW ~3 ms plus a bucket per test, so tests
    that probe committer logic rather than S3 behaviour use smaller ``moto``/``rgw`` sets."""
    params = []
    for name in names:
        if name in moto and name in ON_S3:
            params.append(pytest.param(name, "moto", id=f"{name}-moto"))
        params.append(pytest.param(name, "local", id=f"{name}-local"))
        if name in rgw and name in ON_S3:
            params.append(pytest.param(name, "rgw", id=f"{name}-rgw", marks=pytest.mark.rgw))
    return params


@pytest.fixture
def backend_env(request: pytest.FixtureRequest) -> Env:
    """``env`` chosen by a ``backend`` parameter of the test."""
    backend = request.node.callspec.params["backend"]
    value: Env = request.getfixturevalue(_ENV_FIXTURES[backend])
    return value


# -- fault injection ---------------------------------------------------------------------------


@dataclass
class Fault:
    op: str
    start: int  # 1-based call number of ``op`` at which failures begin
    times: int | None  # consecutive failures; None = forever
    status: int
    match: Callable[[str], bool] | None = None
    fired: int = 0


class SimulatedCrash(BaseException):
    """The process died: raised by a crashed :class:`FaultyStore` on every later call, so no
    cleanup handler of the dead process can reach the store either."""


class FaultyStore:
    """A store wrapper that fails chosen calls, counts calls, and records calling threads."""

    def __init__(self, inner: Store) -> None:
        self.inner = inner
        self.name = f"faulty:{inner.name}"
        self.faults: list[Fault] = []
        self.calls: Counter[str] = Counter()
        self.log: list[tuple[str, str]] = []
        self.threads: set[int] = set()
        self.part_sizes: dict[str, list[int]] = {}
        self.dead = False
        self._crash: tuple[str, int] | None = None
        self._lock = threading.Lock()

    def crash(self, op: str, *, nth: int = 1) -> FaultyStore:
        """At the ``nth`` call of ``op`` the process "dies": that call and every later one
        raise :class:`SimulatedCrash` without reaching the store."""
        self._crash = (op, nth)
        return self

    def fail(self, op: str, *, nth: int = 1, times: int | None = 1, status: int = 503,
             match: Callable[[str], bool] | None = None) -> FaultyStore:
        """From the ``nth`` matching call of ``op``, fail ``times`` calls (None: all)."""
        self.faults.append(Fault(op, nth, times, status, match))
        return self

    def _enter(self, op: str, url: str) -> None:
        with self._lock:
            if self.dead:
                raise SimulatedCrash(f"{op} {url}: the process is dead")
            if self._crash is not None and self._crash[0] == op:
                self.calls[f"{op}#crash"] += 1
                if self.calls[f"{op}#crash"] >= self._crash[1]:
                    self.dead = True
                    raise SimulatedCrash(f"crashed at {op} {url}")
            self.threads.add(threading.get_ident())
            self.log.append((op, url))
            for fault in self.faults:
                if fault.op != op or (fault.match is not None and not fault.match(url)):
                    continue
                self.calls[f"{op}#match{id(fault)}"] += 1
                seen = self.calls[f"{op}#match{id(fault)}"]
                if seen >= fault.start and (fault.times is None or fault.fired < fault.times):
                    fault.fired += 1
                    if fault.status == 503:
                        raise ThrottledError(url, f"injected 503 on {op}")
                    raise StoreError(url, f"injected {fault.status} on {op}", code="InternalError"
                                     if fault.status == 500 else "Injected", status=fault.status)
            self.calls[op] += 1

    def capabilities(self) -> StoreCapabilities:
        return self.inner.capabilities()

    def request_counts(self) -> dict[str, int]:
        return self.inner.request_counts()

    def put(self, url: str, data: bytes, *, if_none_match: bool = False,
            if_match: str | None = None) -> str:
        self._enter("put", url)
        return self.inner.put(url, data, if_none_match=if_none_match, if_match=if_match)

    def get(self, url: str) -> bytes:
        self._enter("get", url)
        return self.inner.get(url)

    def head(self, url: str) -> ObjectInfo | None:
        self._enter("head", url)
        return self.inner.head(url)

    def list_page(self, prefix: str, *, delimiter: str | None = None, token: str | None = None,
                  max_keys: int = 1000) -> ListPage:
        self._enter("list_page", prefix)
        return self.inner.list_page(prefix, delimiter=delimiter, token=token, max_keys=max_keys)

    def delete(self, url: str) -> None:
        self._enter("delete", url)
        self.inner.delete(url)

    def delete_many(self, urls: Sequence[str]) -> None:
        self._enter("delete_many", urls[0] if urls else "")
        self.inner.delete_many(urls)

    def copy(self, src: str, dst: str) -> str:
        self._enter("copy", src)
        return self.inner.copy(src, dst)

    def rename(self, src: str, dst: str) -> None:
        self._enter("rename", src)
        self.inner.rename(src, dst)

    def create_multipart(self, url: str) -> str:
        self._enter("create_multipart", url)
        return self.inner.create_multipart(url)

    def upload_part(self, url: str, upload_id: str, part_number: int, data: bytes) -> str:
        self._enter("upload_part", url)
        with self._lock:
            self.part_sizes.setdefault(url, []).append(len(data))
        return self.inner.upload_part(url, upload_id, part_number, data)

    def complete_multipart(self, url: str, upload_id: str, parts: Sequence[tuple[int, str]], *,
                           if_none_match: bool = False, if_match: str | None = None) -> str:
        self._enter("complete_multipart", url)
        return self.inner.complete_multipart(url, upload_id, parts, if_none_match=if_none_match,
                                             if_match=if_match)

    def abort_multipart(self, url: str, upload_id: str) -> None:
        self._enter("abort_multipart", url)
        self.inner.abort_multipart(url, upload_id)

    def list_multipart_uploads(self, prefix: str) -> list[UploadInfo]:
        self._enter("list_multipart_uploads", prefix)
        return self.inner.list_multipart_uploads(prefix)


# -- the whole protocol -----------------------------------------------------------------------


@dataclass
class JobRun:
    """What :func:`run_job` did: the job, its committers and messages, and the success data."""

    job: zr.JobContext
    driver: Any
    messages: list[Any] = field(default_factory=list)
    success: zr.SuccessData | None = None
    written: dict[str, bytes] = field(default_factory=dict)


def run_job(committer: str, store: Store, dest: str, files: dict[int, dict[str, bytes]], *,
            protocol: str = "spark", opts: dict[str, Any] | None = None,
            job_id: str | None = None, commit: bool = True) -> JobRun:
    """Set up a job, run one task attempt per entry of ``files`` (task id → relpath → data),
    commit every task and (if ``commit``) the job, with Spark's or Hadoop's protocol."""
    job = zr.JobContext(dest, job_id=job_id, options=opts if opts is not None else options())
    driver = zr.create_committer(committer, store, job)
    driver.setup_job()
    run = JobRun(job, driver)
    for task_id, task_files in files.items():
        tc = zr.create_committer(committer, store, job, task=job.task(task_id))
        tc.setup_task()
        for rel, data in task_files.items():
            with tc.open(rel) as f:
                f.write(data)
            run.written[rel] = data
        message = tc.commit_task()
        run.messages.append(zr.TaskCommitMessage.from_json(message.dumps()))
    if commit:
        run.success = driver.commit_job(run.messages if protocol == "spark" else None)
    return run
