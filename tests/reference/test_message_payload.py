"""A task commit message parsed from text keeps its payload as that text (EncodedPayload):
a driver holding 10,000 tasks' messages must not hold 10,000 decoded pendingsets."""

from __future__ import annotations

import json
import tracemalloc
import zlib
from collections.abc import Callable

import pytest

from zerorename.errors import FormatError
from zerorename.formats.uploads import PendingSet, SinglePendingCommit
from zerorename.messages import EncodedPayload, TaskCommitMessage


def _message(task: int, files: int = 10) -> TaskCommitMessage:
    commits = [SinglePendingCommit.create(
        f"s3://bucket/out/part={task % 7}/task-{task:05d}-file-{i:03d}.parquet",
        f"upload-{task}-{i}-" + "x" * 40, [f"etag-{task}-{i}"], 4096, job_id="job-1",
        task_id=f"attempt_job-1_m_{task:06d}_0", now=1_700_000_000_000) for i in range(files)]
    pset = PendingSet(job_id="job-1", commits=commits)
    return TaskCommitMessage(
        committer="magic", job_id="job-1", job_attempt=0, task_id=task, task_attempt=0,
        attempt_id=f"attempt_job-1_m_{task:06d}_0", kind="pendingset",
        payload={"pendingset": pset.to_json()}, record=f"s3://bucket/out/__magic/{task}")


def test_a_message_parsed_from_text_reads_as_the_message_sent() -> None:
    sent = _message(3)
    for text in (sent.dumps(), sent.dumps().encode("utf-8")):
        received = TaskCommitMessage.from_json(text)
        assert isinstance(received.payload, EncodedPayload)
        assert received.payload.get("pendingset") == sent.payload["pendingset"]
        assert received.payload["pendingset"] == sent.payload["pendingset"]
        assert dict(received.payload) == dict(sent.payload)
        assert received.to_json() == sent.to_json()
        assert json.loads(received.dumps()) == sent.to_json()
        commits = PendingSet.from_json(received.payload.get("pendingset")).commits
        assert [c.url for c in commits] == \
            [f"s3://bucket/out/part=3/task-00003-file-{i:03d}.parquet" for i in range(10)]


def test_a_message_parsed_from_a_mapping_keeps_a_dict() -> None:
    received = TaskCommitMessage.from_json(_message(1).to_json())
    assert type(received.payload) is dict


def _retained(make: Callable[[], list[TaskCommitMessage]]) -> int:
    """Bytes still allocated after ``make()``, its result held."""
    tracemalloc.start()
    try:
        before = tracemalloc.take_snapshot()
        held = make()
        after = tracemalloc.take_snapshot()
    finally:
        tracemalloc.stop()
    assert len(held) == 300
    return sum(s.size_diff for s in after.compare_to(before, "filename"))


def test_held_messages_parsed_from_text_cost_little_beyond_their_text() -> None:
    texts = [_message(t).dumps() for t in range(300)]
    text_bytes = sum(len(t) for t in texts)
    retained = _retained(lambda: [TaskCommitMessage.from_json(t) for t in texts])
    # decoded, the pendingsets would cost about three times their text; held as text, the
    # messages add their envelopes only (a few hundred bytes each)
    assert retained < 0.25 * text_bytes, (retained, text_bytes)


def test_a_compressed_message_reads_back_whole_and_its_payload_keeps_those_bytes() -> None:
    sent = _message(4)
    blob = sent.compressed()
    assert len(blob) < len(sent.dumps()) / 3  # the text repeats itself
    received = TaskCommitMessage.from_compressed(blob)
    assert received.to_json() == sent.to_json()
    assert isinstance(received.payload, EncodedPayload)
    assert received.payload._blob is blob  # one copy: the outcome's bytes


@pytest.mark.parametrize("blob", [b"", b"{not zlib}", zlib.compress(b"[1, 2]"),
                                  zlib.compress(b'{"format": "other/1"}'),
                                  zlib.compress(b"\xff\xfe not utf-8")])
def test_a_bad_compressed_message_is_a_format_error(blob: bytes) -> None:
    with pytest.raises(FormatError, match="task commit message"):
        TaskCommitMessage.from_compressed(blob)


def test_held_compressed_messages_cost_a_fraction_of_their_text() -> None:
    messages = [_message(t) for t in range(300)]
    text_bytes = sum(len(m.dumps()) for m in messages)
    blobs = [m.compressed() for m in messages]
    del messages
    retained = _retained(lambda: [TaskCommitMessage.from_compressed(b) for b in blobs])
    assert retained < 0.25 * text_bytes, (retained, text_bytes)
