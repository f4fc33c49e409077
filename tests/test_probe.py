"""``zerorename probe`` against real stores (moto's server, Ceph RGW, LocalStore) with their
known answers, and against stand-ins for servers that cannot fence (tests/probe_standins.py),
which the probe must catch with 16 racing writers and the committers must refuse."""

from __future__ import annotations

import json
import logging
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

try:  # tests/ on sys.path (rootdir layout) or tests as a package
    from probe_standins import CheckThenActStore, IgnoresIfNoneMatchStore
    from stores_fixtures import aws_credentials, moto_server, rgw_server
except ModuleNotFoundError:  # pragma: no cover
    from tests.probe_standins import (  # type: ignore[no-redef]
        CheckThenActStore,
        IgnoresIfNoneMatchStore,
    )
    from tests.stores_fixtures import (  # type: ignore[no-redef]
        aws_credentials,
        moto_server,
        rgw_server,
    )

import zerorename as zr
from zerorename.cli import main
from zerorename.committers.fenced_records import (
    ConditionalWriteUnsupportedError,
    RacyConditionalWritesError,
)
from zerorename.errors import PreconditionFailedError
from zerorename.store import Store, list_all
from zerorename.stores import LocalStore, S3Store, make_s3_client
from zerorename.stores.fencing import (
    CHOICE_OPTION,
    CONDITIONAL_OPTION,
    STORE_CHECK_OPTION,
    FencingSupport,
    choose_committer,
    clear_fencing_cache,
    fencing_support,
)
from zerorename.stores.probe import ProbeSettings, StoreProbeError, run_probe
from zerorename.stores.probe_report import Answer, RaceOp, RaceVerdict
from zerorename.stores.probe_s3 import capability_extras, probing_store
from zerorename.stores.probe_text import advise
from zerorename_bridge.embedded_s3 import conditional_writes_atomic, key_lock

__all__ = ["aws_credentials", "moto_server", "rgw_server"]  # fixtures, re-exported for pytest

RACERS = 16


@pytest.fixture(autouse=True)
def _fresh_fencing_cache() -> Iterator[None]:
    clear_fencing_cache()
    yield
    clear_fencing_cache()


@pytest.fixture
def local_dest(tmp_path: Path) -> tuple[Store, str]:
    (tmp_path / "data").mkdir()
    return LocalStore(root=tmp_path / "uploads"), f"file://{tmp_path}/data/out"


def _s3(endpoint: str, **keys: str) -> tuple[Any, str]:
    client = make_s3_client(endpoint, "us-east-1", **keys)
    bucket = f"zr-probe-{uuid.uuid4().hex[:10]}"
    client.create_bucket(Bucket=bucket)
    return client, bucket


def _nothing_left(store: Store, dest: str) -> None:
    assert list(list_all(store, dest.rstrip("/") + "/")) == []
    assert store.list_multipart_uploads(dest.rstrip("/") + "/") == []


# -- the real stores, and what they are known to do -------------------------------------------


def test_local_store_fences_and_leaves_nothing(local_dest: tuple[Store, str]) -> None:
    store, dest = local_dest
    report = run_probe(store, dest, ProbeSettings(racers=RACERS, rounds=3))
    seq = report.sequential
    assert (seq.put_if_none_match, seq.put_if_match_stale, seq.put_if_match_current,
            seq.complete_if_none_match, seq.complete_if_match_stale,
            seq.complete_if_match_current) == (Answer.YES,) * 6
    assert [r.op for r in report.races] == list(RaceOp)
    assert [r.verdict for r in report.races] == [RaceVerdict.EXCLUSIVE] * 4
    assert all(r.winners == (1, 1, 1) and r.writers == RACERS for r in report.races)
    assert report.consistency.read_after_write.answer is Answer.YES
    assert report.consistency.list_after_delete.answer is Answer.YES
    assert report.uploads_listed.answer is Answer.YES
    assert report.min_part_size == 1024  # no minimum: the smallest size tried
    assert dict(report.key_lengths) == {1024: Answer.YES, 1025: Answer.YES}
    assert report.cleaned_up
    _nothing_left(store, dest)
    assert not Path(dest.removeprefix("file://"), ".zerorename-probe").exists()
    safe = {a.committer: a.safe for a in advise(report, store.capabilities())}
    assert safe == {"fenced": True, "magic": True, "directory": True, "partitioned": True,
                    "manifest": True, "v1": True, "v2": False}


