"""A reference committer's run on moto, recorded as a trace and read with the model's tools."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import boto3
import pytest
from moto import mock_aws

from zerorename.stores import S3Store
from zerorename_bridge.backends import moto_backend, release_moto_backends
from zerorename_bridge.recording import InjectedFault, RecordingStore, run_recorded_job
from zerorename_model.present import analysis, hb, viz

FILES = {0: {"a.csv": b"a" * 10, "b.csv": b"b" * 10}, 1: {"c.csv": b"c" * 10}}


@pytest.fixture
def s3() -> Iterator[S3Store]:
    """An empty moto S3 with one bucket.  The mock must start empty: if a ``mock_aws`` started
    elsewhere is still active (the property suite's moto backend was, until
    ``release_moto_backends``), this block nests inside it, inherits every bucket and object,
    and one test's committed output is read as the next test's leftover."""
    with mock_aws():
        client = boto3.client("s3", region_name="us-east-1")
        leaked = [b["Name"] for b in client.list_buckets().get("Buckets", [])]
        assert not leaked, (f"moto state leaked into this test (buckets {leaked}): a mock_aws "
                            "started by an earlier test is still active")
        client.create_bucket(Bucket=BUCKET)
        yield S3Store(client)


BUCKET = f"recording-{uuid.uuid4().hex[:12]}"
DEST = f"s3://{BUCKET}/out"


def test_a_moto_backend_once_released_leaves_nothing_to_later_mocks() -> None:
    """The order that made the fault test fail: the property suite's in-process moto backend
    (a process-wide mock, cached), then this module's ``mock_aws`` blocks.  Once the backend
    is released, a new block starts with no bucket, and what it writes is gone after it."""
    backend = moto_backend()
    backend.put("s3://bucket/left-behind", b"x")
    release_moto_backends()
    for _ in range(2):
        with mock_aws():
            client = boto3.client("s3", region_name="us-east-1")
            assert client.list_buckets().get("Buckets", []) == []
            client.create_bucket(Bucket=BUCKET)


def _keys(store: S3Store) -> set[str]:
    return {o.url for o in store.list_page(f"s3://{BUCKET}/").objects}


def test_a_clean_run_reads_back_as_the_store_it_left(s3: S3Store) -> None:
    job = run_recorded_job("magic", s3, DEST, FILES)
    assert job.error is None
    t = analysis.from_events(job.events)
    assert {"driver0", "j0.t0.a0", "j0.t1.a0"} <= set(t.actors)
    assert t.outcomes == ["committed"]
    # the rebuilt state is what the real store holds (nothing existed before the job)
    assert set(analysis.store_state(t).objects) == _keys(s3)
    completes = [s for s in t.steps if s.op == "complete_multipart"]
    assert {s.keys[0].rsplit("/", 1)[-1] for s in completes} == {"a.csv", "b.csv", "c.csv"}
    assert all(s.actor == "driver0" for s in completes)
    figure = viz.timeline(t)
    assert sum(len(c.get_offsets()) for c in figure.axes[0].collections) == len(t.steps)


def test_an_injected_fault_is_in_the_trace_and_the_job_is_aborted(s3: S3Store) -> None:
    fault = InjectedFault("complete_multipart", nth=2, status=500)
    job = run_recorded_job("magic", s3, DEST, FILES, faults=[fault],
                           options={"fs.s3a.retry.limit": "0"})
    assert fault.fired and job.error is not None
    t = analysis.from_events(job.events)
    assert t.outcomes == ["failed"]
    failed = [s for s in t.steps if s.result == "error 500"]
    assert [s.op for s in failed] == ["complete_multipart"]
    assert not [u for u in _keys(s3) if u.rsplit("/", 1)[-1] in {"a.csv", "b.csv", "c.csv"}]


def test_a_lost_answer_is_applied_but_reported_as_an_error(s3: S3Store) -> None:
    recording = RecordingStore(s3, [InjectedFault("put", nth=1, lost_answer=True)])
    with recording.acting("someone"), pytest.raises(Exception, match="lost"):
        recording.put(f"s3://{BUCKET}/x", b"1")
    assert f"s3://{BUCKET}/x" in _keys(s3)
    t = analysis.from_events(recording.trace("none", f"s3://{BUCKET}/"))
    assert [s.actor for s in t.steps] == ["someone"]
    assert f"s3://{BUCKET}/x" in analysis.store_state(t).objects
    assert hb.build(t).number_of_nodes() == 2  # the step and the final state
