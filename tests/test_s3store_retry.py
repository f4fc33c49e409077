"""S3Store retries, error mapping and pagination against strict fake clients (no server).

Fakes, not moto, because moto cannot produce these answers on demand: a one-shot 503, a
permanent 500, a list-uploads that paginates (moto ignores MaxUploads and markers), per-key
DeleteObjects errors.  Sleep is injected everywhere: nothing here really waits.
"""

from __future__ import annotations

import datetime as dt
import hashlib
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import pytest
from botocore.exceptions import (
    ClientError,
    EndpointConnectionError,
    IncompleteReadError,
    NoCredentialsError,
    ParamValidationError,
)
from botocore.stub import Stubber

from zerorename.errors import (
    ClientSideError,
    CommitError,
    NotFoundError,
    PreconditionFailedError,
    StoreError,
    ThrottledError,
)
from zerorename.retry import (
    NO_RETRY,
    RetryPolicy,
    complete_landed,
    is_retryable,
    multipart_etag,
    put_landed,
)
from zerorename.store import ObjectInfo
from zerorename.stores import DeleteManyError, S3Store, make_s3_client
from zerorename.stores import s3 as s3mod
from zerorename.stores.capabilities import clear_probe_cache


def client_error(status: int, code: str, op: str = "PutObject", message: str = "") -> ClientError:
    return ClientError(
        {"Error": {"Code": code, "Message": message},
         "ResponseMetadata": {"HTTPStatusCode": status}},
        op,
    )


class FakeClient:
    """A strict scripted client: each call pops the next scripted answer for its method.

    An answer is a response dict, an exception to raise, or a callable(kwargs) -> either.
    Calling a method with nothing scripted fails the test (strictness catches extra requests).
    """

    def __init__(self, endpoint: str = "http://fake.invalid") -> None:
        self.meta = SimpleNamespace(endpoint_url=endpoint)
        self.script: dict[str, list[Any]] = {}
        self.calls: list[tuple[str, dict[str, Any]]] = []

    def on(self, method: str, *answers: Any) -> FakeClient:
        self.script.setdefault(method, []).extend(answers)
        return self

    def __getattr__(self, method: str) -> Callable[..., Any]:
        if method.startswith("_"):
            raise AttributeError(method)

        def call(**kwargs: Any) -> Any:
            self.calls.append((method, kwargs))
            queue = self.script.get(method)
            if not queue:
                raise AssertionError(f"unexpected call {method}({kwargs})")
            answer = queue.pop(0)
            if callable(answer) and not isinstance(answer, BaseException):
                answer = answer(kwargs)
            if isinstance(answer, BaseException):
                raise answer
            return answer

        return call

    def count(self, method: str) -> int:
        return sum(1 for m, _ in self.calls if m == method)


class Sleeps:
    def __init__(self) -> None:
        self.delays: list[float] = []

    def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)


@pytest.fixture
def sleeps() -> Sleeps:
    return Sleeps()


def policy(sleeps: Sleeps, attempts: int = 4) -> RetryPolicy:
    return RetryPolicy(max_attempts=attempts, base_delay=0.1, max_delay=1.0, sleep=sleeps,
                       random=lambda: 0.5)


@pytest.fixture(autouse=True)
def _fresh_caches() -> None:
    clear_probe_cache()
    s3mod._IF_MATCH_STYLE.clear()


# -- RetryPolicy ------------------------------------------------------------------------------


def test_full_jitter_delays_are_capped_exponential() -> None:
    p = RetryPolicy(base_delay=0.1, max_delay=1.0, random=lambda: 1.0)
    assert [p.delay(n) for n in range(6)] == pytest.approx([0.1, 0.2, 0.4, 0.8, 1.0, 1.0])
    assert RetryPolicy(random=lambda: 0.0).delay(3) == 0.0
    with pytest.raises(ValueError):
        RetryPolicy(max_attempts=0)


