"""zerorename's checks in a committer author's own pytest suite.

Installed with zerorename-research as the pytest plugin ``zerorename`` (entry point group
``pytest11``, model/pyproject.toml), so any test of the environment can ask for the fixture
``committer_check``::

    def test_my_committer_keeps_every_property(committer_check):
        committer_check.state_machine("my_committer.committers:MyCommitter")

    def test_my_committer_passes_the_acceptance_scenarios(committer_check):
        committer_check.acceptance("my_committer.committers:MyCommitter")

A committer is named as ``zerorename check --committer`` names it (an entry point of
``zerorename.committers``/``zerorename_research.model_committers``, or ``module:Class``) or
given as the class itself.  Every failure is an ``AssertionError`` naming the property and
showing the shrunk trace; its witness is written under the test's ``tmp_path`` (or
``--zerorename-witnesses DIR``), where ``zerorename trace replay FILE`` runs it again.

Loading the plugin imports neither hypothesis nor the model: a suite that never asks for the
fixture pays nothing.  The same checks without pytest: :class:`CommitterCheck`.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

__all__ = ["CommitterCheck", "committer_check", "committer_name"]

#: the options of the plugin (``pytest --help`` lists them)
EXAMPLES_OPTION = "--zerorename-examples"
WITNESSES_OPTION = "--zerorename-witnesses"


def committer_name(committer: str | type) -> str:
    """A committer's name as ``check`` and the witnesses' headers carry it: a class becomes
    ``module:Class`` (it must be importable so, for worker processes and for replay)."""
    if isinstance(committer, str):
        return committer
    return f"{committer.__module__}:{committer.__qualname__}"


def _hidden(rel: str) -> bool:
    return any(part.startswith(("_", ".")) for part in rel.split("/"))


@dataclass
class CommitterCheck:
    """The suites on one committer class of the user's.  ``witnesses``: where a violation's
    trace is written; ``examples``: hypothesis examples per state-machine check."""

    witnesses: Path
    examples: int = 25

    def state_machine(self, committer: str | type, *, target: str = "reference",
                      store: str = "s3", properties: Sequence[str] | None = None,
                      drivers: Sequence[str] = ("spark", "hadoop"),
                      partition_drivers: Sequence[str] = ("spark",),
                      examples: int | None = None, steps: int = 80,
                      faults: Any = None, throttle: bool | None = None,
                      shrink: bool = True) -> None:
        """The hypothesis state machine of the project's property suites on ``committer``
        (``target`` ``reference``: a ``(store, job, task)`` class; ``model``: a model
        committer class) on the model store ``store``: every move drawn, the per-step
        invariants checked after each, the properties at the end, under both job-commit
        protocols (``drivers``).  ``partition_drivers``: the protocols under which a task
        attempt may be partitioned from its driver (under Hadoop's, no committer that finds
        its tasks by listing can exclude a zombie's output; name both to check yours
        does).  ``throttle``: draw throttling (503 SlowDown) too; default: for reference
        committers, which retry (the model's protocols are the papers' pseudo-code, without
        retries)."""
        from zerorename_bridge import plugins
        from zerorename_bridge.statemachine import check_machine, make_machine
        from zerorename_model.check.properties import PROPERTIES

        name = committer_name(committer)
        kind = plugins.Target(target)
        factory = (plugins.reference_factory(name) if kind is plugins.Target.REFERENCE
                   else plugins.model_factory(name))
        header = {"target": "reference"} if kind is plugins.Target.REFERENCE else {}
        machine = make_machine(name, store, factory, list(properties or PROPERTIES),
                               drivers=drivers, partition_drivers=partition_drivers,
                               faults=faults, witnesses=str(self.witnesses), header=header,
                               throttle=(kind is plugins.Target.REFERENCE if throttle is None
                                         else throttle))
        check_machine(machine, examples=examples or self.examples, steps=steps,
                      shrink=shrink)

    def verdicts(self, committer: str | type, *, target: str = "reference",
                 stores: Sequence[str] = ("s3",), properties: Sequence[str] | None = None,
                 quick: bool = True) -> list[Any]:
        """``zerorename check`` for ``committer``: every property under both protocols by
        exploring the verdict matrix's scopes; the cells (``Cell``), witnesses written."""
        from zerorename_bridge import plugins

        name = committer_name(committer)
        kind = plugins.Target(target)
        self.witnesses.mkdir(parents=True, exist_ok=True)
        if kind is plugins.Target.REFERENCE:
            from zerorename_bridge.verdicts import reference_matrix

            cells = reference_matrix([name], list(stores), properties, quick=quick,
                                     traces=str(self.witnesses),
                                     resolver=plugins.reference_resolver, extra=[name])
            for cell in cells:
                if cell.trace:
                    plugins.mark_reference(cell.trace)
            return cells
        from zerorename_model.experiments.matrix import matrix
        from zerorename_model.systems.protocols import load_all

        return matrix([name], list(stores), properties, quick=quick,
                      traces=str(self.witnesses), resolve=plugins.model_resolver,
                      known=[*load_all(), name])

    def assert_holds(self, cells: Sequence[Any]) -> None:
        """Fail naming every violated cell and its witness."""
        from zerorename_model.experiments.cells import Verdict

        bad = [f"{c.prop} ({c.protocol}) on {c.store}: violated, witness {c.trace}"
               for c in cells if c.verdict is Verdict.VIOLATED]
        assert not bad, "\n".join(bad)

    def acceptance(self, committer: str | type) -> None:
        """The API contract of docs/user/api.md, end to end on an in-process moto S3, for a
        reference committer class: the lifecycle under Spark's and Hadoop's protocols, a
        retried task, and an aborted job.  Fails listing every scenario that broke."""
        from zerorename_bridge import plugins

        cls = plugins.reference_class(committer_name(committer))
        failures: list[str] = []
        with _moto_store() as store:
            for scenario in (_lifecycle_spark, _lifecycle_hadoop, _retried_task,
                             _aborted_job):
                try:
                    problems = scenario(cls, store, f"s3://{_BUCKET}/{scenario.__name__[1:]}")
                except Exception as error:  # a scenario's unexpected failure is a finding
                    problems = [f"raised {type(error).__name__}: {error}"]
                failures += [f"{scenario.__name__[1:]}: {p}" for p in problems]
        assert not failures, (f"{committer_name(committer)} fails the acceptance scenarios:\n"
                              + "\n".join(failures))


