"""The streaming model (zerorename_model.streaming): the record sink keeps exactly-once in every
scope where it runs, Spark's file sink breaks it where the real one can, every witness replays,
and a record sink that is not idempotent per batch id is caught."""

from __future__ import annotations

import pytest

from zerorename_model.check.streaming import Property, Verdict, explore, replay
from zerorename_model.engine.errors import ModelStoreError
from zerorename_model.engine.stores.store import ModelStore
from zerorename_model.systems import streaming
from zerorename_model.systems.streaming import RecordSink

STORES = ("hdfs", "s3", "s3-2018")


@pytest.mark.parametrize("prop", list(Property))
@pytest.mark.parametrize("store", STORES)
def test_the_record_sink_holds_or_refuses(store: str, prop: Property) -> None:
    verdict, witness, checked = explore("zerorename", store, prop)
    if store == "s3-2018":  # no conditional PUT: the sink refuses to start, as the real one
        assert verdict is Verdict.REFUSED
        return
    assert (verdict, witness) == (Verdict.HOLDS, None)
    assert checked > 100  # restarts and re-runs were explored, not one straight run


@pytest.mark.parametrize("store", STORES)
def test_the_file_sink_shows_uncommitted_files_to_a_listing_reader(store: str) -> None:
    verdict, witness, _ = explore("spark-file-sink", store, Property.LISTING_COMMITTED_ONLY)
    assert verdict is Verdict.VIOLATED and witness is not None
    assert replay(witness) == list(witness.broken)


@pytest.mark.parametrize("store", STORES)
def test_the_file_sink_log_reader(store: str) -> None:
    """Consistent stores: Spark's log gives exactly-once to a log reader.  S3 of 2018: a
    reader of the log can miss a committed batch (its entry is not listed yet)."""
    verdict, witness, _ = explore("spark-file-sink", store, Property.LOG_EXACTLY_ONCE)
    if store != "s3-2018":
        assert (verdict, witness) == (Verdict.HOLDS, None)
        return
    assert verdict is Verdict.VIOLATED and witness is not None
    assert "misses rows" in witness.broken[0]
    assert replay(witness) == list(witness.broken)


class PlainPutRecordSink(RecordSink):
    """Broken on purpose: the record is a plain PUT (no If-None-Match), so a re-run replaces
    it with its own files and publishes them beside the first attempt's."""

    name = "plain-put"

    def step(self, name: str, store: ModelStore, d: streaming.Driver) -> None:
        if name.startswith("publish"):  # its own files, whatever was recorded before
            final = sorted(d.memory)[int(name[-1])]
            self._publish(store, final, d.memory[final])
            return
        if name != "record":
            super().step(name, store, d)
            return
        body = "\n".join(f"{f} {w}" for f, w in sorted(d.memory.items())).encode()
        store.put(self.record_url(d.batch) + f"-r{d.run}", body)

    def _recorded(self, store: ModelStore, batch: int) -> dict[str, str]:
        out: dict[str, str] = {}
        for url, obj in store.objects.items():
            if url.startswith(self.record_url(batch)):
                for line in obj.data.decode().splitlines():
                    final, what = line.split(" ", 1)
                    out[final] = what
        return out

    def log_files(self, store: ModelStore) -> dict[int, list[str]]:
        listed = {o.url for o in store.list_page(f"{streaming.DEST}/").objects}
        out: dict[int, list[str]] = {}
        for url in listed:
            if url.startswith(f"{streaming.DEST}/_zerorename_log/"):
                batch = int(url.rsplit("/", 1)[-1].split("-")[0])
                out.setdefault(batch, []).extend(self._recorded(store, batch))
        return {b: sorted(set(f)) for b, f in out.items() if set(f) <= listed}


def test_a_record_sink_that_is_not_idempotent_is_caught(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(streaming.SINKS, "plain-put", PlainPutRecordSink)
    verdict, witness, _ = explore("plain-put", "s3", Property.LOG_EXACTLY_ONCE)
    assert verdict is Verdict.VIOLATED and witness is not None
    assert "crash" in witness.choices
    assert any("twice" in b for b in witness.broken)
    assert replay(witness) == list(witness.broken)


def test_model_store_refuses_a_second_conditional_put() -> None:
    """The record sink's commit point rests on this: the model store's 412."""
    store = ModelStore("s3")
    store.put("s3://b/k", b"1", if_none_match=True)
    with pytest.raises(ModelStoreError):
        store.put("s3://b/k", b"2", if_none_match=True)


class OwnCleanRecordSink(RecordSink):
    """Cleans only this run's uploads: a run killed before recording leaves its uploads."""

    name = "own-clean"

    def step(self, name: str, store: ModelStore, d: streaming.Driver) -> None:
        if name != "clean":
            super().step(name, store, d)
            return
        kept = set(self._recorded(store, d.batch).values())
        for final, uid in d.memory.items():
            if uid not in kept and uid in store.uploads:
                store.abort_multipart(final, uid)


def test_a_sink_that_cleans_only_its_own_run_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(streaming.SINKS, "own-clean", OwnCleanRecordSink)
    verdict, witness, _ = explore("own-clean", "s3", Property.NO_LEFTOVERS)
    assert verdict is Verdict.VIOLATED and witness is not None
    assert "crash" in witness.choices
    assert replay(witness) == list(witness.broken)