def test_policy_reraises_non_retryable_at_once(sleeps: Sleeps) -> None:
    calls = []

    def boom() -> None:
        calls.append(1)
        raise NotFoundError("s3://b/k")

    with pytest.raises(NotFoundError):
        policy(sleeps).call(boom)
    assert calls == [1] and sleeps.delays == []


def test_retryable_classification() -> None:
    assert is_retryable(ThrottledError("u"))
    assert is_retryable(StoreError("u", "x", code="InternalError", status=500))
    assert is_retryable(StoreError("u", "x", code="ConnectionError"))
    assert is_retryable(StoreError("u", "x", code="ConditionalRequestConflict", status=409))
    assert not is_retryable(PreconditionFailedError("u"))
    assert not is_retryable(NotFoundError("u"))
    assert not is_retryable(StoreError("u", "x", code="AccessDenied", status=403))
    assert not is_retryable(KeyError("x"))


def test_a_loop_inside_a_loop_runs_its_function_once(sleeps: Sleeps) -> None:
    """The outermost loop owns the retries: layers never multiply attempts."""
    inner_calls: list[int] = []

    def inner() -> str:
        inner_calls.append(1)
        raise ThrottledError("s3://b/k")

    def outer() -> str:
        return policy(sleeps, attempts=5).call(inner)

    with pytest.raises(ThrottledError):
        policy(sleeps, attempts=3).call(outer)
    assert len(inner_calls) == 3 and len(sleeps.delays) == 2
    # and a loop that ended leaves the next one free to retry
    with pytest.raises(ThrottledError):
        policy(sleeps, attempts=2).call(inner)
    assert len(inner_calls) == 5


def test_landed_is_asked_only_after_a_repeat(sleeps: Sleeps) -> None:
    asked: list[BaseException] = []

    def landed(error: BaseException) -> str | None:
        asked.append(error)
        return "earlier"

    def precondition() -> str:
        raise PreconditionFailedError("s3://b/k")

    with pytest.raises(PreconditionFailedError):
        policy(sleeps).call(precondition, landed=landed)
    assert asked == []
    answers: list[BaseException] = [ThrottledError("s3://b/k"), PreconditionFailedError("s3://b/k")]

    def throttled_then_412() -> str:
        raise answers.pop(0)

    assert policy(sleeps).call(throttled_then_412, landed=landed) == "earlier"
    assert isinstance(asked[0], PreconditionFailedError)


def test_max_total_delay_sums_the_capped_steps() -> None:
    p = RetryPolicy(max_attempts=6, base_delay=0.1, max_delay=0.5)
    assert p.max_total_delay() == pytest.approx(0.1 + 0.2 + 0.4 + 0.5 + 0.5)
    assert NO_RETRY.max_total_delay() == 0


def _info(size: int, etag: str) -> ObjectInfo:
    return ObjectInfo(url="s3://b/k", size=size, etag=etag)


def test_multipart_etag_is_s3s_formula() -> None:
    a, b = hashlib.md5(b"a"), hashlib.md5(b"b")
    expected = hashlib.md5(a.digest() + b.digest()).hexdigest() + "-2"
    assert multipart_etag([f'"{a.hexdigest()}"', b.hexdigest()]) == expected
    assert multipart_etag(["not-an-md5"]) is None and multipart_etag([]) is None


def test_complete_landed_checks_what_it_can() -> None:
    part = hashlib.md5(b"p").hexdigest()
    ours = multipart_etag([part])
    assert ours is not None
    gone = NotFoundError("s3://b/k", "gone", code="NoSuchUpload")
    parts = [(1, part)]
    assert complete_landed(lambda: _info(1, ours), parts)(gone) == ours
    assert complete_landed(lambda: _info(1, ours), parts, 1)(gone) == ours
    assert complete_landed(lambda: _info(2, ours), parts, 1)(gone) is None      # wrong size
    other = multipart_etag([hashlib.md5(b"q").hexdigest()])
    assert other is not None
    assert complete_landed(lambda: _info(1, other), parts)(gone) is None        # not our parts
    plain = hashlib.md5(b"p").hexdigest()  # a store whose ETag is the whole object's MD5
    assert complete_landed(lambda: _info(1, plain), parts, 1)(gone) == plain    # size decides
    assert complete_landed(lambda: _info(1, plain), parts)(gone) is None        # nothing to check
    assert complete_landed(lambda: None, parts, 1)(gone) is None                # no object
    key_gone = NotFoundError("s3://b/k", "gone", code="NoSuchKey")
    assert complete_landed(lambda: _info(1, ours), parts)(key_gone) is None     # not the upload


