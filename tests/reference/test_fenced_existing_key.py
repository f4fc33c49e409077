"""What the Python ``fenced`` does with an object another writer put at a key its job writes:
it checks its keys before the commit point and refuses the job (``JobCommitRefusedError``),
keeping the object, and completes with ``If-None-Match: *``, so an object created after the
check is kept too (the job then ends ``JobCommitIncompleteError`` naming the key).  Why this
rule: docs/research/fenced-complete-condition.md ("Recommendation"); what a user sees:
docs/user/committers.md.  The JVM ``fenced`` follows the same rule."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

import zerorename as zr
from zerorename import statistics as S
from zerorename.committers.existing_keys import common_prefix, find_existing, holds
from zerorename.committers.fenced_records import (
    JobAlreadyCommittedError,
    JobCommitIncompleteError,
    JobCommitRefusedError,
    RecordedUpload,
    expected_multipart_etag,
)
from zerorename.executor import BoundedExecutor
from zerorename.formats import PendingSet
from zerorename.stats import IOStatistics
from zerorename.store import ObjectInfo, Store
from zerorename.urls import join

from .conftest_helpers import RGW, Env, FaultyStore, SimulatedCrash, options, run_job

FOREIGN = b"another writer's object"
FILES = {0: {"part-00000": b"the job's"}, 1: {"part-00001": b"other"}}
#: another writer's bytes of exactly the size of the job's part-00000 (one PUT: a plain ETag)
SAME_SIZE = b"not yours"
assert len(SAME_SIZE) == len(FILES[0]["part-00000"])


@pytest.fixture(params=["moto", RGW])
def s3_env(request: pytest.FixtureRequest) -> Env:
    """A store whose completed multipart uploads carry S3's multipart ETag (``-N``)."""
    value: Env = request.getfixturevalue({"moto": "moto_env", "rgw": "rgw_env"}[request.param])
    return value


def commit_records(env: Env, dest: str) -> list[str]:
    return [k for k in env.objects(dest) if k.endswith("commit.json")]


def test_an_object_already_at_a_key_refuses_the_job_before_its_commit_point(
        env_with_rgw: Env) -> None:
    env = env_with_rgw
    dest = env.dest()
    env.put(dest, "part-00000", FOREIGN)
    run = run_job("fenced", env.store, dest, FILES, commit=False, job_id="j1")
    with pytest.raises(JobCommitRefusedError) as refused:
        run.driver.commit_job(run.messages)
    assert refused.value.path == join(dest, "part-00000")
    assert refused.value.keys == [join(dest, "part-00000")]
    assert "nothing is committed" in str(refused.value)
    assert "Move the object away" in str(refused.value)
    assert not run.driver.published
    assert env.output(dest) == {"part-00000": FOREIGN}  # kept byte for byte, nothing published
    assert commit_records(env, dest) == []
    assert env.uploads(dest) == []  # the failure path aborted every upload

    env.store.delete(join(dest, "part-00000"))  # the user moves the object away and reruns
    rerun = run_job("fenced", env.store, dest, FILES, job_id="j1")
    assert rerun.success is not None
    assert env.output(dest) == {"part-00000": b"the job's", "part-00001": b"other"}
    assert env.uploads(dest) == []


def test_a_key_holding_the_jobs_own_data_passes_the_check(env_with_rgw: Env) -> None:
    env = env_with_rgw
    """The object at a key is this upload's (completed already): the check lists it, judges it
    the job's own, and the complete recognises it."""
    dest = env.dest()
    run = run_job("fenced", env.store, dest, FILES, commit=False)
    pset = PendingSet.from_bytes(env.store.get(run.messages[0].record), run.messages[0].record)
    own = pset.commits[0]
    env.store.complete_multipart(own.url, own.upload_id, own.parts)
    success = run.driver.commit_job(run.messages)
    assert success is not None
    assert env.output(dest) == {"part-00000": b"the job's", "part-00001": b"other"}
    assert run.driver.stats.counter(S.COMMITTER_COMPLETE_KEYS_LISTED) == 2  # the check ran
    assert env.uploads(dest) == []


