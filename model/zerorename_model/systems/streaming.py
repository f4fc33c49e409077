"""Structured Streaming sinks in the model: a driver running micro-batches 0..N-1 and dying
between any two of its steps, and two sinks it can write through — zerorename's batch-record
sink and Spark's built-in file sink.  The property and the search are in
:mod:`zerorename_model.check.streaming`.

The driver follows Spark's micro-batch engine: batch ``b``'s tasks write, the sink commits
``b``, then Spark records ``b`` in its commit log (the checkpoint, modelled as reliable: it is
Spark's, not the sink's, store).  A crash anywhere loses the driver's memory; the restarted run
re-runs the first batch missing from the commit log **with the same id**.  Two sinks:

* :class:`RecordSink` — zerorename's: each task's file is an uncompleted multipart upload (on
  stores without multipart, HDFS, a hidden staged file); the driver creates the batch record
  ``_zerorename_log/<b>`` with ``If-None-Match: *`` (the commit point), then publishes the
  recorded files (complete, or rename into place) and discards every other upload of the
  batch (its own, or a run's that died before recording).  A re-run
  finds the record and publishes *its* files, not its own.  Without conditional PUT the sink
  refuses to start, as the real one does.
* :class:`FileSink` — Spark's built-in file sink: tasks write straight into the destination;
  the driver skips a batch the log already lists (``getLatestBatchId``, a LIST), else adds
  ``_spark_metadata/<b>`` by writing a temporary file and renaming it (on S3 the rename is a
  HEAD of the target then a copy).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from zerorename_model.engine.errors import ModelStoreError
from zerorename_model.engine.stores.records import etag_of
from zerorename_model.engine.stores.store import ModelStore

__all__ = ["DEST", "SINKS", "TASKS", "Driver", "FileSink", "RecordSink", "Sink", "row"]

DEST = "s3://bucket/events"
TASKS = 2


def row(batch: int, task: int) -> str:
    return f"b{batch}t{task}"


@dataclass
class Driver:
    """The driver's state: Spark's commit log survives a crash, the rest does not."""

    run: int = 0
    batch: int = 0
    pc: int = 0
    commit_log: set[int] = field(default_factory=set)
    #: what this attempt of the batch holds in memory (upload ids, or staged paths)
    memory: dict[str, str] = field(default_factory=dict)
    #: this attempt found the batch already committed (or skipped it)
    skip: bool = False


class Sink:
    """A sink's steps for one batch attempt, and what its log says."""

    name = ""
    steps: tuple[str, ...] = ()

    def usable(self, store: ModelStore) -> bool:
        return True

    def step(self, name: str, store: ModelStore, d: Driver) -> None:
        raise NotImplementedError

    def log_files(self, store: ModelStore) -> dict[int, list[str]]:
        """Batch id -> the files the log commits, as a log reader finds them."""
        raise NotImplementedError

    def committed(self, store: ModelStore) -> set[str]:
        """Every file the sink's log commits, in truth (whatever readers observe)."""
        raise NotImplementedError

    def file_of(self, d: Driver, task: int) -> str:
        return f"{DEST}/part-r{d.run}-b{d.batch}-t{task}"


