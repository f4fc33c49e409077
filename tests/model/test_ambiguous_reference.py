"""``check --target reference`` meets the same ambiguous outcomes (issue 34): the harness
loses answers and answers 409 at the reference committers' requests, so what is explored is
their real retry loop (``zerorename.retry`` under ``ReliableStore``).  With the loop switched
off (``fs.s3a.retry.limit=0``) the reference ``fenced`` fails; with it, it does not."""

from __future__ import annotations

import pytest

from zerorename_bridge.verdicts import resolve
from zerorename_model.check.explore import explore
from zerorename_model.experiments.scopes import scope_named


@pytest.mark.parametrize("committer", ["fenced", "magic"])
def test_the_reference_retry_loop_carries_a_lost_answer(committer: str) -> None:
    scope = scope_named("ambiguous-spark")
    factory, backend = resolve(committer, "s3")
    without = scope.make(committer, "s3").with_(options=(("fs.s3a.retry.limit", "0"),))
    report = explore(without, factory, ["liveness"], max_runs=600, backend=backend,
                     stop_when_all_violated=True)
    violations, result, _choices = report.violations["liveness"]
    assert any("the answer was lost" in str(v) for v in violations), violations
    assert any(str(e.get("move", "")).startswith("lost_answer ") for e in result.trace)
    report = explore(scope.make(committer, "s3"), factory, list(scope.props), max_runs=150,
                     backend=backend)
    assert not report.violations, {p: str(v[0][0]) for p, v in report.violations.items()}
