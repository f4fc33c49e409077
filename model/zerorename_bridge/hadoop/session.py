"""One JVM running Hadoop's committers, driven over stdin/stdout (``CommitDriver`` in
``jvm/research``).

The driver is built by the project's Maven build (``scripts/jvm-build.sh``, which the README's
commands run) into ``jars/zerorename-research-jvm.jar`` beside this module, against PySpark's
own jars; nothing binary is committed.  A session starts the JVM once (about a second and a
half, most of it loading Hadoop's classes); each scenario then costs tens of milliseconds.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum
from pathlib import Path

RESEARCH_JAR = Path(__file__).with_name("jars") / "zerorename-research-jvm.jar"
MAIN_CLASS = "zerorename.conformance.CommitDriver"
#: the driver of S3A's committers (same commands), on the class path with the S3A jar set
S3A_MAIN_CLASS = "zerorename.conformance.S3ACommitDriver"
#: the driver of the same committers on a real HDFS (a MiniDFSCluster in its JVM)
MINIDFS_MAIN_CLASS = "zerorename.conformance.MiniDfsCommitDriver"
#: the filesystems Hadoop's own committers run on: ``imitation`` (``HdfsLikeFileSystem``, the
#: local disk with HDFS's rename and listing rules) and ``minidfs`` (HDFS itself, one NameNode
#: and one DataNode started with the session's JVM: about 12 s)
FILESYSTEMS = ("imitation", "minidfs")
MINIDFS_POINTER = Path(__file__).with_name("jars") / "minidfs-jars.path"


class HadoopUnavailable(RuntimeError):
    """No JDK or no Hadoop jars on this machine: the conformance suite cannot run."""


class State(Enum):
    """Where an actor's current committer call stands after a command."""

    PENDING = "pending"  # stopped before a filesystem call
    DONE = "done"        # the call returned
    FAILED = "failed"    # the call threw (or the actor was crashed)


#: the S3 requests (S3A's driver: the SDK's request names) that change the store
S3_CHANGES = frozenset({"PutObject", "DeleteObject", "DeleteObjects", "CopyObject",
                        "CreateMultipartUpload", "UploadPart", "CompleteMultipartUpload",
                        "AbortMultipartUpload"})


@dataclass(frozen=True)
class FsCall:
    """A filesystem call an actor is stopped before: ``kind`` is stat, list, open, create,
    delete, mkdirs or rename; paths are local paths (``other``: a rename's destination).  In
    S3A's driver, an S3 request: ``kind`` the SDK's request name (PutObject...), ``path`` its
    key or prefix in the bucket, ``other`` a copy's destination or a bulk delete's other
    keys."""

    kind: str
    path: str
    other: str = ""

    @property
    def mutates(self) -> bool:
        return self.kind in ("create", "delete", "mkdirs", "rename") or self.kind in S3_CHANGES


@dataclass(frozen=True)
class Answer:
    """The driver's answer: the actor's state, and the call it waits at or the call's
    result (a return value, or the exception's class and message)."""

    state: State
    call: FsCall | None = None
    value: str = ""


def jars_dir() -> Path:
    """PySpark's jar folder (Hadoop 3.5.0's client jars, py4j, logging)."""
    import pyspark

    found = Path(pyspark.__file__).parent / "jars"
    if not any(found.glob("hadoop-client-api-*.jar")):
        raise HadoopUnavailable(f"no hadoop-client-api jar in {found}")
    return found


def s3a_jars_dir() -> Path:
    """The S3A jar set (hadoop-aws 3.5.0, the AWS SDK v2 modules) that ``scripts/jvm-build.sh``
    copies into the cache (as :func:`zerorename.spark.jars.s3a_jars` finds it), or
    :class:`HadoopUnavailable`."""
    from zerorename.spark.jars import S3AJarsMissingError, s3a_jars

    try:
        return s3a_jars()[0].parent
    except S3AJarsMissingError as missing:
        raise HadoopUnavailable(str(missing)) from None


def minidfs_jars_dir() -> Path:
    """The MiniDFSCluster jar set (hadoop-client-minicluster 3.5.0) that
    ``scripts/jvm-build.sh`` copies into the cache and names in ``jars/minidfs-jars.path``, or
    :class:`HadoopUnavailable` naming how to fetch it."""
    folder = Path(MINIDFS_POINTER.read_text().strip()) if MINIDFS_POINTER.is_file() else None
    if folder is None or not any(folder.glob("hadoop-client-minicluster-*.jar")):
        raise HadoopUnavailable(f"no hadoop-client-minicluster jar (named by {MINIDFS_POINTER}):"
                                f" run scripts/jvm-build.sh (the README's commands run it)")
    return folder


