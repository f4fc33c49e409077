"""A hypothesis RuleBasedStateMachine over the simulation harness, parameterised by
(committer, store).

Hypothesis draws the scenario (1–3 tasks, 1–3 attempts, 1–2 files in nested directories with
spaces and non-ASCII names, one job or two on adjacent destinations, either driver style, fault
budgets) and then every move: which actor steps, and where a crash, partition, throttle,
speculative attempt, driver restart or visibility change happens.  When the run ends, the
properties the committer claims are checked, and a failure shrinks to a short schedule.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from hypothesis import HealthCheck, Phase, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    rule,
    run_state_machine_as_test,
)

from zerorename_model.choices import FirstChooser
from zerorename_model.harness import Run
from zerorename_model.properties import PROPERTIES, applicable
from zerorename_model.scenario import Faults, Scenario
from zerorename_model.trace import format_trace

FILE_NAMES = ("part-{task:05d}.parquet", "year=2024/month=01/part {task}.csv",
              "données/é {task}+%.txt")
ADJACENT = ("s3://bucket/out/dataset1", "s3://bucket/out/dataset10")


@st.composite
def scenarios(draw: Any, committer: str, store: str, drivers: Sequence[str],
              partition_drivers: Sequence[str], two_jobs: bool | None = None,
              throttle: bool = True) -> Scenario:
    driver = draw(st.sampled_from(list(drivers)))
    partition = draw(st.integers(0, 1)) if driver in partition_drivers else 0
    faults = Faults(crash=draw(st.integers(0, 2)), partition=partition,
                    speculate=draw(st.integers(0, 1)),
                    throttle=draw(st.integers(0, 1)) if throttle else 0,
                    restart=draw(st.integers(0, 1)), fail_job=draw(st.integers(0, 1)))
    files = tuple(draw(st.lists(st.sampled_from(FILE_NAMES), min_size=1, max_size=2,
                                unique=True)))
    two_jobs = draw(st.booleans()) if two_jobs is None else two_jobs
    return Scenario(committer, store=store, tasks=draw(st.integers(1, 2 if two_jobs else 3)),
                    files=files, max_attempts=draw(st.integers(1, 3)),
                    dests=ADJACENT if two_jobs else ("s3://bucket/out",), driver=driver,
                    faults=faults)


def make_machine(committer: str, store: str, factory: Any, claims: Sequence[str], *,
                 drivers: Sequence[str] = ("spark", "hadoop"),
                 partition_drivers: Sequence[str] = ("spark", "hadoop"),
                 two_jobs: bool | None = None, throttle: bool = True,
                 backend: Callable[[], Any] | None = None) -> type[RuleBasedStateMachine]:
    """A state machine class for one (committer, store) checking ``claims``."""
    props = [p for p in claims if applicable(p, store)]

    class CommitMachine(RuleBasedStateMachine):
        run: Run
        checked = False

        @initialize(scenario=scenarios(committer, store, drivers, partition_drivers, two_jobs,
                                        throttle))
        def start(self, scenario: Scenario) -> None:
            self.run = Run(scenario, factory, backend=backend() if backend else None)

        @rule(pick=st.integers(0, 63))
        def move(self, pick: int) -> None:
            """One move of the run (hypothesis picks which); nothing once the run is over."""
            if self.run.finished():
                return
            options = self.run.options()
            self.run.apply(options[pick % len(options)])

        def teardown(self) -> None:
            if not self.checked:
                self._check()

        def _check(self) -> None:
            self.checked = True
            result = self.run.run(FirstChooser())
            for name in props:
                violations = PROPERTIES[name](result)
                assert not violations, (
                    f"{committer} on {store} violates {name}: {violations[0]}\n"
                    + format_trace(result.trace))

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
