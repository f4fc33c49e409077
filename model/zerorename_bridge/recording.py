"""Record a reference committer's requests as a trace, with faults injected where asked.

The model's traces come from the simulation harness; a *real* committer's run on moto or Ceph
RGW can be read with the same tools (:mod:`zerorename_model.present.analysis`, ``hb``, ``viz``) once
its requests are written in the same JSON-lines shape.  :class:`RecordingStore` wraps any store of
the reference's protocol, labels each request with the actor the caller says is running (the
driver or a task attempt), optionally fails chosen requests (a 503, a 500, or an answer lost
*after* the server applied the request), and :meth:`RecordingStore.trace` returns the events.

Such a trace is for reading, not for replay: a real server's run is not a sequence of the
model's choices.  Its header says so (``"replayable": false``).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypeVar

from zerorename.errors import StoreError, ThrottledError
from zerorename.store import ListPage, ObjectInfo, Store, StoreCapabilities, UploadInfo

if TYPE_CHECKING:  # shapes only: zerorename_model.experiments.trace would load the harness
    from zerorename import SuccessData
    from zerorename_model.experiments.trace import EndLine, HeaderLine, NoteLine, OpLine, TraceLine

T = TypeVar("T")


@dataclass
class InjectedFault:
    """Fail the ``nth`` request of ``op`` (1-based): ``status`` 503 or 500 before the request
    reaches the server, or ``lost_answer`` — the server applies it and the caller sees a 500."""

    op: str
    nth: int
    status: int = 503
    lost_answer: bool = False
    fired: bool = False


@dataclass
class RecordingStore:
    """A store that records every request as a trace event and injects the faults it holds."""

    inner: Store
    faults: list[InjectedFault] = field(default_factory=list)
    events: list[TraceLine] = field(default_factory=list)
    _counts: dict[str, int] = field(default_factory=dict)
    _local: threading.local = field(default_factory=threading.local)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    name: str = field(init=False, default="")

    def __post_init__(self) -> None:
        # an attribute, as the Store protocol declares ``name`` (a property would be read-only)
        self.name = f"recording:{getattr(self.inner, 'name', type(self.inner).__name__)}"

    _current: str | None = None

    @contextmanager
    def acting(self, actor: str) -> Iterator[None]:
        """Label the requests made inside the block with ``actor``: this thread's, and those of
        worker threads the actor's committer starts (its pool for completes and deletes), which
        carry no label of their own."""
        before, before_current = getattr(self._local, "actor", None), self._current
        self._local.actor = self._current = actor
        try:
            yield
        finally:
            self._local.actor, self._current = before, before_current

    def note(self, message: str) -> None:
        """A harness-style note in the trace (a job phase, a fault the caller arranged)."""
        note: NoteLine = {"t": "note", "msg": message}
        with self._lock:
            self.events.append(note)

    def trace(self, committer: str, dest: str, *, store: str = "moto",
              outcome: str = "") -> list[TraceLine]:
        """The recorded run as trace events, loadable by ``analysis.from_events``."""
        header: HeaderLine = {"t": "header", "replayable": False,
                              "scenario": {"committer": committer, "store": store,
                                           "dests": [dest], "tasks": None,
                                           "driver": "reference"}}
        end: EndLine = {"t": "end", "outcomes": [outcome] if outcome else [], "violations": [],
               "requests": dict(self._counts)}
        return [header, *self.events, end]

    def _call(self, op: str, args: Sequence[object], apply: Callable[[], T]) -> T:
        actor = (getattr(self._local, "actor", None) or self._current
                 or threading.current_thread().name)
        with self._lock:
            self._counts[op] = self._counts.get(op, 0) + 1
            fault = next((f for f in self.faults
                          if f.op == op and f.nth == self._counts[op] and not f.fired), None)
            if fault is not None:
                fault.fired = True
        url = str(args[0]) if args else ""
        if fault is not None and not fault.lost_answer:
            self._record(actor, op, args, f"error {fault.status}")
            self.note(f"injected {fault.status} on {op} {url}")
            if fault.status == 503:
                raise ThrottledError(url, f"injected 503 on {op}")
            raise StoreError(url, f"injected {fault.status} on {op}", code="InternalError",
                             status=fault.status)
        try:
            result = apply()
        except StoreError as error:
            self._record(actor, op, args, f"error {error.code or error.status}")
            raise
        if fault is not None:  # the server applied it; the answer never arrived
            self._record(actor, op, args, _shown(result))
            self.note(f"answer lost after {op} {url} was applied")
            raise StoreError(url, f"answer to {op} lost (injected)", code="InternalError",
                             status=500)
        self._record(actor, op, args, _shown(result))
        return result

    def _record(self, actor: str, op: str, args: Sequence[object], result: str) -> None:
        shown_args = [f"<{len(a)} bytes>" if isinstance(a, bytes | bytearray) else a
                      for a in args]
        event: OpLine = {"t": "op", "actor": actor, "op": op, "args": shown_args,
                         "result": result}
        with self._lock:
            self.events.append(event)

    # -- the store protocol, each request through _call ----------------------------------

    def capabilities(self) -> StoreCapabilities:
        return self.inner.capabilities()

    def request_counts(self) -> dict[str, int]:
        return dict(self._counts)

    def put(self, url: str, data: bytes, *, if_none_match: bool = False,
            if_match: str | None = None) -> str:
        result: str = self._call("put", [url, data], lambda: self.inner.put(
            url, data, if_none_match=if_none_match, if_match=if_match))
        return result

    def get(self, url: str) -> bytes:
        result: bytes = self._call("get", [url], lambda: self.inner.get(url))
        return result

    def head(self, url: str) -> ObjectInfo | None:
        result: ObjectInfo | None = self._call("head", [url], lambda: self.inner.head(url))
        return result

    def list_page(self, prefix: str, *, delimiter: str | None = None, token: str | None = None,
                  max_keys: int = 1000) -> ListPage:
        result: ListPage = self._call("list_page", [prefix], lambda: self.inner.list_page(
            prefix, delimiter=delimiter, token=token, max_keys=max_keys))
        return result

    def delete(self, url: str) -> None:
        self._call("delete", [url], lambda: self.inner.delete(url))

    def delete_many(self, urls: Sequence[str]) -> None:
        self._call("delete_many", [list(urls)], lambda: self.inner.delete_many(urls))

    def copy(self, src: str, dst: str) -> str:
        result: str = self._call("copy", [src, dst], lambda: self.inner.copy(src, dst))
        return result

    def rename(self, src: str, dst: str) -> None:
        self._call("rename", [src, dst], lambda: self.inner.rename(src, dst))

    def create_multipart(self, url: str) -> str:
        result: str = self._call("create_multipart", [url],
                                 lambda: self.inner.create_multipart(url))
        return result

    def upload_part(self, url: str, upload_id: str, part_number: int, data: bytes) -> str:
        result: str = self._call("upload_part", [url, upload_id, part_number, data],
                                 lambda: self.inner.upload_part(url, upload_id, part_number, data))
        return result

    def complete_multipart(self, url: str, upload_id: str, parts: Sequence[tuple[int, str]], *,
                           if_none_match: bool = False, if_match: str | None = None) -> str:
        result: str = self._call(
            "complete_multipart", [url, upload_id, [list(p) for p in parts]],
            lambda: self.inner.complete_multipart(url, upload_id, parts,
                                                  if_none_match=if_none_match,
                                                  if_match=if_match))
        return result

    def abort_multipart(self, url: str, upload_id: str) -> None:
        self._call("abort_multipart", [url, upload_id],
                   lambda: self.inner.abort_multipart(url, upload_id))

    def list_multipart_uploads(self, prefix: str) -> list[UploadInfo]:
        result: list[UploadInfo] = self._call(
            "list_multipart_uploads", [prefix], lambda: self.inner.list_multipart_uploads(prefix))
        return result


def _shown(result: object) -> str:
    """A request's answer as the model's traces show it: an ETag or ID as is, a listing as
    ``[url, …]``, bytes as a length, nothing as ``ok``."""
    if result is None:
        return "ok"
    if isinstance(result, bytes | bytearray):
        return f"{len(result)} bytes"
    if isinstance(result, ListPage):
        return "[" + ", ".join(o.url for o in result.objects) + "]"
    if isinstance(result, ObjectInfo):
        return result.etag or "ok"
    if isinstance(result, list):
        return "[" + ", ".join(str(getattr(u, "url", u)) for u in result) + "]"
    return str(result)


@dataclass
class RecordedJob:
    """A reference committer's job run through a :class:`RecordingStore`."""

    events: list[TraceLine]
    error: BaseException | None
    success: SuccessData | None = None


