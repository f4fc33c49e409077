"""The typed seams of the model (issue 12 item 8) stay in step with what they describe: the
TypedDicts that name a dataclass's fields or a record's keys are checked against the real
thing here, since mypy only checks the code that uses them."""

from __future__ import annotations

from dataclasses import fields

from zerorename_model.engine.harness import Run
from zerorename_model.engine.scenario import Scenario, ScenarioChanges
from zerorename_model.engine.stores.store import ModelStore
from zerorename_model.systems.protocols import ModelCommitter, load_all
from zerorename_model.systems.protocols.common import PendingCommit, PendingSet, pending_set


def test_scenario_changes_name_every_scenario_field() -> None:
    assert set(ScenarioChanges.__annotations__) == {f.name for f in fields(Scenario)}


def test_every_registered_committer_is_a_model_committer() -> None:
    for name, factory in load_all().items():
        assert isinstance(factory, type) and issubclass(factory, ModelCommitter), name
        assert isinstance(factory.supports_recovery, bool), name
        assert isinstance(factory.visible_before_job_commit, bool), name


def test_a_pending_upload_has_the_keys_its_typed_dict_names() -> None:
    from zerorename_model.systems.protocols.common import upload_pending

    store = ModelStore("s3")
    commit = upload_pending(store, "s3://bucket/out/part-0", b"data", "job", "attempt")
    assert set(commit) == PendingCommit.__required_keys__
    assert set(pending_set("job", "attempt", [commit])) == PendingSet.__required_keys__


def test_the_harness_env_serves_committers_through_the_typed_protocol() -> None:
    """A run of a registered committer goes through ``CommitterEnv`` end to end."""
    from zerorename_model.engine.choices import FirstChooser
    from zerorename_model.systems.protocols import get

    result = Run(Scenario("fenced", tasks=1), get("fenced")).run(FirstChooser())
    assert [job.outcome for job in result.jobs] == ["committed"]
