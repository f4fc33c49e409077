"""Reading a trace as data: its steps, the store's state after any step, and what changed.

A trace file (JSON lines, :mod:`zerorename_model.experiments.trace`) is the record a user keeps and
shares, so analysis works from the file alone, never from a live run: a trace written by
``zerorename check --traces`` last month opens the same way as one written a moment ago.

The store's state is rebuilt from the recorded operations in order (the authoritative state:
what the store holds after each operation applied).  What a *listing* reader sees can lag that
on an eventually consistent profile (``s3-2018``); those traces carry ``settle``/``visible``
events, kept here as steps so that a reader of the timeline sees when a write became listable.
"""

from __future__ import annotations

import enum
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from zerorename_model.engine.harness import STORE_OPS
from zerorename_model.engine.json_values import json_list, json_object
from zerorename_model.engine.stores.profiles import PROFILES

#: Scheduler moves that are faults or environment events rather than an actor's own step.
FAULT_MOVES = ("crash", "partition", "speculate", "restart", "fail_job", "throttle",
               "lost_answer", "conflict")
VISIBILITY_MOVE = "settle"

WRITE_OPS = frozenset({"put", "complete_multipart", "copy", "rename"})
DELETE_OPS = frozenset({"delete", "delete_many", "rename"})
UPLOAD_OPS = frozenset({"create_multipart", "upload_part", "abort_multipart",
                        "complete_multipart"})
READ_OPS = frozenset({"get", "head", "list_page", "list_multipart_uploads", "copy"})


class StepKind(enum.Enum):
    """What a step of a trace is: who acted, and through which channel."""

    STORE = "store"            # an actor's request to the store
    DRIVER = "driver"          # a call between a task attempt and its driver (can_commit?, …)
    FAULT = "fault"            # the scheduler's fault: crash, partition, speculate, restart, …
    VISIBILITY = "visibility"  # a lagging write became visible (eventually consistent stores)


@dataclass(frozen=True)
class Step:
    """One step of a trace, in order.  ``keys`` are the store URLs the step names (for a copy
    or rename: source, then destination), ``result`` the recorded answer as text."""

    index: int
    kind: StepKind
    actor: str
    op: str
    keys: tuple[str, ...] = ()
    result: str = ""
    detail: str = ""
    upload_id: str = ""

    def label(self) -> str:
        """A description for printed slices: actor, operation, key below the bucket."""
        target = self.keys[-1].split("/", 3)[-1] if self.keys else self.detail
        text = f"{self.actor}: {self.op}"
        return f"{text} {target}".strip()

    def short_label(self) -> str:
        """A label short enough for a graph node: actor, operation, the key's last name."""
        target = self.keys[-1].rstrip("/").rsplit("/", 1)[-1] if self.keys else ""
        return f"{self.actor}\n{self.op} {target}".strip()


@dataclass
class Trace:
    """A trace file read as steps, with its header and outcome."""

    path: str
    scenario: dict[str, object]
    steps: list[Step]
    outcomes: list[str] = field(default_factory=list)
    violations: list[str] = field(default_factory=list)
    digest: str = ""

    @property
    def actors(self) -> list[str]:
        """Actors in order of first appearance (drivers first when they act first)."""
        seen: dict[str, None] = {}
        for step in self.steps:
            seen.setdefault(step.actor, None)
        return list(seen)


def _keys_of(op: str, args: Sequence[object]) -> tuple[str, ...]:
    if not args:
        return ()
    if op == "delete_many":
        return tuple(str(url) for url in json_list(args[0]))
    if op in ("copy", "rename"):
        return (str(args[0]), str(args[1]))
    return (str(args[0]),)


