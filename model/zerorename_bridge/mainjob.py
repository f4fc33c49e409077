"""The main job: PySpark writes partitioned Parquet through every zerorename committer, with
faults injected, on an embedded S3 — then checks what a reader sees.

Run it with ``python -m zerorename_bridge.mainjob`` (or ``zerorename demo``).  No account is needed:
by default it starts moto's S3 server on 127.0.0.1 (any free port) inside this process.  With
``--endpoint-url`` and ``--bucket`` it uses a real S3 endpoint instead (credentials from boto3's
usual chain; it writes under ``--prefix`` and deletes what it wrote unless ``--keep``).

For each committer (``fenced``, ``magic``, ``directory``, ``partitioned``, ``manifest``,
``v1``, ``v2``; a committer the store cannot serve is skipped with its own reason) it runs two jobs:

1. **A job that survives faults.**  Task 1's first attempt writes all its data and then the
   Python worker dies (``os._exit``), so Spark retries it (``local[2,3]``: 3 attempts per
   task).  Meanwhile two duplicate ("zombie") attempts of tasks 2 and 3 run outside Spark
   against the same server, writing *different* rows to the same paths: one commits its task
   before the job commits, the other after.  The output is read back with Spark and compared
   with the input.
2. **A job that fails.**  Task 0 dies after writing on every attempt, so Spark aborts the job
   (passing ``None`` for every task message).

Then it prints, per committer: files, bytes, requests by S3 operation (counted by the embedded
server across every process), bytes copied server-side, job commit time, and whether the
properties held on this run:

* completeness — every input row is visible after the job;
* exclusivity — nothing else is: no duplicate, zombie or extra row, exactly the expected files;
* abortability — after the failed job nothing is visible and nothing is pending (no
  incomplete uploads, no hidden records, no local staging files).

Each committer's report is printed as soon as its jobs are done.  Then, when the model is
installed, the model's first demonstration (printed as soon as it exists) and its quick verdict
matrix (``zerorename_model.experiments.verdicts``; :mod:`zerorename_bridge.matrix_report`), each
cell two verdicts, one per job-commit protocol (hadoop/spark), with the production-bug rows, and an
explanation under it of why committers that held every property here show violations there:
the matrix explores schedules these runs never take (Hadoop's protocol, whose job commit
discovers the tasks by listing, with an attempt partitioned from the driver: the race of the
paper's Section VIII.C), and says what the other protocol decided.  Progress goes to stderr,
one line per step with the elapsed time, repeated while a step runs long, so that stdout holds
only results.  The exit status is 1 if any property failed on any committer.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import zerorename as zr
from zerorename.spark.core import make_store, spec_from_options
from zerorename.spark.verify import (
    Comparison,
    InputSnapshot,
    Leftovers,
    compare,
    leftovers,
    visible_files,
)
from zerorename.store import Store, list_all
from zerorename_bridge.matrix_report import model_report
from zerorename_bridge.progress import Progress
from zerorename_bridge.spark_faults import DuplicateAttempt
from zerorename_bridge.user_report import USER_COMMITTERS, summary_line, user_report

if TYPE_CHECKING:  # Spark and moto load only when the job runs
    from pyspark.sql import DataFrame, SparkSession

    from zerorename_bridge.embedded_s3 import EmbeddedS3

COMMITTERS = ("fenced", "magic", "directory", "partitioned", "manifest", "v1", "v2")
PARTITION_BY = ("year", "month")
COLUMNS = ("event_id", "user_id", "kind", "amount", "ts", "year", "month")
TASKS = 4


# -- where we write ------------------------------------------------------------------------


@dataclass
class Target:
    """The S3 endpoint and bucket; with an embedded server, its request counter."""

    endpoint: str | None
    bucket: str
    region: str | None
    checksums: str | None
    server: EmbeddedS3 | None = None  # when embedded

    def writer_options(self) -> dict[str, str]:
        opts = {"endpoint_url": self.endpoint, "region": self.region,
                "checksums": self.checksums}
        return {k: v for k, v in opts.items() if v}

    def store(self, dest: str) -> Store:
        return make_store(spec_from_options({"path": dest, **self.writer_options()}))

    def counts(self) -> tuple[dict[str, int], int] | None:
        return self.server.snapshot() if self.server is not None else None


def start_target(args: Args, progress: Progress) -> Target:
    if args.endpoint_url or args.bucket:
        if not args.bucket:
            raise SystemExit("--endpoint-url needs --bucket (an existing bucket to write in)")
        progress(f"using {args.endpoint_url or 'the AWS default endpoint'}, "
                 f"bucket {args.bucket}")
        return Target(args.endpoint_url, args.bucket, args.region, args.checksums)
    from zerorename_bridge.embedded_s3 import EmbeddedS3

    server = EmbeddedS3().start()
    server.create_bucket("zerorename-demo")
    progress(f"embedded S3 (moto) listening on {server.endpoint}")
    return Target(server.endpoint, "zerorename-demo", "us-east-1", None, server)


# -- the data ------------------------------------------------------------------------------


def events(spark: SparkSession, rows: int, *, tag: str = "") -> DataFrame:
    """A year of click-stream events, time-ordered and range-partitioned into 4 tasks (so each
    task covers about three months, as a real time-sorted extract would).  ``tag`` marks the
    rows a zombie writes, so they can be recognised if they ever become visible."""
    step = 365 * 86400 // max(rows, 1)
    return spark.range(0, rows, 1, TASKS).selectExpr(
        "id as event_id",
        "cast(id * 7919 % 997 as int) as user_id",
        f"concat('{tag}', element_at(array('view', 'click', 'cart', 'buy'), "
        "cast(id % 4 + 1 as int))) as kind",
        "cast(id * 37 % 10000 as double) / 100 as amount",
        f"timestamp_seconds(1688169600 + id * {step}) as ts",  # from 2023-07-01 UTC
    ).selectExpr("*", "year(ts) as year", "month(ts) as month")


def task_batches(df: DataFrame, task: int) -> list[object]:
    """The Arrow batches of one Spark partition of ``df`` (what task ``task`` writes); pyarrow
    has no types, and the batches are only handed on to the writer, hence ``object``."""
    return list(df.where(f"spark_partition_id() = {task}").toArrow().to_batches())


# -- one committer -------------------------------------------------------------------------


@dataclass
class Result:
    committer: str
    skipped: str = ""
    files: int = 0
    bytes: int = 0
    requests: dict[str, int] = field(default_factory=dict)
    copied: int | None = None
    write_seconds: float = 0.0
    commit_ms: int | None = None
    comparison: Comparison | None = None
    after_commit: Leftovers | None = None
    late_zombie: str = ""
    abort_visible: int = 0
    abort_leftovers: Leftovers | None = None
    abort_local: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    @property
    def complete(self) -> bool:
        return not self.errors and self.comparison is not None and self.comparison.complete

    @property
    def exclusive(self) -> bool:
        return not self.errors and self.comparison is not None and self.comparison.exclusive

    @property
    def abortable(self) -> bool:
        return (not self.errors and self.abort_leftovers is not None
                and self.abort_visible == 0 and self.abort_leftovers.clean
                and not self.abort_local)

    @property
    def passed(self) -> bool:
        return bool(self.skipped) or (self.complete and self.exclusive and self.abortable)


def unsupported(committer: str, target: Target, dest: str) -> str:
    """Why ``committer`` cannot run on this store ('' if it can), in the committer's words."""
    try:
        zr.create_committer(committer, target.store(dest), zr.JobContext(dest=dest))
    except zr.CommitError as error:
        return error.reason
    return ""


