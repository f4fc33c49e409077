"""Ambiguous outcomes and stores that cannot fence (issue 34).

* the faults: a lost answer (the request takes effect, the caller sees a read timeout) at any
  request on the destination store, a 409 ConditionalRequestConflict (nothing takes effect) at
  a conditional one;
* the model committers' retry loop (:mod:`zerorename_model.systems.protocols.retrying`) and its two
  landed checks;
* ``fenced`` holds in the ``ambiguous`` family; ``fenced+no-landed-check`` does not;
* ``fenced`` is violated on a store whose conditional PUT is check-then-act and on one that
  ignores If-None-Match.
"""

from __future__ import annotations

import pytest

from zerorename_model.check.explore import explore
from zerorename_model.engine.errors import ModelStoreError
from zerorename_model.engine.harness import MoveKind, Run
from zerorename_model.engine.scenario import Faults, Scenario
from zerorename_model.engine.stores.store import ModelStore
from zerorename_model.experiments.scopes import scope_named
from zerorename_model.experiments.trace import replay, write_trace
from zerorename_model.systems.protocols import get
from zerorename_model.systems.protocols.retrying import Retry, RetryingStore

URL = "s3://bucket/out/record.json"


class _LosesAnswers:
    """A model store whose next ``lose`` requests take effect and then fail with a read
    timeout, and whose next ``conflicts`` conditional requests answer 409."""

    def __init__(self, store: ModelStore, lose: int = 0, conflicts: int = 0) -> None:
        self.store = store
        self.name = store.name
        self.lose = lose
        self.conflicts = conflicts
        self.calls: list[str] = []

    def __getattr__(self, op: str):  # type: ignore[no-untyped-def]
        method = getattr(self.store, op)

        def call(*args, **kwargs):  # type: ignore[no-untyped-def]
            self.calls.append(op)
            if self.conflicts and (kwargs.get("if_none_match") or kwargs.get("if_match")):
                self.conflicts -= 1
                raise ModelStoreError(str(args[0]), "ConditionalRequestConflict", 409)
            result = method(*args, **kwargs)
            if self.lose and op not in ("head", "get"):
                self.lose -= 1
                raise ModelStoreError(str(args[0]), "ReadTimeout", 599, "lost")
            return result

        return call


def test_a_repeated_conditional_put_that_meets_its_own_write_landed() -> None:
    inner = _LosesAnswers(ModelStore("s3"), lose=1)
    store = RetryingStore(inner, Retry())  # type: ignore[arg-type]
    etag = store.put(URL, b"mine", if_none_match=True)
    assert inner.store.get(URL) == b"mine" and etag
    assert inner.calls == ["put", "put", "head"]  # the repeat met 412; HEAD found our bytes


def test_without_the_check_the_repeat_fails_on_its_own_write() -> None:
    inner = _LosesAnswers(ModelStore("s3"), lose=1)
    store = RetryingStore(inner, Retry(landed=False))  # type: ignore[arg-type]
    with pytest.raises(ModelStoreError, match="PreconditionFailed"):
        store.put(URL, b"mine", if_none_match=True)


def test_someone_elses_bytes_are_not_taken_for_ours() -> None:
    model = ModelStore("s3")
    model.put(URL, b"theirs")
    store = RetryingStore(_LosesAnswers(model, conflicts=1), Retry())  # type: ignore[arg-type]
    with pytest.raises(ModelStoreError, match="PreconditionFailed"):
        store.put(URL, b"mine", if_none_match=True)  # 409, then a repeat that meets 412


def test_a_repeated_complete_that_meets_no_such_upload_landed() -> None:
    model = ModelStore("s3")
    upload = model.create_multipart(URL)
    part = model.upload_part(URL, upload, 1, b"data")
    inner = _LosesAnswers(model, lose=1)
    store = RetryingStore(inner, Retry())  # type: ignore[arg-type]
    assert store.complete_multipart(URL, upload, [(1, part)]) == part
    bare = RetryingStore(_LosesAnswers(ModelStore("s3"), lose=0), Retry())  # type: ignore[arg-type]
    with pytest.raises(ModelStoreError, match="NoSuchUpload"):  # no repeat: the error stands
        bare.complete_multipart(URL, "up-none", [(1, part)])