# -- the acceptance scenarios --------------------------------------------------------------

_BUCKET = "acceptance"


@contextlib.contextmanager
def _moto_store() -> Iterator[Any]:
    os.environ.setdefault("S3_UPLOAD_PART_MIN_SIZE", "1")
    import boto3
    from moto import mock_aws

    import zerorename as zr

    with mock_aws():
        client = boto3.client("s3", region_name="us-east-1")
        client.create_bucket(Bucket=_BUCKET)
        yield zr.S3Store(client)


def _files(task: int) -> dict[str, bytes]:
    return {f"part-{task:05d}.csv": f"row{task}\n".encode() * 3,
            f"year=2024/month={task}/part {task}.csv": bytes(range(64)) + b"tail"}


def _output(store: Any, dest: str) -> dict[str, bytes]:
    from zerorename.store import list_all

    prefix = dest + "/"
    return {o.url[len(prefix):]: store.get(o.url) for o in list_all(store, prefix)
            if not _hidden(o.url[len(prefix):])}


def _uploads(store: Any, dest: str) -> list[str]:
    return [u.url for u in store.list_multipart_uploads(dest + "/")]


def _run_tasks(cls: type, store: Any, job: Any, tasks: int, *, attempt: int = 0
               ) -> tuple[list[Any], dict[str, bytes]]:
    import zerorename as zr

    messages, expected = [], {}
    for task_id in range(tasks):
        tc = cls(store, job, job.task(task_id, attempt))
        tc.setup_task()
        for rel, data in _files(task_id).items():
            with tc.open(rel) as f:
                f.write(data)
            expected[rel] = data
        message = tc.commit_task()
        messages.append(zr.TaskCommitMessage.from_json(json.loads(json.dumps(
            message.to_json()))))  # through JSON, as Spark ships it
    return messages, expected


