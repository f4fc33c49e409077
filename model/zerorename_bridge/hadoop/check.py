"""``zerorename check --target hadoop``: Hadoop's own committers explored under the model's
scheduler and fault choices (issue 45, item 3; issue 47, item 3).

The conformance translator (:mod:`.translate`) replays a schedule the *model's* committer
chose; here the real committer is the one explored.  Each committer call of the harness
(``setup_job``, ``commit_task``...) is a call into the research driver's JVM, and each
filesystem call (HDFS-like) or S3 request (S3A on moto) the Java committer is about to make is
one harness step (:meth:`~zerorename_model.engine.harness.Env.step`): the model's scheduler
decides which actor moves next, and its crashes, kills, partitions, duplicate attempts,
restarts and job failures strike at those points.  A run's store is the real one — the
HDFS-like filesystem's directory or the moto bucket — seen through a harness store
(:class:`HadoopStore`) that snapshots it for the property checkers, so the model's own
checkers decide completeness, exclusivity, valid-outcome, concurrency, abortability,
continuity and liveness on what Hadoop's code did, in the model's scopes, and each violation
is saved as a trace that replays (:func:`replay`).

What the driver cannot reproduce is left out: the store's own faults (a lost answer, a
throttled request, a 409; the ``ambiguous`` scopes), and consistency (the stores are
consistent).  Hadoop's committers take no task commit messages (``commitJob`` finds the tasks'
work itself), so a cell is decided once and shown under both protocols, as the model does for
its own v1.  A restarted job attempt runs every task again (Spark's behaviour: it never calls
``recoverTask``).

Names: ``v1``, ``v2``, ``manifest`` (HDFS-like filesystem), ``magic``, ``directory``,
``partitioned`` (S3A 3.5.0 on moto), or ``hadoop:<class>`` — any ``PathOutputCommitter`` with
the ``(Path, TaskAttemptContext)`` constructor, on the class path the research driver is given
plus :data:`CLASSPATH_VARIABLE` (jars or folders, ``os.pathsep``-separated), driven on the
HDFS-like filesystem (``--store hdfs``) or on moto through S3A (``--store s3``, the S3A jars on
the class path).
"""

from __future__ import annotations

import atexit
import hashlib
import json
import os
import re
import shutil
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from zerorename.errors import CommitError
from zerorename_bridge.hadoop.s3a_translate import S3A_COMMITTERS, MotoEndpoint
from zerorename_bridge.hadoop.session import Answer, HadoopSession, HadoopUnavailable, State
from zerorename_bridge.hadoop.translate import COMMITTERS as HDFS_COMMITTERS
from zerorename_bridge.hadoop.translate import hadoop_name
from zerorename_model.engine.errors import ActorCrashed, JobAlreadyCommitted, RunAborted
from zerorename_model.engine.harness.state import HarnessStore, RunResult, TaskKilled
from zerorename_model.engine.scenario import CommittedByAnother, CommitterEnv, JobSpec, TaskSpec
from zerorename_model.engine.stores.profiles import PROFILES, Profile
from zerorename_model.experiments.cells import Cell
from zerorename_model.experiments.verdicts import Budget

__all__ = ["BUILTIN", "CLASSPATH_VARIABLE", "HADOOP_PREFIX", "PROPERTIES", "STORES",
           "HadoopCallFailed", "HadoopCommitterError", "HadoopFactory", "HadoopStore",
           "hadoop_resolver", "jvm_name", "store_for"]

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


# -- the harness store over the real one -------------------------------------------------------


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


#: a time a Java ``FileStatus`` prints (``modification_time=1796179851311``): it differs
#: from run to run, and a failed call's message is part of the run's final state
_CLOCK = re.compile(r"\b(modification_time|access_time)=\d+")
#: what an S3 error S3A quotes names that differs from run to run: the upload's ID (moto's
#: are random) and the request's ID (``Completing multipart upload id <id>``, ``Request ID:
#: <id>``); without them a witness of S3A's committers replays to the same final state
_S3_IDS = re.compile(r"\b((?:[Uu]pload|multipart upload) (?:[Ii][Dd])|Request ID:) [^\s,;)]+")


#: how the driver reports the fenced committer's JobAlreadyCommittedException
_ROLLED_FORWARD = "JobAlreadyCommittedException: "
#: a Hadoop task attempt ID's task and attempt numbers (the fenced committer's ``commit_task``
#: answers the attempt whose record committed the task)
_ATTEMPT = re.compile(r"_m_(?P<task>\d+)_(?P<attempt>\d+)$")


# -- the committer the harness drives ------------------------------------------------------------


