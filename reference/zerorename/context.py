"""Job and task identities, and the options every committer reads.

A job ID names every temporary path a job creates, so it must be unique per write: Spark once
gave two jobs started in the same second the same MapReduce job ID and they deleted each
other's work (SPARK-33402 / HADOOP-17318).  :class:`JobContext` therefore takes its ID from,
in Hadoop's order of precedence, the explicit argument, ``fs.s3a.committer.uuid``, Spark's
``spark.sql.sources.writeJobUUID``, and finally a fresh UUID4 (never a timestamp).
"""

from __future__ import annotations

import os
import re
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from zerorename import options as O
from zerorename.clock import SYSTEM_CLOCK, Clock, clock_from_options
from zerorename.errors import BadURLError, CommitError
from zerorename.urls import parse_url, user_url

if TYPE_CHECKING:
    from zerorename.executor import PoolBackend

__all__ = [
    "JobContext",
    "Options",
    "ProgressCallback",
    "ProgressEvent",
    "TaskContext",
]

#: Characters allowed in a job ID: it becomes a path element on every store.
_JOB_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")

_SIZE = re.compile(r"^\s*(\d+)\s*([kmgtKMGT]?)[bB]?\s*$")
_SIZE_UNITS = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h)?\s*$")
_DURATION_UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, None: 1.0}

UUID_OPTION = O.JOB_UUID.name
SPARK_UUID_OPTION = O.SPARK_JOB_UUID.name
REQUIRE_UUID_OPTION = O.REQUIRE_UUID.name
PROGRESS_OPTION = O.PROGRESS.name


@dataclass(frozen=True)
class ProgressEvent:
    """A heartbeat from a long operation: ``stage`` name, items ``done`` of ``total``.

    Hadoop reports progress so that a long job commit is not mistaken for a hung process; a
    caller can forward these events to whatever keeps its lease alive.
    """

    stage: str
    done: int
    total: int | None = None
    path: str | None = None


ProgressCallback = Callable[[ProgressEvent], None]


class Options:
    """Read-only options with Hadoop-style parsing (``64M`` sizes, ``500ms`` durations).

    Values may be strings (as in a Hadoop configuration) or already-typed Python values.  A
    malformed value raises :class:`CommitError` naming the option, at committer construction,
    rather than surfacing later as an obscure failure.
    """

    def __init__(self, values: Mapping[str, Any] | None = None) -> None:
        self._values: Mapping[str, Any] = MappingProxyType(dict(values or {}))

    def __contains__(self, name: object) -> bool:
        return name in self._values

    def raw(self, name: str) -> Any:
        return self._values.get(name)

    def as_dict(self) -> dict[str, Any]:
        return dict(self._values)

    def first(self, *names: str) -> Any:
        """The value of the first of ``names`` that is set (new name first, then aliases)."""
        for name in names:
            if name in self._values and self._values[name] is not None:
                return self._values[name]
        return None

    def get_str(self, *names: str, default: str = "") -> str:
        value = self.first(*names)
        return default if value is None else str(value).strip()

    def get_bool(self, *names: str, default: bool = False) -> bool:
        value = self.first(*names)
        if value is None:
            return default
        if isinstance(value, bool):
            return value
        text = str(value).strip().lower()
        if text in ("true", "1", "yes", "on"):
            return True
        if text in ("false", "0", "no", "off"):
            return False
        raise CommitError(names[0], f"option value {value!r} is not a boolean")

    def get_int(self, *names: str, default: int = 0) -> int:
        value = self.first(*names)
        if value is None:
            return default
        if isinstance(value, bool):
            raise CommitError(names[0], f"option value {value!r} is not an integer")
        try:
            return int(str(value).strip())
        except ValueError:
            raise CommitError(names[0], f"option value {value!r} is not an integer") from None

    def get_size(self, *names: str, default: int = 0) -> int:
        """Bytes, accepting Hadoop suffixes: ``5242880``, ``100K``, ``64M``, ``1G``."""
        value = self.first(*names)
        if value is None:
            return default
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        match = _SIZE.match(str(value))
        if not match:
            raise CommitError(names[0], f"option value {value!r} is not a size (e.g. 64M)")
        return int(match.group(1)) * _SIZE_UNITS[match.group(2).lower()]

    def get_seconds(self, *names: str, default: float = 0.0) -> float:
        """A duration in seconds, accepting ``500ms``, ``2s``, ``1m`` or a bare number of s."""
        value = self.first(*names)
        if value is None:
            return default
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
        match = _DURATION.match(str(value))
        if not match:
            raise CommitError(names[0], f"option value {value!r} is not a duration (e.g. 500ms)")
        return float(match.group(1)) * _DURATION_UNITS[match.group(2)]


@dataclass(frozen=True)
class TaskContext:
    """One task attempt of a job: Hadoop-style IDs derived from the job ID.

    ``task_name`` is the same for every attempt of a task; ``attempt_id`` is unique per job
    attempt, task and task attempt (so a restarted job never reuses an attempt's paths).
    """

    job: JobContext
    task_id: int
    attempt: int = 0

    def __post_init__(self) -> None:
        if not isinstance(self.task_id, int) or isinstance(self.task_id, bool) or self.task_id < 0:
            raise CommitError(str(self.task_id), "task_id must be an integer >= 0")
        if not isinstance(self.attempt, int) or isinstance(self.attempt, bool) or self.attempt < 0:
            raise CommitError(str(self.attempt), "task attempt must be an integer >= 0")

    @property
    def task_name(self) -> str:
        return f"task_{self.job.job_id}_m_{self.task_id:06d}"

    @property
    def attempt_id(self) -> str:
        job = self.job
        return f"attempt_{job.job_id}_{job.attempt:02d}_m_{self.task_id:06d}_{self.attempt}"


