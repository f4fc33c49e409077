"""The happens-before graph of a trace, and the slice of a violation.

A violating run is easiest to understand backwards: *which* steps made the reader see what it
saw?  The graph's nodes are a trace's steps (:mod:`zerorename_model.present.analysis`) plus one node
for the final state; its edges say why one step could depend on another:

- ``program`` — the same actor's previous step (program order);
- ``reads-from`` — a GET, HEAD, copy or LIST observed the object that a write left;
- ``missed`` — a LIST did *not* list an object that a completed write had left under its prefix
  (the eventually consistent listing of ``s3-2018``): the read depends on that write not yet
  being visible;
- ``message`` — a task attempt's report reached its driver (``report success`` → the driver's
  next ``await tasks``), and a scheduler fault reached the actor it struck;
- ``outcome`` — the last step that touched a key the violation names, into the final state.

The *slice* of a violation is the causal chain behind the final state of the keys it names:
from the step that state shows (the last write, or the delete or abort that removed it), back
along data edges (reads-from, missed, message) to the writes and reports it depends on, and one
program-order hop to the read or driver answer that made each actor take that step.  It is a
handful of steps out of dozens, enough to see *why*: for the paper's Section VIII.C race, the
partitioned attempt's late pendingset PUT, the driver's GET of it, and the complete it led to.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import networkx as nx

from zerorename_model.engine.json_values import json_list
from zerorename_model.present.analysis import (
    DELETE_OPS,
    UPLOAD_OPS,
    WRITE_OPS,
    Step,
    StepKind,
    Trace,
    store_state,
)

#: The node that stands for the run's final state (what the property checkers observed).
OUTCOME = -1

_LISTING = re.compile(r"^\[(.*)\]$")
_VIOLATION = re.compile(
    r"^(?P<prop>[\w-]+) \(job (?P<job>\d+)\): (?:under inconsistent listings: )?(?P<rest>.*)$")
#: valid-outcome's findings about a whole task ("task 0: a mix of attempts …"): the keys are
#: the task's files
_TASK = re.compile(r"^task (?P<task>\d+): ")
_TEMPORARY = re.compile(r"^temporary (?P<url>\S+) left after cleanup")
_RELPATH_END = re.compile(r": | changed after | visible after ")

DECIDING_OPS = frozenset({"get", "head", "list_page", "list_multipart_uploads"})


def listed_urls(step: Step) -> list[str]:
    """The URLs a LIST step's recorded result names (``[a, b]``; empty on an error)."""
    match = _LISTING.match(step.result)
    if not match or not match.group(1).strip():
        return []
    return [url.strip() for url in match.group(1).split(",")]


def _kinds(edges: Iterable[tuple[int, int, object]]) -> Iterable[tuple[int, int, str]]:
    """Edges with their ``kind`` attribute (every edge :func:`build` adds has one)."""
    return ((a, b, str(kind)) for a, b, kind in edges)


def edge_kinds(graph: nx.DiGraph[int]) -> Iterable[tuple[int, int, str]]:
    """Every edge of a graph :func:`build` made, with its kind."""
    return _kinds(graph.edges(data="kind"))


def build(trace: Trace) -> nx.DiGraph[int]:
    """The happens-before graph of ``trace`` (edges carry ``kind``; nodes carry ``step``)."""
    graph: nx.DiGraph[int] = nx.DiGraph()
    graph.add_node(OUTCOME, step=None, label="final state")
    last_of_actor: dict[str, int] = {}
    last_write: dict[str, int] = {}  # URL -> the step that last wrote it (still present)
    open_uploads: dict[str, list[int]] = {}  # URL -> create_multipart steps not yet closed
    pending_reports: list[int] = []
    for step in trace.steps:
        graph.add_node(step.index, step=step, label=step.label())
        if step.actor in last_of_actor:
            graph.add_edge(last_of_actor[step.actor], step.index, kind="program")
        if step.kind is StepKind.FAULT:
            _fault_edges(graph, trace, step)
        if step.kind is StepKind.DRIVER:
            pending_reports = _message_edges(graph, step, pending_reports)
        if step.kind is StepKind.STORE and not step.result.startswith("error "):
            _store_edges(graph, step, last_write)
            _upload_edges(graph, step, open_uploads)
        if step.kind is StepKind.VISIBILITY and step.keys and step.keys[0] in last_write:
            graph.add_edge(last_write[step.keys[0]], step.index, kind="reads-from")
            last_write[step.keys[0]] = step.index
        last_of_actor[step.actor] = step.index
    return graph


