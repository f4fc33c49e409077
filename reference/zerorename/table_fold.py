"""Folding a table's batch records into a checkpoint: expiry of old records, compaction of files.

A stream writes one small file per task and partition directory per micro-batch, and one
record per batch; both grow without bound.  A **fold** replaces the records of batches
``0..through`` by one log checkpoint (:mod:`zerorename.table_log`), optionally rewriting their
small files into fewer, larger ones (**compaction**).  It is a commit like a batch's, with the
same shape so that a reader of the records sees every row exactly once before, during (a
crash at any point) and after:

1. **rewrite** (compaction only): the small files of each partition directory are read and
   written again as multipart uploads that are *not* completed — nobody can see them yet;
2. **record**: the checkpoint, naming every file of the folded batches (the rewritten ones
   with their upload ids), is created with ``If-None-Match: *`` under the next checkpoint
   number.  That PUT is the commit point; a 412 means another process folded first (the
   sink's expiry, another compaction): our uploads are aborted and nothing else is touched;
3. **complete** the rewritten uploads.  Until the last one is in place, readers keep using the
   previous checkpoint and the batch records after it (a checkpoint counts only when all its
   files are in place), which nothing has deleted;
4. **remove** what the checkpoint superseded: the replaced files, then the folded batch
   records, then older checkpoints.

A fold that died after its commit point is finished by the next fold (expiry, compaction, or
the sink's own after a batch) before it does anything else; the uploads of a compaction that
died or lost before its commit point are aborted by the next compaction that commits (their
names carry the checkpoint number they were made for, which is taken by then).  A batch the
sink commits while a fold runs has a newer id than any the fold read, so its record stays and
stays visible.  A checkpoint that names a file something else deleted stops every fold (they
would delete what a reader still has).
A reader that listed just before step 4 may find a replaced file gone when it opens it: read
again.  Compaction reads each group into memory (up to the target size of output it makes).
"""

from __future__ import annotations

import contextlib
import io
import logging
import re
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import Enum

from zerorename.committers.cleanup import abort_quietly
from zerorename.errors import CommitError, PreconditionFailedError
from zerorename.store import Store
from zerorename.table_log import (
    LogCheckpoint,
    LoggedFile,
    TableLog,
    checkpoint_url,
    complete_upload,
)
from zerorename.urls import dir_prefix, join, relative_to

__all__ = [
    "DEFAULT_TARGET_SIZE",
    "FoldStep",
    "LogExpiryError",
    "compact_table",
    "expire_batch_records",
    "fold_log",
]

log = logging.getLogger("zerorename.table_fold")

#: compaction's default output file size (and the size under which a file counts as small)
DEFAULT_TARGET_SIZE = 128 * 1024 * 1024


class LogExpiryError(CommitError):
    """The batch records could not be folded into a checkpoint (another process folded first,
    or a batch to fold is still completing its files); the table is as it was."""


class FoldStep(Enum):
    """The points of a fold a caller may observe (``on_step``; tests stop the fold there)."""

    REWRITTEN = "the rewritten files are uploaded, not completed (before the commit point)"
    RECORDED = "the checkpoint is created (the commit point)"
    COMPLETED = "the rewritten files are completed"
    REMOVED_FILES = "the replaced files are deleted"


@dataclass(frozen=True)
class Rewrite:
    """What a compaction made: pending uploads that replace ``replaced`` (URLs)."""

    files: tuple[LoggedFile, ...]
    replaced: frozenset[str]


#: a compaction: given the files of the folded batches and the checkpoint number, upload the
#: replacement (not completed) and say what it replaces
Rewriter = Callable[[Store, str, int, Sequence[LoggedFile]], Rewrite]


#: a compaction's output file: ``part-compact-<checkpoint number>-<tag>-<n>.parquet``
_COMPACT_NAME = re.compile(r"^part-compact-([0-9]+)-[0-9a-f]+-[0-9]+\.parquet$")


def _sweep(store: Store, dest: str, seq: int, named: set[str]) -> None:
    """Abort the pending uploads of compactions that lost or died before their commit point:
    those made for checkpoint number ``<= seq`` that checkpoint ``seq`` does not name (a
    checkpoint number is taken once, and older checkpoints' files were all completed)."""
    for u in store.list_multipart_uploads(dir_prefix(dest)):
        found = _COMPACT_NAME.match(u.url.rsplit("/", 1)[-1])
        if found and int(found.group(1)) <= seq and u.upload_id not in named:
            abort_quietly(store, u.url, u.upload_id)


