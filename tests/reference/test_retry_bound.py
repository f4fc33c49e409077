"""``fs.s3a.retry.limit`` bounds the HTTP requests of one logical store operation.

Requests are counted at the transport: a botocore ``before-send`` handler sees every request a
client is about to put on the wire, whichever layer (committer, S3Store, botocore) decided to
send it, and answers it itself, so no server and no network are involved.  botocore's own
backoff sleep is recorded instead of slept (it must never happen), and our policy's sleep is
injected: nothing here waits.

The second half is the one place that accepts "NoSuchUpload" on a repeated
CompleteMultipartUpload: the first complete was applied by the server but its answer was lost;
whichever loop repeated the request, the object is checked (ETag computed from the parts, size
when known) and accepted — or refused when it is not ours.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Callable, Iterator, Sequence
from types import SimpleNamespace
from typing import Any
from urllib.parse import urlsplit

import boto3
import botocore.endpoint
import botocore.retries.adaptive
import moto.s3.models
import pytest
from botocore.awsrequest import AWSPreparedRequest, AWSResponse
from botocore.config import Config
from botocore.exceptions import ClientError, ConnectionClosedError
from moto import mock_aws

import zerorename as zr
from zerorename.committers.reliable import ReliableStore, retry_policy
from zerorename.context import Options
from zerorename.errors import CommitError, NotFoundError, StoreError, ThrottledError
from zerorename.retry import RetryPolicy
from zerorename.stats import IOStatistics
from zerorename.store import Store, StoreCapabilities
from zerorename.stores import LocalStore, S3Store
from zerorename.stores.capabilities import clear_probe_cache

from .conftest_helpers import FaultyStore

#: What S3 answers a throttled request, as botocore would read it off the wire.
SLOWDOWN = (b'<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>SlowDown</Code>'
            b"<Message>Please reduce your request rate.</Message></Error>")

#: Clients a user may hand in.  "plain" is ``boto3.client("s3")`` as the README passes it
#: (botocore's default retry mode); the others turn botocore's own retries up.  Adaptive mode
#: has its own test: its client-side rate limiter paces sends in real time.
CLIENT_CONFIGS: dict[str, Config | None] = {
    "plain": None,
    "legacy-10": Config(retries={"mode": "legacy", "max_attempts": 10}),
    "standard-7": Config(retries={"mode": "standard", "total_max_attempts": 7}),
}
ADAPTIVE = Config(retries={"mode": "adaptive", "max_attempts": 4})

CAPS = StoreCapabilities(conditional_put=True, conditional_complete=True)


class _Body:
    """The raw body botocore reads an answer from."""

    def __init__(self, data: bytes) -> None:
        self.data = data

    def stream(self, **kwargs: Any) -> Iterator[bytes]:
        yield self.data


class Transport:
    """Counts every HTTP request the client sends and answers each one 503 SlowDown."""

    def __init__(self, client: Any) -> None:
        self.sent: list[str] = []
        client.meta.events.register("before-send.s3", self._send)

    def _send(self, request: AWSPreparedRequest, **kwargs: Any) -> AWSResponse:
        self.sent.append(f"{request.method} {urlsplit(request.url).path}")
        return AWSResponse(request.url, 503, {"Content-Type": "application/xml"},
                           _Body(b"" if request.method == "HEAD" else SLOWDOWN))


def user_client(config: Config | None) -> Any:
    """A boto3 client made the way a user makes one (not by make_s3_client)."""
    return boto3.client("s3", region_name="us-east-1", aws_access_key_id="testing",
                        aws_secret_access_key="testing", config=config)


class Recorder:
    def __init__(self) -> None:
        self.delays: list[float] = []

    def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)


@pytest.fixture(autouse=True)
def _fresh_probe_cache() -> None:
    clear_probe_cache()


@pytest.fixture
def botocore_sleeps(monkeypatch: pytest.MonkeyPatch) -> Recorder:
    """botocore's own retry sleeps, recorded instead of slept (there must be none)."""
    slept = Recorder()
    monkeypatch.setattr(botocore.endpoint, "time", SimpleNamespace(sleep=slept))
    return slept


