"""Drive Hadoop's committers through a model run's schedule, and compare what both did.

A model run is a sequence of committer calls (:mod:`.recording`'s marks) and store operations.
Hadoop's calls make filesystem calls that do not line up one to one with the model's store
operations (``getFileStatus`` where the model sends a HEAD and a LIST; ``exists`` before a
delete the model sends unconditionally), so each model operation is *aligned* with the Hadoop
actor's next filesystem call instead of counted:

* if the Hadoop actor waits at a call that does the same thing to the same path, the call runs
  (that is the model's breakpoint, reproduced);
* if it waits at a call that matches a *later* operation of the same committer call in the
  model, it stays paused (the model did something Hadoop does not, such as deleting a path
  Hadoop first found absent);
* otherwise the call is Hadoop's own (``mkdirs``, an extra probe): it runs, and the actor
  moves on to its next call; except that a change Hadoop makes of its own accord is not run
  where the model only read (it waits for the model's next change, or the end of the call), so
  that an actor the model crashes or kills right after a read has changed nothing more.

At the end of each committer call the Hadoop actor runs to the end of its call too (or is
crashed, where the model crashed or killed it).  Compared: every call's outcome (returned or
failed, and ``needsTaskCommit``'s answer), and the files each leaves, byte for byte, except
the JSON records whose fields (timestamps, statistics) Hadoop fills in its own way.
"""

from __future__ import annotations

import re
import shutil
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from zerorename_bridge.hadoop.recording import (
    CallMark,
    MarkedResult,
    Outcome,
    ReturnMark,
)
from zerorename_bridge.hadoop.session import Answer, FsCall, HadoopSession, State
from zerorename_model.engine.harness.events import Channel, Event, Op
from zerorename_model.engine.harness.state import TaskKilled, hidden
from zerorename_model.engine.scenario import JobSpec

#: the committers Hadoop's jars hold, by the model's names
COMMITTERS = ("v1", "v2", "manifest")

_ATTEMPT = re.compile(r"attempt_([^_/]+)_(\d{2})_m_(\d{6})_(\d+)")
_TASK = re.compile(r"task_([^_/]+)_m_(\d{6})")
#: files whose bytes are Hadoop's own records, compared by presence only
_RECORDS = ("_SUCCESS", "-manifest.json", ".tmp")

Signature = tuple[str, ...]


def hadoop_name(url: str) -> str:
    """A model URL's path below the scenario root: ``s3://bucket/out/...`` ->
    ``bucket/out/...``, with the model's attempt and task IDs spelled as Hadoop spells them
    (``attempt_job0_0000_m_000000_0``, ``task_job0_0000_m_000000``)."""
    path = url.split("://", 1)[-1].rstrip("/")
    path = _ATTEMPT.sub(lambda m: f"attempt_{m[1]}_0000_m_{m[3]}_{m[4]}", path)
    return _TASK.sub(lambda m: f"task_{m[1]}_0000_m_{m[2]}", path)


@dataclass(frozen=True)
class CallResult:
    """One committer call, in the model and in Hadoop."""

    actor: str
    method: str
    model: Outcome
    model_value: str
    hadoop: State | None  # None: Hadoop's actor was not in a call (crashed before)
    hadoop_value: str

    @property
    def agrees(self) -> bool:
        if self.model is Outcome.CRASHED:
            return True  # the harness ended both; what is left is compared as files
        if self.hadoop is None:
            return False
        same = (self.model is Outcome.RETURNED) == (self.hadoop is State.DONE)
        if same and self.model is Outcome.RETURNED and self.model_value:
            return self.model_value.lower() == self.hadoop_value.lower()
        return same

    def __str__(self) -> str:
        hadoop = self.hadoop.value if self.hadoop else "not run"
        return (f"{self.actor}.{self.method}: model {self.model.value} {self.model_value!r}, "
                f"hadoop {hadoop} {self.hadoop_value!r}")


@dataclass(frozen=True)
class FileDifference:
    path: str  # below the scenario root, in Hadoop's spelling
    model: bytes | None
    hadoop: bytes | None

    def __str__(self) -> str:
        def show(data: bytes | None) -> str:
            return "absent" if data is None else repr(data[:60])
        return f"{self.path}: model {show(self.model)}, hadoop {show(self.hadoop)}"