@pytest.mark.usefixtures("aws_credentials")
def test_moto_server_known_answers(moto_server: str) -> None:
    client, bucket = _s3(moto_server)
    store = probing_store(client, name="moto-server")
    dest = f"s3://{bucket}/out"
    report = run_probe(store, dest, ProbeSettings(racers=RACERS, rounds=3),
                       extras=capability_extras(store))
    assert report.sequential.put_if_none_match is Answer.YES
    assert report.sequential.complete_if_none_match is Answer.YES
    assert report.sequential.complete_if_match_stale is Answer.NO  # moto ignores it
    assert report.sequential.complete_if_match_current is Answer.YES
    # stock moto checks a condition, then writes: two racers can both win (seen under load);
    # the tests' moto holds a lock around conditional writes (tests/conftest.py), so every
    # condition it honours has one winner, and the one it ignores lets all 16 complete
    assert conditional_writes_atomic()
    verdicts = {r.op: r.verdict for r in report.races}
    assert verdicts[RaceOp.PUT_IF_NONE_MATCH] is RaceVerdict.EXCLUSIVE
    assert verdicts[RaceOp.PUT_IF_MATCH] is RaceVerdict.EXCLUSIVE
    assert verdicts[RaceOp.COMPLETE_IF_NONE_MATCH] is RaceVerdict.EXCLUSIVE
    complete_if_match = report.race(RaceOp.COMPLETE_IF_MATCH)
    assert complete_if_match is not None and complete_if_match.winners == (RACERS,) * 3
    assert not any(r.lost_writes for r in report.races)
    # moto's minimum is its S3_UPLOAD_PART_MIN_SIZE (5 MiB unless a test lowered it): the
    # smallest size tried at or above it
    import moto.s3.models

    minimum = moto.s3.models.S3_UPLOAD_PART_MIN_SIZE
    assert report.min_part_size == (1024 if minimum <= 1024 else 5 << 20)
    assert dict(report.key_lengths) == {1024: Answer.YES, 1025: Answer.YES}  # AWS: 1025 no
    assert report.s3 is not None
    assert report.s3["complete_if_match"] is False  # moto ignores If-Match on complete
    assert report.s3["list_uploads_paginated"] is False
    assert report.s3["upload_initiated_real"] is False
    assert report.cleaned_up
    _nothing_left(store, dest)
    # the probe wrote only in the destination's hidden area, never at the bucket root
    assert client.list_objects_v2(Bucket=bucket).get("KeyCount") == 0


@pytest.mark.rgw
def test_ceph_rgw_known_answers(rgw_server: Any) -> None:
    client, bucket = _s3(rgw_server.endpoint, access_key=rgw_server.access_key,
                         secret_key=rgw_server.secret_key)
    store = probing_store(client, name="rgw")
    dest = f"s3://{bucket}/out"
    report = run_probe(store, dest, ProbeSettings(racers=RACERS, rounds=3),
                       extras=capability_extras(store))
    assert report.sequential.put_if_none_match is Answer.YES
    assert report.sequential.put_if_match_current is Answer.YES  # S3Store sends it bare
    assert report.sequential.complete_if_none_match is Answer.NO  # Pacific ignores it
    verdicts = {r.op: r.verdict for r in report.races}
    assert verdicts[RaceOp.PUT_IF_NONE_MATCH] is RaceVerdict.EXCLUSIVE
    assert verdicts[RaceOp.PUT_IF_MATCH] is RaceVerdict.EXCLUSIVE
    complete = report.race(RaceOp.COMPLETE_IF_NONE_MATCH)
    assert complete is not None and complete.winners == (RACERS,) * 3  # all overwrite
    # Pacific ignores If-Match on complete too: a stale one completes, and every racer wins
    assert report.sequential.complete_if_match_stale is Answer.NO
    assert report.sequential.complete_if_match_current is Answer.YES
    complete_if_match = report.race(RaceOp.COMPLETE_IF_MATCH)
    assert complete_if_match is not None and complete_if_match.winners == (RACERS,) * 3
    # no committer completes conditionally: fenced stays safe where complete ignores headers
    assert next(a for a in advise(report, store.capabilities()) if a.committer == "fenced").safe
    # the test server is started with rgw_multipart_min_part_size = 1 (scripts/rgw-start.sh)
    assert report.min_part_size == 1024
    assert dict(report.key_lengths) == {1024: Answer.YES, 1025: Answer.NO}  # as AWS
    assert report.s3 is not None
    assert report.s3["if_match_quoted"] is False and report.s3["complete_returns_etag"] is False
    assert report.s3["list_uploads_paginated"] is True
    assert report.cleaned_up
    _nothing_left(store, dest)