def test_put_landed_accepts_only_our_bytes() -> None:
    mine = hashlib.md5(b"mine").hexdigest()
    refused = PreconditionFailedError("s3://b/k")
    assert put_landed(lambda: _info(4, f'"{mine}"'), b"mine")(refused) == mine
    assert put_landed(lambda: _info(4, "other"), b"mine")(refused) is None
    assert put_landed(lambda: None, b"mine")(refused) is None
    assert put_landed(lambda: _info(4, mine), b"mine")(ThrottledError("s3://b/k")) is None


# -- S3Store retries --------------------------------------------------------------------------


def test_one_shot_503_is_retried(sleeps: Sleeps) -> None:
    fake = FakeClient().on("put_object", client_error(503, "SlowDown"), {"ETag": '"abc"'})
    store = S3Store(fake, retry=policy(sleeps))  # type: ignore[arg-type]
    assert store.put("s3://bkt/k", b"data") == "abc"
    assert fake.count("put_object") == 2
    assert sleeps.delays == [pytest.approx(0.05)]  # 0.5 * min(1.0, 0.1 * 2**0)
    assert store.request_counts() == {"put": 2}
    assert store.bytes_written == 4


def test_one_shot_500_is_retried(sleeps: Sleeps) -> None:
    body = SimpleNamespace(read=lambda: b"payload")
    fake = FakeClient().on("get_object", client_error(500, "InternalError", "GetObject"),
                           {"Body": body})
    store = S3Store(fake, retry=policy(sleeps))  # type: ignore[arg-type]
    assert store.get("s3://bkt/k") == b"payload"
    assert fake.count("get_object") == 2 and len(sleeps.delays) == 1
    assert store.bytes_read == 7


def test_permanent_500_surfaces_as_store_error_after_n_attempts(sleeps: Sleeps) -> None:
    fake = FakeClient().on("put_object", *[client_error(500, "InternalError")] * 4)
    store = S3Store(fake, retry=policy(sleeps, attempts=4))  # type: ignore[arg-type]
    with pytest.raises(StoreError) as info:
        store.put("s3://bkt/dir/k", b"x")
    err = info.value
    assert type(err) is StoreError and (err.status, err.code) == (500, "InternalError")
    assert "s3://bkt/dir/k" in str(err) and "put failed" in str(err)
    assert fake.count("put_object") == 4
    assert sleeps.delays == pytest.approx([0.05, 0.1, 0.2])
    assert store.request_counts() == {"put": 4}


def test_permanent_throttling_surfaces_as_throttled(sleeps: Sleeps) -> None:
    fake = FakeClient().on("head_object", *[client_error(503, "SlowDown", "HeadObject")] * 3)
    store = S3Store(fake, retry=policy(sleeps, attempts=3))  # type: ignore[arg-type]
    with pytest.raises(ThrottledError):
        store.head("s3://bkt/k")
    assert fake.count("head_object") == 3


def test_connection_errors_are_retried(sleeps: Sleeps) -> None:
    fake = FakeClient().on(
        "delete_object", EndpointConnectionError(endpoint_url="http://x"), {}
    )
    store = S3Store(fake, retry=policy(sleeps))  # type: ignore[arg-type]
    store.delete("s3://bkt/k")
    assert fake.count("delete_object") == 2


