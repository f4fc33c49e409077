"""Every option zerorename reads, in one registry: its name, type, default, meaning and the
Hadoop names it also answers to.

Two scopes: the committers' options (Hadoop's names where Hadoop has the option, otherwise
``zerorename.*``), passed in ``JobContext(options=...)`` or as Spark writer options; and the
Spark writer's own short options (``committer``, ``threads``…).  The modules that read an option
take its name from here (``tests/test_options_registry.py`` fails on a literal name at a call
site), :func:`validate` checks the values a job is given against the types declared here, the
Spark writer's list of accepted names is :func:`writer_names`, and
``docs/user/configuration.md`` is :func:`markdown` (checked fresh by the same test).

    python -c 'import zerorename.options as o; print(o.markdown(), end="")' \
        > docs/user/configuration.md                             # after adding an option
"""

from __future__ import annotations

import difflib
import enum
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from zerorename.errors import OptionValueError

__all__ = ["CHECKED_PREFIXES", "OPTIONS", "Kind", "Option", "Scope", "by_name", "check_names",
           "markdown", "unknown_name_reason", "validate", "writer_names"]


class Kind(enum.Enum):
    """How a value is parsed (``zerorename.context.Options``)."""

    BOOL = "boolean"
    INT = "integer"
    SIZE = "size (e.g. 64M)"
    DURATION = "duration (e.g. 500ms, 2s)"
    CHOICE = "one of"
    TEXT = "text"
    CALLBACK = "callable"


class Scope(enum.Enum):
    COMMITTER = "committer"
    WRITER = "Spark writer"
    STREAM = "Spark stream writer"


@dataclass(frozen=True)
class Option:
    name: str
    kind: Kind
    default: str
    doc: str
    #: other names read for the same setting (Hadoop's, older ones), in order of precedence
    aliases: tuple[str, ...] = ()
    choices: tuple[str, ...] = ()
    scope: Scope = Scope.COMMITTER
    #: the Hadoop default where it differs from ours
    hadoop_default: str = ""

    @property
    def names(self) -> tuple[str, ...]:
        return (self.name, *self.aliases)


C, W, S = Scope.COMMITTER, Scope.WRITER, Scope.STREAM

# -- committers --------------------------------------------------------------------------------

CONFLICT_MODE: Final = Option(
    "fs.s3a.committer.staging.conflict-mode", Kind.CHOICE, "append",
    "staging committers: what to do with output already at the destination (docs/user/"
    "committers.md)", choices=("fail", "append", "replace"))
UNIQUE_FILENAMES: Final = Option(
    "fs.s3a.committer.staging.unique-filenames", Kind.BOOL, "false",
    "insert the job ID before the first dot of each file name", hadoop_default="true")
STAGING_TMP_PATH: Final = Option(
    "fs.s3a.committer.staging.tmp.path", Kind.TEXT, "under the destination",
    "where staging committers keep their records")
BUFFER_DIR: Final = Option(
    "fs.s3a.buffer.dir", Kind.TEXT, "<tmp>/zerorename-staging",
    "staging committers' local directory (the first of a comma-separated list)")
PART_SIZE: Final = Option(
    "fs.s3a.multipart.size", Kind.SIZE, "16M",
    "multipart part size; every part but the last has exactly this size (S3: at least 5M)",
    hadoop_default="64M")
ABORT_PENDING_UPLOADS: Final = Option(
    "fs.s3a.committer.abort.pending.uploads", Kind.BOOL, "false",
    "also abort every upload under the destination at job end (kills concurrent jobs)",
    aliases=("fs.s3a.committer.staging.abort.pending.uploads",))
MAGIC_ENABLED: Final = Option(
    "fs.s3a.committer.magic.enabled", Kind.BOOL, "true", "false refuses the magic committer")
MAGIC_IN_MEMORY: Final = Option(
    "fs.s3a.committer.magic.track.commits.in.memory.enabled", Kind.BOOL, "true",
    "magic: a task keeps its commits in memory (false: an intent and a .pending per file, so "
    "another process can commit the task)", hadoop_default="false")
THREADS: Final = Option(
    "zerorename.committer.threads", Kind.INT, "8 (rename family: 16)",
    "threads of a job commit; -n means n per CPU core",
    aliases=("fs.s3a.committer.threads", "mapreduce.manifest.committer.io.threads"))
MANIFEST_QUEUE_CAPACITY: Final = Option(
    "mapreduce.manifest.committer.writer.queue.capacity", Kind.INT, "2 × threads",
    "manifest: manifests loaded ahead of processing")