# -- stand-ins for servers that cannot fence ---------------------------------------------------


def test_a_check_then_act_server_is_caught_only_by_racing_writers(
        local_dest: tuple[Store, str]) -> None:
    inner, dest = local_dest
    store = CheckThenActStore(inner)
    report = run_probe(store, dest, ProbeSettings(racers=RACERS, rounds=3, limits=False))
    assert report.sequential.put_if_none_match is Answer.YES  # one writer: looks perfect
    put = report.race(RaceOp.PUT_IF_NONE_MATCH)
    assert put is not None and put.verdict is RaceVerdict.SEVERAL_WINNERS
    fenced = advise(report, inner.capabilities())[0]
    assert fenced.committer == "fenced" and not fenced.safe and "racing" in fenced.why
    _nothing_left(inner, dest)


@pytest.mark.usefixtures("aws_credentials")
def test_a_check_then_act_server_over_http_is_caught(moto_server: str) -> None:
    client, bucket = _s3(moto_server)
    store = CheckThenActStore(S3Store(client, name="moto-server"))
    decision = fencing_support(store, f"s3://{bucket}/out")
    assert decision.support is FencingSupport.RACY
    assert decision.race is not None and decision.race.max_winners > 1


def test_a_server_that_ignores_if_none_match_is_caught(local_dest: tuple[Store, str]) -> None:
    inner, dest = local_dest
    report = run_probe(IgnoresIfNoneMatchStore(inner), dest,
                       ProbeSettings(racers=RACERS, rounds=3, limits=False))
    assert report.sequential.put_if_none_match is Answer.NO
    assert report.sequential.put_if_match_stale is Answer.YES  # If-Match still honoured
    put = report.race(RaceOp.PUT_IF_NONE_MATCH)
    assert put is not None and put.winners == (RACERS,) * 3
    assert "ignores the header" in advise(report, inner.capabilities())[0].why
    _nothing_left(inner, dest)


# -- the committers use the answer -------------------------------------------------------------


def _setup_fenced(store: Store, dest: str, **options: str) -> zr.BaseCommitter:
    job = zr.JobContext(dest=dest, job_id=str(uuid.uuid4()), options=options)
    committer = zr.create_committer("fenced", store, job)
    committer.setup_job()
    return committer


@pytest.mark.parametrize(("standin", "options"), [
    (CheckThenActStore, {}),  # refused by default
    (CheckThenActStore, {STORE_CHECK_OPTION: "refuse"}),
    (IgnoresIfNoneMatchStore, {}),
])
def test_fenced_refuses_and_auto_picks_magic(standin: Any, options: dict[str, str],
                                             local_dest: tuple[Store, str]) -> None:
    inner, dest = local_dest
    store = standin(inner)
    with pytest.raises(ConditionalWriteUnsupportedError, match="cannot fence commits"):
        _setup_fenced(store, dest, **options)
    choice = choose_committer(store, dest)
    assert choice.committer == "magic" and "auto chose magic" in choice.reason
    _nothing_left(inner, dest)  # refused before writing anything


def test_fenced_on_a_racy_store_is_refused_naming_store_path_winners_and_override(
        local_dest: tuple[Store, str], caplog: pytest.LogCaptureFixture) -> None:
    inner, dest = local_dest
    store = CheckThenActStore(inner)
    with caplog.at_level(logging.WARNING, logger="zerorename"), \
            pytest.raises(RacyConditionalWritesError) as refused:
        _setup_fenced(store, dest)
    error = refused.value
    assert error.store == "check-then-act" and error.path == dest
    assert 1 < error.winners <= RACERS and error.writers == RACERS
    assert error.override == f"{STORE_CHECK_OPTION}=warn"
    text = str(error)
    assert "check-then-act" in text and dest in text and f"of {RACERS} racing" in text
    assert f"{STORE_CHECK_OPTION}=warn" in text
    # refused, not run: no "running anyway" warning, and the job's log says setup failed
    said = [r.getMessage() for r in caplog.records]
    assert not [m for m in said if "both commit" in m], said
    assert any("setup FAILED" in m for m in said), said
    _nothing_left(inner, dest)


