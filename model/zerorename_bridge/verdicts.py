"""The verdict matrix for the reference committers: same scopes, properties and JSON as the
model's (``zerorename_model.experiments.verdicts``), with reference committers driven on model
stores (``s3``, ``s3-2018``, ``hdfs``…) and on moto."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from zerorename_bridge.adapters import ReferenceFactory
from zerorename_bridge.backends import moto_backend
from zerorename_model.check.explore import Backend
from zerorename_model.engine.scenario import CommitterFactory
from zerorename_model.engine.stores.profiles import PROFILES
from zerorename_model.experiments.cells import Cell
from zerorename_model.experiments.matrix import matrix, save
from zerorename_model.experiments.matrix_text import format_matrix
from zerorename_model.experiments.scopes import PROTOCOLS
from zerorename_model.experiments.verdicts import Budget, Resolver

REFERENCE_COMMITTERS = ("v1", "v2", "directory", "partitioned", "magic", "manifest", "fenced")
REFERENCE_STORES = ("s3", "s3-2018", "abfs", "moto")
#: The reference explores the model's own scopes (``zerorename_model.experiments.verdicts.SCOPES``:
#: 2 tasks x 2 attempts).  Pruning needs states to repeat, and reference records carried wall-clock
#: timestamps and measured durations, so until the harness ran the committers on a fixed clock
#: (``HARNESS_OPTIONS``: ``zerorename.clock.fixed-millis``) no state ever repeated: magic on s3,
#: ``crash-hadoop``, explored 3,000 runs and 56,506 states with 0 pruned and did not complete
#: in 46 s.  On the fixed clock the same scope completes: 848 runs, 833 pruned, 1,159 states,
#: ~3 s on an idle 2-core machine.  The remaining scopes of that row (duplicate, partition,
#: restart, abort, two-jobs) now prune most runs but still meet the run budget first.
#: Budgets count runs, never seconds, so that a verdict does not depend on the machine's load.
QUICK = Budget(max_runs=60)
FULL = Budget(max_runs=3_000, hypothesis_examples=40)
#: moto costs milliseconds per request and a fresh mock per run (about 1 s a run on 2 busy
#: cores): its budgets are much smaller
MOTO_QUICK = Budget(max_runs=5)
MOTO_FULL = Budget(max_runs=100, hypothesis_examples=5)

__all__ = ["format_matrix", "reference_matrix", "resolve", "save"]


def resolve(committer: str, store: str) -> tuple[CommitterFactory, Backend]:
    """Factory and backend for a reference committer on a model store or on moto."""
    backend = moto_backend if store == "moto" else None
    return ReferenceFactory(committer), backend


def reference_matrix(committers: Sequence[str] | None = None,
                     stores: Sequence[str] | None = None, props: Sequence[str] | None = None,
                     *, quick: bool = True, traces: str | None = None,
                     progress: Callable[[str], None] | None = None,
                     protocols: Sequence[str] = PROTOCOLS, resolver: Resolver = resolve,
                     extra: Sequence[str] = ()) -> list[Cell]:
    """``resolver`` and ``extra``: the committers from outside the tree among
    ``committers`` (:mod:`zerorename_bridge.plugins`) and the resolver that knows them."""
    wanted = list(stores or REFERENCE_STORES)
    cells: list[Cell] = []
    for group, budget in (([s for s in wanted if s != "moto"], QUICK if quick else FULL),
                          ([s for s in wanted if s == "moto"],
                           MOTO_QUICK if quick else MOTO_FULL)):
        if group:
            cells += matrix(committers or REFERENCE_COMMITTERS, group, props, quick=quick,
                            traces=traces, progress=progress, resolve=resolver,
                            known=(*REFERENCE_COMMITTERS, *extra),
                            known_stores=(*PROFILES, "moto"),
                            budget=budget, protocols=protocols)
    return cells