@dataclass(frozen=True, eq=False)
class JobContext:
    """A job attempt writing to ``dest`` (a directory URL: ``s3://bucket/out``, ``file:///x``).

    A ``file:`` URI is percent-decoded (``Path.as_uri()`` gives ``file:///out%20dir``; the job
    writes to ``/out dir``) — see :func:`~zerorename.urls.user_url`; ``dest`` holds the
    decoded form.  Object-store keys are kept exactly.

    ``job_id=None`` takes the ID from the options (``fs.s3a.committer.uuid``, then
    ``spark.sql.sources.writeJobUUID``) or generates a UUID4; ``job_id_source`` records which,
    with Hadoop's names.  ``attempt`` is the job attempt (0, then 1… after a driver restart).
    ``progress`` receives :class:`ProgressEvent` heartbeats (also accepted as the option
    ``zerorename.committer.progress``).  ``clock`` supplies every timestamp and duration the
    job's committers record; by default the system clock, or a
    :class:`~zerorename.clock.FixedClock` when the option ``zerorename.clock.fixed-millis`` is
    set (records then repeat byte for byte across runs that do the same thing).
    """

    dest: str
    job_id: str | None = None
    attempt: int = 0
    options: Mapping[str, Any] = field(default_factory=dict)
    progress: ProgressCallback | None = None
    clock: Clock = field(default=SYSTEM_CLOCK, repr=False)
    #: how the committers' pools run their work (None: on threads); a simulation harness
    #: gives its own so it can choose the order in which parallel requests land
    pool_backend: PoolBackend | None = field(default=None, repr=False)
    job_id_source: str = field(default="", init=False)

    def __post_init__(self) -> None:
        if not isinstance(self.dest, str):
            raise BadURLError(str(self.dest), "dest must be a URL string")
        dest = user_url(self.dest)  # a file: URI is decoded here, once (BadURLError if bad)
        parsed = parse_url(dest)
        if parsed.scheme == "file" and not parsed.key.strip("/"):
            raise BadURLError(self.dest, "refusing the file system root as a destination")
        object.__setattr__(self, "dest", dest.rstrip("/"))
        object.__setattr__(self, "options", MappingProxyType(dict(self.options or {})))
        O.check_names(self.options)  # a misspelt fs.s3a.* name fails, never falls back
        job_id, source = self._resolve_job_id()
        if not _JOB_ID.match(job_id):
            raise CommitError(job_id, "job ID must be 1-128 characters of [A-Za-z0-9._-], "
                                      "starting with a letter or digit (it names paths)")
        object.__setattr__(self, "job_id", job_id)
        object.__setattr__(self, "job_id_source", source)
        if not isinstance(self.attempt, int) or isinstance(self.attempt, bool) or self.attempt < 0:
            raise CommitError(str(self.attempt), "job attempt must be an integer >= 0")
        if self.progress is None and callable(self.options.get(PROGRESS_OPTION)):
            object.__setattr__(self, "progress", self.options[PROGRESS_OPTION])
        if not isinstance(self.clock, Clock):
            raise CommitError(repr(self.clock), "clock must be a zerorename.clock.Clock")
        if self.clock is SYSTEM_CLOCK:  # an explicit clock wins over the option
            object.__setattr__(self, "clock", clock_from_options(self.options))

    def _resolve_job_id(self) -> tuple[str, str]:
        if self.job_id is not None:
            return str(self.job_id), "Explicit"
        opts = Options(self.options)
        explicit = opts.get_str(UUID_OPTION)
        if explicit:
            return explicit, "CommitterUUIDProperty"
        spark = opts.get_str(SPARK_UUID_OPTION)
        if spark:
            return spark, "SparkWriteUUID"
        if opts.get_bool(REQUIRE_UUID_OPTION):
            raise CommitError(self.dest, f"no job UUID: {REQUIRE_UUID_OPTION} is set but neither "
                                         f"{UUID_OPTION} nor {SPARK_UUID_OPTION} is")
        return uuid.uuid4().hex, "GeneratedLocally"

    @property
    def id(self) -> str:
        """The job ID (never None after construction)."""
        assert self.job_id is not None
        return self.job_id

    @property
    def opts(self) -> Options:
        return Options(self.options)

    def task(self, task_id: int, attempt: int = 0) -> TaskContext:
        """The context of attempt ``attempt`` of task ``task_id`` of this job attempt."""
        return TaskContext(self, task_id, attempt)

    def report(self, event: ProgressEvent) -> None:
        """Send ``event`` to the progress callback, never letting it fail the commit."""
        if self.progress is None:
            return
        try:
            self.progress(event)
        except Exception:  # a broken progress hook must not fail a job commit
            return


def valid_job_id(job_id: str) -> bool:
    """Is ``job_id`` usable as a job ID (it becomes a path element on every store)?"""
    return bool(_JOB_ID.match(job_id))


def hostname() -> str:
    """This host's name, for _SUCCESS (``os.uname`` is POSIX; fall back to the environment)."""
    try:
        return os.uname().nodename
    except AttributeError:  # pragma: no cover - non-POSIX
        return os.environ.get("COMPUTERNAME", "unknown")
