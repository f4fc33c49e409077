"""The fixed clock (``zerorename.clock.fixed-millis``): records repeat byte for byte.

Why: the model harness recognises states by the store's contents.  Wall-clock timestamps and
measured durations in pendingsets, manifests and ``_SUCCESS`` made every run's state unique,
so exploring a reference committer could never merge two schedules that did the same thing.
These tests check that, with the option, two runs of one job write identical bytes (and with
it unset, timestamps are the current time), and that exploration of a 2-task scope of a
reference committer now prunes revisited states and completes.

Cost: about 10 s in all — the exploration test ~6 s, the moto tests ~1 s, the rest
milliseconds on the model store.
"""

from __future__ import annotations

import json
import time
from typing import Any

import pytest

import zerorename as zr
from zerorename.clock import FIXED_MILLIS_OPTION, SYSTEM_CLOCK, FixedClock, clock_from_options
from zerorename.formats import PendingSet
from zerorename.stats import IOStatistics
from zerorename_bridge.adapters import HARNESS_OPTIONS, ReferenceFactory, TranslatingStore
from zerorename_model.check.explore import explore
from zerorename_model.engine.stores.store import ModelStore
from zerorename_model.experiments.verdicts import SCOPES

from .conftest_helpers import Env, options, run_job

FIXED = 1_234_567_890_123
JOB_ID = "clock-job"
FILES = {0: {"a/one.csv": b"1" * 300, "two.csv": b""}, 1: {"a/three.csv": b"333"}}


def _durations(stats: dict[str, Any]) -> dict[str, int]:
    """Every duration-derived value (min/max/mean sums) in an iostatistics snapshot."""
    out = {f"min {k}": v for k, v in stats.get("minimums", {}).items()}
    out.update({f"max {k}": v for k, v in stats.get("maximums", {}).items()})
    out.update({f"mean {k}": m["sum"] for k, m in stats.get("meanstatistics", {}).items()})
    # committer_task_file_count etc. are sizes, not durations: keep only timed statistics
    return {k: v for k, v in out.items() if "count" not in k}


def _store_for(committer: str) -> Any:
    """A deterministic store: the model's (its upload IDs are derived from the key), so
    pendingsets can be compared byte for byte — moto and LocalStore draw random IDs."""
    return TranslatingStore(ModelStore("abfs" if committer == "manifest" else "s3"))


def _records_and_success(committer: str, opts: dict[str, Any],
                         dest: str = "s3://bucket/out") -> tuple[dict[str, bytes], bytes]:
    """Run a 2-task job; return every record under the destination just before job commit
    (pendingsets, manifests, intents, .pending files) and the ``_SUCCESS`` bytes after it."""
    store = _store_for(committer)
    if committer == "manifest":
        dest = "abfs://bucket/out"
    run = run_job(committer, store, dest, FILES, opts=opts, job_id=JOB_ID, commit=False)
    records = {o.url: store.get(o.url) for o in zr.list_dir(store, dest)}
    run.driver.commit_job(run.messages)
    return records, store.get(f"{dest}/_SUCCESS")


def _fixed_options() -> dict[str, Any]:
    return options(**{"fs.s3a.committer.threads": "1", FIXED_MILLIS_OPTION: str(FIXED)})


@pytest.mark.parametrize("committer", ["magic", "directory", "partitioned", "manifest"])
def test_fixed_clock_makes_records_and_success_byte_identical(committer: str) -> None:
    first_records, first_success = _records_and_success(committer, _fixed_options())
    second_records, second_success = _records_and_success(committer, _fixed_options())
    assert any(u.endswith((".pendingset", "-manifest.json")) for u in first_records), \
        sorted(first_records)
    assert first_records == second_records
    assert first_success == second_success
    success = json.loads(first_success)
    assert success["timestamp"] == FIXED
    assert success["date"].startswith("2009-02-13T23:31:30.123")
    assert success["iostatistics"]["counters"]["committer_jobs_completed"] == 1
    timed = _durations(success["iostatistics"])
    assert timed and set(timed.values()) == {0}, timed
    for url, data in first_records.items():
        if url.endswith(".pendingset"):
            pset = PendingSet.from_bytes(data, url)
            assert pset.extra_data["zerorename.saved"] == str(FIXED)
            assert all(c.created == FIXED and c.saved == FIXED for c in pset.commits)
            assert set(_durations(pset.iostatistics).values()) <= {0}


def test_without_the_option_timestamps_are_the_current_time(moto_env: Env) -> None:
    before = int(time.time() * 1000)
    run = run_job("magic", moto_env.store, moto_env.dest(), FILES, job_id=JOB_ID,
                  commit=False)
    pset = run.messages[0].payload["pendingset"]
    run.driver.commit_job(run.messages)
    after = int(time.time() * 1000)
    success = zr.read_success(moto_env.store, moto_env.dest())
    assert before <= success.timestamp <= after
    assert before <= int(pset["extraData"]["zerorename.saved"]) <= after
    assert all(before <= c["created"] <= after for c in pset["commits"])
    assert run.job.clock is SYSTEM_CLOCK