def committer_store(store: Store, limit: int, sleep: Callable[[float], None],
                    interval: str = "100ms") -> ReliableStore:
    """The store as a committer wraps it: ReliableStore with the policy of its options (the
    sleep injected, the jitter at its maximum)."""
    opts = Options({"fs.s3a.retry.limit": str(limit), "fs.s3a.retry.interval": interval})
    policy = dataclasses.replace(retry_policy(opts), sleep=sleep, random=lambda: 1.0)
    return ReliableStore(store, policy, IOStatistics())


URL = "s3://bkt/out/part-0"

#: One logical operation each, as a committer issues it.
OPERATIONS: dict[str, Callable[[ReliableStore], object]] = {
    "put": lambda s: s.put(URL, b"data"),
    "put_if_none_match": lambda s: s.put(URL, b"data", if_none_match=True),
    "put_if_match": lambda s: s.put(URL, b"data", if_match="0" * 32),
    "get": lambda s: s.get(URL),
    "head": lambda s: s.head(URL),
    "list_page": lambda s: s.list_page("s3://bkt/out/"),
    "delete": lambda s: s.delete(URL),
    "delete_many": lambda s: s.delete_many([URL, URL + "b"]),
    "copy": lambda s: s.copy(URL, URL + ".copy"),
    "create_multipart": lambda s: s.create_multipart(URL),
    "upload_part": lambda s: s.upload_part(URL, "up1", 1, b"data"),
    "complete_multipart": lambda s: s.complete_multipart(URL, "up1", [(1, "e" * 32)]),
    "complete_checked": lambda s: s.complete_checked(URL, "up1", [(1, "e" * 32)], 4),
    "abort_multipart": lambda s: s.abort_multipart(URL, "up1"),
    "list_multipart_uploads": lambda s: s.list_multipart_uploads("s3://bkt/out/"),
}


# -- the bound --------------------------------------------------------------------------------


@pytest.mark.parametrize("limit", [0, 1, 3])
@pytest.mark.parametrize("client_kind", list(CLIENT_CONFIGS))
def test_persistent_503_on_put_sends_limit_plus_one_requests(
    client_kind: str, limit: int, botocore_sleeps: Recorder
) -> None:
    """Issue 11 item 8: one logical PUT under a persistent 503, through S3Store on a client
    the user made, sends exactly ``fs.s3a.retry.limit`` + 1 HTTP requests — not
    ReliableStore × S3Store × botocore (4 × 5 × 3 = 60 with the README's plain client)."""
    client = user_client(CLIENT_CONFIGS[client_kind])
    transport = Transport(client)
    ours = Recorder()
    store = committer_store(S3Store(client, capabilities=CAPS), limit, ours)
    with pytest.raises(ThrottledError):
        store.put(URL, b"data")
    assert len(transport.sent) == limit + 1, transport.sent
    assert botocore_sleeps.delays == [], "botocore slept: its own retry loop ran"
    assert len(ours.delays) == limit
    assert store.request_counts() == {"put": limit + 1}