MANIFEST_VALIDATE_OUTPUT: Final = Option(
    "mapreduce.manifest.committer.validate.output", Kind.BOOL, "false",
    "manifest: after renaming, check each file's size (and etag where known)")
MANIFEST_DELETE_TARGET: Final = Option(
    "mapreduce.manifest.committer.delete.target.files", Kind.BOOL, "false",
    "manifest: delete whatever is at each destination before renaming")
CLEANUP_SKIPPED: Final = Option(
    "mapreduce.fileoutputcommitter.cleanup.skipped", Kind.BOOL, "false",
    "manifest: keep _temporary/<job> after the commit")
MARK_SUCCESS: Final = Option(
    "mapreduce.fileoutputcommitter.marksuccessfuljobs", Kind.BOOL, "true", "write _SUCCESS")
SUMMARY_DIR: Final = Option(
    "fs.s3a.committer.summary.report.directory", Kind.TEXT, "unset",
    "also save the job's summary as summary-<job>.json there (any store), even when it fails",
    aliases=("mapreduce.manifest.committer.summary.report.directory",))
RETRY_LIMIT: Final = Option(
    "fs.s3a.retry.limit", Kind.INT, "3", "retries of a failed store request after the first")
RETRY_INTERVAL: Final = Option(
    "fs.s3a.retry.interval", Kind.DURATION, "50ms",
    "base of the exponential backoff between retries")
JOB_UUID: Final = Option(
    "fs.s3a.committer.uuid", Kind.TEXT, "a fresh UUID4",
    "the job ID (then spark.sql.sources.writeJobUUID); never a timestamp")
SPARK_JOB_UUID: Final = Option(
    "spark.sql.sources.writeJobUUID", Kind.TEXT, "unset", "Spark's job ID, used when "
    "fs.s3a.committer.uuid is not set")
REQUIRE_UUID: Final = Option(
    "fs.s3a.committer.require.uuid", Kind.BOOL, "false", "refuse to generate a job ID")
PROGRESS: Final = Option(
    "zerorename.committer.progress", Kind.CALLBACK, "unset",
    "a callable receiving zr.ProgressEvent at each stage and file (a failing one never fails "
    "the commit)")
CONDITIONAL_ENABLED: Final = Option(
    "fs.s3a.create.conditional.enabled", Kind.BOOL, "true",
    "Hadoop S3A's switch for conditional creation (HADOOP-19256): false says the store does not "
    "support it, so auto never picks fenced")
FENCED_STORE_CHECK: Final = Option(
    "fs.zerorename.fenced.store-check", Kind.CHOICE, "refuse",
    "fenced on a store that let racing writers both win: refuse (RacyConditionalWritesError, "
    "before anything is written) or warn (the override: run, and log that two attempts of a "
    "task could both commit)", choices=("refuse", "warn"))
COMMITTER_CHOICE: Final = Option(
    "fs.zerorename.committer.choice", Kind.TEXT, "set by the writer",
    "why this job writes with its committer (auto's reason, or named by the user); copied into "
    "_SUCCESS's diagnostics")
FENCED_RECORD_RETENTION: Final = Option(
    "zerorename.fenced.record.retention", Kind.DURATION, "24h",
    "fenced: how long the commit records of finished jobs on a destination are kept before a "
    "later job's cleanup deletes them")
RENAME_BY_COPY: Final = Option(
    "zerorename.fileoutput.rename-by-copy", Kind.BOOL, "false",
    "let v1/v2 run on stores without rename (each rename a copy and a delete)")
FIXED_MILLIS: Final = Option(
    "zerorename.clock.fixed-millis", Kind.INT, "unset (system clock)",
    "for reproducible tests only: every timestamp written is this value and every duration 0")

# -- the Spark writer --------------------------------------------------------------------------

W_COMMITTER: Final = Option(
    "committer", Kind.CHOICE, "auto",
    "auto: fenced where the store refuses a second If-None-Match PUT, else magic", scope=W,
    choices=("auto", "fenced", "magic", "directory", "partitioned", "manifest", "v1", "v2"))
W_FORMAT: Final = Option("format", Kind.CHOICE, "parquet", "the file format written", scope=W,
                         choices=("parquet",))
W_PARTITION_BY: Final = Option(
    "partition_by", Kind.TEXT, "none", "comma-separated partition columns (Hive layout)",
    aliases=("partitionby",), scope=W)