def local_staging(job_id: str) -> list[str]:
    """Files the staging committers left on this host's disk for ``job_id`` (default
    ``fs.s3a.buffer.dir``; in local mode every task ran on this host)."""
    root = Path(tempfile.gettempdir()) / "zerorename-staging" / job_id
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())


def run_committer(spark: SparkSession, target: Target, committer: str, df: DataFrame,
                  snap: InputSnapshot, zombie_df: DataFrame, prefix: str,
                  progress: Progress) -> Result:
    from zerorename.spark import write

    result = Result(committer)
    dest = f"s3://{target.bucket}/{prefix}/{committer}"
    reason = unsupported(committer, target, dest)
    if reason:
        result.skipped = reason
        progress(f"{committer}: skipped — {reason}")
        return result
    store = target.store(dest)
    options = target.writer_options()
    job_id = str(uuid.uuid4())
    spec = spec_from_options({"path": dest, "committer": committer, "job_id": job_id,
                              "partition_by": ",".join(PARTITION_BY), **options})

    with progress.step(f"{committer}: zombie attempts of tasks 2 and 3 write beside the job"):
        early = DuplicateAttempt(spec, 2, task_batches(zombie_df, 2)).start()
        early.release()  # commits its task before the job has even started
        late = DuplicateAttempt(spec, 3, task_batches(zombie_df, 3)).start()

    before = target.counts()
    started = time.monotonic()
    with progress.step(f"{committer}: writing {len(snap.rows)} rows; task 1 attempt 0 dies "
                       "after writing"):
        success = write(df, dest, committer=committer, partition_by=PARTITION_BY,
                        job_id=job_id, **options,
                        **{"zerorename.fault.exit_after_write": "1@0"})
    result.write_seconds = time.monotonic() - started
    after = target.counts()
    if before is not None and after is not None:
        result.requests = {op: n - before[0].get(op, 0) for op, n in after[0].items()
                           if n - before[0].get(op, 0)}
        result.copied = after[1] - before[1]
    else:  # a real endpoint: what the committers counted (tasks + job commit)
        result.requests = {k[len("store_"):]: v for k, v in
                           success.iostatistics.get("counters", {}).items()
                           if k.startswith("store_") and isinstance(v, int)}
    mean = success.iostatistics.get("meanstatistics", {}).get("committer_commit_job.mean")
    result.commit_ms = int(mean["sum"]) if isinstance(mean, dict) else None
    result.after_commit = leftovers(store, dest)

    late.release()  # a partitioned executor wakes up and commits after the job
    after_late = leftovers(store, dest)
    result.late_zombie = (("its task commit was accepted but never published" if late.committed
                           else "its task commit was refused")
                          + f"; it left {len(after_late.objects)} hidden objects, "
                          f"{len(after_late.uploads)} pending uploads")

    with progress.step(f"{committer}: reading back with Spark and comparing with the input"):
        files = visible_files(store, dest)
        result.files, result.bytes = len(files), sum(files.values())
        got = snap.rows_of(spark.read.format("zerorename").options(**options).load(dest))
        result.comparison = compare(snap.rows, got, snap.files(job_id), set(files))

    failed_dest = dest + "-failed"
    failed_job = str(uuid.uuid4())
    with progress.step(f"{committer}: a job whose task 0 dies on every attempt (must abort "
                       "cleanly)"):
        try:
            write(df, failed_dest, committer=committer, partition_by=PARTITION_BY,
                  job_id=failed_job, **options,
                  **{"zerorename.fault.exit_after_write": "0@*"})
            result.errors.append("the job that should have failed succeeded")
        except Exception:  # expected: Spark gives up on task 0 and aborts the job
            pass
    result.abort_visible = len(visible_files(store, failed_dest))
    result.abort_leftovers = leftovers(store, failed_dest)
    result.abort_local = local_staging(failed_job)
    return result