def test_a_roll_forward_does_not_check_and_keeps_another_writers_object(env: Env) -> None:
    """The first attempt dies at its first complete (after the commit point); another writer
    then puts an object at one of its keys.  The next attempt rolls forward without the check
    (it would refuse a committed job): its conditional complete keeps the object, and the job
    stays committed but incomplete, naming the key, until the object is moved."""
    dest = env.dest()
    faulty = FaultyStore(env.store).crash("complete_multipart")
    run = run_job("fenced", faulty, dest, FILES, commit=False, job_id="j2")
    with pytest.raises(SimulatedCrash):
        run.driver.commit_job(run.messages)
    env.put(dest, "part-00000", FOREIGN)

    attempt1 = zr.JobContext(dest, job_id="j2", attempt=1, options=options())
    with pytest.raises(JobCommitIncompleteError) as incomplete:
        zr.create_committer("fenced", env.store, attempt1).setup_job()
    assert incomplete.value.path == join(dest, "part-00000")
    assert env.output(dest) == {"part-00000": FOREIGN, "part-00001": b"other"}
    assert [u.url for u in env.uploads(dest)] == [join(dest, "part-00000")]  # pending

    env.store.delete(join(dest, "part-00000"))
    attempt2 = zr.JobContext(dest, job_id="j2", attempt=2, options=options())
    driver = zr.create_committer("fenced", env.store, attempt2)
    with pytest.raises(JobAlreadyCommittedError):
        driver.setup_job()
    assert driver.stats.counter(S.COMMITTER_COMPLETE_LIST_PAGES) == 0  # no check
    assert env.output(dest) == {"part-00000": b"the job's", "part-00001": b"other"}
    assert env.uploads(dest) == []


class RacingWriter:
    """A store through which another writer PUTs ``FOREIGN`` at ``key`` right after the job's
    commit record (between the check and the completes)."""

    def __init__(self, inner: Store, key: str, data: bytes = FOREIGN) -> None:
        self.inner = inner
        self.key = key
        self.data = data
        self.raced = False

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def put(self, url: str, data: bytes, *, if_none_match: bool = False,
            if_match: str | None = None) -> str:
        etag = self.inner.put(url, data, if_none_match=if_none_match, if_match=if_match)
        if url.endswith("/commit.json") and not self.raced:
            self.raced = True
            self.inner.put(self.key, self.data)
        return etag


def _moved_away_the_next_attempt_completes(env: Env, dest: str, key: str, job_id: str) -> None:
    """After a job ended committed but incomplete over another writer's object at ``key``:
    once the object is moved away, the job's next attempt rolls it forward (its setup raises
    JobAlreadyCommittedError), completing the pending upload; no upload is left."""
    env.store.delete(key)
    again = zr.JobContext(dest, job_id=job_id, attempt=1, options=options())
    with pytest.raises(JobAlreadyCommittedError):
        zr.create_committer("fenced", env.store, again).setup_job()
    assert env.output(dest) == {"part-00000": b"the job's", "part-00001": b"other"}
    assert env.uploads(dest) == []


def test_a_writer_between_the_check_and_the_complete_is_kept(env: Env) -> None:
    dest = env.dest()
    key = join(dest, "part-00000")
    racing = RacingWriter(env.store, key)
    run = run_job("fenced", racing, dest, FILES, commit=False, job_id="j3")
    with pytest.raises(JobCommitIncompleteError) as incomplete:
        run.driver.commit_job(run.messages)
    assert racing.raced
    assert incomplete.value.path == key
    assert "another writer" in str(incomplete.value)
    assert run.driver.published  # past the commit point: the job is committed
    assert env.output(dest) == {"part-00000": FOREIGN, "part-00001": b"other"}
    assert [u.url for u in env.uploads(dest)] == [key]  # its upload stays pending

    _moved_away_the_next_attempt_completes(env, dest, key, "j3")


# -- a foreign object of exactly the upload's size -------------------------------------------


def test_s3_stores_give_completed_uploads_a_multipart_etag(s3_env: Env) -> None:
    """What ``multipart_etags`` declares for S3Store, measured: a completed upload's ETag, as
    HEAD and LIST report it, is S3's ``md5(part MD5s)-N``; a single PUT's has no ``-N``."""
    env = s3_env
    dest = env.dest()
    url = join(dest, "mpu")
    upload_id = env.store.create_multipart(url)
    parts = [(1, env.store.upload_part(url, upload_id, 1, b"one part"))]
    env.store.complete_multipart(url, upload_id, parts)
    env.put(dest, "single", b"one part")
    head = env.store.head(url)
    assert head is not None
    listed = {o.url: o.etag.strip('"') for o in zr.list_dir(env.store, dest)}
    expected = expected_multipart_etag([e for _, e in parts])
    assert head.etag.strip('"') == expected == listed[url]
    assert "-" not in listed[join(dest, "single")]
    assert env.store.capabilities(dest).multipart_etags  # type: ignore[call-arg]


