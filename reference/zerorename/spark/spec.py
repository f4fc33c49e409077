"""The write spec — the one small, picklable, secret-free value every Spark process rebuilds the
job from — and the checking of the user's writer options into it.

Apart from the task body and the job driver (:mod:`zerorename.spark.core`) because it is the
contract between the processes: the Data Source's planning worker, the task workers and the
commit worker each build or receive a :class:`WriteSpec`, and every option is checked here, once,
so that a typo fails with the list of valid choices before anything is written, in whichever
process builds the spec.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from zerorename import options as O
from zerorename.committers import COMMITTERS
from zerorename.committers.destinations import check_destination_shape, check_may_delete_at
from zerorename.context import Options
from zerorename.errors import CommitError
from zerorename.urls import parse_url

from . import hooks

__all__ = [
    "AUTO",
    "CHECKSUMS",
    "COMMITTER_THREADS",
    "COMPRESSIONS",
    "CONFLICT_MODE",
    "FORMATS",
    "HADOOP_PREFIXES",
    "OPTION_NAMES",
    "PART_SIZE",
    "SAVE_MODES",
    "WriteOptionError",
    "WriteSpec",
    "check_option_names",
    "spec_from_options",
]

#: Spark save mode → Hadoop conflict mode (``fs.s3a.committer.staging.conflict-mode``).
SAVE_MODES: dict[str, str] = {
    "append": "append",
    "overwrite": "replace",
    "error": "fail",
    "errorifexists": "fail",
    "default": "fail",
    "ignore": "fail",
}
CONFLICT_MODE = O.CONFLICT_MODE.name
COMMITTER_THREADS = O.THREADS.aliases[0]
#: The ``committer`` option's default: chosen by
#: :func:`~zerorename.spark.job_setup.resolve_committer`.
AUTO = "auto"
PART_SIZE = O.PART_SIZE.name

#: Option names that would put a secret into a plan, a log or a pickle: refused with advice.
_SECRET_OPTIONS = frozenset({
    "access_key", "secret_key", "session_token", "aws_access_key_id", "aws_secret_access_key",
    "aws_session_token", "fs.s3a.access.key", "fs.s3a.secret.key", "fs.s3a.session.token",
})

#: The options a write or a read understands (lower case: Spark lower-cases option names).
#: Besides these, only Hadoop-named committer options (:data:`HADOOP_PREFIXES`) and the test
#: hooks (``zerorename.fault.*``) are accepted: a misspelt name must fail, not fall back to a
#: default (``.option("comitter", "directory")`` would otherwise write with ``magic``).
#: They are the registry's writer options (:mod:`zerorename.options`).
OPTION_NAMES = O.writer_names()
#: Lower-case and older spellings, accepted but not listed in errors.
_ALIASES = frozenset(alias for option in O.WRITER for alias in option.aliases)
#: Prefixes of the Hadoop option names passed through to the committer unchanged.
HADOOP_PREFIXES = ("fs.", "mapreduce.")
#: The only file format the writer produces.
FORMATS = frozenset({"parquet"})
#: Parquet codecs pyarrow writes (``none`` = ``uncompressed``, Spark's name; ``lz4`` and
#: ``lz4_raw`` both write LZ4_RAW: pyarrow cannot write the deprecated Hadoop-framed LZ4).
COMPRESSIONS = frozenset({"snappy", "gzip", "brotli", "zstd", "lz4", "lz4_raw", "none",
                          "uncompressed"})
#: Who encodes the Parquet files (``spark``: the input is chunks of Spark-encoded files).
ENCODERS = frozenset({"python", "spark"})
#: Spark's default row-group size (``parquet.block.size``): 128 MiB.
ROW_GROUP_BYTES = 128 << 20
#: boto3's checksum settings (see ``zerorename.stores.make_s3_client``).
CHECKSUMS = frozenset({"when_required", "default"})


class WriteOptionError(CommitError, ValueError):
    """A writer option is unknown, or its value is one the writer does not support.

    Also a ``ValueError`` (a bad argument), so code that caught the earlier ``ValueError``
    keeps working; ``path`` is the destination (or ``<no destination>``).
    """


def _choice(dest: str, option: str, value: Any, allowed: Iterable[str]) -> str:
    text = str(value).strip().lower()
    if text not in allowed:
        raise WriteOptionError(dest, f"option {option}={value!r} is not supported; "
                                     f"expected one of {sorted(allowed)}")
    return text


def _number(dest: str, option: str, value: Any, parse: Callable[[str], Any],
            kind: str) -> Any:
    try:
        return parse(str(value).strip())
    except ValueError:
        raise WriteOptionError(dest, f"option {option}={value!r} is not a {kind}") from None


def _positive(dest: str, option: str, value: Any, least: int) -> int:
    number: int = _number(dest, option, value, int, "whole number (integer)")
    if number < least:
        raise WriteOptionError(dest, f"option {option}={value!r} must be at least {least}")
    return number


def _committer_option(name: str) -> bool:
    """Is ``name`` passed to the committer: a Hadoop-named option, or a registered committer
    option of zerorename's own (``zerorename.committer.threads``)."""
    option = O.by_name(name)
    return (name.startswith(HADOOP_PREFIXES) or (option is not None and option.scope is
                                                  O.Scope.COMMITTER)) and name not in OPTION_NAMES