# -- report --------------------------------------------------------------------------------


def _yes(ok: bool) -> str:
    return "yes" if ok else "NO"


def describe(result: Result, embedded: bool) -> str:
    lines = [f"== {result.committer} " + "=" * (60 - len(result.committer))]
    if result.skipped:
        lines.append(f"  skipped: {result.skipped}")
        return "\n".join(lines)
    c = result.comparison
    ops = ", ".join(f"{op} {n}" for op, n in sorted(result.requests.items())) or "none"
    source = "server-side count" if embedded else "committer-reported"
    lines += [
        f"  files, bytes        {result.files} files, {result.bytes:,} bytes",
        f"  requests ({source}) {sum(result.requests.values())}: {ops}",
        f"  bytes copied        {'n/a' if result.copied is None else f'{result.copied:,}'}",
        f"  write / commit time {result.write_seconds:.1f} s / "
        + ("n/a" if result.commit_ms is None else f"{result.commit_ms} ms"),
        f"  after commit        {len(result.after_commit.objects) if result.after_commit else '?'}"
        f" hidden objects, {len(result.after_commit.uploads) if result.after_commit else '?'}"
        " pending uploads",
        f"  late zombie         {result.late_zombie}",
        f"  completeness        {_yes(result.complete)}"
        + (f" (missing rows {c.missing_rows}, missing files {len(c.missing_files)})" if c else ""),
        f"  exclusivity         {_yes(result.exclusive)}"
        + (f" (extra rows {c.extra_rows}, extra files {len(c.extra_files)})" if c else ""),
        f"  abortability        {_yes(result.abortable)} (after the failed job: "
        f"{result.abort_visible} visible, "
        f"{len(result.abort_leftovers.objects) if result.abort_leftovers else '?'} hidden, "
        f"{len(result.abort_leftovers.uploads) if result.abort_leftovers else '?'} pending, "
        f"{len(result.abort_local)} local staging files)",
    ]
    for what, found in (("left after commit", result.after_commit),
                        ("left after the failed job", result.abort_leftovers)):
        if found is not None and not found.clean:
            names = [*found.objects, *(f"upload {u}" for u in found.uploads)]
            lines += [f"  {what}: {n}" for n in names[:8]]
            if len(names) > 8:
                lines.append(f"  … and {len(names) - 8} more")
    lines += [f"  local staging left: {n}" for n in result.abort_local[:8]]
    lines += [f"  error: {e}" for e in result.errors]
    return "\n".join(lines)