def test_lost_answers_strike_any_request_and_conflicts_only_conditional_ones() -> None:
    run = Run(Scenario("fenced", tasks=1, faults=Faults(lost_answer=1, conflict=1)),
              get("fenced"))
    seen: set[tuple[MoveKind, bool]] = set()
    try:
        while not run.finished():
            moves = run.options()
            for move in moves:
                if move.kind in (MoveKind.LOST_ANSWER, MoveKind.CONFLICT):
                    actor = run.actor(move)
                    seen.add((move.kind, actor.conditional))
            run.choose(moves, 0)
    finally:
        run.kill_all()
    assert (MoveKind.LOST_ANSWER, False) in seen and (MoveKind.LOST_ANSWER, True) in seen
    assert (MoveKind.CONFLICT, True) in seen and (MoveKind.CONFLICT, False) not in seen


def test_the_trace_header_names_the_new_faults_only_when_used() -> None:
    assert "lost_answer" not in Scenario("fenced").to_json()["faults"]  # type: ignore[operator]
    used = Scenario("fenced", faults=Faults(lost_answer=1)).to_json()["faults"]
    assert used["lost_answer"] == 1 and "conflict" not in used  # type: ignore[index]


@pytest.mark.parametrize("protocol", ["hadoop", "spark"])
def test_fenced_holds_with_ambiguous_outcomes(protocol: str) -> None:
    for family in ("ambiguous", "ambiguous-abort"):
        scope = scope_named(f"{family}-{protocol}")
        report = explore(scope.make("fenced", "s3"), get("fenced"), list(scope.props),
                         max_runs=5_000)
        assert report.complete and not report.violations, (family, report.violations)


def test_without_the_landed_checks_fenced_fails_and_the_witness_replays(tmp_path) -> None:
    scope = scope_named("ambiguous-spark")
    report = explore(scope.make("fenced+no-landed-check", "s3"), get("fenced+no-landed-check"),
                     ["liveness"], max_runs=5_000, stop_when_all_violated=True)
    violations, result, _choices = report.violations["liveness"]
    assert any("the job ended" in str(v) for v in violations), violations
    assert any(e.get("move", "").startswith("lost_answer ") for e in result.trace)
    assert replay(str(write_trace(tmp_path / "w.jsonl", result.trace))).same


@pytest.mark.parametrize("store", ["s3-check-then-act", "s3-ignores-conditions"])
def test_fenced_is_violated_on_a_store_that_cannot_fence(store: str, tmp_path) -> None:
    scope = scope_named("partition-hadoop")
    report = explore(scope.make("fenced", store), get("fenced"), ["exclusivity"],
                     max_runs=5_000, stop_when_all_violated=True)
    assert "exclusivity" in report.violations, store
    result = report.violations["exclusivity"][1]
    assert replay(str(write_trace(tmp_path / "w.jsonl", result.trace))).same
    on_s3 = explore(scope.make("fenced", "s3"), get("fenced"), ["exclusivity"], max_runs=5_000)
    assert on_s3.complete and not on_s3.violations


def test_the_stores_claim_conditional_writes_and_do_not_keep_them() -> None:
    for name in ("s3-check-then-act", "s3-ignores-conditions"):
        assert ModelStore(name).capabilities().conditional_put  # what a probe reads
    ignoring = ModelStore("s3-ignores-conditions")
    ignoring.put(URL, b"first", if_none_match=True)
    ignoring.put(URL, b"second", if_none_match=True)  # no 412
    assert ignoring.get(URL) == b"second"
    racy = ModelStore("s3-check-then-act")
    gaps: list[str] = []
    racy.between_steps = gaps.append
    racy.put(URL, b"first", if_none_match=True)
    assert gaps == [f"put {URL}"]  # the racer's moment, between the check and the write
    with pytest.raises(ModelStoreError, match="PreconditionFailed"):
        racy.put(URL, b"second", if_none_match=True)  # sequentially it refuses