def check_option_names(dest: str, names: Iterable[str]) -> None:
    """Refuse option names the writer does not understand, naming every valid one: a name
    under ``fs.s3a.*``, ``fs.zerorename.*`` or ``zerorename.*`` that is not registered (a
    misspelling: ``fs.s3a.comitter.threads``), and any other name that is neither the
    writer's own nor Hadoop-named."""
    names = sorted(names)
    misspelt = [reason for n in names if n not in OPTION_NAMES
                and (reason := O.unknown_name_reason(n, O.Scope.WRITER)) is not None]
    if misspelt:
        raise WriteOptionError(dest, misspelt[0])
    unknown = [n for n in names if n not in OPTION_NAMES and not _committer_option(n)
               and not n.startswith(hooks.OPTION_PREFIX)]
    if unknown:
        raise WriteOptionError(
            dest, f"unknown option(s) {', '.join(map(repr, unknown))}; zerorename accepts "
                  f"{', '.join(sorted(OPTION_NAMES - _ALIASES))}, Hadoop "
                  f"committer options named {' or '.join(p + '*' for p in HADOOP_PREFIXES)}, "
                  f"zerorename's own committer options (docs/user/configuration.md) "
                  f"and {hooks.OPTION_PREFIX}* (tests)")


def _endpoint(value: str) -> str:
    """An endpoint as boto3 takes it: Hadoop's ``fs.s3a.endpoint`` may be a bare host
    (``s3.eu-west-1.amazonaws.com``, ``minio:9000``), which S3A reaches over https."""
    value = value.strip()
    return value if "://" in value else f"https://{value}"


@dataclass(frozen=True)
class WriteSpec:
    """Everything a task or the driver needs to take part in one write job.

    ``job_id`` is a fresh UUID per job unless given: it names the job's files
    (``part-00003-<job_id>.parquet``) and scopes every committer's staging area, so two jobs
    into one destination (or into ``out`` and ``out10``) never touch each other's work.
    ``faults`` are test hooks (``zerorename.fault.*`` options), empty in production.
    """

    dest: str
    #: ``auto``: ``fenced`` where racing If-None-Match writers get one winner, else ``magic``
    #: (decided once, by the driver, in :meth:`JobDriver.setup`; tasks get the decided name)
    committer: str = AUTO
    partition_by: tuple[str, ...] = ()
    mode: str = "append"
    job_id: str = field(default_factory=lambda: str(uuid.uuid4()))
    endpoint_url: str | None = None
    region: str | None = None
    checksums: str | None = None
    #: the S3 endpoint's minimum non-final part size (S3Store's ``min_part_size``) when it
    #: is not S3's 5 MiB: a test server configured lower
    part_min_size: int | None = None
    compression: str = "snappy"
    max_open_files: int = 32
    #: Spark's ``maxRecordsPerFile``: rows per file before rolling to a new one (0: no limit)
    max_records_per_file: int = 0
    #: Spark's ``parquet.block.size``: bytes per row group (about; see parquet.py)
    row_group_bytes: int = ROW_GROUP_BYTES
    #: whether ``parquet.block.size`` was given (Spark's encoder then uses it, else its own)
    row_group_bytes_set: bool = False
    #: ``spark``: the tasks receive chunks of files Spark's encoder made
    #: (:mod:`zerorename.spark.chunks`); ``python``: rows, encoded by pyarrow
    encoder: str = "python"
    abort_grace_seconds: float = 3.0
    committer_options: Mapping[str, str] = field(default_factory=dict)
    faults: Mapping[str, str] = field(default_factory=dict)
    skip: bool = False

    @property
    def conflict_mode(self) -> str:
        return SAVE_MODES[self.mode]

    def job_options(self) -> dict[str, str]:
        """Options for ``zr.JobContext``: the committer's, plus the save mode's conflict mode."""
        return {CONFLICT_MODE: self.conflict_mode, **self.committer_options}

    def file_stem(self, partition_id: int) -> str:
        """``part-00003-<job uuid>``: same for every attempt of a task (see parquet.py)."""
        return f"part-{partition_id:05d}-{self.job_id}"