def test_fenced_on_a_racy_store_runs_with_the_override_and_the_risk_in_the_log(
        local_dest: tuple[Store, str], caplog: pytest.LogCaptureFixture) -> None:
    inner, dest = local_dest
    store = CheckThenActStore(inner)
    with caplog.at_level(logging.WARNING, logger="zerorename"):
        committer = _setup_fenced(store, dest, **{STORE_CHECK_OPTION: "warn"})
    committer.abort_job()
    said = [r.getMessage() for r in caplog.records]
    assert any("both commit" in m and "racing" in m and f"{STORE_CHECK_OPTION}=warn" in m
               for m in said), said
    # a store that ignores the header cannot fence at all: refused whatever the option says
    with pytest.raises(ConditionalWriteUnsupportedError):
        _setup_fenced(IgnoresIfNoneMatchStore(LocalStore()), dest,
                      **{STORE_CHECK_OPTION: "warn"})


def test_hadoops_switch_is_honoured(local_dest: tuple[Store, str]) -> None:
    store, dest = local_dest
    with pytest.raises(ConditionalWriteUnsupportedError, match=CONDITIONAL_OPTION):
        _setup_fenced(store, dest, **{CONDITIONAL_OPTION: "false"})
    assert choose_committer(store, dest, {CONDITIONAL_OPTION: "false"}).committer == "magic"
    assert choose_committer(store, dest, {CONDITIONAL_OPTION: "true"}).committer == "fenced"


def test_success_says_why_the_committer_was_chosen(local_dest: tuple[Store, str]) -> None:
    store, dest = local_dest
    job = zr.JobContext(dest=dest, job_id=str(uuid.uuid4()),
                        options={CHOICE_OPTION: "auto chose magic, not fenced: because"})
    committer = zr.create_committer("magic", store, job)
    committer.setup_job()
    committer.commit_job([])
    success = zr.read_success(store, dest)
    assert success.diagnostics["committer.choice"] == "auto chose magic, not fenced: because"


# -- a probe that cannot run is not "the store ignores the header" -----------------------------


@pytest.mark.usefixtures("aws_credentials")
def test_a_missing_bucket_is_an_error_naming_it(moto_server: str) -> None:
    client = make_s3_client(moto_server, "us-east-1")
    store = S3Store(client, retry=zr.RetryPolicy(max_attempts=1))
    dest = f"s3://zr-no-such-bucket-{uuid.uuid4().hex[:8]}/out"
    with pytest.raises(StoreProbeError, match="NoSuchBucket") as caught:
        choose_committer(store, dest)
    assert caught.value.cause == "NoSuchBucket" and "nothing is known" in str(caught.value)
    with pytest.raises(StoreProbeError, match="NoSuchBucket"):
        _setup_fenced(store, dest)
    with pytest.raises(StoreProbeError, match="NoSuchBucket"):
        run_probe(probing_store(client), dest, ProbeSettings(racers=2, rounds=1))


@pytest.mark.usefixtures("aws_credentials")
def test_no_network_is_an_error_naming_it() -> None:
    import socket

    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    store = S3Store(make_s3_client(f"http://127.0.0.1:{port}", "us-east-1"),
                    retry=zr.RetryPolicy(max_attempts=1))
    with pytest.raises(StoreProbeError, match=r"ConnectionError|EndpointConnectionError"):
        choose_committer(store, "s3://bucket/out")


# -- the command line ---------------------------------------------------------------------------


