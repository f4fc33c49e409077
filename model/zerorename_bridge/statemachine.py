"""A hypothesis RuleBasedStateMachine over the simulation harness, parameterised by
(committer, store).

Hypothesis draws the scenario (1–3 tasks, 1–3 attempts, 1–2 files at relative paths it also
draws — spaces, ``%``, ``+``, non-ASCII, long elements, nested directories: HADOOP-17112's
lesson is that fixed names hide encoding bugs — one job or two on adjacent destinations, either
driver style, fault budgets) and then every move, by kind: each kind of move the harness can
make (step an actor, throttle, crash or partition one, launch a speculative attempt, restart
the driver, fail the job, make a lagging write visible) is a rule whose precondition is that
such a move is possible now, so a shrunk failure reads as the kinds of move that cause it.
After every move the per-step invariants (:mod:`zerorename_bridge.invariants`) are checked; when
the run is over, the properties the committer claims.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, ClassVar

from hypothesis import HealthCheck, Phase, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)

from zerorename_bridge.invariants import (
    StepWatch,
    promises_invisibility,
    published_before_commit,
    store_inconsistencies,
)
from zerorename_model.check.properties import PROPERTIES, applicable
from zerorename_model.engine.choices import FirstChooser
from zerorename_model.engine.harness import Move, MoveKind, Run, RunResult
from zerorename_model.engine.scenario import Faults, Scenario
from zerorename_model.experiments.trace import format_trace, write_trace

ADJACENT = ("s3://bucket/out/dataset1", "s3://bucket/out/dataset10")


# -- relative paths ------------------------------------------------------------------------

#: characters of path elements: letters and digits, URL syntax, encoded-looking text and
#: non-ASCII — not ``/`` (the separator), ``\\`` (normalised to it), braces (the scenario's
#: ``{task}`` placeholder), or control characters
_CHARS = st.sampled_from([*"abcXYZ019-_.=,;:@!$&'()[]~#?*", " ", "%", "+", "%20", "%2F",
                          "%25", "é", "ü", "ß", "日本", "データ", "😀", "\u00a0"])
#: an element never starts with ``_`` or ``.`` (Hadoop hides such names: not output)
_FIRST = _CHARS.filter(lambda c: c[0] not in "_.")


@st.composite
def _element(draw: st.DrawFn) -> str:
    long = draw(st.booleans())
    rest = draw(st.lists(_CHARS, max_size=60 if long else 6))
    text: str = draw(_FIRST) + "".join(rest)
    return text * (3 if long else 1)  # a long element, up to a few hundred characters


@st.composite
def relpaths(draw: st.DrawFn) -> str:
    """A file's path relative to the destination, unique per task (``{task}`` is replaced by
    the task id), at a depth of 0 to 2 directories."""
    directories = draw(st.lists(_element(), max_size=2))
    name = draw(_element())
    cut = draw(st.integers(0, len(name)))
    return "/".join([*directories, f"{name[:cut]}{{task}}{name[cut:]}"])


@st.composite
def scenarios(draw: st.DrawFn, committer: str, store: str, drivers: Sequence[str],
              partition_drivers: Sequence[str], two_jobs: bool | None = None,
              faults: Faults | None = None) -> Scenario:
    """``faults`` caps each budget (default: 2 crashes, one of every other fault)."""
    cap = faults or Faults(crash=2, partition=1, speculate=1, throttle=1, restart=1, fail_job=1)
    driver = draw(st.sampled_from(list(drivers)))
    partition = draw(st.integers(0, cap.partition)) if driver in partition_drivers else 0
    drawn = Faults(crash=draw(st.integers(0, cap.crash)), partition=partition,
                   speculate=draw(st.integers(0, cap.speculate)),
                   throttle=draw(st.integers(0, cap.throttle)),
                   restart=draw(st.integers(0, cap.restart)),
                   fail_job=draw(st.integers(0, cap.fail_job)))
    files = tuple(draw(st.lists(relpaths(), min_size=1, max_size=2, unique=True)))
    two_jobs = draw(st.booleans()) if two_jobs is None else two_jobs
    return Scenario(committer, store=store, tasks=draw(st.integers(1, 2 if two_jobs else 3)),
                    files=files, max_attempts=draw(st.integers(1, 3)),
                    dests=ADJACENT if two_jobs else ("s3://bucket/out",), driver=driver,
                    faults=drawn)


# -- the machine ---------------------------------------------------------------------------


def _move_rule(kind: MoveKind) -> Callable[..., None]:
    """The rule for one kind of move: possible when the run offers such a move; hypothesis
    picks which of them (which actor, which task, which lagging write)."""

    def move(self: CommitMachineBase, pick: int) -> None:
        moves = self.offered(kind)
        self.apply(moves[pick % len(moves)])

    move.__name__ = move.__qualname__ = kind.value  # what a shrunk failure prints
    decorated: Callable[..., None] = precondition(lambda self: bool(self.offered(kind)))(
        rule(pick=st.integers(0, 15))(move))
    return decorated


class CommitMachineBase(RuleBasedStateMachine):
    """Rules and invariants over one run; :func:`make_machine` gives each (committer, store)
    its subclass with the scenario strategy and the claims to check."""

    factory: Any
    backend: Callable[[], Any] | None = None
    claims: tuple[str, ...] = ()
    per_step: bool = True
    hides_output: bool = True
    label: str = ""
    #: where a violation's witness trace is written (None: nowhere), and what its header
    #: says besides the scenario (``{"target": "reference"}`` for a reference committer)
    witnesses: str | None = None
    header: ClassVar[dict[str, str]] = {}
    scenario_strategy: st.SearchStrategy[Scenario]

    run: Run
    watch: StepWatch
    checked: bool

    def start_run(self, scenario: Scenario) -> None:
        self.run = Run(scenario, self.factory,
                       backend=self.backend() if self.backend else None)
        self.watch = StepWatch()
        self.checked = False
        self._offered: tuple[int, list[Move]] | None = None

    def offered(self, kind: MoveKind) -> list[Move]:
        """The moves of ``kind`` possible now (none once the run is over).  Computed once per
        step: every rule's precondition asks."""
        if not hasattr(self, "run") or self.run.finished():
            return []
        if self._offered is None or self._offered[0] != self.run.steps:
            self._offered = (self.run.steps, self.run.options())
        return [m for m in self._offered[1] if m.kind is kind]

    def apply(self, move: Move) -> None:
        """Make ``move``, recorded as a choice among the moves offered now, so that the run's
        trace replays (``zerorename trace replay``)."""
        if self._offered is not None and self._offered[0] == self.run.steps:
            moves = self._offered[1]
        else:
            moves = self.run.options()
        self.run.choose(moves, moves.index(move))

    @precondition(lambda self: bool(self.offered(MoveKind.STEP)))
    @rule(picks=st.lists(st.integers(0, 15), min_size=1, max_size=20))
    def step(self, picks: list[int]) -> None:
        """Let actors perform their next operations, one per pick — several in one rule, so
        that runs make progress between faults (every kind of move is one rule, and
        hypothesis picks rules alike), the invariants checked after each."""
        for i, pick in enumerate(picks):
            moves = self.offered(MoveKind.STEP)
            if not moves:
                return
            if i:
                self.check_step()
            self.apply(moves[pick % len(moves)])
    throttle = _move_rule(MoveKind.THROTTLE)
    crash = _move_rule(MoveKind.CRASH)
    partition = _move_rule(MoveKind.PARTITION)
    restart = _move_rule(MoveKind.RESTART)
    speculate = _move_rule(MoveKind.SPECULATE)
    fail_job = _move_rule(MoveKind.FAIL_JOB)
    settle = _move_rule(MoveKind.SETTLE)

    @precondition(lambda self: hasattr(self, "run") and self.run.finished())
    @rule()
    def run_over(self) -> None:
        """Nothing moves any more: check what the committer claims of a finished run."""
        self.check_claims()

    # -- after every step ------------------------------------------------------------------

    def _checking(self) -> bool:
        return self.per_step and hasattr(self, "run")

    @precondition(lambda self: self._checking() and self.hides_output)
    @invariant()
    def nothing_published_before_job_commit(self) -> None:
        self._report("nothing published before job commit",
                     published_before_commit(self.run, self.watch))

    @precondition(lambda self: self._checking())
    @invariant()
    def one_accepted_attempt_per_task(self) -> None:
        self._report("one accepted attempt per task", self.watch.observe(self.run))

    @precondition(lambda self: self._checking())
    @invariant()
    def the_store_keeps_its_profile(self) -> None:
        self._report("the store keeps its profile", store_inconsistencies(self.run))

    def _report(self, invariant_name: str, violations: list[str]) -> None:
        if not violations:
            return
        message = (f"{self.label} violates {invariant_name} after step {self.run.steps}: "
                   f"{violations[0]}")
        shown = format_trace([e.to_json() for e in self.run.events])
        self.checked = True  # the run is finished below, for its witness; not checked again
        written = self._witness(invariant_name, self.run.run(FirstChooser()), message)
        raise AssertionError(f"{message}\n{shown}{written}")

    def _witness(self, name: str, result: RunResult, message: str) -> str:
        """Write the run's trace (finished) where :attr:`witnesses` says, the violation in
        its end line; the words the failure adds about it."""
        if self.witnesses is None:
            return ""
        trace = list(result.trace)
        trace[0] = {**trace[0], **self.header}
        trace[-1] = {**trace[-1], "violations": [message]}
        stem = re.sub(r"[^\w.+-]+", "_", f"{self.label}.{name}")
        path = write_trace(Path(self.witnesses) / f"{stem}.jsonl", trace)
        return f"\nwitness: {path} (replay: zerorename trace replay {path})"

    # -- at the end ------------------------------------------------------------------------

    def teardown(self) -> None:
        """Hypothesis stopped drawing moves: the run goes on with the plainest move each
        time (the invariants still checked after each), then its claims are checked."""
        if not hasattr(self, "run") or self.checked:
            return
        while not self.run.finished():
            self.apply(self.run.options()[0])  # a step: never a speculative launch
            self.check_step()
        self.check_claims()

    def check_step(self) -> None:
        """The invariants, where a rule moves more than once (hypothesis checks them after
        each rule)."""
        if self.per_step:
            self.one_accepted_attempt_per_task()
            if self.hides_output:
                self.nothing_published_before_job_commit()
            self.the_store_keeps_its_profile()

    def check_claims(self) -> None:
        if self.checked:
            return
        self.checked = True
        result: RunResult = self.run.run(FirstChooser())  # finished: records the result
        for name in self.claims:
            violations = PROPERTIES[name](result)
            if violations:
                message = f"{self.label} violates {name}: {violations[0]}"
                raise AssertionError(f"{message}\n{format_trace(result.trace)}"
                                     + self._witness(name, result, message))