W_MODE: Final = Option(
    "mode", Kind.CHOICE, "append", "the save mode", scope=W,
    choices=("append", "overwrite", "error", "errorifexists", "ignore", "default"))
W_PATH: Final = Option("path", Kind.TEXT, "required", "the destination URL", aliases=("dest",),
                       scope=W)
W_ENDPOINT_URL: Final = Option(
    "endpoint_url", Kind.TEXT, "boto3's configuration",
    "the S3 endpoint (no credentials in it; without a scheme, https:// is meant, as Hadoop's "
    "default); the session's spark.hadoop.fs.s3a.endpoint is read when no option sets it",
    aliases=("fs.s3a.endpoint",), scope=W)
W_REGION: Final = Option(
    "region", Kind.TEXT, "boto3's configuration",
    "the S3 region; the session's spark.hadoop.fs.s3a.endpoint.region is read when no option "
    "sets it", aliases=("fs.s3a.endpoint.region",), scope=W)
W_CHECKSUMS: Final = Option("checksums", Kind.CHOICE, "when_required",
                            "boto3's request checksums", choices=("when_required", "default"),
                            scope=W)
W_PART_SIZE: Final = Option("part_size", Kind.SIZE, "16M",
                            "the multipart part size (fs.s3a.multipart.size)", scope=W)
W_PART_MIN_SIZE: Final = Option("part_min_size", Kind.SIZE, "5M",
                                "the endpoint's minimum non-final part size", scope=W)
W_THREADS: Final = Option("threads", Kind.INT, "8",
                          "committer threads (fs.s3a.committer.threads)", scope=W)
W_JOB_ID: Final = Option("job_id", Kind.TEXT, "a fresh UUID4", "the job ID; unique per write",
                         scope=W)
W_COMPRESSION: Final = Option(
    "compression", Kind.CHOICE, "snappy", "the Parquet codec", scope=W,
    choices=("snappy", "gzip", "brotli", "zstd", "lz4", "lz4_raw", "none", "uncompressed"))
W_MAX_OPEN_FILES: Final = Option("max_open_files", Kind.INT, "32", "open files per task",
                                 scope=W)
W_MAX_RECORDS_PER_FILE: Final = Option(
    "maxRecordsPerFile", Kind.INT, "0 (no limit)",
    "rows per file before rolling to the next file (Spark's maxRecordsPerFile)",
    aliases=("maxrecordsperfile",), scope=W)
W_ROW_GROUP_SIZE: Final = Option("parquet.block.size", Kind.SIZE, "128M",
                                 "bytes per Parquet row group, about (Spark's "
                                 "parquet.block.size)", scope=W)
W_ENCODER: Final = Option(
    "encoder", Kind.CHOICE, "python",
    "who encodes the Parquet files: python (pyarrow, in the Python workers) or spark (Spark's "
    "own Parquet writer, in the tasks' JVM: the files Spark writes; zerorename.spark.write "
    "only)", scope=W, choices=("python", "spark"))
W_ABORT_GRACE: Final = Option("abort_grace_seconds", Kind.DURATION, "3",
                              "after a failed job, wait this long and abort again", scope=W)

#: the Spark writer's own options, in the order the configuration page lists them
WRITER: Final = (
    W_COMMITTER, W_FORMAT, W_PARTITION_BY, W_MODE, W_PATH, W_ENDPOINT_URL, W_REGION,
    W_CHECKSUMS, W_PART_SIZE, W_PART_MIN_SIZE, W_THREADS, W_JOB_ID, W_COMPRESSION,
    W_MAX_OPEN_FILES, W_MAX_RECORDS_PER_FILE, W_ROW_GROUP_SIZE, W_ENCODER, W_ABORT_GRACE,
)

# -- the Spark stream writer (writeStream.format("zerorename"); docs/user/spark.md) -----------

S_KEEP_BATCH_RECORDS: Final = Option(
    "keep_batch_records", Kind.INT, "0 (keep all)",
    "after each batch, fold every batch record but the newest N into a log checkpoint",
    scope=S)
S_COMPACT_EVERY: Final = Option(
    "compact_every", Kind.INT, "0 (never)",
    "after every N-th batch, rewrite the committed batches' small files into larger ones "
    "(keeping the newest `keep_batch_records` batches, at least 1, as they are)", scope=S)
S_COMPACT_TARGET_SIZE: Final = Option(
    "compact_target_size", Kind.SIZE, "128M",
    "compaction's output file size; files under it are rewritten", scope=S)

