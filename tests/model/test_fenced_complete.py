"""``zerorename.fenced.complete``: the model's ``fenced`` completes unconditionally
(``overwrite``, ``fenced+overwrite``: its rule until session 24) or, as the JVM ``fenced`` did,
with ``If-None-Match: *`` (``if-none-match``); the default, ``check-first``, has its own tests
(test_fenced_check_first.py).  Every verdict here comes from exploring the model
(docs/research/fenced-complete-condition.md has the whole run):

* the option changes what the model does only where another writer's object is at a key the
  job completes, which no scope of the matrix has (the ``+foreign`` scopes of
  :mod:`zerorename_model.experiments.foreign_object` add it): there ``overwrite`` replaces the
  object and every scope property holds, ``if-none-match`` keeps it, reports the job
  committed-incomplete and loses nothing, but leaves the job's other files published and the
  job unabortable (abortability, invisibility);
* in the matrix's scopes every property holds under both rules, each scope enumerated;
* a rerun of the job completes once the object is moved away.
"""

from __future__ import annotations

import pytest

from tests.model.bare_env import BareEnv as _Env
from zerorename_model.check.explore import explore
from zerorename_model.check.properties import PROPERTIES
from zerorename_model.engine.choices import FirstChooser
from zerorename_model.engine.harness import Run, RunResult
from zerorename_model.engine.harness.events import Failure
from zerorename_model.engine.scenario import JobSpec, Scenario, TaskSpec, file_data
from zerorename_model.engine.stores.store import ModelStore
from zerorename_model.experiments.foreign_object import (
    FOREIGN,
    decide,
    foreign_kept,
    foreign_scopes,
    incomplete_reported,
    names_key,
    with_foreign_object,
)
from zerorename_model.experiments.scopes import scope_named
from zerorename_model.experiments.verdicts import Budget, Row, decide_pair
from zerorename_model.systems.protocols import get
from zerorename_model.systems.protocols.common import CommitFailed
from zerorename_model.systems.protocols.fenced import FencedCommitter
from zerorename_model.systems.protocols.fenced_complete import COMPLETE, JobCommitIncomplete

ENOUGH = 20_000
OUT = "s3://bucket/out"
INM = "fenced+if-none-match"


def _failures(result: RunResult) -> list[str]:
    return [i.message for i in result.incidents if isinstance(i, Failure)]


@pytest.mark.parametrize("driver", ["spark", "hadoop"])
def test_the_option_changes_what_the_job_commit_does_over_another_writers_object(
        driver: str) -> None:
    """One schedule (the first choice everywhere), another writer's object at part-00000:
    ``overwrite`` commits over it; ``if-none-match`` keeps it, completes part-00001, and fails
    committed-incomplete naming the key, its upload still pending."""
    runs = {}
    for complete in ("overwrite", "if-none-match"):
        scenario = with_foreign_object(Scenario("fenced", tasks=2, driver=driver,
                                                options=((COMPLETE, complete),)))
        runs[complete] = Run(scenario, get("fenced")).run(FirstChooser())
    over, kept = runs["overwrite"], runs["if-none-match"]
    assert over.jobs[0].outcome == "committed"
    assert over.final[f"{OUT}/part-00000"] == b"job0|t0|a0|j0|part-00000"
    assert foreign_kept(over) and not foreign_kept(kept)
    assert kept.jobs[0].outcome == "abort-failed"  # past its commit point: roll forward only
    assert kept.final[f"{OUT}/part-00000"] == FOREIGN.encode()
    assert kept.final[f"{OUT}/part-00001"] == b"job0|t1|a0|j0|part-00001"
    assert kept.final_uploads == [f"{OUT}/part-00000"]
    [failure] = [f for f in _failures(kept) if "commit_job failed" in f]
    assert "JobCommitIncomplete" in failure and f"{OUT}/part-00000" in failure
    assert incomplete_reported(kept) == []


def test_without_another_writers_object_the_rules_do_the_same() -> None:
    """The same schedule without the object: the same outcome and the same final store."""
    finals = []
    for complete in ("overwrite", "if-none-match"):
        scenario = Scenario("fenced", tasks=2, options=((COMPLETE, complete),))
        result = Run(scenario, get("fenced")).run(FirstChooser())
        assert result.jobs[0].outcome == "committed"
        finals.append((result.final, result.final_uploads))
    assert finals[0] == finals[1]


def test_an_unknown_value_is_refused() -> None:
    result = Run(Scenario("fenced", tasks=1, options=((COMPLETE, "maybe"),)),
                 get("fenced")).run(FirstChooser())
    assert result.jobs[0].outcome != "committed"
    assert "zerorename.fenced.complete='maybe'" in (result.jobs[0].error or "")