def make_machine(committer: str, store: str, factory: Any, claims: Sequence[str], *,
                 drivers: Sequence[str] = ("spark", "hadoop"),
                 partition_drivers: Sequence[str] = ("spark", "hadoop"),
                 two_jobs: bool | None = None, throttle: bool = True,
                 faults: Faults | None = None, per_step: bool = True,
                 backend: Callable[[], Any] | None = None, witnesses: str | None = None,
                 header: dict[str, str] | None = None) -> type[RuleBasedStateMachine]:
    """A state machine class for one (committer, store) checking ``claims`` at the end of
    every run and the per-step invariants after every move (``per_step=False`` leaves those
    out, to show what the end-of-run checks alone would miss).  ``faults`` caps the fault
    budgets drawn; ``throttle=False`` draws no throttling.  ``witnesses``: a directory where
    a violation's trace is written (the last one hypothesis meets: the shrunk one), its
    header extended with ``header``."""
    cap = faults or Faults(crash=2, partition=1, speculate=1, throttle=1, restart=1,
                           fail_job=1)
    if not throttle:
        cap = Faults(crash=cap.crash, partition=cap.partition, speculate=cap.speculate,
                     throttle=0, restart=cap.restart, fail_job=cap.fail_job)
    strategy = scenarios(committer, store, drivers, partition_drivers, two_jobs, cap)
    attributes = {
        "factory": factory, "backend": staticmethod(backend) if backend else None,
        "claims": tuple(p for p in claims if applicable(p, store)), "per_step": per_step,
        "hides_output": promises_invisibility(factory),
        "label": f"{committer} on {store}", "witnesses": witnesses,
        "header": dict(header or {}),
    }

    class CommitMachine(CommitMachineBase):
        @initialize(scenario=strategy)
        def start(self, scenario: Scenario) -> None:
            self.start_run(scenario)

    for name, value in attributes.items():
        setattr(CommitMachine, name, value)
    CommitMachine.__name__ = f"CommitMachine_{committer}_{store}".replace("-", "_")
    return CommitMachine


def check_machine(machine: type[RuleBasedStateMachine], examples: int,
                  steps: int = 80, shrink: bool = True) -> None:
    """Run the machine (derandomized: the same examples every time, so CI is repeatable).
    ``shrink=False`` only detects, for tests that just need to see the suite fail."""
    phases = list(Phase) if shrink else [Phase.explicit, Phase.reuse, Phase.generate]
    run_state_machine_as_test(machine, settings=settings(
        max_examples=examples, stateful_step_count=steps, deadline=None, database=None,
        derandomize=True, phases=phases, suppress_health_check=list(HealthCheck)))