def _lifecycle(cls: type, store: Any, dest: str, spark: bool) -> list[str]:
    import zerorename as zr

    problems = []
    job = zr.JobContext(dest, options={})
    jc = cls(store, job, None)
    jc.setup_job()
    messages, expected = _run_tasks(cls, store, job, 2)
    early = _output(store, dest)
    if early and not getattr(cls, "visible_before_job_commit", False):
        problems.append(f"output visible after task commit, before job commit: "
                        f"{sorted(early)}")
    jc.commit_job(messages if spark else None)
    if _output(store, dest) != expected:
        problems.append(f"after job commit the destination holds {sorted(_output(store, dest))}"
                        f", not exactly {sorted(expected)}")
    jc.cleanup_job()
    if _uploads(store, dest):
        problems.append(f"uploads left after cleanup: {_uploads(store, dest)}")
    return problems


def _lifecycle_spark(cls: type, store: Any, dest: str) -> list[str]:
    return _lifecycle(cls, store, dest, spark=True)


def _lifecycle_hadoop(cls: type, store: Any, dest: str) -> list[str]:
    return _lifecycle(cls, store, dest, spark=False)


def _retried_task(cls: type, store: Any, dest: str) -> list[str]:
    """A task's first attempt writes and is aborted; the second commits: only its output."""
    import zerorename as zr

    job = zr.JobContext(dest, options={})
    jc = cls(store, job, None)
    jc.setup_job()
    first = cls(store, job, job.task(0, 0))
    first.setup_task()
    with first.open("part-00000.csv") as f:
        f.write(b"from the failed attempt")
    first.abort_task()
    messages, expected = _run_tasks(cls, store, job, 1, attempt=1)
    jc.commit_job(messages)
    jc.cleanup_job()
    problems = []
    if _output(store, dest) != expected:
        problems.append(f"the destination holds {_output(store, dest)}, not the second "
                        f"attempt's {expected}")
    if _uploads(store, dest):
        problems.append(f"uploads left after cleanup: {_uploads(store, dest)}")
    return problems


def _aborted_job(cls: type, store: Any, dest: str) -> list[str]:
    """Tasks commit, then the job fails: abort_job leaves no output and no upload."""
    import zerorename as zr

    job = zr.JobContext(dest, options={})
    jc = cls(store, job, None)
    jc.setup_job()
    _run_tasks(cls, store, job, 2)
    jc.abort_job()
    jc.cleanup_job()
    problems = []
    if _output(store, dest):
        problems.append(f"output left after abort_job: {sorted(_output(store, dest))}")
    if _uploads(store, dest):
        problems.append(f"uploads left after abort_job: {_uploads(store, dest)}")
    return problems


# -- the pytest plugin ---------------------------------------------------------------------


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("zerorename", "zerorename committer checks")
    group.addoption(EXAMPLES_OPTION, type=int, default=25,
                    help="hypothesis examples per committer_check.state_machine (default 25)")
    group.addoption(WITNESSES_OPTION, default=None,
                    help="write the witness traces of violations here (default: each "
                         "test's tmp_path)")


@pytest.fixture
def committer_check(request: pytest.FixtureRequest, tmp_path: Path) -> CommitterCheck:
    """The suites on a committer of yours (:class:`CommitterCheck`)."""
    chosen = request.config.getoption(WITNESSES_OPTION)
    witnesses = Path(chosen) if chosen else tmp_path / "witnesses"
    return CommitterCheck(witnesses, int(request.config.getoption(EXAMPLES_OPTION)))