def test_local_store_keeps_the_size_rule() -> None:
    """LocalStore's completed uploads carry the MD5 of their bytes, not a multipart ETag: it
    does not declare multipart ETags, and any Store that says nothing keeps the size rule."""
    assert not zr.LocalStore().capabilities().multipart_etags
    assert not zr.StoreCapabilities().multipart_etags


def test_a_same_size_single_put_object_refuses_the_job_before_its_commit_point(
        s3_env: Env) -> None:
    """Another writer's single PUT of exactly the upload's size is not the job's upload (its
    ETag has no ``-N``): the check refuses the job, nothing is published, the object is kept,
    and a rerun after it is moved away commits."""
    env = s3_env
    dest = env.dest()
    env.put(dest, "part-00000", SAME_SIZE)
    run = run_job("fenced", env.store, dest, FILES, commit=False, job_id="j4")
    with pytest.raises(JobCommitRefusedError) as refused:
        run.driver.commit_job(run.messages)
    assert refused.value.keys == [join(dest, "part-00000")]
    assert not run.driver.published
    assert env.output(dest) == {"part-00000": SAME_SIZE}  # kept, nothing published
    assert commit_records(env, dest) == []
    assert env.uploads(dest) == []  # the failure path aborted every upload

    env.store.delete(join(dest, "part-00000"))
    rerun = run_job("fenced", env.store, dest, FILES, job_id="j4")
    assert rerun.success is not None
    assert env.output(dest) == {"part-00000": b"the job's", "part-00001": b"other"}
    assert env.uploads(dest) == []


def test_a_same_size_object_written_after_the_check_is_not_taken_as_committed(
        moto_env: Env) -> None:
    """The same object put between the check and the complete: the complete's 412 is not
    "already completed" (the object's ETag has no ``-N``), so the job ends committed but
    incomplete naming the key, as for any other writer's object, and the object is kept."""
    env = moto_env
    dest = env.dest()
    key = join(dest, "part-00000")
    racing = RacingWriter(env.store, key, SAME_SIZE)
    run = run_job("fenced", racing, dest, FILES, commit=False, job_id="j5")
    with pytest.raises(JobCommitIncompleteError) as incomplete:
        run.driver.commit_job(run.messages)
    assert racing.raced
    assert incomplete.value.path == key
    assert "another writer" in str(incomplete.value)
    assert run.driver.stats.counter(S.STORE_COMPLETE_RECOVERED) == 0
    assert env.output(dest) == {"part-00000": SAME_SIZE, "part-00001": b"other"}
    assert [u.url for u in env.uploads(dest)] == [key]  # its upload stays pending

    _moved_away_the_next_attempt_completes(env, dest, key, "j5")


MD5_A, MD5_B = "0" * 31 + "a", "0" * 31 + "b"
KMS = "not-an-md5-part-etag"  # SSE-KMS part ETags are not the parts' MD5s


@pytest.mark.parametrize("etag,size,part_etags,multipart_etags,verdict", [
    ("single0put0etag", 9, [MD5_A], True, False),     # one PUT where uploads are "-N": foreign
    ("single0put0etag", 9, [MD5_A], False, True),     # no multipart ETags: the size rule
    ("single0put0etag", 8, [MD5_A], False, False),    # another size: foreign everywhere
    (expected_multipart_etag([MD5_A, MD5_B]), 9, [MD5_A, MD5_B], True, True),   # its own
    (expected_multipart_etag([MD5_B, MD5_A]), 9, [MD5_A, MD5_B], True, False),  # other parts
    ("feedface-2", 9, [KMS], True, False),            # 2 parts, the upload has 1
    ("feedface-2", 9, [KMS], False, False),           # the part count holds on every store
    ("feedface-1", 9, [KMS], True, True),             # 1 part, its ETag not computable
], ids=["single-put", "size-rule", "other-size", "own", "other-parts", "part-count",
        "part-count-anywhere", "kms"])