# -- main ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Args:
    """The command line, typed (argparse's Namespace answers ``Any`` for every option)."""

    endpoint_url: str | None
    bucket: str | None
    region: str | None
    checksums: str | None
    prefix: str
    rows: int
    committers: str
    master: str
    no_model: bool
    matrix_committers: str | None
    matrix_stores: str | None
    keep: bool
    research: bool


def parse_args(argv: Sequence[str] | None) -> Args:
    if argv and argv[0] == "--":  # ``zerorename demo -- --rows 2000`` passes the separator on
        argv = argv[1:]
    parser = argparse.ArgumentParser(
        prog="python -m zerorename_bridge.mainjob",
        description="PySpark writes through every zerorename committer on an embedded S3, "
                    "with injected faults; checks completeness, exclusivity and abortability.")
    parser.add_argument("--endpoint-url", help="a real S3 endpoint instead of the embedded one")
    parser.add_argument("--bucket", help="an existing bucket on that endpoint")
    parser.add_argument("--region", help="region (default: boto3's configuration)")
    parser.add_argument("--checksums", choices=["default", "when_required"],
                        help="when_required for non-AWS stores that reject boto3's checksums")
    parser.add_argument("--prefix", default="zerorename-demo",
                        help="where to write in the bucket (a run directory is added)")
    parser.add_argument("--rows", type=int, default=20_000, help="events to generate")
    parser.add_argument("--committers", default=",".join(COMMITTERS),
                        help="comma-separated committers to run")
    parser.add_argument("--master", default="local[2,3]",
                        help="Spark master; needs task retries (local[N,F] or a cluster)")
    parser.add_argument("--no-model", action="store_true", help="skip the model matrix")
    parser.add_argument("--matrix-committers",
                        help="comma-separated committers of the model matrix (default: all)")
    parser.add_argument("--matrix-stores",
                        help="comma-separated store profiles of the model matrix (default: all)")
    parser.add_argument("--keep", action="store_true",
                        help="keep the output on a real endpoint (default: delete it)")
    parser.add_argument("--research", action="store_true",
                        help="every field of every run, then the model's first finding and "
                             "the whole verdict matrix (default: one line per run and the "
                             "guarantees of the committers a user picks)")
    return Args(**vars(parser.parse_args(argv)))