def run_recorded_job(committer: str, store: Store, dest: str, files: dict[int, dict[str, bytes]],
                     *, faults: Sequence[InjectedFault] = (), protocol: str = "spark",
                     options: dict[str, str] | None = None) -> RecordedJob:
    """Set up a job, run one attempt per task (task id → relpath → bytes), commit the tasks
    and the job (Spark's protocol passes the messages; Hadoop's lists), every request recorded
    under the actor that made it.  A failure is recorded, then the job is aborted (as a driver
    would), and returned with the events rather than raised: the trace is what the caller
    wants to look at."""
    import zerorename as zr

    recording = RecordingStore(store, list(faults))
    job = zr.JobContext(dest, job_id=None, options=dict(options or {}))
    driver = zr.create_committer(committer, recording, job)
    messages = []
    error: BaseException | None = None
    success: SuccessData | None = None
    try:
        with recording.acting("driver0"):
            driver.setup_job()
        for task_id, task_files in files.items():
            actor = f"j0.t{task_id}.a0"
            with recording.acting(actor):
                task = zr.create_committer(committer, recording, job, task=job.task(task_id))
                task.setup_task()
                for rel, data in task_files.items():
                    with task.open(rel) as out:
                        out.write(data)
                messages.append(task.commit_task())
                recording.events.append({"t": "op", "actor": actor, "op": "report success",
                                         "result": "True"})
        with recording.acting("driver0"):
            recording.events.append({"t": "op", "actor": "driver0", "op": "await tasks",
                                     "result": "ready"})
            success = driver.commit_job(messages if protocol == "spark" else None)
    except zr.CommitError as failure:
        error = failure
        recording.note(f"job failed: {failure}; the driver aborts it")
        with recording.acting("driver0"):
            driver.abort_job()
    outcome = "failed" if error is not None else "committed"
    return RecordedJob(recording.trace(committer, dest, outcome=outcome), error, success)