def test_adaptive_mode_client_is_bounded_too(botocore_sleeps: Recorder,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """Adaptive mode registers botocore's retry handler like standard mode (removed), plus a
    client-side rate limiter that may delay a send (in real time: here it only records that
    it was asked) but never sends one of its own."""
    paced: list[object] = []
    monkeypatch.setattr(botocore.retries.adaptive.ClientRateLimiter, "on_sending_request",
                        lambda self, request, **kwargs: paced.append(request))
    client = user_client(ADAPTIVE)
    transport = Transport(client)
    store = committer_store(S3Store(client, capabilities=CAPS), 3, Recorder())
    with pytest.raises(ThrottledError):
        store.put(URL, b"data")
    assert len(transport.sent) == 4
    assert len(paced) == 4, "the client was not in adaptive mode"
    assert botocore_sleeps.delays == []


@pytest.mark.parametrize("op", list(OPERATIONS))
def test_every_operation_is_bounded_by_the_limit(op: str, botocore_sleeps: Recorder) -> None:
    """The same bound for every store operation a committer issues (2 retries: 3 requests)."""
    client = user_client(None)
    transport = Transport(client)
    store = committer_store(S3Store(client, capabilities=CAPS), 2, Recorder())
    with pytest.raises(ThrottledError):
        OPERATIONS[op](store)
    assert len(transport.sent) == 3, transport.sent
    assert botocore_sleeps.delays == []


@pytest.mark.parametrize("client_kind", list(CLIENT_CONFIGS))
def test_s3store_alone_is_bounded_by_its_own_policy(client_kind: str,
                                                    botocore_sleeps: Recorder) -> None:
    """Without a committer, S3Store's ``retry`` policy is the one loop: max_attempts requests,
    whatever retry configuration the client came with."""
    client = user_client(CLIENT_CONFIGS[client_kind])
    transport = Transport(client)
    store = S3Store(client, retry=RetryPolicy(max_attempts=3, sleep=Recorder()))
    with pytest.raises(ThrottledError):
        store.get(URL)
    assert len(transport.sent) == 3
    assert botocore_sleeps.delays == []


def test_delete_many_per_key_retries_share_the_bound(botocore_sleeps: Recorder) -> None:
    """DeleteObjects answering 200 with a per-key SlowDown is retried for that key by the same
    loop: one batch under a key that stays throttled costs limit + 1 requests, not
    (limit + 1) squared."""
    client = user_client(None)
    sent: list[str] = []
    throttled_key = (b"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<DeleteResult>"
                     b"<Error><Key>out/b</Key><Code>SlowDown</Code><Message>slow</Message>"
                     b"</Error></DeleteResult>")

    def send(request: AWSPreparedRequest, **kwargs: Any) -> AWSResponse:
        sent.append(request.method)
        return AWSResponse(request.url, 200, {"Content-Type": "application/xml"},
                           _Body(throttled_key))

    client.meta.events.register("before-send.s3", send)
    store = S3Store(client, retry=RetryPolicy(max_attempts=3, sleep=Recorder()))
    with pytest.raises(StoreError) as info:
        store.delete_many(["s3://bkt/out/a", "s3://bkt/out/b"])
    assert "s3://bkt/out/b" in str(info.value)
    assert len(sent) == 3
    committer = committer_store(S3Store(client), 1, Recorder())
    sent.clear()
    with pytest.raises(StoreError):
        committer.delete_many(["s3://bkt/out/a", "s3://bkt/out/b"])
    assert len(sent) == 2


def test_backoff_is_bounded_and_full_jitter(botocore_sleeps: Recorder) -> None:
    """The documented policy: the n-th retry waits at most min(cap, interval * 2**n), the cap
    being 16 intervals (at least 1 s); the whole wait of one operation is at most
    ``RetryPolicy.max_total_delay()``."""
    ours = Recorder()
    opts = Options({"fs.s3a.retry.limit": "6", "fs.s3a.retry.interval": "100ms"})
    policy = dataclasses.replace(retry_policy(opts), sleep=ours, random=lambda: 1.0)
    assert (policy.max_attempts, policy.base_delay, policy.max_delay) == (7, 0.1, 1.6)
    assert policy.max_total_delay() == pytest.approx(0.1 + 0.2 + 0.4 + 0.8 + 1.6 + 1.6)
    client = user_client(None)
    Transport(client)
    store = ReliableStore(S3Store(client, capabilities=CAPS), policy, IOStatistics())
    with pytest.raises(ThrottledError):
        store.put(URL, b"x")
    assert ours.delays == pytest.approx([0.1, 0.2, 0.4, 0.8, 1.6, 1.6])
    assert sum(ours.delays) <= policy.max_total_delay() + 1e-9
    assert botocore_sleeps.delays == []
    default = retry_policy(Options({}))
    assert default.max_attempts == 4 and default.max_total_delay() == pytest.approx(0.35)


@pytest.mark.parametrize(("option", "value"), [("fs.s3a.retry.limit", "-1"),
                                                ("fs.s3a.retry.interval", "-5ms")])
def test_negative_retry_options_are_refused(option: str, value: str) -> None:
    with pytest.raises(CommitError, match=option):
        retry_policy(Options({option: value}))


def test_a_committer_built_on_a_plain_client_keeps_the_bound(botocore_sleeps: Recorder) -> None:
    """End to end: the committer's own store (built from the job's options) over
    ``S3Store(boto3.client("s3"))``."""
    client = user_client(None)
    transport = Transport(client)
    job = zr.JobContext("s3://bkt/out", job_id="j1",
                        options={"fs.s3a.retry.limit": "2", "fs.s3a.retry.interval": "0"})
    committer = zr.create_committer("magic", S3Store(client, capabilities=CAPS), job)
    with pytest.raises(ThrottledError):
        committer.store.put(URL, b"x")
    assert len(transport.sent) == 3
    assert botocore_sleeps.delays == []


# -- a repeated complete that meets NoSuchUpload ------------------------------------------------


def multipart_etag(*parts: bytes) -> str:
    """S3's ETag of a completed multipart object: MD5 of the parts' binary MD5s, "-<count>"."""
    digests = b"".join(hashlib.md5(p).digest() for p in parts)
    return f"{hashlib.md5(digests).hexdigest()}-{len(parts)}"


class AnswerLost:
    """A boto3 client whose first CompleteMultipartUpload reaches the server (which applies
    it) but whose answer is lost on the way back; a repeat then gets NoSuchUpload, as AWS may
    answer for an upload that no longer exists (moto itself repeats the 200)."""

    def __init__(self, client: Any, after_apply: Callable[[], object] | None = None) -> None:
        self._client = client
        self.meta = client.meta
        self.completes = 0
        self.after_apply = after_apply

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)

    def complete_multipart_upload(self, **kwargs: Any) -> Any:
        self.completes += 1
        if self.completes == 1:
            self._client.complete_multipart_upload(**kwargs)
            if self.after_apply is not None:
                self.after_apply()
            raise ConnectionClosedError(endpoint_url="http://s3.invalid/answer-lost")
        raise ClientError({"Error": {"Code": "NoSuchUpload", "Message": "upload gone"},
                           "ResponseMetadata": {"HTTPStatusCode": 404}},
                          "CompleteMultipartUpload")