@pytest.mark.parametrize(
    ("status", "code", "expected"),
    [
        (404, "NoSuchKey", NotFoundError),
        (404, "NoSuchUpload", NotFoundError),
        (404, "NoSuchBucket", NotFoundError),
        (412, "PreconditionFailed", PreconditionFailedError),
        (403, "AccessDenied", StoreError),
        (400, "InvalidPart", StoreError),
    ],
)
def test_client_errors_are_mapped_and_not_retried(
    sleeps: Sleeps, status: int, code: str, expected: type[StoreError]
) -> None:
    fake = FakeClient().on("get_object", client_error(status, code, "GetObject"))
    store = S3Store(fake, retry=policy(sleeps))  # type: ignore[arg-type]
    with pytest.raises(expected) as info:
        store.get("s3://bkt/a key")
    assert info.value.code == code and info.value.status == status
    assert "s3://bkt/a key" in str(info.value)
    assert fake.count("get_object") == 1 and sleeps.delays == []


def test_head_404_is_none() -> None:
    fake = FakeClient().on("head_object", client_error(404, "404", "HeadObject"))
    assert S3Store(fake, retry=NO_RETRY).head("s3://bkt/k") is None  # type: ignore[arg-type]


def test_conditional_put_retried_into_its_own_write_succeeds(sleeps: Sleeps) -> None:
    """A 500 whose request did land, then 412 on the retry: HEAD shows our bytes, so success."""
    data = b"attempt-7 manifest"
    mine = hashlib.md5(data).hexdigest()
    fake = (FakeClient()
            .on("put_object", client_error(500, "InternalError"),
                client_error(412, "PreconditionFailed"))
            .on("head_object", {"ContentLength": len(data), "ETag": f'"{mine}"'}))
    store = S3Store(fake, retry=policy(sleeps))  # type: ignore[arg-type]
    assert store.put("s3://bkt/lock", data, if_none_match=True) == mine
    assert fake.calls[0][1]["IfNoneMatch"] == "*"


def test_conditional_put_lost_to_another_writer_after_retry(sleeps: Sleeps) -> None:
    fake = (FakeClient()
            .on("put_object", client_error(503, "SlowDown"),
                client_error(412, "PreconditionFailed"))
            .on("head_object", {"ContentLength": 5, "ETag": '"someone-else"'}))
    store = S3Store(fake, retry=policy(sleeps))  # type: ignore[arg-type]
    with pytest.raises(PreconditionFailedError):
        store.put("s3://bkt/lock", b"mine", if_none_match=True)


def test_if_match_quoted_refused_falls_back_to_bare_once() -> None:
    """RGW's quirk: 412 for the quoted current ETag; S3Store checks with HEAD, resends bare,
    and sends bare to that endpoint from then on (no more HEADs)."""
    fake = (FakeClient("http://rgw.invalid")
            .on("put_object", client_error(412, "PreconditionFailed"), {"ETag": '"e2"'},
                {"ETag": '"e3"'})
            .on("head_object", {"ContentLength": 1, "ETag": '"e1"'}))
    store = S3Store(fake, retry=NO_RETRY)  # type: ignore[arg-type]
    assert store.put("s3://bkt/k", b"x", if_match='"e1"') == "e2"
    assert [kw["IfMatch"] for m, kw in fake.calls if m == "put_object"] == ['"e1"', "e1"]
    assert store.put("s3://bkt/k", b"y", if_match="e2") == "e3"
    assert fake.calls[-1][1]["IfMatch"] == "e2"
    assert fake.count("head_object") == 1


def test_if_match_real_conflict_is_not_masked() -> None:
    fake = (FakeClient()
            .on("put_object", client_error(412, "PreconditionFailed"))
            .on("head_object", {"ContentLength": 1, "ETag": '"newer"'}))
    store = S3Store(fake, retry=NO_RETRY)  # type: ignore[arg-type]
    with pytest.raises(PreconditionFailedError):
        store.put("s3://bkt/k", b"x", if_match="older")


# -- pagination -------------------------------------------------------------------------------


def _upload(key: str, uid: str) -> dict[str, Any]:
    return {"Key": key, "UploadId": uid,
            "Initiated": dt.datetime(2026, 1, 1, tzinfo=dt.UTC)}


