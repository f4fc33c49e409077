"""The same property suites on the production committers (``zerorename``), through the bridge.

* On the model's stores (``s3``, ``s3-2018``, ``abfs``): the hypothesis state machine with every
  fault, including throttling (the reference retries), and exhaustive crash points: every store
  operation of every task commit and of every job commit is a place a crash is tried, followed
  by the retry, recovery or abort path.
* On moto, in process and as a ``ThreadedMotoServer``: fewer examples (each request costs
  milliseconds), same machine.
"""

from __future__ import annotations

import pytest

from property_tests.machine import check_machine, make_machine
from zerorename_bridge.adapters import ReferenceFactory
from zerorename_bridge.backends import moto_backend, moto_server_backend
from zerorename_model.explore import explore, search
from zerorename_model.properties import PROPERTIES
from zerorename_model.scenario import Faults, Scenario

ALL = tuple(PROPERTIES)
#: (committer, store, drivers): with Hadoop's discover-by-listing protocol a committer that
#: lists the object store cannot be correct on s3-2018; the Spark protocol needs no listing.
SUITE = [
    ("directory", "s3", ("spark", "hadoop")),
    ("directory", "s3-2018", ("spark", "hadoop")),
    ("partitioned", "s3", ("spark", "hadoop")),
    ("magic", "s3", ("spark", "hadoop")),
    ("magic", "s3-2018", ("spark",)),
    ("manifest", "abfs", ("spark", "hadoop")),
    ("v1", "abfs", ("spark", "hadoop")),
]


@pytest.mark.parametrize(("committer", "store", "drivers"), SUITE,
                         ids=[f"{c}-{s}" for c, s, _d in SUITE])
def test_reference_committers_keep_every_property(committer: str, store: str,
                                                  drivers: tuple[str, ...]) -> None:
    machine = make_machine(committer, store, ReferenceFactory(committer), ALL, drivers=drivers,
                           partition_drivers=("spark",))
    check_machine(machine, examples=20)


def test_the_reference_suite_catches_v2s_visible_output_after_abort() -> None:
    """v2 publishes in task commit (the paper's Section III.C): an aborted job leaves output."""
    machine = make_machine("v2", "abfs", ReferenceFactory("v2"), ["abortability"],
                           drivers=("spark",))
    with pytest.raises(AssertionError, match="violates abortability"):
        check_machine(machine, examples=150, shrink=False)


CRASH_SCOPES = {"task-crash": Faults(crash=1), "driver-crash": Faults(restart=1)}


@pytest.mark.parametrize("committer", ["directory", "partitioned", "magic"])
@pytest.mark.parametrize("scope", list(CRASH_SCOPES))
def test_every_crash_point_then_recovery(committer: str, scope: str) -> None:
    """Exhaustive: a crash before each store operation of the task (commit_task included) or
    of the driver (commit_job included), then Spark's retry or a new job attempt.  Properties
    hold on every schedule, and nothing is left behind after cleanup."""
    scenario = Scenario(committer, store="s3", tasks=1, files=("a/b c.csv", "d.csv"),
                        faults=CRASH_SCOPES[scope])
    report = explore(scenario, ReferenceFactory(committer), ALL, max_runs=5_000,
                     stop_when_all_violated=False)
    assert report.complete, report.summary()
    assert not report.violations, {k: str(v[0][0]) for k, v in report.violations.items()}
    assert report.runs >= 5


@pytest.mark.slow
@pytest.mark.parametrize("committer", ["directory", "magic"])
def test_crash_then_abort_sampled(committer: str) -> None:
    """A crash anywhere, then the job is aborted: sampled by hypothesis (the reference's
    attempt-unique record names make this scope too large to enumerate)."""
    scenario = Scenario(committer, store="s3", tasks=1, faults=Faults(crash=1, fail_job=1))
    report = search(scenario, ReferenceFactory(committer), ["abortability"], max_examples=150)
    assert not report.violations, {k: str(v[0][0]) for k, v in report.violations.items()}


@pytest.mark.parametrize("committer", ["directory", "magic"])
def test_reference_on_moto_in_process(committer: str) -> None:
    machine = make_machine(committer, "moto", ReferenceFactory(committer), ALL,
                           partition_drivers=("spark",), backend=moto_backend)
    check_machine(machine, examples=6, steps=40)


def test_reference_on_threaded_moto_server() -> None:
    machine = make_machine("magic", "moto", ReferenceFactory("magic"), ALL,
                           partition_drivers=("spark",), backend=moto_server_backend)
    check_machine(machine, examples=3, steps=30)