def _move_step(index: int, move: str) -> Step | None:
    """A scheduler choice that is not an actor's plain step: a fault or a visibility event."""
    verb, _, rest = move.partition(" ")
    if verb in FAULT_MOVES:
        actor, _, at = rest.partition(":")
        return Step(index, StepKind.FAULT, actor.strip(), verb, detail=at.strip())
    if verb == VISIBILITY_MOVE:
        what, _, url = rest.partition(" ")
        return Step(index, StepKind.VISIBILITY, "store", f"visible ({what})", keys=(url,))
    return None


def steps_of(events: Iterable[Mapping[str, object]]) -> list[Step]:
    """The trace's steps: store requests, driver calls, faults and visibility events."""
    steps: list[Step] = []
    for event in events:
        kind = event.get("t")
        if kind == "choice":
            step = _move_step(len(steps), str(event["move"]))
            if step is not None:
                steps.append(step)
        elif kind == "op":
            op = str(event["op"])
            args = json_list(event.get("args"))
            step_kind = StepKind.STORE if op in STORE_OPS else StepKind.DRIVER
            result = str(event.get("result", ""))
            upload = result if op == "create_multipart" else (
                str(args[1]) if op in UPLOAD_OPS and len(args) > 1 else "")
            steps.append(Step(len(steps), step_kind, str(event["actor"]), op,
                              keys=_keys_of(op, args), result=result, upload_id=upload))
    return steps


def load(path: str | Path) -> Trace:
    """Read a trace file (any written by this repository: matrix witnesses, Table V probes,
    ``check --traces``) into steps."""
    lines = [line for line in Path(path).read_text(encoding="utf-8").splitlines() if line.strip()]
    events = [json.loads(line) for line in lines]
    if not events or events[0].get("t") != "header":
        raise ValueError(f"{path}: not a zerorename trace (no header line)")
    return from_events(events, source=str(path))


def from_events(events: Sequence[Mapping[str, object]], source: str = "<trace>") -> Trace:
    """A trace from its events (as :func:`zerorename_model.experiments.trace.read_trace` returns
    them, or as a run's ``trace`` holds them)."""
    ends = [e for e in events if e.get("t") == "end"]
    end: Mapping[str, object] = ends[-1] if ends else {}
    return Trace(source, json_object(events[0]["scenario"]), steps_of(events[1:]),
                 [str(o) for o in json_list(end.get("outcomes"))],
                 [str(v) for v in json_list(end.get("violations"))],
                 str(end.get("digest", "")))


@dataclass(frozen=True)
class StoreState:
    """The store after a step: objects (URL → the step that wrote it, and its ETag) and
    multipart uploads still open (upload ID → URL)."""

    after_step: int
    objects: dict[str, tuple[int, str]]
    uploads: dict[str, str]

    def listing(self, prefix: str) -> list[str]:
        """What a consistent LIST of ``prefix`` returns at this point."""
        return sorted(url for url in self.objects if url.startswith(prefix))


def store_state(trace: Trace, after_step: int | None = None) -> StoreState:
    """Replay the recorded store operations up to and including ``after_step`` (default: all).
    Preexisting objects of the scenario are not in the operations and so not in the state."""
    last = len(trace.steps) - 1 if after_step is None else after_step
    objects: dict[str, tuple[int, str]] = {}
    uploads: dict[str, str] = {}
    answer_lost: set[str] = set()  # actors whose next request takes effect but answers an error
    # a recording of a real store (moto, RGW) names no model profile: S3, with no directories
    profile = PROFILES.get(str(trace.scenario.get("store", "s3")))
    into_directory = profile is not None and profile.directories
    for step in trace.steps[: last + 1]:
        if step.kind is StepKind.FAULT and step.op == "lost_answer":
            answer_lost.add(step.actor)
            continue
        if step.kind is not StepKind.STORE:
            continue
        took_effect = step.actor in answer_lost
        answer_lost.discard(step.actor)
        if _failed(step) and not took_effect:
            continue
        if took_effect and step.op == "create_multipart":
            continue  # the upload exists, but its ID was lost with the answer: nothing names it
        _apply(step, objects, uploads, into_directory)
    return StoreState(last, objects, uploads)