def _finish(store: Store, log_: TableLog, on_step: Callable[[FoldStep], None],
            sweep: bool = False) -> TableLog:
    """Bring the newest checkpoint to its end: complete its files, delete what it replaced,
    the batch records it folded and older checkpoints; with ``sweep`` (or when it had to
    roll a fold forward), abort compactions' leftover uploads.  Returns the log as it is
    then."""
    newest = log_.newest_checkpoint()
    if newest is None:
        return log_
    seq, checkpoint = newest
    pending = [f for f in checkpoint.files if f.upload_id and not log_.complete([f])]
    for f in pending:  # a fold that died after its commit point: roll it forward
        # an upload gone fails in store-specific ways (404, 500 on RGW): the check below stops
        with contextlib.suppress(CommitError):
            complete_upload(store, f)
    on_step(FoldStep.COMPLETED)
    if pending or sweep:
        _sweep(store, log_.dest, seq, {f.upload_id for f in checkpoint.files if f.upload_id})
    if pending:
        log_ = TableLog(store, log_.dest)
    if not log_.complete(checkpoint.files):
        missing = sorted({f.url for f in checkpoint.files} - set(log_.objects))
        raise LogExpiryError(log_.checkpoints[seq], f"checkpoint {seq} names {len(missing)} "
                             f"file(s) not in the table (first: {missing[:1]}): deleted, or "
                             "a rewritten file's upload aborted, by something else; readers "
                             "use the newest checkpoint whose files are all there; nothing "
                             "deleted, nothing folded")
    keep = {f.url for f in checkpoint.files}
    folded = [b for b in log_.batches if b <= checkpoint.through]
    older = [c for c in log_.checkpoints if c < seq]
    replaced = {f.url for c in older for f in log_.read_checkpoint(c).files}
    for b in folded:
        record = log_.batch(b)
        replaced |= {f.url for f in record.files} if record is not None else set()
    gone = sorted(u for u in replaced - keep if u in log_.objects)
    if gone:
        store.delete_many(gone)
    on_step(FoldStep.REMOVED_FILES)
    records = [log_.batches[b] for b in folded] + [log_.checkpoints[c] for c in older]
    if records:
        store.delete_many(records)
    return TableLog(store, log_.dest) if gone or folded or older else log_


def fold_log(store: Store, dest: str, *, keep: int, rewrite: Rewriter | None = None,
             on_step: Callable[[FoldStep], None] | None = None) -> int | None:
    """Fold every batch record but the newest ``keep`` into a new checkpoint (see the module
    docstring), rewriting their files with ``rewrite`` when given.  Returns the batch id
    folded through, or None when there was nothing to fold."""
    step = on_step if on_step is not None else (lambda _: None)
    if keep < 1:
        raise LogExpiryError(dest, f"keep={keep}: at least the newest batch record must stay "
                                   "(the sink reads it to recognise a re-run)")
    log_ = _finish(store, TableLog(store, dest), lambda _: None)  # an earlier fold's end
    newest = log_.newest_checkpoint()
    seq, previous = (newest[0] + 1, newest[1]) if newest is not None else (0, None)
    live = [b for b in sorted(log_.batches) if b > log_.folded_through()]
    fold = live[:-keep] if len(live) > keep else []
    if not fold:
        return None
    files: dict[str, LoggedFile] = {}
    if previous is not None:
        files.update((f.url, LoggedFile(f.url, f.size)) for f in previous.files)
    for b in fold:
        record = log_.batch(b)
        if record is None:
            continue
        if not log_.complete(record.files):
            raise LogExpiryError(log_.batches[b], f"batch {b} is committed but not all its "
                                 "files are in place yet (its writer is completing them); "
                                 "nothing changed")
        files.update((f.url, LoggedFile(f.url, f.size)) for f in record.files)
    made = Rewrite((), frozenset())
    if rewrite is not None:
        made = rewrite(store, dest, seq, [files[u] for u in sorted(files)])
        for url in made.replaced:
            del files[url]
        files.update((f.url, f) for f in made.files)
    step(FoldStep.REWRITTEN)
    checkpoint = LogCheckpoint(fold[-1], tuple(files[u] for u in sorted(files)))
    url = checkpoint_url(dest, seq)
    try:
        store.put(url, checkpoint.to_bytes(), if_none_match=True)  # the commit point
    except PreconditionFailedError:
        for f in made.files:
            abort_quietly(store, f.url, f.upload_id)
        raise LogExpiryError(url, f"another process created checkpoint {seq} first (an "
                                  "expiry or compaction running at the same time); nothing "
                                  "changed, fold again") from None
    step(FoldStep.RECORDED)
    log.info("zerorename: folded batches through %d of %s into checkpoint %d (%d files "
             "rewritten into %d)", fold[-1], dest, seq, len(made.replaced), len(made.files))
    _finish(store, TableLog(store, dest), step, sweep=rewrite is not None)
    return fold[-1]