@pytest.fixture
def moto_bucket(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    monkeypatch.setattr(moto.s3.models, "S3_UPLOAD_PART_MIN_SIZE", 64)
    with mock_aws():
        client = zr.make_s3_client()
        client.create_bucket(Bucket="bkt")
        yield client


def upload(store: Store, url: str, *parts: bytes) -> tuple[str, list[tuple[int, str]]]:
    upload_id = store.create_multipart(url)
    return upload_id, [(n, store.upload_part(url, upload_id, n, p))
                       for n, p in enumerate(parts, start=1)]


PARTS = (b"a" * 300, b"b" * 70)


def test_lost_complete_answer_accepted_when_s3store_repeated_it(moto_bucket: Any) -> None:
    """S3Store's own loop repeats the complete: NoSuchUpload, then the object is there with
    the ETag S3 computes from our parts, so the complete is reported done."""
    lossy = AnswerLost(moto_bucket)
    store = S3Store(lossy, retry=RetryPolicy(max_attempts=3, sleep=Recorder()),  # type: ignore[arg-type]
                    capabilities=CAPS)
    upload_id, parts = upload(store, URL, *PARTS)
    assert store.complete_multipart(URL, upload_id, parts) == multipart_etag(*PARTS)
    assert lossy.completes == 2
    assert store.get(URL) == b"".join(PARTS)


def test_lost_complete_answer_accepted_when_the_committer_repeated_it(moto_bucket: Any) -> None:
    """The committer's store (ReliableStore over S3Store) repeats it: accepted the same way,
    and counted in ``store_complete_recovered``."""
    lossy = AnswerLost(moto_bucket)
    store = committer_store(S3Store(lossy, capabilities=CAPS), 3, Recorder())  # type: ignore[arg-type]
    upload_id, parts = upload(store, URL, *PARTS)
    size = sum(len(p) for p in PARTS)
    assert store.complete_checked(URL, upload_id, parts, size) == multipart_etag(*PARTS)
    assert lossy.completes == 2
    assert store.stats.counter("store_complete_recovered") == 1


class LosesCompleteAnswers(FaultyStore):
    """A store whose completes are applied but whose answers are lost while ``lose`` > 0."""

    lose = 0

    def complete_multipart(self, url: str, upload_id: str, parts: Sequence[tuple[int, str]],
                           *, if_none_match: bool = False, if_match: str | None = None) -> str:
        etag = self.inner.complete_multipart(url, upload_id, parts)
        if self.lose > 0:
            self.lose -= 1
            raise ThrottledError(url, "answer lost")
        return etag


@pytest.mark.parametrize(("length", "accepted"), [(370, True), (369, False)])
def test_lost_complete_answer_on_a_store_without_multipart_etags(
    tmp_path: Any, length: int, accepted: bool
) -> None:
    """LocalStore's ETag is the MD5 of the whole object, which no part list predicts, and its
    repeat answers NoSuchUpload by itself: the committer's expected size decides."""
    lossy = LosesCompleteAnswers(LocalStore(root=tmp_path / "root"))
    url = f"file://{tmp_path}/out/f"
    store = committer_store(lossy, 3, Recorder())
    upload_id, parts = upload(store, url, *PARTS)
    lossy.lose = 1
    if accepted:
        etag = store.complete_checked(url, upload_id, parts, length)
        assert etag == hashlib.md5(b"".join(PARTS)).hexdigest()
    else:
        with pytest.raises(NotFoundError):
            store.complete_checked(url, upload_id, parts, length)


@pytest.mark.parametrize("found", ["missing", "other-etag"])
def test_no_such_upload_after_a_repeat_is_refused_when_the_object_is_not_ours(
    found: str, moto_bucket: Any
) -> None:
    """NoSuchUpload on a repeat with no object, or an object with another ETag (someone
    else's complete, an abort): the error stands."""
    def not_ours() -> None:
        if found == "missing":
            moto_bucket.delete_object(Bucket="bkt", Key="out/part-0")
        else:
            moto_bucket.put_object(Bucket="bkt", Key="out/part-0", Body=b"someone else")

    lossy = AnswerLost(moto_bucket, after_apply=not_ours)
    store = S3Store(lossy, retry=RetryPolicy(max_attempts=3, sleep=Recorder()),  # type: ignore[arg-type]
                    capabilities=CAPS)
    upload_id, parts = upload(store, URL, *PARTS)
    with pytest.raises(NotFoundError) as info:
        store.complete_multipart(URL, upload_id, parts)
    assert info.value.code == "NoSuchUpload"
    assert lossy.completes == 2


def test_no_such_upload_on_the_first_attempt_is_not_checked(moto_bucket: Any) -> None:
    """Only a *repeated* request can meet its own earlier success: a first NoSuchUpload is
    raised as it is, without a HEAD."""
    calls: list[str] = []

    def complete_multipart_upload(**kwargs: Any) -> Any:
        calls.append("complete")
        raise ClientError({"Error": {"Code": "NoSuchUpload", "Message": "upload gone"},
                           "ResponseMetadata": {"HTTPStatusCode": 404}},
                          "CompleteMultipartUpload")

    def head_object(**kwargs: Any) -> Any:
        calls.append("head")
        return moto_bucket.head_object(**kwargs)

    moto_bucket.put_object(Bucket="bkt", Key="out/part-0", Body=b"x")
    gone = SimpleNamespace(meta=SimpleNamespace(endpoint_url="http://gone.invalid"),
                           complete_multipart_upload=complete_multipart_upload,
                           head_object=head_object)
    store = S3Store(gone, retry=RetryPolicy(max_attempts=3, sleep=Recorder()),  # type: ignore[arg-type]
                    capabilities=CAPS)
    with pytest.raises(NotFoundError) as info:
        store.complete_multipart(URL, "up1", [(1, hashlib.md5(b"x").hexdigest())])
    assert info.value.code == "NoSuchUpload"
    assert calls == ["complete"]


def test_magic_job_commit_survives_a_lost_complete_answer(moto_bucket: Any) -> None:
    """End to end: the magic committer's job commit meets the lost answer and publishes."""
    lossy = AnswerLost(moto_bucket)
    store = S3Store(lossy, capabilities=CAPS)  # type: ignore[arg-type]
    job = zr.JobContext("s3://bkt/job", job_id="j1", options={"fs.s3a.retry.interval": "0"})
    driver = zr.create_committer("magic", store, job)
    driver.setup_job()
    task = zr.create_committer("magic", store, job, task=job.task(0))
    task.setup_task()
    task.write("part-0", b"x" * 1000)
    driver.commit_job([task.commit_task()])
    assert lossy.completes == 2
    assert store.get("s3://bkt/job/part-0") == b"x" * 1000
    assert driver.stats.counter("store_complete_recovered") == 1
