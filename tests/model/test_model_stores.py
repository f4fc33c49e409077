"""The model stores' semantics (docs/research/design.md, "Stores"), one behaviour per test."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from zerorename_model.engine.errors import ModelStoreError
from zerorename_model.engine.stores.profiles import PROFILES
from zerorename_model.engine.stores.records import etag_of
from zerorename_model.engine.stores.store import ModelStore

URL = "s3://bucket/out/part-0"


def keys(store: ModelStore, prefix: str = "s3://bucket/") -> list[str]:
    return [o.url for o in store.list_page(prefix).objects]


def test_s3_2018_listing_lags_a_put_until_settled() -> None:
    store = ModelStore("s3-2018")
    store.put(URL, b"x")
    assert keys(store) == []
    assert store.inconsistent_answers == 1
    assert [str(e) for e in store.pending] == [f"list-add {URL}"]
    store.settle(0)
    assert keys(store) == [URL]


def test_s3_2018_deleted_key_lingers_in_listing_and_reads() -> None:
    store = ModelStore("s3-2018")
    store.put(URL, b"old")
    store.settle_all()
    store.delete(URL)
    assert keys(store) == [URL]
    assert store.get(URL) == b"old"
    store.settle_all()
    assert keys(store) == [] and store.head(URL) is None


def test_s3_2018_key_written_again_while_its_deletion_lags_is_listed_again() -> None:
    """DELETE then PUT of one key: a LIST may show it throughout (the index's old entry, now
    the new object) or, if the deletion's index update lands first, lose it until the new
    write's entry lands; once everything settles the key is listed, as it exists."""
    store = ModelStore("s3-2018")
    store.put(URL, b"old")
    store.settle_all()
    store.delete(URL)
    store.put(URL, b"new")
    assert keys(store) == [URL]
    listed = store.list_page("s3://bucket/").objects[0]
    assert listed.size == len(b"new")
    (deletion,) = [i for i, e in enumerate(store.pending) if e.kind == "list-del"]
    store.settle(deletion)
    assert keys(store) == []
    store.settle_all()
    assert keys(store) == [URL]
    assert store.get(URL) == b"new"


def test_s3_2018_overwrite_serves_old_bytes_until_settled() -> None:
    store = ModelStore("s3-2018")
    store.put(URL, b"v1")
    store.settle_all()
    store.put(URL, b"v2")
    assert store.get(URL) == b"v1"
    store.settle_all()
    assert store.get(URL) == b"v2"


def test_s3_2018_caches_negative_lookups() -> None:
    store = ModelStore("s3-2018")
    assert store.head(URL) is None
    store.put(URL, b"x")
    assert store.head(URL) is None, "a 404 seen before the PUT is cached"
    store.settle_all()
    assert store.get(URL) == b"x"


@pytest.mark.parametrize("profile", ["s3", "hdfs", "gcs", "abfs"])
def test_consistent_profiles_list_and_read_their_writes(profile: str) -> None:
    store = ModelStore(profile)
    assert store.head(URL) is None
    store.put(URL, b"x")
    assert keys(store) == [URL] and store.get(URL) == b"x" and not store.pending


def test_conditional_put_on_s3_and_not_on_s3_2018() -> None:
    store = ModelStore("s3")
    etag = store.put(URL, b"a", if_none_match=True)
    with pytest.raises(ModelStoreError) as lost:
        store.put(URL, b"b", if_none_match=True)
    assert lost.value.code == "PreconditionFailed"
    store.put(URL, b"c", if_match=etag)
    with pytest.raises(ModelStoreError):
        store.put(URL, b"d", if_match=etag)
    with pytest.raises(ModelStoreError) as old:
        ModelStore("s3-2018").put(URL, b"a", if_none_match=True)
    assert old.value.code == "NotImplemented"


def test_multipart_is_invisible_until_complete_and_listable_by_directory() -> None:
    store = ModelStore("s3")
    upload = store.create_multipart("s3://bucket/out/dataset1/f")
    other = store.create_multipart("s3://bucket/out/dataset10/f")
    etag = store.upload_part("s3://bucket/out/dataset1/f", upload, 1, b"data")
    assert store.head("s3://bucket/out/dataset1/f") is None
    assert [u.upload_id for u in store.list_multipart_uploads("s3://bucket/out/dataset1/")] == [
        upload]
    assert len(store.list_multipart_uploads("s3://bucket/out/dataset1")) == 2
    store.complete_multipart("s3://bucket/out/dataset1/f", upload, [(1, etag)])
    assert store.get("s3://bucket/out/dataset1/f") == b"data"
    store.abort_multipart("s3://bucket/out/dataset10/f", other)
    assert store.list_multipart_uploads("s3://") == []
    with pytest.raises(ModelStoreError) as gone:
        store.abort_multipart("s3://bucket/out/dataset10/f", other)
    assert gone.value.code == "NoSuchUpload"


def test_conditional_complete_loses_to_an_existing_key() -> None:
    store = ModelStore("s3")
    store.put(URL, b"first")
    upload = store.create_multipart(URL)
    etag = store.upload_part(URL, upload, 1, b"second")
    with pytest.raises(ModelStoreError):
        store.complete_multipart(URL, upload, [(1, etag)], if_none_match=True)
    assert store.get(URL) == b"first"


