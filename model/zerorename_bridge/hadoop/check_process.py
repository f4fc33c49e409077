"""The names, errors and per-process state of ``zerorename check --target hadoop``
(:mod:`zerorename_bridge.hadoop.check`): which committers and stores it drives, and the one
research-driver JVM per store kind, moto server and working directory a process keeps."""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from zerorename.errors import CommitError
from zerorename_bridge.hadoop.s3a_translate import S3A_COMMITTERS, MotoEndpoint
from zerorename_bridge.hadoop.session import HadoopSession
from zerorename_bridge.hadoop.translate import COMMITTERS as HDFS_COMMITTERS

__all__ = ["BUILTIN", "CLASSPATH_VARIABLE", "HADOOP_PREFIX", "PROPERTIES", "STORES",
           "HadoopCallFailed", "HadoopCommitterError", "close", "extra_classpath", "jvm_name",
           "store_for"]

#: the prefix of a JVM committer class's name (as in :mod:`zerorename_bridge.plugins`)
HADOOP_PREFIX = "hadoop:"
#: more class path for ``hadoop:<class>`` (jars or folders, ``os.pathsep``-separated)
CLASSPATH_VARIABLE = "ZERORENAME_HADOOP_CLASSPATH"
#: the real committers by the model's names, and the store each runs on
BUILTIN = {**{c: "hdfs" for c in HDFS_COMMITTERS}, **{c: "s3" for c in S3A_COMMITTERS}}
#: the stores a Hadoop committer runs on: the HDFS-like filesystem, S3A on moto
STORES = ("hdfs", "s3")
#: what the driver can observe (consistency needs a lagging store; the stores are consistent)
PROPERTIES = ("completeness", "exclusivity", "valid-outcome", "concurrency", "abortability",
              "continuity", "liveness")


class HadoopCommitterError(CommitError):
    """A ``--target hadoop`` committer or store that cannot be driven: an unknown short name,
    a ``hadoop:<class>`` the JVM cannot load as a ``PathOutputCommitter``, or a store the
    committer does not run on.  Its path is the committer's name as given."""


class HadoopCallFailed(Exception):
    """A Hadoop committer call threw (its class and message, as the JVM reported them)."""


def jvm_name(committer: str) -> str:
    """What the driver's ``call`` command names: a built-in's short name, or the class."""
    if committer.startswith(HADOOP_PREFIX):
        return committer[len(HADOOP_PREFIX):]
    if committer not in BUILTIN:
        raise HadoopCommitterError(committer, (
            f"unknown Hadoop committer {committer!r}: name one of {sorted(BUILTIN)} or "
            f"{HADOOP_PREFIX}<class> (a PathOutputCommitter on the class path; add jars with "
            f"--jar or ${CLASSPATH_VARIABLE})"))
    return committer


def store_for(committer: str, stores: Sequence[str] | None) -> list[str]:
    """The stores ``committer`` is explored on: a built-in's own, or those asked for
    (``hadoop:<class>``: default hdfs)."""
    if committer in BUILTIN:
        own = BUILTIN[committer]
        if stores and own not in stores:
            raise HadoopCommitterError(committer, (
                f"Hadoop's {committer} runs on {own} only, not {', '.join(stores)}: drop "
                f"--store or name {own}"))
        return [own]
    jvm_name(committer)
    chosen = list(stores or ["hdfs"])
    for store in chosen:
        if store not in STORES:
            raise HadoopCommitterError(committer, (
                f"--target hadoop runs on {' or '.join(STORES)} (the HDFS-like filesystem, "
                f"S3A on moto), not {store!r}"))
    return chosen


def extra_classpath() -> list[str]:
    return [p for p in os.environ.get(CLASSPATH_VARIABLE, "").split(os.pathsep) if p]


# -- one JVM (and one moto server) per process ---------------------------------------------------


@dataclass
class _Process:
    sessions: dict[bool, HadoopSession]
    endpoint: MotoEndpoint | None = None
    workdir: Path | None = None
    run: _RunPlace | None = None
    runs: int = 0
    #: bumped whenever an actor may have changed the store (its view is read again)
    changes: int = 0
    #: the HDFS committers' filesystem: the imitation or a MiniDFSCluster (``--fs``)
    fs: str = "imitation"


_PROCESS = _Process({})


def _session(s3a: bool) -> HadoopSession:
    found = _PROCESS.sessions.get(s3a)
    if found is None:
        found = _PROCESS.sessions[s3a] = HadoopSession(
            s3a=s3a, classpath=extra_classpath(), fs="imitation" if s3a else _PROCESS.fs)
        if len(_PROCESS.sessions) == 1 and _PROCESS.endpoint is None:
            atexit.register(close)
    return found


def _endpoint() -> MotoEndpoint:
    if _PROCESS.endpoint is None:
        _PROCESS.endpoint = MotoEndpoint()
    return _PROCESS.endpoint


def _workdir() -> Path:
    if _PROCESS.workdir is None:
        _PROCESS.workdir = Path(tempfile.mkdtemp(prefix="zerorename-hadoop-check-"))
    return _PROCESS.workdir


def close() -> None:
    """End this process's JVMs and moto server, remove its working directory."""
    for session in _PROCESS.sessions.values():
        session.close()
    _PROCESS.sessions.clear()
    if _PROCESS.endpoint is not None:
        _PROCESS.endpoint.close()
        _PROCESS.endpoint = None
    if _PROCESS.workdir is not None:
        shutil.rmtree(_PROCESS.workdir, ignore_errors=True)
        _PROCESS.workdir = None


@dataclass(frozen=True)
class _RunPlace:
    """Where the current run's committers write: a directory (HDFS-like) or a bucket (S3A)."""

    s3a: bool
    root: str  # the HDFS-like run directory, or the bucket
    local: str  # the staging committers' cluster filesystem and buffers (S3A)