def test_fixed_clock_success_repeats_on_s3(moto_env: Env) -> None:
    """On a real S3 API (moto) too: the same job twice writes the same ``_SUCCESS`` bytes."""
    dest = moto_env.dest()
    found = []
    for _ in range(2):
        run_job("magic", moto_env.store, dest, FILES, opts=_fixed_options(), job_id=JOB_ID,
                protocol="hadoop")
        found.append(moto_env.store.get(f"{dest}/_SUCCESS"))
        moto_env.store.delete_many([o.url for o in zr.list_dir(moto_env.store, dest)])
    assert found[0] == found[1]
    assert json.loads(found[0])["timestamp"] == FIXED


def test_with_a_fixed_clock_the_higher_attempt_wins() -> None:
    """Hadoop-protocol job commit picks the last committed attempt by ``saved`` time, then
    attempt number: with every ``saved`` equal, the higher attempt still wins."""
    store = _store_for("magic")
    dest = "s3://bucket/out"
    job = zr.JobContext(dest, job_id=JOB_ID, options=_fixed_options())
    driver = zr.create_committer("magic", store, job)
    driver.setup_job()
    for attempt, data in ((1, b"second"), (0, b"first")):  # attempt 1 commits first
        tc = zr.create_committer("magic", store, job, task=job.task(0, attempt))
        tc.setup_task()
        tc.write("part-0", data)
        tc.commit_task()
    driver.commit_job(None)
    assert store.get(f"{dest}/part-0") == b"second"


def test_clock_option_parsing_and_explicit_clock() -> None:
    assert clock_from_options({}) is SYSTEM_CLOCK
    assert clock_from_options({FIXED_MILLIS_OPTION: ""}) is SYSTEM_CLOCK
    assert clock_from_options({FIXED_MILLIS_OPTION: " 42 "}) == FixedClock(42)
    assert clock_from_options({FIXED_MILLIS_OPTION: 7}) == FixedClock(7)
    for bad in ("soon", "1.5", True, "-1"):
        with pytest.raises(zr.CommitError, match=FIXED_MILLIS_OPTION):
            clock_from_options({FIXED_MILLIS_OPTION: bad})
    with pytest.raises(zr.CommitError, match=FIXED_MILLIS_OPTION):
        zr.JobContext("s3://bucket/out", options={FIXED_MILLIS_OPTION: "yesterday"})
    explicit = FixedClock(5)
    job = zr.JobContext("s3://bucket/out", options={FIXED_MILLIS_OPTION: "9"}, clock=explicit)
    assert job.clock is explicit
    with pytest.raises(zr.CommitError, match="clock"):
        zr.JobContext("s3://bucket/out", clock=time.time)  # type: ignore[arg-type]


def test_statistics_durations_follow_their_clock() -> None:
    fixed = IOStatistics(FixedClock(1))
    real = IOStatistics()
    for stats in (fixed, real):
        with stats.duration("op"):
            time.sleep(0.02)
    assert fixed.snapshot()["maximums"]["op.max"] == 0
    assert real.snapshot()["maximums"]["op.max"] >= 15


def test_the_harness_runs_reference_committers_on_a_fixed_clock() -> None:
    assert HARNESS_OPTIONS[FIXED_MILLIS_OPTION].isdigit()


def test_exploring_a_two_task_reference_scope_merges_states() -> None:
    """magic on the model's s3, the verdict matrix's ``crash-hadoop`` scope (2 tasks x 2
    attempts, one crash anywhere).  With the harness's fixed clock, schedules that reach the
    same state are pruned and the scope is enumerated completely (~850 runs, ~4 s); with the
    system clock nothing is ever pruned (measured: 3,000 runs, 56,506 states, 0 pruned, still
    incomplete after 46 s)."""
    scope = next(s for s in SCOPES if s.name == "crash-hadoop")
    crash_scope = scope.make("magic", "s3")
    assert crash_scope.tasks == 2
    factory = ReferenceFactory("magic")
    props = list(scope.props)
    fixed = explore(crash_scope, factory, props, max_runs=5_000,
                    stop_when_all_violated=False)
    assert fixed.complete, fixed.summary()
    assert fixed.pruned > fixed.runs // 2, fixed.summary()
    assert not fixed.violations
    wall = crash_scope.with_(options=((FIXED_MILLIS_OPTION, ""),))  # back to the system clock
    real = explore(wall, factory, props, max_runs=120, stop_when_all_violated=False)
    # (a run takes milliseconds, so no two runs share a timestamp: measured 0 pruned)
    assert real.pruned <= real.runs // 10 and not real.complete, real.summary()