@dataclass
class Comparison:
    """What a schedule did in the model and in Hadoop, and where they differ."""

    name: str
    outcomes: tuple[str, ...]  # the model's job outcomes
    calls: list[CallResult] = field(default_factory=list)
    files: list[FileDifference] = field(default_factory=list)
    aligned: int = 0  # model operations reproduced at a Hadoop call
    unaligned: int = 0  # model operations Hadoop's actor had no call for there
    #: every answer of Hadoop's side in order (``actor state call-signature-or-outcome``):
    #: what a change of the harness's speed must leave as it was
    trail: list[str] = field(default_factory=list)

    @property
    def call_differences(self) -> list[CallResult]:
        return [c for c in self.calls if not c.agrees]

    @property
    def agrees(self) -> bool:
        return not self.call_differences and not self.files

    def fingerprint(self) -> dict[str, object]:
        """What the comparison found, free of the run's names (bucket, directories): the
        same schedule must give the same fingerprint however fast the harness runs it."""
        return {"name": self.name, "agrees": self.agrees, "aligned": self.aligned,
                "unaligned": self.unaligned,
                "calls": [f"{c.actor}.{c.method} {c.hadoop.value if c.hadoop else '-'}"
                          for c in self.calls],
                "files": [f"{f.path} {f.model is not None} {f.hadoop is not None}"
                          for f in self.files],
                "trail": list(self.trail)}

    def describe(self) -> str:
        lines = [f"{self.name}: {'agrees' if self.agrees else 'DIFFERS'} "
                 f"(model outcomes {', '.join(self.outcomes)}; {self.aligned} operations "
                 f"aligned, {self.unaligned} not)"]
        lines += [f"  call {c}" for c in self.call_differences]
        lines += [f"  file {f}" for f in self.files]
        return "\n".join(lines)


def _signature_of_op(op: Op) -> Signature | None:
    pending = op.said.op
    if pending.channel not in (Channel.STORE, Channel.SUBSTEP):
        return None
    args = pending.args
    name = pending.op
    if name == "put":
        return ("create", hadoop_name(str(args[0])))
    if name == "delete":
        return ("delete", hadoop_name(str(args[0])))
    if name == "delete_many":
        urls = args[0]
        assert isinstance(urls, tuple | list)
        return ("delete", hadoop_name(str(urls[0]))) if urls else None
    if name == "rename":
        return ("rename", hadoop_name(str(args[0])), hadoop_name(str(args[1])))
    if name in ("head", "get", "list_page"):
        return ("read", hadoop_name(str(args[0])))
    return None


def _signature_of_call(call: FsCall, root: str) -> Signature:
    def rel(path: str) -> str:
        return path[len(root):].lstrip("/") if path.startswith(root) else path

    kind = {"stat": "read", "list": "read", "open": "read"}.get(call.kind, call.kind)
    if kind == "rename":
        return ("rename", rel(call.path), rel(call.other))
    return (kind, rel(call.path))


class _Segments:
    """For each model operation, the operations its actor makes later in the same committer
    call (what a paused Hadoop call may still be waiting for)."""

    def __init__(self, stream: Sequence[object],
                 signature: Callable[[Op], Signature | None] | None = None) -> None:
        signature_of = signature or _signature_of_op
        self.later: dict[int, list[Signature]] = {}
        open_ops: dict[str, list[tuple[int, Signature]]] = {}
        for index, item in enumerate(stream):
            if isinstance(item, CallMark):
                open_ops[item.actor] = []
            elif isinstance(item, ReturnMark):
                ops = open_ops.pop(item.actor, [])
                for i, (position, _sig) in enumerate(ops):
                    self.later[position] = [s for _p, s in ops[i + 1:]]
            elif isinstance(item, Op):
                sig = signature_of(item)
                if sig is not None and item.actor in open_ops:
                    open_ops[item.actor].append((index, sig))


class Translator:
    """Replays marked model runs against Hadoop, in one session, one scenario at a time."""

    def __init__(self, session: HadoopSession) -> None:
        self.session = session
        self.workdir = Path(tempfile.mkdtemp(prefix="zerorename-hdfs-"))
        self._count = 0

    def __enter__(self) -> Translator:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Remove the scenarios' working directory (each scenario's own is removed after it)."""
        shutil.rmtree(self.workdir, ignore_errors=True)

    def compare(self, marked: MarkedResult, name: str,
                options: dict[str, str] | None = None) -> Comparison:
        scenario = marked.result.scenario
        if scenario.committer not in COMMITTERS or scenario.store != "hdfs":
            raise ValueError(f"{name}: Hadoop runs {COMMITTERS} on hdfs only, not "
                             f"{scenario.committer} on {scenario.store}")
        self._count += 1
        root = self.workdir / str(self._count)
        shutil.rmtree(root, ignore_errors=True)
        root.mkdir(parents=True)
        self.session.mkdirs(str(root))  # on HDFS too (fs=minidfs): the same root exists
        self.session.reset({**dict(scenario.options), **(options or {})})
        replay = _Replay(self.session, str(root), scenario.committer)
        comparison = replay_marked(replay, marked, name, _signature_of_op)
        comparison.files = self._files(marked, root)
        self.session.remove(str(root))
        shutil.rmtree(root, ignore_errors=True)
        return comparison

    def _files(self, marked: MarkedResult, root: Path) -> list[FileDifference]:
        model = {hadoop_name(url): data for url, data in marked.result.final.items()}
        found = {k: v for k, v in self.session.files(str(root)).items() if v is not None}
        differences = []
        for path in sorted(set(model) | set(found)):
            mine, theirs = model.get(path), found.get(path)
            if mine is not None and theirs is not None and (
                    mine == theirs or (hidden(path) and path.endswith(_RECORDS))):
                continue
            differences.append(FileDifference(path, mine, theirs))
        return differences


def replay_marked(replay: _Replay, marked: MarkedResult, name: str,
                  signature: Callable[[Op], Signature | None]) -> Comparison:
    """Drive ``replay`` through the model run ``marked``: each committer call started and
    finished where the model's was, and each of the model's store operations (by its
    ``signature``) aligned with the Hadoop call the actor is paused at.  The files are the
    caller's to compare (each filesystem reads its own)."""
    stream: list[CallMark | ReturnMark | Event] = list(marked.stream())
    segments = _Segments(stream, signature)
    comparison = Comparison(name, tuple(j.outcome for j in marked.result.jobs))
    for index, item in enumerate(stream):
        if isinstance(item, CallMark):
            replay.call(item)
        elif isinstance(item, ReturnMark):
            comparison.calls.append(replay.finish(item))
        elif isinstance(item, Op):
            sig = signature(item)
            if sig is not None:
                if replay.align(item.actor, sig, segments.later.get(index, [])):
                    comparison.aligned += 1
                else:
                    comparison.unaligned += 1
    comparison.trail = replay.trail
    return comparison


