"""The harness store of ``zerorename check --target hadoop``: the destination the JVM's
committers write — the HDFS-like run directory or the moto bucket — read back for the model's
property checkers, with a digest of the final state that is the same in every run."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from zerorename_bridge.hadoop.check_process import (
    _PROCESS,
    _endpoint,
    _RunPlace,
    _session,
    _workdir,
)
from zerorename_model.engine.harness.state import HarnessStore
from zerorename_model.engine.stores.profiles import PROFILES, Profile

__all__ = ["MODEL_BUCKET", "HadoopStore", "store_backend"]

def _model_url(rel: str) -> str:
    """A path below the run's root (``bucket/out/x``) as the model names it."""
    return f"s3://{rel}"


#: the bucket the model's scenarios name (``s3://bucket/out``); on moto each process writes
#: to a fresh bucket of its own, named back to this one in the harness's view
MODEL_BUCKET = "bucket"


class HadoopStore:
    """The destination as the harness sees it: what the JVM's committers left, read from the
    HDFS-like run directory or the moto bucket.  Consistent (nothing to settle); committers
    never call its store operations (the JVM does its own I/O)."""

    name = "hadoop"

    def __init__(self, store: str) -> None:
        self.profile: Profile = PROFILES[store]
        self.pending: list[Any] = []
        self.inconsistent_answers = 0
        self.between_steps: Callable[[str], None] = lambda _what: None
        s3a = store == "s3"
        session = _session(s3a)
        _PROCESS.runs += 1
        previous = _PROCESS.run
        local = _workdir() / f"run{_PROCESS.runs}"
        (local / "buffer").mkdir(parents=True)
        if s3a:
            endpoint = _endpoint()
            bucket = previous.root if previous is not None and previous.s3a else None
            if bucket is None:
                bucket = endpoint.new_bucket()
            session.reset({
                **endpoint.s3a_options(),
                "fs.s3a.committer.staging.tmp.path": f"file://{local}/cluster",
                "fs.s3a.buffer.dir": str(local / "buffer")})
            endpoint.empty(bucket)
            place = _RunPlace(True, bucket, str(local))
        else:
            session.reset()
            place = _RunPlace(False, str(local / "fs"), str(local))
        if previous is not None:
            shutil.rmtree(previous.local, ignore_errors=True)
            if not previous.s3a and _PROCESS.fs == "minidfs":
                _session(False).remove(previous.root)
        _PROCESS.run = self.place = place
        _PROCESS.changes += 1
        self._session = session
        self._seen: tuple[int, dict[str, bytes | None], list[str]] | None = None

    # -- what the harness needs ------------------------------------------------------------

    def _entries(self) -> dict[str, bytes | None]:
        """Every entry below the root, relative to it (None: a directory or a marker); read
        again only after an actor may have changed the store."""
        if self._seen is None or self._seen[0] != _PROCESS.changes:
            self._seen = (_PROCESS.changes, self._read(), self._read_uploads())
        return self._seen[1]

    def _read(self) -> dict[str, bytes | None]:
        if self.place.s3a:
            endpoint = _endpoint()
            bucket = self.place.root
            return {f"{MODEL_BUCKET}/{k}": (None if k.endswith("/") else v)
                    for k, v in endpoint.objects(bucket).items()}
        if _PROCESS.fs == "minidfs":
            return self._session.files(self.place.root)
        return _local_files(Path(self.place.root))

    def snapshot(self) -> dict[str, bytes]:
        return {_model_url(rel): data for rel, data in sorted(self._entries().items())
                if data is not None}

    def upload_urls(self) -> list[str]:
        self._entries()
        assert self._seen is not None
        return list(self._seen[2])

    def _read_uploads(self) -> list[str]:
        if not self.place.s3a:
            return []
        bucket = self.place.root
        return sorted(_model_url(f"{MODEL_BUCKET}/{key}")
                      for key in _endpoint().uploads(bucket))

    def digest(self) -> str:
        h = hashlib.sha256()
        for rel, data in sorted(self._entries().items()):
            data = _stable(rel, data, self.place.root)
            h.update(f"o\0{rel}\0{'' if data is None else hashlib.md5(data).hexdigest()}\0"
                     .encode())
        for url in self.upload_urls():
            h.update(f"u\0{url}\0".encode())
        return h.hexdigest()

    def settle(self, index: int) -> Any:
        raise IndexError("a real store has no pending visibility events")

    def settle_all(self) -> None:
        pass

    def reset_counts(self) -> None:
        pass

    def request_counts(self) -> dict[str, int]:
        return {}

    def __getattr__(self, op: str) -> Any:
        raise AttributeError(f"{op}: Hadoop's committers do their own I/O in the JVM; the "
                             "harness store only observes it")


#: what a JSON ``_SUCCESS`` record (the manifest and S3A committers') says that is the same
#: in every run; its clock readings, durations and statistics are not
_SUCCESS_FIELDS = ("name", "success", "committer", "filenames")


#: the records of zerorename's fenced committer and S3A's ``.pending`` files: JSON whose
#: clock readings, upload IDs and statistics differ from run to run
_RECORD_SUFFIXES = ("/commit.json", ".pendingset", ".pending")
_VOLATILE = frozenset({"committed", "created", "saved", "date", "timestamp", "uploadId", "i",
                       "iostatistics", "extraData"})


def _without_volatile(value: object) -> object:
    if isinstance(value, dict):
        return {k: _without_volatile(v) for k, v in value.items() if k not in _VOLATILE}
    if isinstance(value, list):
        return [_without_volatile(v) for v in value]
    return value


def _stable(rel: str, data: bytes | None, root: str) -> bytes | None:
    """What the final state's digest hashes of an entry: a JSON ``_SUCCESS`` record without
    its times (it holds the job commit's date and durations) and with the run's ``root`` named
    as in every run, a JSON record of :data:`_RECORD_SUFFIXES` without its volatile fields,
    anything else as it is."""
    if data is not None and rel.endswith(_RECORD_SUFFIXES) and data.startswith(b"{"):
        try:
            return json.dumps(_without_volatile(json.loads(data)), sort_keys=True
                              ).replace(root, "<root>").encode()
        except ValueError:
            return data
    if data is None or not rel.endswith("_SUCCESS") or not data.startswith(b"{"):
        return data
    try:
        record = json.loads(data)
    except ValueError:
        return data
    if not isinstance(record, dict):
        return data
    return json.dumps({k: record.get(k) for k in _SUCCESS_FIELDS}, sort_keys=True
                      ).replace(root, "<root>").encode()


def _local_files(root: Path) -> dict[str, bytes | None]:
    """What ``files`` of the driver answers (HdfsLikeFileSystem's paths are local paths),
    read here without a round trip: relative path -> bytes, a directory as ``path/`` -> None."""
    found: dict[str, bytes | None] = {}
    for folder, dirs, names in os.walk(root):
        rel = os.path.relpath(folder, root)
        prefix = "" if rel == "." else rel.replace(os.sep, "/") + "/"
        for name in dirs:
            found[f"{prefix}{name}/"] = None
        for name in names:
            try:
                found[prefix + name] = (Path(folder) / name).read_bytes()
            except OSError:
                continue  # removed while listed: not there
    return found


def store_backend(store: str) -> Callable[[], HarnessStore]:
    """The harness backend of ``store`` (a module-level callable, for worker processes)."""
    return _Backend(store)


@dataclass(frozen=True)
class _Backend:
    store: str

    def __call__(self) -> HarnessStore:
        made: HarnessStore = HadoopStore(self.store)
        return made