def _fault_edges(graph: nx.DiGraph[int], trace: Trace, fault: Step) -> None:
    """A fault strikes the next step of the actor it names (or, for ``speculate jN.tM``, the
    first step of the new attempt of that task)."""
    for later in trace.steps[fault.index + 1:]:
        if later.actor == fault.actor or later.actor.startswith(fault.actor + "."):
            graph.add_edge(fault.index, later.index, kind="message")
            return


def _message_edges(graph: nx.DiGraph[int], step: Step, pending: list[int]) -> list[int]:
    if step.op.startswith("report success"):
        return [*pending, step.index]
    if step.op == "await tasks":
        for report in pending:
            graph.add_edge(report, step.index, kind="message")
        return []
    return pending


def _store_edges(graph: nx.DiGraph[int], step: Step, last_write: dict[str, int]) -> None:
    if step.op in ("get", "head", "copy"):
        source = step.keys[0]
        if source in last_write:
            graph.add_edge(last_write[source], step.index, kind="reads-from")
    if step.op == "list_page":
        prefix = step.keys[0] if step.keys else ""
        listed = set(listed_urls(step))
        for url, writer in last_write.items():
            if not url.startswith(prefix):
                continue
            graph.add_edge(writer, step.index, kind="reads-from" if url in listed else "missed")
    if step.op in ("delete", "delete_many"):
        for url in step.keys:  # one key each, never a subtree
            last_write.pop(url, None)
    if step.op == "rename":  # a file, or every key under a directory
        src, dst = step.keys
        for key in [k for k in last_write if k == src or k.startswith(src.rstrip("/") + "/")]:
            graph.add_edge(last_write.pop(key), step.index, kind="reads-from")
            last_write[dst + key[len(src):]] = step.index
    if step.op in WRITE_OPS and step.op != "rename":
        last_write[step.keys[-1]] = step.index


def _upload_edges(graph: nx.DiGraph[int], step: Step, open_uploads: dict[str, list[int]]) -> None:
    """Multipart uploads: a listing of uploads reads from the creates it lists; a part, a
    complete or an abort depends on the create of its upload."""
    if step.op == "create_multipart":
        open_uploads.setdefault(step.keys[0], []).append(step.index)
    elif step.op == "list_multipart_uploads":
        for url in listed_urls(step):
            for create in open_uploads.get(url, []):
                graph.add_edge(create, step.index, kind="reads-from")
    elif step.op in UPLOAD_OPS and step.keys:
        for create in open_uploads.get(step.keys[0], []):
            if graph.nodes[create]["step"].result == step.upload_id:
                graph.add_edge(create, step.index, kind="reads-from")


def violated_keys(trace: Trace) -> list[str]:
    """The destination URLs the trace's violations name (``<dest>/<relpath>``), in order."""
    dests = [str(d).rstrip("/") for d in json_list(trace.scenario.get("dests"))]
    keys: list[str] = []
    for text in trace.violations:
        match = _VIOLATION.match(text)
        if not match or not dests:
            continue
        job = int(match.group("job"))
        dest = dests[job] if job < len(dests) else dests[0]
        rest = match.group("rest")
        temporary = _TEMPORARY.match(rest)
        task = _TASK.match(rest)
        if temporary:
            found = [temporary.group("url")]
        elif task:
            found = _task_keys(trace, dest, job, int(task.group("task")))
        else:
            found = [f"{dest}/{_RELPATH_END.split(rest, maxsplit=1)[0].strip()}"]
        keys += [key for key in found if key not in keys]
    return keys


def _task_keys(trace: Trace, dest: str, job: int, task: int) -> list[str]:
    """The task's output keys: its files as the scenario names them (what a committed attempt
    of it publishes, visible or not)."""
    patterns = [str(p) for p in json_list(trace.scenario.get("files"))]
    return [f"{dest}/{p.format(task=task, job=job)}" for p in patterns]


def _touches(step: Step, key: str) -> bool:
    if step.kind is not StepKind.STORE:
        return False
    if step.op in UPLOAD_OPS | WRITE_OPS | DELETE_OPS:
        return any(k == key or key.startswith(k.rstrip("/") + "/") for k in step.keys)
    return False