def research_jar() -> Path:
    """The research drivers' jar, or :class:`HadoopUnavailable` naming how to build it."""
    if not RESEARCH_JAR.is_file():
        raise HadoopUnavailable(f"{RESEARCH_JAR} is missing: build the Java with "
                                f"scripts/jvm-build.sh (the README's commands run it)")
    return RESEARCH_JAR


class HadoopSession:
    """A JVM with the driver; one command, one answer.  Use as a context manager."""

    def __init__(self, *, s3a: bool = False, classpath: Sequence[str] = (),
                 fs: str = "imitation") -> None:
        """``classpath``: more jars or folders (a user's committer classes), after the
        research jar, PySpark's jars and (``s3a``) the S3A set.  ``fs``: the filesystem of
        the HDFS committers, one of :data:`FILESYSTEMS` (``minidfs`` starts a cluster)."""
        if fs not in FILESYSTEMS:
            raise ValueError(f"no filesystem {fs!r}: one of {', '.join(FILESYSTEMS)}")
        java = shutil.which("java")
        if java is None:
            raise HadoopUnavailable("no java on PATH")
        self.fs = fs
        path = [str(research_jar()), f"{jars_dir()}/*"]
        if s3a:
            path.append(f"{s3a_jars_dir()}/*")
        if fs == "minidfs":
            path.append(f"{minidfs_jars_dir()}/*")
        path += list(classpath)
        main = S3A_MAIN_CLASS if s3a else MINIDFS_MAIN_CLASS if fs == "minidfs" else MAIN_CLASS
        self._proc = subprocess.Popen(
            [java, "-Xshare:auto", "-XX:TieredStopAtLevel=1", "-cp", os.pathsep.join(path),
             main],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            text=True, encoding="utf-8", bufsize=1)
        self.command("ping")

    def __enter__(self) -> HadoopSession:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self._proc.poll() is None:
            assert self._proc.stdin is not None
            self._proc.stdin.close()
            try:
                self._proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()

    def command(self, *words: str) -> list[str]:
        """Send one command; answer its words (an ``error`` answer raises)."""
        assert self._proc.stdin is not None and self._proc.stdout is not None
        self._proc.stdin.write("\t".join(words) + "\n")
        self._proc.stdin.flush()
        line = self._proc.stdout.readline()
        if not line:
            raise HadoopUnavailable(f"the JVM ended (exit {self._proc.poll()})")
        answer = line.rstrip("\n").split("\t")
        if answer[0] == "error":
            raise RuntimeError(f"hadoop driver: {' '.join(answer[1:])} (after {words[:2]})")
        return answer

    def _answer(self, words: list[str]) -> Answer:
        state = State(words[0])
        if state is State.PENDING:
            other = words[3] if len(words) > 3 else ""
            return Answer(state, FsCall(words[1], words[2], other))
        return Answer(state, value="\t".join(words[1:]))

    # -- the commands ----------------------------------------------------------------------------

    def reset(self, options: dict[str, str] | None = None) -> None:
        """End every actor of the previous scenario; set the next one's committer options."""
        self.command("reset")
        for key, value in (options or {}).items():
            self.command("option", key, value)

    def call(self, actor: str, committer: str, dest: str, job: str, job_attempt: int,
             task: int, attempt: int, method: str, arg: str = "",
             data: bytes = b"", job_uuid: str = "") -> Answer:
        """Start ``method`` (the model's name: setup_job, commit_task, write...) in the
        actor's thread; answer when it stops before a filesystem call or ends.  ``job_uuid``:
        the job's write UUID (``spark.sql.sources.writeJobUUID``), by default ``job``."""
        return self._answer(self.command(
            "call", actor, committer, dest, job, str(job_attempt), str(task), str(attempt),
            method, arg, data.hex(), job_uuid))

    def step(self, actor: str) -> Answer:
        """Let the actor make the call it waits at; answer where it stops next."""
        return self._answer(self.command("step", actor))

    def crash(self, actor: str) -> Answer:
        """The call the actor waits at, and every later one, throws: the process died."""
        return self._answer(self.command("crash", actor))

    def kill(self, actor: str) -> Answer:
        """The call the actor waits at throws (a killed task's interrupted call); the actor
        lives on, so its task can still abort."""
        return self._answer(self.command("kill", actor))

    def mkdirs(self, directory: str) -> None:
        """Make a scenario's root on the session's filesystem (outside any actor's call)."""
        self.command("mkdirs", directory)

    def remove(self, directory: str) -> None:
        """Remove a finished scenario's root from the session's filesystem."""
        self.command("remove", directory)

    def files(self, directory: str) -> dict[str, bytes | None]:
        """Everything under ``directory``: relative path -> bytes (None for a directory,
        whose path ends with ``/``)."""
        found: dict[str, bytes | None] = {}
        for entry in self.command("files", directory)[1:]:
            if entry.endswith("/"):
                found[entry] = None
            else:
                name, _, data = entry.rpartition("=")
                found[name] = bytes.fromhex(data)
        return found