def _failed(step: Step) -> bool:
    """A request answered with an error changed nothing the trace can see, unless the answer
    was lost (the ``lost_answer`` fault just before it): then it took effect all the same."""
    return step.result.startswith("error ")


def _apply(step: Step, objects: dict[str, tuple[int, str]], uploads: dict[str, str],
           into_directory: bool) -> None:
    if step.op == "put":
        objects[step.keys[0]] = (step.index, step.result)
    elif step.op == "complete_multipart":
        objects[step.keys[0]] = (step.index, step.result)
        uploads.pop(step.upload_id, None)
    elif step.op == "copy":
        objects[step.keys[1]] = (step.index, step.result)
    elif step.op == "rename":
        _rename(step, objects, into_directory)
    elif step.op in ("delete", "delete_many"):
        for url in step.keys:  # a delete names one key, as S3's does: never a subtree
            objects.pop(url, None)
    elif step.op == "create_multipart":
        uploads[step.result] = step.keys[0]
    elif step.op == "abort_multipart":
        uploads.pop(step.upload_id, None)


def _rename(step: Step, objects: dict[str, tuple[int, str]], into_directory: bool) -> None:
    """A file or directory rename: every object under the source moves under the target.  With
    ``into_directory`` (HDFS's rename), a target that is a directory holding objects receives
    the source as ``target/<name of source>``."""
    src, dst = step.keys
    if into_directory and dst not in objects and any(
            k.startswith(dst.rstrip("/") + "/") for k in objects):
        dst = dst.rstrip("/") + "/" + src.rstrip("/").rsplit("/", 1)[-1]
    moved = {k: v for k, v in objects.items() if k == src or k.startswith(src.rstrip("/") + "/")}
    for key, (_, etag) in moved.items():
        del objects[key]
        objects[dst + key[len(src):]] = (step.index, etag)


@dataclass(frozen=True)
class StateDiff:
    """What changed between two steps: objects added, removed, rewritten; uploads opened/closed."""

    added: list[str]
    removed: list[str]
    rewritten: list[str]
    uploads_opened: list[str]
    uploads_closed: list[str]

    def __bool__(self) -> bool:
        return any((self.added, self.removed, self.rewritten, self.uploads_opened,
                    self.uploads_closed))


def diff(before: StoreState, after: StoreState) -> StateDiff:
    """The difference between two states of the same trace."""
    old, new = before.objects, after.objects
    return StateDiff(
        added=sorted(set(new) - set(old)),
        removed=sorted(set(old) - set(new)),
        rewritten=sorted(k for k in set(old) & set(new) if old[k] != new[k]),
        uploads_opened=sorted(set(after.uploads) - set(before.uploads)),
        uploads_closed=sorted(set(before.uploads) - set(after.uploads)),
    )


def load_results(path: str | Path) -> dict[str, Any]:
    """A verdict file written by ``paper/make_paper.py`` or ``zerorename check --json``."""
    data: dict[str, Any] = json.loads(Path(path).read_text(encoding="utf-8"))
    return data


def tablev_grids(tablev: Mapping[str, Any]) -> tuple[dict[str, dict[str, bool]],
                                                       dict[str, dict[str, bool]]]:
    """Table V as computed by the probes and as the paper printed it, both as
    ``{attribute: {committer: value}}`` (the paper's columns mapped onto our committers)."""
    computed: dict[str, dict[str, bool]] = {}
    for committer, attributes in tablev["cells"].items():
        for attribute, cell in attributes.items():
            computed.setdefault(attribute, {})[committer] = bool(cell["value"])
    paper: dict[str, dict[str, bool]] = {}
    for committer, column in tablev.get("paper_columns", {}).items():
        for attribute, values in tablev.get("paper", {}).items():
            if column in values:
                paper.setdefault(attribute, {})[committer] = bool(values[column])
    return computed, paper