def test_list_uploads_follows_markers_over_pages() -> None:
    pages = [
        {"Uploads": [_upload("out/a", "1"), _upload("out/a", "2")], "IsTruncated": True,
         "NextKeyMarker": "out/a", "NextUploadIdMarker": "2"},
        {"Uploads": [_upload("out/a", "3"), _upload("out/b", "1")], "IsTruncated": True,
         "NextKeyMarker": "out/b", "NextUploadIdMarker": "1"},
        {"Uploads": [_upload("out/c", "9")], "IsTruncated": False},
    ]
    fake = FakeClient().on("list_multipart_uploads", *pages)
    store = S3Store(fake, retry=NO_RETRY, list_uploads_page_size=2)  # type: ignore[arg-type]
    got = store.list_multipart_uploads("s3://bkt/out/")
    assert [(u.url, u.upload_id) for u in got] == [
        ("s3://bkt/out/a", "1"), ("s3://bkt/out/a", "2"), ("s3://bkt/out/a", "3"),
        ("s3://bkt/out/b", "1"), ("s3://bkt/out/c", "9"),
    ]
    sent = [kw for m, kw in fake.calls]
    assert [(k.get("KeyMarker"), k.get("UploadIdMarker")) for k in sent] == [
        (None, None), ("out/a", "2"), ("out/b", "1")]
    assert all(k["Prefix"] == "out/" and k["MaxUploads"] == 2 for k in sent)
    assert got[0].initiated == dt.datetime(2026, 1, 1, tzinfo=dt.UTC).timestamp()


def test_list_uploads_terminates_when_server_ignores_markers() -> None:
    """A server that always answers page 1 with IsTruncated (markers ignored) must not loop."""
    page = {"Uploads": [_upload("out/a", "1")], "IsTruncated": True,
            "NextKeyMarker": "out/a", "NextUploadIdMarker": "1"}
    fake = FakeClient().on("list_multipart_uploads", *[page] * 50)
    store = S3Store(fake, retry=NO_RETRY)  # type: ignore[arg-type]
    got = store.list_multipart_uploads("s3://bkt/out/")
    assert [u.upload_id for u in got] == ["1"]
    assert fake.count("list_multipart_uploads") == 2


def test_list_uploads_terminates_on_non_advancing_markers() -> None:
    pages = [
        {"Uploads": [_upload("k", "1")], "IsTruncated": True, "NextKeyMarker": "k",
         "NextUploadIdMarker": "1"},
        {"Uploads": [_upload("k", "1"), _upload("k", "2")], "IsTruncated": True,
         "NextKeyMarker": "k", "NextUploadIdMarker": "1"},  # new upload, same markers
    ]
    fake = FakeClient().on("list_multipart_uploads", *pages)
    got = S3Store(fake, retry=NO_RETRY).list_multipart_uploads("s3://bkt/")  # type: ignore[arg-type]
    assert [u.upload_id for u in got] == ["1", "2"]
    assert fake.count("list_multipart_uploads") == 2


def test_list_uploads_truncated_without_markers_uses_last_upload() -> None:
    pages = [
        {"Uploads": [_upload("a", "1")], "IsTruncated": True},
        {"Uploads": [_upload("b", "2")], "IsTruncated": False},
    ]
    fake = FakeClient().on("list_multipart_uploads", *pages)
    got = S3Store(fake, retry=NO_RETRY).list_multipart_uploads("s3://bkt/")  # type: ignore[arg-type]
    assert [u.upload_id for u in got] == ["1", "2"]
    assert fake.calls[1][1]["KeyMarker"] == "a" and fake.calls[1][1]["UploadIdMarker"] == "1"


def test_list_page_tokens() -> None:
    lm = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
    fake = FakeClient().on(
        "list_objects_v2",
        {"Contents": [{"Key": "p/a", "Size": 1, "ETag": '"e"', "LastModified": lm}],
         "CommonPrefixes": [{"Prefix": "p/d/"}], "IsTruncated": True,
         "NextContinuationToken": "tok"},
        {"IsTruncated": True},  # truncated with no token: a broken server
    )
    store = S3Store(fake, retry=NO_RETRY)  # type: ignore[arg-type]
    page = store.list_page("s3://bkt/p/", delimiter="/", max_keys=2)
    assert page.token == "tok" and page.prefixes == ["s3://bkt/p/d/"]
    assert page.objects[0].etag == "e" and page.objects[0].mtime == lm.timestamp()
    with pytest.raises(StoreError):
        store.list_page("s3://bkt/p/", token="tok")
    assert fake.calls[1][1]["ContinuationToken"] == "tok"