#: the stream writer's own options (on top of the Spark writer's)
STREAM: Final = (S_KEEP_BATCH_RECORDS, S_COMPACT_EVERY, S_COMPACT_TARGET_SIZE)

OPTIONS: Final[tuple[Option, ...]] = (
    CONFLICT_MODE, UNIQUE_FILENAMES, STAGING_TMP_PATH, BUFFER_DIR, PART_SIZE,
    ABORT_PENDING_UPLOADS, MAGIC_ENABLED, MAGIC_IN_MEMORY, THREADS, MANIFEST_QUEUE_CAPACITY,
    MANIFEST_VALIDATE_OUTPUT, MANIFEST_DELETE_TARGET, CLEANUP_SKIPPED, MARK_SUCCESS, SUMMARY_DIR,
    RETRY_LIMIT, RETRY_INTERVAL, JOB_UUID, SPARK_JOB_UUID, REQUIRE_UUID, PROGRESS,
    CONDITIONAL_ENABLED, FENCED_STORE_CHECK, COMMITTER_CHOICE, FENCED_RECORD_RETENTION,
    RENAME_BY_COPY, FIXED_MILLIS, *WRITER, *STREAM,
)

_BY_NAME: Final = {name: option for option in OPTIONS for name in option.names}


def by_name(name: str) -> Option | None:
    """The option ``name`` (or one of its aliases) is, if registered."""
    return _BY_NAME.get(name)


def writer_names() -> frozenset[str]:
    """Every name the Spark writer accepts as its own option (aliases included)."""
    return frozenset(n for o in OPTIONS if o.scope is Scope.WRITER for n in o.names)


#: The namespaces whose every name zerorename knows: a name in them that is not registered is
#: a misspelling (``fs.s3a.comitter.threads``) and is refused, never ignored.  Hadoop's other
#: ``fs.s3a.*`` settings configure S3A's client, which zerorename does not use.
CHECKED_PREFIXES: Final = ("fs.s3a.", "fs.zerorename.", "zerorename.")
#: Test hooks of the Spark writer (``zerorename.spark.hooks``), checked by their provider.
_HOOK_PREFIX: Final = "zerorename.fault."
#: How to point a committer's store at an endpoint (JobContext does not build the store).
ENDPOINT_HINT: Final = ("the store is the client's: boto3.client('s3', endpoint_url=...) or "
                        "the AWS_ENDPOINT_URL environment variable sets the endpoint (the Spark "
                        "writer's option endpoint_url, or fs.s3a.endpoint, does it there)")


#: Hadoop's names for S3A's credentials: refused as options with :data:`CREDENTIALS_HINT`
CREDENTIAL_NAMES: Final = frozenset({"fs.s3a.access.key", "fs.s3a.secret.key",
                                     "fs.s3a.session.token"})
CREDENTIALS_HINT: Final = ("credentials are never taken from options (nor logged): the store's "
                           "client has them — boto3's AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY "
                           "and AWS_SESSION_TOKEN, a profile, or zr.S3Store(boto3.client(...)); "
                           "Spark's Python workers read the same environment")


def unknown_name_reason(name: str, scope: Scope = Scope.COMMITTER) -> str | None:
    """Why ``name`` (an option given in ``scope``) is refused, or None when it is fine: a
    registered name of that scope, or a name outside :data:`CHECKED_PREFIXES`."""
    name = name.strip()
    low = name.lower()
    if not low.startswith(CHECKED_PREFIXES) or low.startswith(_HOOK_PREFIX):
        return None
    option = _BY_NAME.get(name) or _BY_NAME.get(low)
    if option is not None and (option.scope is scope or option.scope is Scope.COMMITTER):
        return None
    if low in CREDENTIAL_NAMES:
        return f"{name}: {CREDENTIALS_HINT}"
    if option is not None and option.scope is Scope.WRITER and scope is Scope.COMMITTER:
        return (f"{name} is a Spark writer option: a committer does not build its store "
                f"({ENDPOINT_HINT})")
    valid = sorted(n for o in OPTIONS if o.scope in (Scope.COMMITTER, scope)
                   for n in o.names if n.startswith(CHECKED_PREFIXES))
    close = difflib.get_close_matches(low, valid, n=1, cutoff=0.75)
    guess = f"did you mean {close[0]!r}? " if close else ""
    return (f"unknown option {name!r}: zerorename knows every name under "
            f"{', '.join(p + '*' for p in CHECKED_PREFIXES)} and would ignore this one; "
            f"{guess}the valid ones are {', '.join(valid)} (docs/user/configuration.md)")