def test_holds(etag: str, size: int, part_etags: list[str], multipart_etags: bool,
               verdict: bool) -> None:
    upload = RecordedUpload("attempt", "s3://b/k", "id", tuple(part_etags), 9)
    info = ObjectInfo("s3://b/k", size, f'"{etag}"')
    assert holds(info, upload, multipart_etags=multipart_etags) is verdict


# -- the listing ------------------------------------------------------------------------------


def test_common_prefix() -> None:
    assert common_prefix("s3://b/out/part-00000", "s3://b/out/part-00017") == \
        "s3://b/out/part-000"
    assert common_prefix("s3://b/x", "s3://b/x") == "s3://b/x"
    assert common_prefix("s3://b/é1", "s3://b/é2") == "s3://b/é"


@pytest.mark.parametrize("others,pages,listed", [
    ([], 1, 5),                                   # one page covers every key
    ([f"f-1-{i}a" for i in range(5)], 2, 5),      # other objects among the keys: 2 pages of 4
    ([f"f-1-!{i:03d}" for i in range(40)], 1, 0),  # many before the first key: HEADs instead
], ids=["alone", "among", "before"])
def test_the_listing_keeps_to_its_page_budget(local_env: Env, others: list[str], pages: int,
                                              listed: int) -> None:
    """A page is listed only while the pages so far are fewer than the keys they covered;
    the keys the listing did not reach are checked with a HEAD each."""
    env = local_env
    dest = env.dest()
    for name in others:
        env.put(dest, name, b"x")  # under the keys' common prefix f-1-
    keys = [join(dest, f"f-1-{i}") for i in range(5)]
    env.put(dest, "f-1-3", b"there")

    class SmallPages:
        def __init__(self, inner: Store) -> None:
            self.inner = inner

        def __getattr__(self, name: str) -> Any:
            return getattr(self.inner, name)

        def list_page(self, prefix: str, **kw: Any) -> Any:
            return self.inner.list_page(prefix, **{**kw, "max_keys": 4})

    stats = IOStatistics()
    before = env.store.request_counts()
    with BoundedExecutor(2, "test") as pool:
        found = find_existing(SmallPages(env.store), keys, pool, stats, "j")
    after = env.store.request_counts()
    assert set(found.found) == {join(dest, "f-1-3")}
    assert stats.counter(S.COMMITTER_COMPLETE_LIST_PAGES) == pages
    assert stats.counter(S.COMMITTER_COMPLETE_KEYS_LISTED) == listed
    assert stats.counter(S.COMMITTER_COMPLETE_KEYS_HEADED) == 5 - listed
    assert after.get("head", 0) - before.get("head", 0) == 5 - listed
    assert all(found.covers(k) for k in keys) == (listed == 5)


class IgnoresCondition:
    """A store declaring that its complete ignores If-None-Match (Ceph RGW), with small LIST
    pages; records the condition each complete carried."""

    def __init__(self, inner: Store) -> None:
        self.inner = inner
        self.conditions: dict[str, bool] = {}

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def capabilities(self) -> Any:
        return dataclasses.replace(self.inner.capabilities(), conditional_complete=False)

    def list_page(self, prefix: str, **kw: Any) -> Any:
        return self.inner.list_page(prefix, **{**kw, "max_keys": 2})

    def complete_multipart(self, url: str, upload_id: str, parts: Any, *,
                           if_none_match: bool = False, if_match: str | None = None) -> str:
        self.conditions[url.rsplit("/", 1)[1]] = if_none_match
        return self.inner.complete_multipart(url, upload_id, parts,
                                             if_none_match=if_none_match, if_match=if_match)


@pytest.mark.parametrize("before,conditional", [(0, False), (4, True)], ids=["listed", "headed"])
def test_on_a_store_ignoring_the_condition_listed_keys_complete_without_it(
        local_env: Env, before: int, conditional: bool) -> None:
    """Keys the check's listing found absent are completed without If-None-Match (the store
    would emulate it with a HEAD); keys it did not reach (its page budget spent on other
    objects) keep it."""
    env = local_env
    dest = env.dest()
    for i in range(before):
        env.put(dest, f"part-0000!{i}", b"x")  # under the keys' common prefix, before them
    store = IgnoresCondition(env.store)
    run = run_job("fenced", store, dest, FILES)
    assert run.success is not None
    assert store.conditions == {"part-00000": conditional, "part-00001": conditional}