class HadoopCommitter:
    """One actor's committer: each method a call into the JVM, each filesystem call (or S3
    request) it makes a harness step."""

    def __init__(self, factory: HadoopFactory, env: CommitterEnv, job: JobSpec,
                 task: TaskSpec | None) -> None:
        self.factory = factory
        self.env: Any = env
        self.job = job
        self.task = task
        place = _PROCESS.run
        assert place is not None, "a Hadoop committer outside a run of HadoopStore"
        self.place = place
        self.session = _session(place.s3a)

    def _dest(self) -> str:
        rel = hadoop_name(self.job.dest)
        if self.place.s3a:
            bucket, _, key = rel.partition("/")
            if bucket != MODEL_BUCKET:
                raise HadoopCommitterError(self.job.dest, (
                    f"the S3A driver writes the model's bucket {MODEL_BUCKET!r} to a moto "
                    f"bucket of its own; a scenario naming bucket {bucket!r} cannot run there"))
            return f"s3a://{self.place.root}/{key}"
        return f"hlfs://{self.place.root}/{rel}"

    def _shown(self, path: str) -> str:
        """A path as traces show it: below the run's root (the same in every run)."""
        for root in (self.place.root, self.place.local):
            if root in path:
                return path.split(root, 1)[1].lstrip("/")
        return self._shown_text(path)

    def _call(self, method: str, arg: str = "", data: bytes = b"") -> str:
        actor = self.env.actor_name
        task, attempt = (-1, -1) if self.task is None else (self.task.task_id,
                                                            self.task.attempt)
        session = self.session
        try:
            answer = session.call(actor, self.factory.jvm, self._dest(), self.job.job_id,
                                  self.job.attempt, task, attempt, method, arg, data)
        except RuntimeError as error:  # the driver could not even start the call
            raise HadoopCallFailed(str(error)) from None
        while answer.state is State.PENDING:
            call = answer.call
            assert call is not None
            what = f"hadoop {call.kind} {self._shown(call.path)}" + (
                f" {self._shown(call.other)}" if call.other else "")
            took: list[Answer] = []
            try:
                self.env.step(what, self._stepper(actor, call.mutates, took))
                answer = took[-1]
            except TaskKilled:
                _PROCESS.changes += 1
                # the call it waits at throws (a killed task's interrupted call); what it
                # does then (its own clean-up) runs to the end of the call
                answer = session.kill(actor)
                while answer.state is State.PENDING:
                    answer = session.step(actor)
                raise
            except (ActorCrashed, RunAborted):
                session.crash(actor)
                raise
        if answer.state is State.FAILED:
            raise HadoopCallFailed(self._shown_text(answer.value))
        return answer.value

    def _stepper(self, actor: str, mutates: bool, took: list[Answer]) -> Callable[[], str]:
        """The harness step's action: the JVM makes the call its actor waits at and runs to
        its next one (kept in ``took``); the step records what it was told."""
        def step() -> str:
            if mutates:
                _PROCESS.changes += 1
            took.append(self.session.step(actor))
            return self._shown_answer(took[-1])
        return step

    def _shown_text(self, text: str) -> str:
        """``text`` with the run's own directories named as in every run, and the clock
        readings a Java exception quotes (a ``FileStatus``'s times) left out, so that a
        witness replays to the same state."""
        for root, shown in ((self.place.local, "<run>"), (self.place.root, "<root>")):
            text = text.replace(root, shown)
        return _S3_IDS.sub(r"\1 <id>", _CLOCK.sub(r"\1=<t>", text))

    def _shown_answer(self, answer: Answer) -> str:
        """What a step's answer records in the actor's history (the same in every run)."""
        if answer.call is not None:
            call = answer.call
            return self._shown_text(f"{answer.state.value} {call.kind} {call.path} {call.other}"
                                    .rstrip())
        return self._shown_text(f"{answer.state.value} {answer.value}".rstrip())

    def setup_job(self) -> None:
        try:
            self._call("setup_job")
        except HadoopCallFailed as failed:
            # zerorename's fenced committer: an earlier attempt of the job committed it, and
            # this setup published its output (rolled forward)
            if str(failed).startswith(_ROLLED_FORWARD):
                raise JobAlreadyCommitted(str(failed)) from None
            raise

    def setup_task(self) -> None:
        self._call("setup_task")

    def write(self, relpath: str, data: bytes) -> None:
        self._call("write", relpath, data)

    def needs_task_commit(self) -> bool:
        return self._call("needs_task_commit").strip().lower() == "true"

    def commit_task(self) -> object:
        committed_by = self._call("commit_task").strip()
        won = _ATTEMPT.search(committed_by)
        if won and self.task is not None and (int(won["task"]), int(won["attempt"])) != (
                self.task.task_id, self.task.attempt):
            # zerorename's fenced committer: another attempt's record commits the task
            winner = TaskSpec(self.job, int(won["task"]), int(won["attempt"]))
            return CommittedByAnother(winner.attempt_id, None)
        return None  # Hadoop's commitTask gives the driver no message

    def abort_task(self) -> None:
        self._call("abort_task")

    def commit_job(self, messages: list[Any] | None) -> None:
        self._call("commit_job")

    def abort_job(self) -> None:
        self._call("abort_job")

    def cleanup_job(self) -> None:
        self._call("cleanup_job")