# -- delete_many ------------------------------------------------------------------------------


def test_delete_many_batches_of_1000_per_bucket() -> None:
    fake = FakeClient().on("delete_objects", *[{}] * 4)
    store = S3Store(fake, retry=NO_RETRY)  # type: ignore[arg-type]
    urls = [f"s3://b1/k{i}" for i in range(2500)] + ["s3://b2/x"]
    store.delete_many(urls)
    sizes = [(kw["Bucket"], len(kw["Delete"]["Objects"])) for _, kw in fake.calls]
    assert sizes == [("b1", 1000), ("b1", 1000), ("b1", 500), ("b2", 1)]


def test_delete_many_reports_per_key_errors_and_retries_transient_ones(sleeps: Sleeps) -> None:
    fake = FakeClient().on(
        "delete_objects",
        {"Errors": [{"Key": "a", "Code": "AccessDenied", "Message": "locked"},
                    {"Key": "b", "Code": "SlowDown", "Message": "slow"}]},
        {},  # the retry of just "b" succeeds
    )
    store = S3Store(fake, retry=policy(sleeps))  # type: ignore[arg-type]
    with pytest.raises(DeleteManyError) as info:
        store.delete_many(["s3://bkt/a", "s3://bkt/b", "s3://bkt/c"])
    err = info.value
    assert list(err.failures) == ["s3://bkt/a"]
    assert err.failures["s3://bkt/a"].code == "AccessDenied"
    assert err.failures["s3://bkt/a"].status == 403
    assert "s3://bkt/a" in str(err) and "1 of 3" in str(err)
    assert [k["Key"] for k in fake.calls[1][1]["Delete"]["Objects"]] == ["b"]
    assert len(sleeps.delays) == 1


# -- multipart quirks -------------------------------------------------------------------------


def test_complete_with_empty_etag_reads_it_back() -> None:
    """RGW answers CompleteMultipartUpload with <ETag></ETag>."""
    from zerorename.store import StoreCapabilities

    fake = (FakeClient()
            .on("complete_multipart_upload", {"ETag": ""})
            .on("head_object", {"ContentLength": 3, "ETag": '"abc-2"'}))
    store = S3Store(fake, retry=NO_RETRY,  # type: ignore[arg-type]
                    capabilities=StoreCapabilities(conditional_complete=True))
    assert store.complete_multipart("s3://bkt/k", "u1", [(2, "e2"), (1, '"e1"')]) == "abc-2"
    parts = fake.calls[0][1]["MultipartUpload"]["Parts"]
    assert parts == [{"PartNumber": 1, "ETag": '"e1"'}, {"PartNumber": 2, "ETag": '"e2"'}]


def test_complete_if_none_match_emulated_where_ignored() -> None:
    from zerorename.store import StoreCapabilities

    fake = FakeClient().on("head_object", {"ContentLength": 1, "ETag": '"x"'})
    store = S3Store(fake, retry=NO_RETRY,  # type: ignore[arg-type]
                    capabilities=StoreCapabilities(conditional_complete=False))
    with pytest.raises(PreconditionFailedError) as info:
        store.complete_multipart("s3://bkt/k", "u1", [(1, "e")], if_none_match=True)
    assert "emulated" in str(info.value)
    assert fake.count("complete_multipart_upload") == 0


def test_abort_unknown_upload_is_not_found() -> None:
    fake = FakeClient().on(
        "abort_multipart_upload", client_error(404, "NoSuchUpload", "AbortMultipartUpload"))
    with pytest.raises(NotFoundError) as info:
        S3Store(fake, retry=NO_RETRY).abort_multipart("s3://bkt/k", "u")  # type: ignore[arg-type]
    assert info.value.code == "NoSuchUpload"