class RecordSink(Sink):
    """zerorename's stream sink (see the module docstring)."""

    name = "zerorename"
    steps = ("write t0", "write t1", "record", "publish t0", "publish t1", "clean",
             "spark commit")

    def usable(self, store: ModelStore) -> bool:
        return store.profile.conditional_put

    def record_url(self, batch: int) -> str:
        return f"{DEST}/_zerorename_log/{batch:04d}"

    def step(self, name: str, store: ModelStore, d: Driver) -> None:
        multipart = store.profile.multipart
        if name.startswith("write"):
            task = int(name[-1])
            final = self.file_of(d, task)
            data = row(d.batch, task).encode()
            if multipart:
                uid = store.create_multipart(final)
                store.upload_part(final, uid, 1, data)
                d.memory[final] = uid
            else:
                staged = f"{DEST}/_zr_stage/{final.rsplit('/', 1)[-1]}"
                store.put(staged, data)
                d.memory[final] = staged
        elif name == "record":
            body = "\n".join(f"{f} {w}" for f, w in sorted(d.memory.items())).encode()
            try:
                store.put(self.record_url(d.batch), body, if_none_match=True)
            except ModelStoreError as error:
                if error.status != 412:
                    raise
        elif name.startswith("publish"):
            recorded = self._recorded(store, d.batch)
            files = sorted(recorded)
            task = int(name[-1])
            if task < len(files):
                final = files[task]
                self._publish(store, final, recorded[final])
        elif name == "clean":  # every run's leftovers of this batch, not only this run's
            kept = set(self._recorded(store, d.batch).values())
            mark = f"-b{d.batch}-t"
            for uid, upload in sorted(store.uploads.items()):
                if mark in upload.url and uid not in kept:
                    store.abort_multipart(upload.url, uid)
            for url in sorted(store.objects):
                if url.startswith(f"{DEST}/_zr_stage/") and mark in url and url not in kept:
                    store.delete(url)
        elif name == "spark commit":
            d.commit_log.add(d.batch)

    def _recorded(self, store: ModelStore, batch: int) -> dict[str, str]:
        body = store.get(self.record_url(batch)).decode()
        return dict(line.split(" ", 1) for line in body.splitlines() if line)

    @staticmethod
    def _publish(store: ModelStore, final: str, what: str) -> None:
        if what in store.uploads:
            store.complete_multipart(final, what, [(1, _etag(store, what))])
        elif not store.profile.multipart and store.head(what) is not None \
                and store.head(final) is None:
            store.rename(what, final)

    def committed(self, store: ModelStore) -> set[str]:
        return {line.split(" ", 1)[0] for url, obj in store.objects.items()
                if url.startswith(f"{DEST}/_zerorename_log/")
                for line in obj.data.decode().splitlines() if line}

    def log_files(self, store: ModelStore) -> dict[int, list[str]]:
        out: dict[int, list[str]] = {}
        listed = {o.url for o in store.list_page(f"{DEST}/").objects}
        for url in sorted(listed):
            if url.startswith(f"{DEST}/_zerorename_log/"):
                batch = int(url.rsplit("/", 1)[-1])
                files = sorted(self._recorded(store, batch))
                if all(f in listed for f in files):  # whole batches only
                    out[batch] = files
        return out


def _etag(store: ModelStore, upload_id: str) -> str:
    return etag_of(store.uploads[upload_id].parts[1])


class FileSink(Sink):
    """Spark's built-in file sink with its ``_spark_metadata`` log (see the module docstring)."""

    name = "spark-file-sink"
    steps = ("latest", "write t0", "write t1", "add temp", "add rename", "spark commit")

    def entry(self, batch: int) -> str:
        return f"{DEST}/_spark_metadata/{batch:04d}"

    def step(self, name: str, store: ModelStore, d: Driver) -> None:
        if name == "latest":
            logged = [int(o.url.rsplit("/", 1)[-1]) for o in
                      store.list_page(f"{DEST}/_spark_metadata/").objects
                      if o.url.rsplit("/", 1)[-1].isdigit()]
            d.skip = d.batch <= max(logged, default=-1)
        elif d.skip and name != "spark commit":
            return
        elif name.startswith("write"):
            task = int(name[-1])
            final = self.file_of(d, task)
            store.put(final, row(d.batch, task).encode())
            d.memory[final] = final
        elif name == "add temp":
            if store.head(self.entry(d.batch)) is not None:  # HDFSMetadataLog.add: get first
                d.skip = True
                return
            temp = f"{DEST}/_spark_metadata/.{d.batch:04d}.tmp"
            store.put(temp, "\n".join(sorted(d.memory)).encode())
            d.memory["temp"] = temp
        elif name == "add rename":
            temp, target = d.memory["temp"], self.entry(d.batch)
            if store.profile.rename:
                try:
                    store.rename(temp, target)  # fails if the target exists
                except ModelStoreError:
                    store.delete(temp)
            elif store.head(target) is None:  # S3: check, then copy and delete
                store.copy(temp, target)
                store.delete(temp)
            else:
                store.delete(temp)
        elif name == "spark commit":
            d.commit_log.add(d.batch)

    def committed(self, store: ModelStore) -> set[str]:
        return {line for url, obj in store.objects.items()
                if url.startswith(f"{DEST}/_spark_metadata/") and url.rsplit("/", 1)[-1].isdigit()
                for line in obj.data.decode().splitlines() if line}

    def log_files(self, store: ModelStore) -> dict[int, list[str]]:
        out: dict[int, list[str]] = {}
        for o in store.list_page(f"{DEST}/_spark_metadata/").objects:
            name = o.url.rsplit("/", 1)[-1]
            if name.isdigit():
                try:
                    out[int(name)] = store.get(o.url).decode().splitlines()
                except ModelStoreError:  # HDFSMetadataLog.get: a missing entry is no batch
                    continue
        return out


SINKS: dict[str, Callable[[], Sink]] = {"zerorename": RecordSink, "spark-file-sink": FileSink}