def observed_step(trace: Trace, key: str) -> int | None:
    """The step whose effect the final state of ``key`` shows: its last write if the key was
    written (and not deleted since), else the last step that touched it (a delete, an abort);
    for a key nothing touched (a file the job commit never published), the job driver's last
    store request — the commit that left it out."""
    touching = [s for s in trace.steps if _touches(s, key) and not s.result.startswith("error ")]
    for step in reversed(touching):
        if step.op in WRITE_OPS and step.keys[-1] == key:
            return step.index
        if step.op in DELETE_OPS:
            return step.index
    if touching:
        return touching[-1].index
    drivers = [s for s in trace.steps if s.kind is StepKind.STORE and s.actor.startswith("driver")]
    return drivers[-1].index if drivers else None


def connect_outcome(graph: nx.DiGraph[int], trace: Trace, keys: Iterable[str]) -> list[int]:
    """Add ``outcome`` edges from the step each key's final state shows; return those steps."""
    observed = []
    for key in keys:
        index = observed_step(trace, key)
        if index is not None:
            graph.add_edge(index, OUTCOME, kind="outcome")
            observed.append(index)
    return observed


def _control_of(graph: nx.DiGraph[int], node: int) -> int | None:
    """The nearest earlier step of the same actor whose answer decided this step (a read or a
    driver answer); the actor's own writes in between decide nothing."""
    while True:
        before = [s for s, _, k in _kinds(graph.in_edges(node, data="kind")) if k == "program"]
        if not before:
            return None
        node = before[0]
        if _decides(graph.nodes[node]["step"]):
            return node


def slice_of(trace: Trace, keys: Iterable[str] | None = None) -> tuple[nx.DiGraph[int], list[Step]]:
    """The graph and the slice (steps, in trace order) of the final state of ``keys`` (default:
    the keys the trace's violations name).

    From each observed step, the slice follows data edges (reads-from, missed, message) back to
    the writes and reports they depend on, and one program-order hop back to the read whose
    answer made the actor take that step; that read's own data edges are followed in turn, so
    the slice is the causal chain through the store, not everything an actor did before."""
    graph = build(trace)
    wanted = violated_keys(trace) if keys is None else list(keys)
    targets = connect_outcome(graph, trace, wanted)
    keep: set[int] = set()
    work: list[tuple[int, bool]] = [(t, False) for t in targets]
    final = store_state(trace).objects
    if any(key not in final for key in wanted):
        # a file that is missing was left out by a job driver: what its reads told it is why
        work += [(s.index, True) for s in trace.steps
                 if s.actor.startswith("driver") and _decides(s)]
    while work:
        node, reached_by_control = work.pop()
        if node in keep:
            continue
        keep.add(node)
        for source, _, kind in _kinds(graph.in_edges(node, data="kind")):
            if kind != "program" and source not in keep:
                work.append((source, False))
        if not reached_by_control:
            control = _control_of(graph, node)
            if control is not None:
                work.append((control, True))
    keep |= _faults_on(trace, keep)
    return graph, [trace.steps[i] for i in sorted(keep)]


def _faults_on(trace: Trace, kept: set[int]) -> set[int]:
    """The scheduler's faults that struck an actor of the slice before its last step there (a
    partition or crash is why the actor did what it did next)."""
    last: dict[str, int] = {}
    for index in kept:
        actor = trace.steps[index].actor
        last[actor] = max(index, last.get(actor, -1))
    return {step.index for step in trace.steps if step.kind is StepKind.FAULT
            and any((actor == step.actor or actor.startswith(step.actor + "."))
                    and step.index < until for actor, until in last.items())}


def _decides(step: Step | None) -> bool:
    """Steps whose answer can change what their actor does next."""
    if step is None:
        return False
    return step.kind is not StepKind.STORE or step.op in DECIDING_OPS


def format_slice(trace: Trace, steps: list[Step]) -> str:
    """The slice as text: one line per step, the violation last."""
    lines = [f"slice: {len(steps)} of {len(trace.steps)} steps"]
    for step in steps:
        result = f" -> {step.result}" if step.result else ""
        lines.append(f"{step.index:4d}  {step.label()}{result}")
    lines += [f"VIOLATED {v}" for v in trace.violations]
    return "\n".join(lines)