def expire_batch_records(store: Store, dest: str, *, keep: int) -> int | None:
    """Fold every batch record but the newest ``keep`` into a checkpoint, then delete them
    (files untouched).  A sink asked to commit a folded batch id again finds it committed
    (``folded_through``).  Returns the batch id folded through, or None."""
    return fold_log(store, dest, keep=keep)


def compact_table(store: Store, dest: str, *, keep: int = 1,
                  target_size: int = DEFAULT_TARGET_SIZE,
                  on_step: Callable[[FoldStep], None] | None = None) -> int | None:
    """Fold every batch record but the newest ``keep`` and rewrite the folded batches' small
    Parquet files (under ``target_size`` bytes) into about ``target_size``-byte files, one
    partition directory at a time.  Needs pyarrow.  Returns the batch id folded through, or
    None when there was nothing to fold."""
    if target_size < 1:
        raise LogExpiryError(dest, f"target_size={target_size}: must be at least 1 byte")

    def rewrite(store: Store, dest: str, seq: int, files: Sequence[LoggedFile]) -> Rewrite:
        return _rewrite_parquet(store, dest, seq, files, target_size)

    return fold_log(store, dest, keep=keep, rewrite=rewrite, on_step=on_step)


def _groups(dest: str, files: Sequence[LoggedFile], target_size: int) -> list[list[LoggedFile]]:
    """Small files by partition directory, cut into runs of about ``target_size`` bytes; a
    run of one file is left alone (rewriting it gains nothing)."""
    by_dir: dict[str, list[LoggedFile]] = {}
    for f in files:
        if f.size < target_size and f.url.endswith(".parquet"):
            by_dir.setdefault(relative_to(f.url, dest).rpartition("/")[0], []).append(f)
    runs: list[list[LoggedFile]] = []
    for directory in sorted(by_dir):
        run: list[LoggedFile] = []
        for f in by_dir[directory]:
            if run and sum(g.size for g in run) + f.size > target_size:
                runs.append(run)
                run = []
            run.append(f)
        runs.append(run)
    return [r for r in runs if len(r) > 1]


def _rewrite_parquet(store: Store, dest: str, seq: int, files: Sequence[LoggedFile],
                     target_size: int) -> Rewrite:
    made: list[LoggedFile] = []
    replaced: set[str] = set()
    tag = uuid.uuid4().hex[:12]
    try:
        for n, run in enumerate(_groups(dest, files, target_size)):
            made.append(_rewrite_run(store, dest, f"part-compact-{seq}-{tag}-{n:05d}.parquet",
                                     run))
            replaced |= {f.url for f in run}
    except BaseException:
        for f in made:  # nothing recorded them: leave no pending upload behind
            abort_quietly(store, f.url, f.upload_id)
        raise
    return Rewrite(tuple(made), frozenset(replaced))


def _rewrite_run(store: Store, dest: str, name: str, run: Sequence[LoggedFile]) -> LoggedFile:
    """One output file of ``run`` (one partition directory), uploaded, not completed."""
    import pyarrow as pa  # type: ignore[import-untyped]  # spark extra; for compaction only
    import pyarrow.parquet as pq  # type: ignore[import-untyped]

    tables = [pq.read_table(io.BytesIO(store.get(f.url))) for f in run]
    out = io.BytesIO()
    pq.write_table(pa.concat_tables(tables, promote_options="default"), out)
    data = out.getvalue()
    directory = relative_to(run[0].url, dest).rpartition("/")[0]
    url = join(dest.rstrip("/"), f"{directory}/{name}" if directory else name)
    upload_id = store.create_multipart(url)
    etag = store.upload_part(url, upload_id, 1, data)
    return LoggedFile(url, len(data), upload_id, (etag,))