def check_names(names: Iterable[str]) -> None:
    """Refuse a committer option under :data:`CHECKED_PREFIXES` that is not registered
    (:class:`OptionValueError` naming it and the valid names); others are left alone (a
    Hadoop configuration carries many)."""
    for name in names:
        reason = unknown_name_reason(str(name))
        if reason is not None:
            raise OptionValueError(str(name), reason)


_TRUE, _FALSE = ("true", "1", "yes", "on"), ("false", "0", "no", "off")
_SIZE = re.compile(r"^\s*(\d+)\s*([kmgt]?)b?\s*$", re.I)
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h)?\s*$", re.I)


def _valid(option: Option, value: Any) -> bool:
    if option.kind is Kind.CALLBACK:
        return callable(value)
    if isinstance(value, bool):
        return option.kind is Kind.BOOL
    if option.kind is Kind.BOOL:
        return str(value).strip().lower() in _TRUE + _FALSE
    if option.kind is Kind.INT:
        return re.fullmatch(r"\s*-?\d+\s*", str(value)) is not None
    if option.kind is Kind.SIZE:
        return isinstance(value, int) or _SIZE.match(str(value)) is not None
    if option.kind is Kind.DURATION:
        return isinstance(value, int | float) or _DURATION.match(str(value)) is not None
    if option.kind is Kind.CHOICE:
        return str(value).strip().lower() in option.choices
    return True


def validate(values: Mapping[str, Any], scope: Scope = Scope.COMMITTER) -> None:
    """Check every registered option of ``scope`` that ``values`` sets against its declared
    type; unregistered names are left alone (a Hadoop configuration carries many).  Raises
    :class:`OptionValueError` naming the option and the expected type — never its value,
    which may be a secret (except a choice's, which cannot be)."""
    for name, value in values.items():
        option = _BY_NAME.get(name)
        if option is None or option.scope is not scope or value is None \
                or (isinstance(value, str) and not value.strip()):  # empty: unset, as Hadoop's
            continue
        if not _valid(option, value):
            if option.kind is Kind.CHOICE:  # a choice is never a secret: say what was given
                raise OptionValueError(name, f"unknown value {str(value).strip().upper()!r}: "
                                       f"expected {', '.join(c.upper() for c in option.choices)}")
            article = "an" if option.kind.value[0] in "aeiou" else "a"
            raise OptionValueError(name, f"expected {article} {option.kind.value}")


def markdown() -> str:
    """``docs/user/configuration.md``: every option, by scope."""
    lines = ["# Configuration", "",
             "<!-- generated by zerorename.options.markdown() from zerorename/options.py; edit "
             "that, not this -->", "",
             "Every option zerorename reads.  **Committer options** are Hadoop's names where "
             "Hadoop has the setting: pass them in `JobContext(options=...)`, or as Spark writer "
             "options (`.option(\"fs.s3a.multipart.size\", \"64M\")`).  **Spark writer options** "
             "are the writer's own; the **stream writer** takes those and a few more.  "
             "A value of the wrong type is an `OptionValueError` naming "
             "the option; an unknown writer option is a `WriteOptionError` naming the valid "
             "ones, and so is an unknown name under `fs.s3a.*`, `fs.zerorename.*` or "
             "`zerorename.*` (`OptionValueError` in `JobContext`): zerorename knows every "
             "name there, so a misspelt one is never ignored.  Credentials are never options: they "
             "come from boto3's default chain.", ""]
    for scope, title in ((Scope.COMMITTER, "Committer options"),
                         (Scope.WRITER, "Spark writer options"),
                         (Scope.STREAM, "Spark stream writer options (on top of the writer's)")):
        lines += [f"## {title}", "", "| option | type | default | meaning | also read |",
                  "|---|---|---|---|---|"]
        for option in (o for o in OPTIONS if o.scope is scope):
            kind = option.kind.value + (": " + ", ".join(f"`{c}`" for c in option.choices)
                                        if option.choices else "")
            default = f"`{option.default}`" + (f" (Hadoop: `{option.hadoop_default}`)"
                                               if option.hadoop_default else "")
            also = ", ".join(f"`{a}`" for a in option.aliases)
            lines.append(f"| `{option.name}` | {kind} | {default} | {option.doc} | {also} |")
        lines.append("")
    return "\n".join(lines)