def test_capabilities_without_a_known_bucket_are_conservative() -> None:
    caps = S3Store(FakeClient(), retry=NO_RETRY).capabilities()  # type: ignore[arg-type]
    assert not caps.rename and not caps.conditional_put and not caps.conditional_complete


# -- a real botocore client, stubbed ----------------------------------------------------------


def test_stubbed_real_client_503_then_success(sleeps: Sleeps) -> None:
    """The same path with botocore's own ClientError shapes (Stubber on a real client)."""
    client = make_s3_client("http://127.0.0.1:9", "us-east-1", access_key="a", secret_key="b")
    assert client.meta.config.retries["total_max_attempts"] == 1
    assert client.meta.config.request_checksum_calculation == "when_required"
    with Stubber(client) as stub:
        stub.add_client_error("put_object", "SlowDown", "Please reduce your request rate.", 503)
        stub.add_response("put_object", {"ETag": '"0cc175b9c0f1b6a831c399e269772661"'},
                          {"Bucket": "bkt", "Key": "d/k", "Body": b"a"})
        stub.add_client_error("get_object", "NoSuchKey", "The specified key does not exist.",
                              404)
        store = S3Store(client, retry=policy(sleeps))
        assert store.put("s3://bkt/d/k", b"a") == "0cc175b9c0f1b6a831c399e269772661"
        with pytest.raises(NotFoundError):
            store.get("s3://bkt/d/missing")
        stub.assert_no_pending_responses()
    assert len(sleeps.delays) == 1
    assert store.request_counts() == {"put": 2, "get": 1}


def test_make_s3_client_options() -> None:
    aws = make_s3_client(region="eu-west-1", checksums="default", access_key="a", secret_key="b")
    assert aws.meta.region_name == "eu-west-1"
    assert aws.meta.config.request_checksum_calculation == "when_supported"
    local = make_s3_client("http://127.0.0.1:9", access_key="a", secret_key="b")
    assert local.meta.config.s3["addressing_style"] == "path"
    with pytest.raises(ValueError):
        make_s3_client(checksums="sometimes")  # type: ignore[arg-type]


def test_probe_refused_gives_conservative_capabilities_once() -> None:
    fake = FakeClient().on("put_object", client_error(403, "AccessDenied"))
    store = S3Store(fake, retry=NO_RETRY, probe_bucket="bkt")  # type: ignore[arg-type]
    caps = store.capabilities()
    assert not caps.conditional_put and not caps.conditional_complete and not caps.rename
    assert store.capabilities() == caps  # not probed again (FakeClient would fail on a call)
    assert fake.count("put_object") == 1


# -- errors botocore raises without a response ------------------------------------------------


@pytest.mark.parametrize(
    ("error", "code", "says"),
    [
        (ParamValidationError(report='Invalid bucket name "Bad_Bucket!": must match'),
         "ParamValidationError", 'Invalid bucket name "Bad_Bucket!"'),
        (NoCredentialsError(), "NoCredentialsError", "Unable to locate credentials"),
    ],
)
def test_client_side_botocore_errors_are_clear_and_not_retried(
    sleeps: Sleeps, error: Exception, code: str, says: str
) -> None:
    """botocore refuses some requests before sending them (parameter validation, no
    credentials): a ClientSideError naming the URL and botocore's reason, on one line, not a
    raw botocore exception — and not retried, since the same request would be refused again."""
    fake = FakeClient().on("put_object", error)
    store = S3Store(fake, retry=policy(sleeps))  # type: ignore[arg-type]
    with pytest.raises(ClientSideError) as info:
        store.put("s3://Bad_Bucket!/out/k", b"x")
    err = info.value
    assert isinstance(err, CommitError) and err.path == "s3://Bad_Bucket!/out/k"
    assert (err.code, err.status) == (code, 0) and not err.retryable
    assert says in err.reason and "put refused by the S3 client" in err.reason
    assert "\n" not in str(err)
    assert fake.count("put_object") == 1 and sleeps.delays == []