def test_a_rerun_completes_once_the_object_is_moved() -> None:
    """Committed-incomplete, then the user moves the object away: the next job attempt finds
    the commit record and completes the upload it left pending (roll-forward)."""
    store = ModelStore("s3")
    env = _Env(store)
    store.put(f"{OUT}/part-00000", FOREIGN.encode())
    factory = get(INM)
    job = JobSpec(OUT, "job0")
    driver = factory(env, job, None, {})
    driver.setup_job()
    messages = []
    for task_id in range(2):
        task = TaskSpec(job, task_id, 0)
        attempt = factory(env, job, task, {})
        attempt.setup_task()
        attempt.write(f"part-{task_id:05d}", file_data(job, task, f"part-{task_id:05d}"))
        messages.append(attempt.commit_task())
    with pytest.raises(JobCommitIncomplete, match="part-00000"):
        driver.commit_job(messages)
    assert store.get(f"{OUT}/part-00000") == FOREIGN.encode()
    # a rerun before the object is moved completes nothing and says so again
    again = factory(env, JobSpec(OUT, "job0", attempt=1), None, {})
    again.setup_job()
    with pytest.raises(JobCommitIncomplete):
        again.commit_job(None)
    store.delete(f"{OUT}/part-00000")  # the user moves it away
    rerun = factory(env, JobSpec(OUT, "job0", attempt=2), None, {})
    rerun.setup_job()
    rerun.commit_job(None)
    assert store.get(f"{OUT}/part-00000") == b"job0|t0|a0|j0|part-00000"
    assert store.get(f"{OUT}/part-00001") == b"job0|t1|a0|j0|part-00001"
    assert store.upload_urls() == []


@pytest.mark.parametrize("scope", ["crash-hadoop", "partition-spark", "restart-hadoop",
                                   "ambiguous-spark"])
def test_if_none_match_keeps_every_property_in_the_matrix_scopes(scope: str) -> None:
    """Four of the matrix's scopes, enumerated: no run violates a property the scope decides
    (every scope of both protocols is the slow test below)."""
    chosen = scope_named(scope)
    report = explore(chosen.make(INM, "s3"), get(INM), chosen.props, max_runs=ENOUGH,
                     stop_when_all_violated=False)
    assert report.complete and report.runs > 10, scope
    assert report.violations == {}, {p: v[0] for p, v in report.violations.items()}


@pytest.mark.slow
@pytest.mark.parametrize("committer, protocols", [("fenced+messages+if-none-match", ("spark",))])
def test_every_matrix_scope_holds_for_if_none_match(committer: str,
                                                   protocols: tuple[str, ...]) -> None:
    """The matrix's own code, every scope family, on s3: every cell ``holds`` (consistency:
    n/a on a consistent store), every scope enumerated.  CI explores the JVM's variant (Spark's
    protocol, task records in messages); ``fenced+if-none-match`` under both protocols holds
    the same way (docs/research/fenced-complete-condition.md gives the command; about two
    minutes more)."""
    cells = decide_pair(committer, "s3", tuple(PROPERTIES), Budget(max_runs=ENOUGH), None,
                        protocols=protocols, row=Row(families=None))
    for cell in cells:
        if cell.prop == "consistency":
            assert cell.shown == "n/a"
            continue
        assert cell.shown == "holds", (cell.prop, cell.to_json()["explored"])


@pytest.mark.parametrize("scope, committer, violated", [
    ("crash-hadoop+foreign", "fenced+overwrite", {"foreign-kept"}),
    ("crash-hadoop+foreign", INM, {"invisibility"}),
    ("abort-spark+foreign", "fenced+messages+overwrite", {"foreign-kept"}),
    ("abort-spark+foreign", "fenced+messages+if-none-match", {"abortability", "invisibility"}),
])
def test_another_writers_object_overwritten_or_the_job_left_incomplete(
        scope: str, committer: str, violated: set[str]) -> None:
    """The trade, from exploration: overwriting destroys the other writer's object and keeps
    every property of the scope; If-None-Match keeps it and reports the job, which is then
    committed but incomplete: its other files are visible and it cannot be aborted."""
    [chosen] = [s for s in foreign_scopes() if s.name == scope]
    decided = decide(committer, chosen, max_runs=ENOUGH)
    assert decided.complete
    assert {p for p, v in decided.violated.items() if v is not None} == violated


class _LosingFencedCommitter(FencedCommitter):
    """``if-none-match`` that aborts an upload whose key another writer holds: the checker
    of this family must see that a rerun could not complete it."""

    complete_default = "if-none-match"

    def complete(self, upload):  # type: ignore[no-untyped-def]
        try:
            return super().complete(upload)
        except CommitFailed:
            self.fs.abort_multipart(upload["uri"], upload["uploadId"])
            raise


def test_the_incomplete_checker_catches_an_upload_lost() -> None:
    scenario = with_foreign_object(Scenario("fenced", tasks=2))
    result = Run(scenario, _LosingFencedCommitter).run(FirstChooser())
    [violation] = incomplete_reported(result)
    assert "its upload is gone" in violation.detail


def test_a_failure_names_the_key_in_the_models_url_or_another_clients() -> None:
    """``incomplete-reported`` asks that the failure name the key: the model's URL, or the
    JVM's ``s3a://`` URL of the same key; a longer key sharing its start names another."""
    url = "s3://bucket/out/part-00000"
    assert names_key(f"JobCommitRefused: {url}: held by another writer", url)
    assert names_key(f"refused ({url}).", url)
    assert names_key("JobCommitRefusedException: `s3a://<root>/out/part-00000': 1 key(s)", url)
    assert not names_key("JobCommitRefusedException: `s3a://<root>/out/part-000001'", url)
    assert not names_key("s3a://<root>/out/part-00000/x and s3://bucket/out/part-00000.csv", url)
    assert not names_key("JobCommitRefused: 1 key(s) held by another writer", url)
    assert not names_key("JobCommitRefused: out/part-00000 (no URL)", url)