def test_cli_prints_the_table_and_writes_json(local_dest: tuple[Store, str], tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    _store, dest = local_dest
    out = tmp_path / "report.json"
    assert main(["probe", dest, "--race", str(RACERS), "--rounds", "2",
                 "--json", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "racing writers (16 writers, 2 rounds" in printed
    assert "fenced       safe" in printed and "v2           NOT safe" in printed
    data = json.loads(out.read_text())
    assert [r["verdict"] for r in data["report"]["races"]] == ["exclusive"] * 4
    assert [r["op_name"] for r in data["report"]["races"]][2:] == [
        "COMPLETE_IF_NONE_MATCH", "COMPLETE_IF_MATCH"]
    assert data["report"]["races"][0]["winners"] == [1, 1]
    assert {c["committer"]: c["safe"] for c in data["committers"]}["fenced"] is True
    relies = {c["committer"]: c["relies_on"] for c in data["committers"]}
    assert relies["fenced"] == ["PUT_IF_NONE_MATCH"] and relies["magic"] == []
    meanings = {m["op"]: m for m in data["races_for_committers"]}
    assert meanings["PUT_IF_NONE_MATCH"]["relied_on_by"] == ["fenced"]
    assert meanings["COMPLETE_IF_MATCH"]["relied_on_by"] == []
    assert "CompleteMultipartUpload If-Match: <etag>   no committer sends it" in printed


def test_cli_refuses_fewer_than_two_racers(local_dest: tuple[Store, str],
                                           capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["probe", local_dest[1], "--race", "1"]) == 2
    assert "at least 2 writers" in capsys.readouterr().err


def test_racing_writers_are_released_together(local_dest: tuple[Store, str]) -> None:
    """The race is real: with a barrier, a 20 ms check-then-act gap lets every writer win;
    if the writers ran one after another, only one would."""
    inner, dest = local_dest
    store = CheckThenActStore(inner, gap=0.02)
    report = run_probe(store, dest, ProbeSettings(racers=RACERS, rounds=2, limits=False,
                                                  races=(RaceOp.PUT_IF_NONE_MATCH,)))
    put = report.race(RaceOp.PUT_IF_NONE_MATCH)
    assert put is not None and min(put.winners) >= RACERS // 2


@pytest.mark.usefixtures("aws_credentials")
def test_the_fencing_check_writes_in_the_destination_and_counts_apart(moto_server: str) -> None:
    client, bucket = _s3(moto_server)
    store = S3Store(client, name="moto-server")
    urls: list[str] = []
    prober = store.prober()
    original = prober.put

    def recording_put(url: str, data: bytes, **kwargs: Any) -> str:
        urls.append(url)
        return original(url, data, **kwargs)

    prober.put = recording_put  # type: ignore[method-assign]
    store.prober = lambda: prober  # type: ignore[method-assign]
    dest = f"s3://{bucket}/tables/events"
    # moto's server is check-then-act: either answer may come, the requests are the point
    assert fencing_support(store, dest).support in (FencingSupport.FENCES, FencingSupport.RACY)
    assert len(urls) == 2 + 16 * 3  # two sequential PUTs, then 3 rounds of 16 racers
    assert all(u.startswith(f"{dest}/.zerorename-probe/") for u in urls)
    assert sum(store.request_counts().values()) == 0  # the job's store counted nothing
    assert client.list_objects_v2(Bucket=bucket).get("KeyCount") == 0


# -- If-Match on complete, through the store protocol ---------------------------------------


@pytest.mark.usefixtures("aws_credentials")
def test_complete_if_match_is_emulated_where_the_server_ignores_it(moto_server: str) -> None:
    """moto ignores If-Match on complete (measured): sent as asked, a stale ETag completes
    over the object; an S3Store that measured the endpoint checks with HEAD first instead."""
    client, bucket = _s3(moto_server)
    url = f"s3://{bucket}/k"
    stale = "0" * 32

    def complete(store: S3Store, if_match: str) -> str:
        upload = store.create_multipart(url)
        part = store.upload_part(url, upload, 1, b"complete " + if_match.encode())
        try:
            return store.complete_multipart(url, upload, [(1, part)], if_match=if_match)
        except PreconditionFailedError:
            store.abort_multipart(url, upload)
            raise

    as_asked = probing_store(client)
    current = as_asked.put(url, b"first\n")
    assert complete(as_asked, stale)  # the server ignored it: the object was replaced
    measured = S3Store(client, name="moto-server")
    assert measured.capabilities(url).conditional_complete_if_match is False
    current = measured.put(url, b"second\n")
    with pytest.raises(PreconditionFailedError, match="If-Match emulated by HEAD"):
        complete(measured, stale)
    assert measured.get(url) == b"second\n"
    assert complete(measured, current) != current
    assert measured.get(url) == b"complete " + current.encode()
    assert measured.list_multipart_uploads(f"s3://{bucket}/") == []  # the refused one aborted


def test_local_store_completes_only_over_the_etag_named(local_dest: tuple[Store, str]) -> None:
    store, dest = local_dest
    url = f"{dest}/k"
    etag = store.put(url, b"first\n")
    upload = store.create_multipart(url)
    part = store.upload_part(url, upload, 1, b"second\n")
    with pytest.raises(PreconditionFailedError):
        store.complete_multipart(url, upload, [(1, part)], if_match="0" * 32)
    assert store.get(url) == b"first\n"
    store.complete_multipart(url, upload, [(1, part)], if_match=etag)  # the upload stayed open
    assert store.get(url) == b"second\n"


@pytest.mark.usefixtures("aws_credentials")
def test_the_tests_moto_is_atomic_where_stock_moto_is_not(moto_server: str,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """Stock moto checks If-None-Match, then writes; with the write slowed down, racing
    writers all pass the check.  The tests' moto (tests/conftest.py) holds a lock around the
    conditional handlers, so the same race has one winner per round."""
    import time

    from moto.s3.models import S3Backend
    from moto.s3.responses import S3Response

    from zerorename.stores.race import race

    write = S3Backend.put_object

    def slow_write(self: Any, *args: Any, **kwargs: Any) -> Any:
        time.sleep(0.02)  # the gap between moto's check and its write, widened
        return write(self, *args, **kwargs)

    monkeypatch.setattr(S3Backend, "put_object", slow_write)
    client, bucket = _s3(moto_server)
    store = probing_store(client)
    assert conditional_writes_atomic()
    ours = race(store, f"s3://{bucket}/ours/", RaceOp.PUT_IF_NONE_MATCH, writers=RACERS,
                rounds=2)
    assert ours.verdict is RaceVerdict.EXCLUSIVE, ours.winners
    monkeypatch.setattr(S3Response, "put_object", S3Response.put_object.__wrapped__)
    assert not conditional_writes_atomic()
    stock = race(store, f"s3://{bucket}/stock/", RaceOp.PUT_IF_NONE_MATCH, writers=RACERS,
                 rounds=2)
    assert stock.verdict is RaceVerdict.SEVERAL_WINNERS, stock.winners


@pytest.mark.usefixtures("aws_credentials")
def test_the_tests_moto_locks_conditional_writes_per_key(moto_server: str) -> None:
    """Our moto's conditional writes take one lock per key: while one key's lock is held, a
    conditional PUT and a conditional multipart complete of other keys finish, and a
    conditional PUT of the held key waits for it (a lock for all keys made a job's conditional
    completes of its files take turns)."""
    client, bucket = _s3(moto_server)
    assert conditional_writes_atomic()
    upload = client.create_multipart_upload(Bucket=bucket, Key="other-complete")["UploadId"]
    part = client.upload_part(Bucket=bucket, Key="other-complete", UploadId=upload,
                              PartNumber=1, Body=b"part")["ETag"]
    failures: list[BaseException] = []

    def put_held() -> None:
        try:
            client.put_object(Bucket=bucket, Key="held", Body=b"second", IfNoneMatch="*")
        except BaseException as e:  # reported by the test below
            failures.append(e)

    waiting = threading.Thread(target=put_held)
    with key_lock(bucket, "held"):
        client.put_object(Bucket=bucket, Key="other-put", Body=b"x", IfNoneMatch="*")
        client.complete_multipart_upload(
            Bucket=bucket, Key="other-complete", UploadId=upload, IfNoneMatch="*",
            MultipartUpload={"Parts": [{"PartNumber": 1, "ETag": part}]})
        waiting.start()
        waiting.join(0.5)
        assert waiting.is_alive(), "a conditional PUT of the held key did not wait"
    waiting.join(30)
    assert not waiting.is_alive() and not failures, failures
    assert client.get_object(Bucket=bucket, Key="held")["Body"].read() == b"second"
    assert client.get_object(Bucket=bucket, Key="other-complete")["Body"].read() == b"part"


def test_a_race_wider_than_boto3s_pool_prints_no_pool_full_warnings(
        moto_server: str, caplog: pytest.LogCaptureFixture) -> None:
    """The fencing probe's 16 writers on ``boto3.client("s3")`` (a pool of 10) opened extra
    connections, and urllib3 warned "Connection pool is full" for each (18 lines a probe).
    The race silences that one warning while it runs, and nothing else of urllib3's."""
    import logging

    import boto3

    from zerorename.stores.race import race

    client = boto3.client("s3", endpoint_url=moto_server, region_name="us-east-1",
                          aws_access_key_id="testing", aws_secret_access_key="testing")
    bucket = f"zr-probe-{uuid.uuid4().hex[:10]}"
    client.create_bucket(Bucket=bucket)
    store = probing_store(client)
    with caplog.at_level(logging.WARNING, logger="urllib3.connectionpool"):
        race(store, f"s3://{bucket}/pool/", RaceOp.PUT_IF_NONE_MATCH, writers=RACERS,
             rounds=2)
        logging.getLogger("urllib3.connectionpool").warning("Connection pool is full, later")
    pool_full = [r for r in caplog.records if "Connection pool is full" in r.getMessage()]
    assert [r.getMessage() for r in pool_full] == ["Connection pool is full, later"]