def test_rename_only_where_the_profile_has_it() -> None:
    with pytest.raises(ModelStoreError) as s3:
        ModelStore("s3").rename(URL, URL + "x")
    assert s3.value.code == "NotImplemented"
    hdfs = ModelStore("hdfs")
    hdfs.put("s3://b/t/a/1", b"1")
    hdfs.put("s3://b/t/a/2", b"2")
    hdfs.rename("s3://b/t/a", "s3://b/t/c")
    assert sorted(hdfs.snapshot()) == ["s3://b/t/c/1", "s3://b/t/c/2"]
    with pytest.raises(ModelStoreError) as exists:
        hdfs.put("s3://b/t/d", b"x")
        hdfs.rename("s3://b/t/c", "s3://b/t/d")
    assert exists.value.code == "DestinationExists"


def test_gcs_directory_rename_is_a_sequence_of_steps() -> None:
    gcs = ModelStore("gcs")
    seen: list[str] = []
    gcs.between_steps = seen.append
    for i in range(3):
        gcs.put(f"s3://b/src/{i}", b"x")
    gcs.rename("s3://b/src", "s3://b/dst")
    assert len(seen) == 2, "two interleaving points between three file moves"
    abfs = ModelStore("abfs")
    abfs.between_steps = seen.append
    abfs.put("s3://b/src/0", b"x")
    abfs.put("s3://b/src/1", b"x")
    abfs.rename("s3://b/src", "s3://b/dst")
    assert len(seen) == 2, "abfs directory rename is atomic: no new interleaving points"


def test_request_counts_and_profiles_table() -> None:
    store = ModelStore("s3")
    store.put(URL, b"x")
    store.get(URL)
    store.list_page("s3://bucket/")
    assert store.request_counts() == {"put": 1, "get": 1, "list_page": 1}
    assert set(PROFILES) >= {"hdfs", "s3-2018", "s3", "gcs", "abfs"}
    assert not PROFILES["s3-2018"].consistent and PROFILES["s3"].consistent


# Any schedule of writes, deletes and settles on S3 2018 converges: once every visibility event
# has settled, LIST and GET show exactly the truth.  (A key written and deleted before its
# listing entry settled once stayed listed for good, as a 0-byte phantom, when the deletion's
# entry settled first.)
_KEYS = ("b/k", "b/l")
_OPS = st.lists(st.one_of(
    st.tuples(st.just("put"), st.sampled_from(_KEYS), st.integers(0, 2)),
    st.tuples(st.just("delete"), st.sampled_from(_KEYS), st.just(0)),
    st.tuples(st.just("head"), st.sampled_from(_KEYS), st.just(0)),
    st.tuples(st.just("copy"), st.sampled_from(_KEYS), st.just(0)),
    st.tuples(st.just("settle"), st.just(""), st.integers(0, 5)),
), max_size=12)


@settings(max_examples=400, deadline=None)
@given(_OPS, st.sampled_from([None, 1, 2, 3]))
def test_s3_2018_converges_to_the_truth_once_everything_settles(
        ops: list[tuple[str, str, int]], max_lag: int | None) -> None:
    """Also with the lag bounded (``max_lag``): then no more than that many events are ever
    pending, and the store still converges."""
    store = ModelStore("s3-2018", max_lag)
    for op, key, n in ops:
        assert max_lag is None or len(store.pending) <= max_lag
        if op == "put":
            store.put(key, b"v%d" % n)
        elif op == "delete":
            store.delete(key)
        elif op == "head":
            store.head(key)  # a miss is cached on S3 2018
        elif op == "copy":
            other = _KEYS[1 - _KEYS.index(key)]
            if store.head(key) is not None:
                store.copy(key, other)
        elif store.pending:
            store.settle(n % len(store.pending))
    store.settle_all()
    truth = store.snapshot()
    listed = {o.url: o.etag for o in store.list_page("b/").objects}
    assert listed == {k: etag_of(v) for k, v in truth.items()}
    for key in _KEYS:
        seen = store.head(key)
        assert (None if seen is None else seen.etag) == (
            etag_of(truth[key]) if key in truth else None)


def test_s3_2018_a_deleted_key_whose_deletion_settles_first_is_never_listed_again() -> None:
    store = ModelStore("s3-2018")
    store.put("b/k", b"x")
    store.delete("b/k")
    store.settle(next(i for i, e in enumerate(store.pending) if e.kind == "list-del"))
    assert not [e for e in store.pending if e.kind == "list-add"]
    store.settle_all()
    assert store.list_page("b/").objects == []


def test_a_bounded_lag_settles_the_oldest_event_when_one_more_is_queued() -> None:
    store = ModelStore("s3-2018", max_lag=2)
    for key in ("b/1", "b/2"):
        store.put(key, b"x")
    assert [str(e) for e in store.pending] == ["list-add b/1", "list-add b/2"]
    assert store.list_page("b/").objects == []
    store.put("b/3", b"x")  # a third event: the oldest takes effect first
    assert [str(e) for e in store.pending] == ["list-add b/2", "list-add b/3"]
    assert [o.url for o in store.list_page("b/").objects] == ["b/1"]
    with pytest.raises(ValueError, match="max_lag must be at least 1"):
        ModelStore("s3-2018", max_lag=0)