class _Replay:
    """The Hadoop side of one scenario: each actor's current answer."""

    def __init__(self, session: HadoopSession, root: str, committer: str) -> None:
        self.session = session
        self.root = root
        self.committer = committer
        self.answers: dict[str, Answer] = {}
        self.trail: list[str] = []

    def _took(self, actor: str, answer: Answer) -> Answer:
        """Keep ``answer`` in the trail (failures by their exception's class only: messages
        name the run's bucket and directories)."""
        if answer.call is not None:
            shown = " ".join(self._signature(answer.call))
        elif answer.state is State.FAILED:
            shown = answer.value.split(":", 1)[0]
        else:
            shown = answer.value
        self.trail.append(f"{actor} {answer.state.value} {shown}")
        return answer

    def _step(self, actor: str) -> Answer:
        return self._took(actor, self.session.step(actor))

    def _dest(self, job: JobSpec) -> str:
        return f"hlfs://{self.root}/{hadoop_name(job.dest)}"

    def _signature(self, call: FsCall) -> Signature:
        return _signature_of_call(call, self.root)

    def _job_uuid(self, job: JobSpec) -> str:
        """The job's write UUID as the model's committer has it ("": the driver's default,
        the job ID)."""
        return ""

    def call(self, mark: CallMark) -> None:
        task, attempt = (-1, -1) if mark.task is None else (mark.task.task_id, mark.task.attempt)
        previous = self.answers.get(mark.actor)
        if previous is not None and previous.state is State.PENDING:
            raise RuntimeError(f"{mark.actor} starts {mark.method} while in a call")
        self.answers[mark.actor] = self._took(mark.actor, self.session.call(
            mark.actor, self.committer, self._dest(mark.job), mark.job.job_id,
            mark.job.attempt, task, attempt, mark.method, mark.arg, mark.data,
            self._job_uuid(mark.job)))

    def align(self, actor: str, sig: Signature, later: list[Signature]) -> bool:
        answer = self.answers.get(actor)
        while answer is not None and answer.state is State.PENDING and answer.call is not None:
            theirs = self._signature(answer.call)
            if theirs == sig:
                self.answers[actor] = self._step(actor)
                return True
            if theirs in later:
                return False
            if answer.call.mutates and sig[0] == "read":
                return False  # Hadoop's own change waits for a change of the model's
            answer = self._step(actor)
            self.answers[actor] = answer
        return False

    def finish(self, mark: ReturnMark) -> CallResult:
        answer = self.answers.get(mark.actor)
        if answer is None:
            return CallResult(mark.actor, mark.method, mark.outcome, mark.value, None, "")
        if mark.outcome is Outcome.CRASHED:
            if answer.state is State.PENDING:
                # a killed task's call is interrupted (its task then aborts); anything else
                # the harness does to an actor inside a call (crash, restart) ends its process
                killed = mark.value == TaskKilled.__name__
                answer = self._took(mark.actor, (
                    self.session.kill if killed else self.session.crash)(mark.actor))
                while killed and answer.state is State.PENDING:  # its own clean-up, if any
                    answer = self._step(mark.actor)
        else:
            while answer.state is State.PENDING:
                answer = self._step(mark.actor)
        self.answers[mark.actor] = answer
        return CallResult(mark.actor, mark.method, mark.outcome, mark.value, answer.state,
                          answer.value)