def delete_prefix(store: Store, url: str) -> None:
    urls = [o.url for o in list_all(store, url.rstrip("/") + "/")]
    for start in range(0, len(urls), 1000):
        store.delete_many(urls[start:start + 1000])


def _names(text: str | None) -> list[str] | None:
    return [n.strip() for n in text.split(",") if n.strip()] if text else None


def check_matrix_names(matrix_committers: Sequence[str] | None,
                       matrix_stores: Sequence[str] | None) -> None:
    """Refuse an unknown name of the model matrix before anything runs, not after minutes of
    Spark jobs.  (An unknown ``--committers`` name is reported by the run itself, as a skip
    with the committer factory's own reason.)"""
    if not (matrix_committers or matrix_stores):
        return
    try:
        from zerorename_model.engine.stores.profiles import PROFILES
        from zerorename_model.systems.protocols import load_all
    except ImportError:
        return  # no model: the report says so
    for what, given, known in (("model committer", matrix_committers, sorted(load_all())),
                               ("store profile", matrix_stores, list(PROFILES))):
        wrong = [n for n in given or () if n not in known]
        if wrong:
            raise ValueError(f"unknown {what}(s) {wrong}; known: {known}")


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    committers = _names(args.committers) or []
    check_matrix_names(_names(args.matrix_committers), _names(args.matrix_stores))
    progress = Progress()
    target = start_target(args, progress)
    run_prefix = f"{args.prefix.strip('/')}/run-{uuid.uuid4().hex[:8]}"
    results: list[Result] = []
    try:
        from pyspark.sql import SparkSession

        from zerorename.spark.session import local_session

        owned = SparkSession.getActiveSession() is None  # a caller's session stays running
        with progress.step(f"starting Spark ({args.master})"):
            # FATAL: the injected crashes make Spark log ERROR stack traces that are expected
            # here; the workers' own "zerorename fault: …" lines still show where each struck
            spark = local_session(args.master, app_name="zerorename-demo", log_level="FATAL")
        with progress.step(f"generating {args.rows} events over 12 months, {TASKS} tasks, "
                           f"partitioned by {'/'.join(PARTITION_BY)}"):
            df = events(spark, args.rows).cache()
            snap = InputSnapshot(df, COLUMNS, PARTITION_BY)
            zombie_df = events(spark, args.rows, tag="zombie-")
        for committer in committers:
            result = run_committer(spark, target, committer, df, snap, zombie_df, run_prefix,
                                   progress)
            results.append(result)
            print(describe(result, embedded=target.server is not None) if args.research
                  else summary_line(result), flush=True)
        df.unpersist()
        if owned:
            spark.stop()
    finally:
        if target.server is not None:
            target.server.stop()
        elif not args.keep:
            delete_prefix(target.store(f"s3://{target.bucket}/{run_prefix}"),
                          f"s3://{target.bucket}/{run_prefix}")
    ran = [r for r in results if not r.skipped]
    failed = [r.committer for r in ran if not r.passed]
    print()
    print(f"{len(ran)} committers ran, {len(results) - len(ran)} skipped; properties "
          + ("held on every run." if not failed else f"FAILED for: {', '.join(failed)}."),
          flush=True)
    if not args.no_model and args.research:
        print()
        model_report(progress, committers=_names(args.matrix_committers),
                     stores=_names(args.matrix_stores),
                     passed=[r.committer for r in ran if r.passed])
    elif not args.no_model:
        user_report(progress, _names(args.matrix_committers) or USER_COMMITTERS)
    return 1 if failed or not ran else 0


if __name__ == "__main__":
    sys.exit(main())