def test_damaged_responses_are_transient(sleeps: Sleeps) -> None:
    """A body cut short is a network failure (retried), not a client-side refusal."""
    body = SimpleNamespace(read=lambda: b"ok")
    fake = FakeClient().on("get_object", IncompleteReadError(actual_bytes=1, expected_bytes=2),
                           {"Body": body})
    store = S3Store(fake, retry=policy(sleeps))  # type: ignore[arg-type]
    assert store.get("s3://bkt/k") == b"ok"
    assert fake.count("get_object") == 2


def test_invalid_bucket_name_on_a_real_client_names_the_url() -> None:
    """botocore's own validation of a real client (no server is contacted: the endpoint is a
    closed port): every operation, and a committer's setup, fail with the reason."""
    import zerorename as zr

    client = make_s3_client("http://127.0.0.1:9", "us-east-1", access_key="a", secret_key="b")
    store = S3Store(client, retry=NO_RETRY)
    with pytest.raises(ClientSideError, match=r"s3://Bad_Bucket!/k: get refused .*Invalid "
                                              r"bucket name \"Bad_Bucket!\""):
        store.get("s3://Bad_Bucket!/k")
    with pytest.raises(ClientSideError, match="list_multipart_uploads refused"):
        store.list_multipart_uploads("s3://Bad_Bucket!/out/")
    job = zr.JobContext("s3://Bad_Bucket!/out", job_id="j1")
    committer = zr.create_committer("magic", store, job)
    with pytest.raises(ClientSideError, match=r"s3://Bad_Bucket!/out: .*Invalid bucket name"):
        committer.setup_job()


# -- the capability probe retries too ---------------------------------------------------------


def test_probe_repeats_a_transient_failure_instead_of_measuring_it(
    monkeypatch: pytest.MonkeyPatch, sleeps: Sleeps
) -> None:
    """botocore's retries are off on S3Store's clients, so the probe goes through the store's
    loop: a one-shot 503 on its first request must not be cached as "no conditional writes"."""
    from botocore.awsrequest import AWSResponse
    from moto import mock_aws

    class Body:
        def stream(self, **kwargs: Any) -> Any:
            yield (b"<Error><Code>SlowDown</Code><Message>slow</Message></Error>")

    throttled: list[str] = []

    def first_request_throttled(request: Any, **kwargs: Any) -> AWSResponse | None:
        if throttled:
            return None  # moto answers
        throttled.append(request.method)
        return AWSResponse(request.url, 503, {}, Body())  # type: ignore[arg-type]

    with mock_aws():
        client = make_s3_client()
        client.create_bucket(Bucket="bkt")
        client.meta.events.register_first("before-send.s3", first_request_throttled)
        store = S3Store(client, retry=policy(sleeps), probe_bucket="bkt")
        caps = store.capabilities()
    assert throttled == ["PUT"]
    assert caps.conditional_put and caps.conditional_complete
    assert len(sleeps.delays) == 1


def test_botocore_retries_are_switched_off_on_the_client_given() -> None:
    """Whatever retry mode a client was made with, S3Store leaves one request per call."""
    import boto3
    from botocore.config import Config

    for mode in ("legacy", "standard", "adaptive"):
        client = boto3.client("s3", region_name="us-east-1", aws_access_key_id="a",
                              aws_secret_access_key="b",
                              config=Config(retries={"mode": mode, "max_attempts": 9}))
        sent: list[str] = []

        def send(request: Any, sent: list[str] = sent, **kwargs: Any) -> Any:
            from botocore.awsrequest import AWSResponse

            sent.append(request.method)
            return AWSResponse(request.url, 500, {}, SimpleNamespace(stream=lambda **k: iter(
                [b"<Error><Code>InternalError</Code></Error>"])))  # type: ignore[arg-type]

        client.meta.events.register("before-send.s3", send)
        S3Store(client, retry=NO_RETRY)
        with pytest.raises(ClientError):
            client.get_object(Bucket="bkt", Key="k")
        assert sent == ["GET"], mode