def spec_from_options(options: Mapping[str, Any], *, overwrite: bool = False) -> WriteSpec:
    """Build a :class:`WriteSpec` from writer options (Data Source options or keyword args).

    Every name and every value with a fixed set of choices is checked here, so a typo fails
    with the list of valid choices (:class:`WriteOptionError`) before anything is written,
    in whichever process builds the spec.  ``mode`` in the options wins over ``overwrite``
    because Spark refuses the ``error`` and ``ignore`` save modes for Python data sources;
    they travel as an option instead.
    """
    opts = {str(k).lower(): v for k, v in options.items() if v is not None}

    def read(option: O.Option, default: Any = None) -> Any:
        """The value given under the option's name or one of its aliases (any case)."""
        return next((opts[n.lower()] for n in option.names if n.lower() in opts), default)

    dest = read(O.W_PATH)
    where = str(dest) if dest else "<no destination>"
    secret = sorted(k for k in opts if k in _SECRET_OPTIONS)
    if secret:
        raise WriteOptionError(
            where, f"options {secret} would put credentials in the query plan, logs and "
                   "pickled tasks; zerorename takes credentials only from boto3's default "
                   "chain (AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, AWS_PROFILE, instance roles)")
    check_option_names(where, opts)
    if not dest:
        raise WriteOptionError(where, "no destination: call .save('s3://bucket/prefix') "
                                      "or pass dest=")
    parse_url(str(dest))
    endpoint = read(O.W_ENDPOINT_URL)
    if endpoint and "@" in str(endpoint).split("//", 1)[-1].split("/", 1)[0]:
        raise WriteOptionError(where, f"{O.W_ENDPOINT_URL.name} must not contain "
                                      "user:password; use boto3's chain")
    if read(O.W_FORMAT) is not None:
        _choice(where, O.W_FORMAT.name, read(O.W_FORMAT), FORMATS)
    mode = _choice(where, O.W_MODE.name,
                   read(O.W_MODE) or ("overwrite" if overwrite else "append"), SAVE_MODES)
    mode = "error" if mode in ("errorifexists", "default") else mode
    # before any request: no store is made, no probe runs, for a destination no job can own
    check_destination_shape(str(dest))
    if mode == "overwrite":
        check_may_delete_at(str(dest), "mode='overwrite'")
    partition_by = read(O.W_PARTITION_BY, ())
    if isinstance(partition_by, str):
        partition_by = [c.strip() for c in partition_by.split(",") if c.strip()]
    committer_options = {k: str(v) for k, v in opts.items() if _committer_option(k)}
    if read(O.W_THREADS) is not None:
        committer_options[COMMITTER_THREADS] = str(read(O.W_THREADS))
    if read(O.W_PART_SIZE) is not None:
        committer_options[PART_SIZE] = str(read(O.W_PART_SIZE))
    checksums = read(O.W_CHECKSUMS)
    part_min_size = read(O.W_PART_MIN_SIZE)
    region = read(O.W_REGION)
    spec = WriteSpec(
        dest=str(dest).rstrip("/"),
        committer=_choice(where, O.W_COMMITTER.name, read(O.W_COMMITTER, AUTO),
                          (AUTO, *COMMITTERS)),
        partition_by=tuple(str(c) for c in partition_by),
        mode=mode,
        endpoint_url=_endpoint(str(endpoint)) if endpoint else None,
        region=str(region) if region else None,
        checksums=(_choice(where, O.W_CHECKSUMS.name, checksums, CHECKSUMS) if checksums
                   else None),
        part_min_size=(Options({O.W_PART_MIN_SIZE.name: part_min_size})
                       .get_size(O.W_PART_MIN_SIZE.name) if part_min_size is not None
                       else None),
        compression=_choice(where, O.W_COMPRESSION.name, read(O.W_COMPRESSION, "snappy"),
                            COMPRESSIONS),
        max_open_files=_number(where, O.W_MAX_OPEN_FILES.name, read(O.W_MAX_OPEN_FILES, 32),
                               int, "whole number (integer)"),
        max_records_per_file=_positive(where, O.W_MAX_RECORDS_PER_FILE.name,
                                       read(O.W_MAX_RECORDS_PER_FILE, 0), 0),
        row_group_bytes=_positive(where, O.W_ROW_GROUP_SIZE.name,
                                  read(O.W_ROW_GROUP_SIZE, ROW_GROUP_BYTES), 1),
        row_group_bytes_set=read(O.W_ROW_GROUP_SIZE) is not None,
        encoder=_choice(where, O.W_ENCODER.name, read(O.W_ENCODER, "python"), ENCODERS),
        abort_grace_seconds=_number(where, O.W_ABORT_GRACE.name, read(O.W_ABORT_GRACE, 3.0),
                                    float, "number of seconds"),
        committer_options=committer_options,
        faults=hooks.parse_options(where, opts),
    )
    if read(O.W_JOB_ID):
        spec = replace(spec, job_id=str(read(O.W_JOB_ID)))
    return spec
