"""The property suite on the model's committers.

The committers the paper calls correct (the staging committers everywhere, magic on consistent
S3, and the lakeFS proposal) must keep every property in every scenario hypothesis draws.  They
are run with the Spark driver (commit_job receives the accepted task messages): with Hadoop's
discover-by-listing protocol, exploration finds the race of the paper's Section VIII.C (a
partitioned attempt's late pendingset), shown in ``paper/`` with its trace, so there the suite
excludes partitions.  The model protocols are the papers' pseudo-code, which has no
retries, so throttling is left to the reference suite (whose committers retry).  Then the same
machine must *fail* on committers broken in known ways,
which shows the suite can fail; and on one broken in a way only the per-step invariants see
(``property_tests/broken.py``).
"""

from __future__ import annotations

import pytest

from property_tests.broken import PreviewingStagingCommitter
from property_tests.machine import check_machine, make_machine
from zerorename_model.check.properties import PROPERTIES
from zerorename_model.engine.scenario import Faults
from zerorename_model.systems.protocols import get

ALL = tuple(PROPERTIES)
CORRECT = [("directory", "s3"), ("directory", "s3-2018"), ("partitioned", "s3"),
           ("magic", "s3"), ("lakefs", "s3")]


@pytest.mark.parametrize(("committer", "store"), CORRECT, ids=[f"{c}-{s}" for c, s in CORRECT])
def test_correct_committers_keep_every_property(committer: str, store: str) -> None:
    machine = make_machine(committer, store, get(committer), ALL, partition_drivers=("spark",),
                           throttle=False)
    check_machine(machine, examples=25)


BROKEN = [
    ("direct", "s3", "exclusivity"),
    ("v2", "s3", "abortability"),
    ("magic", "s3-2018", "completeness"),
    ("magic+prefix-cleanup", "s3", "concurrency"),
]


@pytest.mark.parametrize(("committer", "store", "prop"), BROKEN,
                         ids=[f"{c}-{s}-{p}" for c, s, p in BROKEN])
def test_the_suite_catches_committers_broken_that_way(committer: str, store: str,
                                                       prop: str) -> None:
    machine = make_machine(committer, store, get(committer), [prop], drivers=("hadoop",),
                           two_jobs=(prop == "concurrency"))
    with pytest.raises(AssertionError, match=f"violates {prop}"):
        check_machine(machine, examples=300, shrink=False)


#: speculative duplicates only: a crash or a failed job between the preview's PUT and DELETE
#: would leave the preview behind, and the end-of-run properties would see that
PREVIEW_FAULTS = Faults(speculate=1)


def test_only_the_per_step_invariant_catches_a_committer_that_publishes_then_hides() -> None:
    """The previewing committer leaves every run's end state correct: the end-of-run
    properties alone pass it; the invariant checked after every step does not."""
    def machine(per_step: bool) -> type:
        return make_machine("directory+preview", "s3", PreviewingStagingCommitter, ALL,
                            faults=PREVIEW_FAULTS, per_step=per_step)

    check_machine(machine(per_step=False), examples=30, shrink=False)
    with pytest.raises(AssertionError, match="violates nothing published before job commit"):
        check_machine(machine(per_step=True), examples=30, shrink=False)