class HadoopFactory:
    """The harness's factory for one Hadoop committer (built-in or ``hadoop:<class>``)."""

    #: Spark never calls recoverTask: a restarted job attempt runs every task again
    supports_recovery = False
    #: commitJob finds the tasks' work itself: the driver's messages are not passed
    takes_messages = False

    def __init__(self, name: str) -> None:
        self.name = name
        self.jvm = jvm_name(name)
        model = _model_class(name)
        #: what the model's committer of the same name declares (a class of the user's:
        #: nothing is promised before the job commits)
        self.visible_before_job_commit = bool(getattr(model, "visible_before_job_commit",
                                                      False))

    def __call__(self, env: CommitterEnv, job: JobSpec, task: TaskSpec | None,
                 options: dict[str, str]) -> HadoopCommitter:
        return HadoopCommitter(self, env, job, task)


def _model_class(name: str) -> object:
    if name not in BUILTIN:
        return None
    from zerorename_model.systems.protocols import get

    return get(name)


def hadoop_resolver(committer: str, store: str) -> tuple[HadoopFactory,
                                                         Callable[[], HarnessStore]]:
    """Like :func:`zerorename_model.experiments.verdicts.model_resolver`, for Hadoop's
    committers (module-level, so that the matrix's worker processes can import it)."""
    return HadoopFactory(committer), store_backend(store)


def check_available(committer: str, store: str) -> None:
    """Start the JVM of ``store`` and build ``committer`` once, so that a class that is not
    there fails before any exploration, naming the class and the fix."""
    try:
        place = HadoopStore(store).place
    except HadoopUnavailable as missing:
        raise HadoopCommitterError(committer, f"the research driver cannot start: {missing}"
                                   ) from None
    session = _session(place.s3a)
    dest = (f"s3a://{place.root}/probe" if place.s3a else f"hlfs://{place.root}/probe")
    try:
        session.command("call", "probe", jvm_name(committer), dest, "job0", "0", "-1", "-1",
                        "needs_task_commit", "", "")
    except RuntimeError as error:
        raise HadoopCommitterError(committer, (
            f"the JVM cannot drive it ({error}); put its jar on the class path (--jar or "
            f"${CLASSPATH_VARIABLE}), and give the class the constructor (Path, "
            "TaskAttemptContext) of a PathOutputCommitter")) from None
    finally:
        session.reset()


# -- deciding cells, and witnesses that replay ---------------------------------------------------

#: a witness trace's header says which committers it ran (``zerorename trace replay``)
TARGET = "hadoop"


def replay_run(events: Sequence[Mapping[str, object]], source: str = "<trace>",
               driver: str | None = None) -> RunResult:
    """Run a Hadoop witness again with its recorded choices, on the store it ran on (raises
    :class:`~zerorename_model.experiments.trace.TraceDivergence` where it differs);
    ``driver``: under another protocol's driver."""
    from zerorename_model.engine.harness import Run
    from zerorename_model.engine.json_values import json_object
    from zerorename_model.engine.scenario import Scenario
    from zerorename_model.experiments.trace import _RecordedChooser

    header = json_object(events[0]["scenario"])
    if driver is not None:
        header = {**header, "driver": driver}
    scenario = Scenario.from_json(header)
    factory, backend = hadoop_resolver(scenario.committer, scenario.store)
    chooser = _RecordedChooser(source, [e for e in events if e.get("t") == "choice"])
    return Run(scenario, factory, backend=backend()).run(chooser)


@dataclass(frozen=True)
class Replayed:
    same: bool
    recorded_digest: str
    replayed_digest: str
    result: RunResult


def replay(path: str | Path) -> Replayed:
    """Run a witness of ``check --target hadoop`` again; compare the final states' digests."""
    from zerorename_model.experiments.trace import read_trace

    events = read_trace(path)
    ends = [e for e in events if e.get("t") == "end"]
    recorded = str(ends[-1]["digest"]) if ends else ""
    result = replay_run(events, str(path))
    return Replayed(result.digest == recorded, recorded, result.digest, result)


def is_hadoop_trace(events: Sequence[Mapping[str, object]]) -> bool:
    return bool(events) and events[0].get("target") == TARGET


