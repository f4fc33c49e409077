"""The record of a run: notes, the result the property checkers read, and two fingerprints of
the state.

* :meth:`Recorder.digest` is the digest a trace's ``end`` line records and a replay compares:
  SHA-256 over the stores' digests and every actor's history *as text*, exactly as earlier
  versions computed it, so traces saved by them still replay.
* :meth:`Recorder.fingerprint` identifies a state for the explorer's pruning.  It covers the
  same things (stores, each actor's pause point, flags and history, what the drivers know, the
  fault budgets) but is built from the objects themselves, and treats the pending visibility
  events as a set: their order only numbers the settle moves, and two schedules that differ in
  it reach the same behaviours.  The explorer's property searches also forget the history of an
  actor that has finished, fingerprinting what the checkers read of it instead
  (``forget_finished``; ``tests/model/test_forget_finished.py``).
"""

from __future__ import annotations

import hashlib

from zerorename_model.engine.harness.events import End, Note, NoteKind
from zerorename_model.engine.harness.state import HarnessStore, RunResult, RunState
from zerorename_model.engine.scenario import TaskSpec
from zerorename_model.engine.stores.store import ModelStore


class Recorder:
    """Writes a run's events into its :class:`~.state.RunState` and reads the state back as
    digests, fingerprints and the result; it changes nothing else."""

    def __init__(self, state: RunState) -> None:
        self.state = state

    def note(self, message: str, kind: NoteKind = NoteKind.INFO,
             task: TaskSpec | None = None) -> None:
        """Record a harness event.  Every change the harness makes to state shared between
        actors (launches, kills, failures, job outcomes) is noted, so ``effects`` counts them:
        the explorer treats a step during which it changed as depending on every other."""
        state = self.state
        state.effects += 1
        state.events.append(Note(message, kind, task))

    def digest(self) -> str:
        """The stable digest of the state traces record (see the module docstring)."""
        state = self.state
        h = hashlib.sha256()
        h.update(state.store.digest().encode())
        h.update(state.cluster.digest().encode())
        for a in state.actors:
            history = a.said_text
            h.update(f"{a.name}|{a.pending_text}|{a.done}|{a.crashed}|{a.partitioned}|"
                     f"{a.killed}|{a.waiting is not None and a.waiting()}|{history}".encode())
        for job in state.jobs:
            h.update(f"{job.spec}|{sorted(job.live.items())}|{sorted(job.holder.items())}|"
                     f"{sorted((k, v[0].name) for k, v in job.accepted.items())}|{job.failed}|"
                     f"{job.outcome}|{job.dest_at_commit}".encode())
        h.update(repr(sorted(state.budget.items())).encode())
        return h.hexdigest()

    def fingerprint(self) -> bytes:
        """The state, for pruning: two schedules reaching equal fingerprints have the same
        futures (up to the numbering of settle moves).

        With ``forget_finished`` set (the explorer's property searches), a finished actor of a
        process of its own is fingerprinted without its history: it takes no further step, and
        no other actor sees its history, only the shared state it left (stores, the driver's
        knowledge, the local disks, all fingerprinted).  What the checkers read of it is
        fingerprinted instead (:meth:`_outcome_record`).  Pool workers keep theirs: the
        result a finished worker hands its owner lives nowhere else."""
        state = self.state
        forget = state.forget_finished
        actors = tuple(
            (a.name, a.crashed, a.partitioned, a.killed)
            if forget and a.done and a.owner is None else
            (a.name, a.pending, a.done, a.crashed, a.partitioned, a.killed,
             a.waiting is not None and a.waiting(), tuple(a.said_text))
            for a in state.actors)
        jobs = tuple(
            (job.spec, tuple(sorted(job.live.items())), tuple(sorted(job.holder.items())),
             tuple(sorted((k, v[0].name) for k, v in job.accepted.items())), job.failed,
             job.outcome, None if job.dest_at_commit is None
             else tuple(sorted(job.dest_at_commit.items())))
            for job in state.jobs)
        whole = (_store_state(state.store), _store_state(state.cluster), actors, jobs,
                 tuple(sorted(state.budget.items())),
                 self._outcome_record() if forget else ())
        return hashlib.blake2b(repr(whole).encode(), digest_size=20).digest()

    def _outcome_record(self) -> object:
        """Everything a property checker (or a later actor) reads that a forgotten history
        used to pin down: what each attempt wrote and where, the typed incidents, whether the
        store ever answered inconsistently (the consistency checker's precondition), the rest
        of the driver's knowledge (launched attempts, denials, the accepted task commit
        messages a job commit reads, errors, what clean-up left), the zombies' keys, and the
        actors' local disks.  Whether the store answered inconsistently only when the search
        checks consistency (``counts_inconsistency``): no other checker reads it."""
        state = self.state
        jobs = tuple(
            (tuple(sorted((task, tuple(t.name for t in launched))
                          for task, launched in job.attempts.items())),
             tuple(sorted(job.denied)), tuple(sorted((k, repr(v[1]))
                                                     for k, v in job.accepted.items())),
             job.error, job.uploads_after_cleanup, job.temp_after_cleanup, job.reader_saw,
             job.abort_started)
            for job in state.jobs)
        return (tuple(sorted((name, tuple(sorted(files.items())))
                             for name, files in state.written.items())),
                tuple(sorted(state.attempt_dest.items())),
                tuple(sorted(repr(incident) for incident in state.incidents)),
                state.counts_inconsistency and state.store.inconsistent_answers > 0,
                jobs, tuple(sorted(state.zombie_urls)),
                tuple(sorted((key, _store_state(disk)) for key, disk in state.locals.items())))

    def result(self) -> RunResult:
        """End the run's record: jobs still running are lost, the store settles, and the
        ``end`` line records the digest."""
        state = self.state
        for job in state.jobs:
            if job.outcome == "running":
                job.outcome = "lost"
        store = state.store
        store.settle_all()
        digest = self.digest()
        state.events.append(End(tuple(j.outcome for j in state.jobs), digest,
                                store.request_counts()))
        return RunResult(
            scenario=state.scenario, jobs=state.jobs, written=state.written,
            attempt_dest=state.attempt_dest, preexisting=state.preexisting,
            final=store.snapshot(),
            final_uploads=sorted(store.upload_urls()),
            inconsistent_answers=store.inconsistent_answers, steps=state.steps,
            events=state.events, digest=digest, incidents=state.incidents,
        )


def _store_state(store: HarnessStore) -> object:
    """A model store's whole state (truth, lag, uploads, real directories: an empty one lists
    where a missing one fails) as a value; another store's digest."""
    if not isinstance(store, ModelStore):
        return store.digest()
    return (tuple(sorted((k, o.etag) for k, o in store.objects.items())),
            tuple(sorted(store.dirs)),
            tuple(sorted(store.listed)),
            tuple(sorted((k, s.etag if s else None) for k, s in store.stale.items())),
            tuple(sorted(str(e) for e in store.pending)),
            tuple(sorted((uid, up.url, tuple(sorted((n, hashlib.md5(d).digest())
                                                    for n, d in up.parts.items())))
                         for uid, up in store.uploads.items())))