def _mark(path: str) -> None:
    from zerorename_model.experiments.trace import read_trace, write_trace

    events = read_trace(path)
    events[0] = {**events[0], "target": TARGET}
    write_trace(path, events)


def _under(cell: Cell, protocol: str) -> Cell:
    """``cell`` (decided under Hadoop's protocol) under ``protocol``: Hadoop's committers take
    no messages, so the driver's runs are the same step for step; a witness is run again
    under ``protocol`` (on the real store) and must reach the same state and violation."""
    from zerorename_model.check.properties import PROPERTIES as CHECKERS
    from zerorename_model.experiments.cells import JobProtocol
    from zerorename_model.experiments.trace import read_trace, write_trace

    same = replace(cell, protocol=JobProtocol(protocol),
                   explored=replace(cell.explored, runs_of=str(cell.protocol)))
    if cell.trace is None:
        return same
    events = read_trace(cell.trace)
    result = replay_run(events, cell.trace, driver=protocol)
    found = CHECKERS[cell.prop](result)
    if result.digest != str(events[-1]["digest"]) or not found:
        raise AssertionError(f"{cell.trace} under {protocol}'s protocol reached another state: "
                             "the harness depends on the protocol for Hadoop's committers")
    trace = list(result.trace)
    trace[-1] = {**trace[-1], "violations": [str(v) for v in found]}
    trace[0] = {**trace[0], "target": TARGET}
    path = Path(cell.trace)
    named = path.with_name(path.name.replace(f".{cell.protocol}.", f".{protocol}.", 1))
    return replace(same, trace=str(write_trace(named, trace)))


def decide(committer: str, store: str, props: Sequence[str], budget: Budget,
           traces: str | None, protocols: Sequence[str] = ("hadoop", "spark")) -> list[Cell]:
    """Every requested property's cell for one Hadoop committer on one store: explored once
    under Hadoop's protocol, shown under each of ``protocols``."""
    from zerorename_model.experiments.verdicts import decide_pair

    first = decide_pair(committer, store, props, budget, traces, hadoop_resolver,
                        protocols=("hadoop",))
    for cell in first:
        if cell.trace:
            _mark(cell.trace)
    cells = [c if protocol == "hadoop" else _under(c, protocol)
             for c in first for protocol in protocols]
    return cells


#: ``check --target hadoop --quick``: the model's quick budget, runs per scope
QUICK_RUNS = 40
#: ``check --target hadoop`` without ``--quick``: the stated budget, runs per scope (the
#: model's paper budget; a scope it does not exhaust is reported ``holds*``)
FULL_RUNS = 1_000


def run_check(committers: Sequence[str] | None, stores: Sequence[str] | None,
              props: Sequence[str] | None, *, quick: bool, traces: str | None,
              protocols: Sequence[str] = ("hadoop", "spark"),
              jars: Sequence[str] | None = None,
              progress: Callable[[str], None] | None = None,
              max_runs: int | None = None, fs: str = "imitation") -> list[Cell]:
    """``zerorename check --target hadoop``: each committer's cells, on its store(s), at
    :data:`QUICK_RUNS` (``quick``) or :data:`FULL_RUNS` runs per scope (or ``max_runs``);
    ``fs``: the hdfs committers' filesystem (``minidfs``: a MiniDFSCluster)."""
    if fs != _PROCESS.fs:
        close()  # a JVM started before runs on the other filesystem
        _PROCESS.fs = fs
    for jar in jars or ():
        if not Path(jar).exists():
            raise HadoopCommitterError(jar, "no such jar or folder: give the path of the jar "
                                            "holding your committer class")
    if jars:
        os.environ[CLASSPATH_VARIABLE] = os.pathsep.join(
            [*(str(Path(j).resolve()) for j in jars), *extra_classpath()])
        close()  # a JVM started before has the old class path
    names = list(committers or BUILTIN)
    wanted = tuple(props or PROPERTIES)
    for prop in wanted:
        if prop not in PROPERTIES:
            raise ValueError(f"--target hadoop decides {', '.join(PROPERTIES)}, not {prop!r} "
                             "(the drivers' stores are consistent: consistency cannot arise)")
    plan = [(name, store) for name in names for store in store_for(name, stores)]
    budget = Budget(max_runs=max_runs or (QUICK_RUNS if quick else FULL_RUNS))
    cells: list[Cell] = []
    try:
        for name, store in plan:
            if name not in BUILTIN:
                check_available(name, store)
            row = decide(name, store, wanted, budget, traces, protocols)
            if progress:
                progress(f"{name} on {store} (Hadoop 3.5.0 in the JVM, {budget.max_runs} runs "
                         "per scope): " + ", ".join(
                             f"{c.prop}={c.shown}" for c in row if str(c.protocol) == protocols[0]))
            cells += row
    finally:
        close()
    return cells
