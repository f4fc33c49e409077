"""The committer the harness drives for ``zerorename check --target hadoop``: each method
of the model's committer interface a call into the research driver's JVM, each filesystem call
(or S3 request) the Java committer makes a harness step; and its factory and resolver."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from zerorename_bridge.hadoop.check_process import (
    _PROCESS,
    BUILTIN,
    CLASSPATH_VARIABLE,
    HadoopCallFailed,
    HadoopCommitterError,
    _session,
    jvm_name,
)
from zerorename_bridge.hadoop.check_store import MODEL_BUCKET, HadoopStore, store_backend
from zerorename_bridge.hadoop.session import Answer, HadoopUnavailable, State
from zerorename_bridge.hadoop.translate import hadoop_name
from zerorename_model.engine.errors import ActorCrashed, JobAlreadyCommitted, RunAborted
from zerorename_model.engine.harness.state import HarnessStore, TaskKilled
from zerorename_model.engine.scenario import CommittedByAnother, CommitterEnv, JobSpec, TaskSpec

__all__ = ["HadoopCommitter", "HadoopFactory", "check_available", "hadoop_resolver"]

#: a time a Java ``FileStatus`` prints (``modification_time=1796179851311``): it differs
#: from run to run, and a failed call's message is part of the run's final state
_CLOCK = re.compile(r"\b(modification_time|access_time)=\d+")
#: what an S3 error S3A quotes names that differs from run to run: the upload's ID (moto's
#: are random) and the request's ID (``Completing multipart upload id <id>``, ``Request ID:
#: <id>``); without them a witness of S3A's committers replays to the same final state
_S3_IDS = re.compile(r"\b((?:[Uu]pload|multipart upload) (?:[Ii][Dd])|Request ID:) [^\s,;)]+")


#: how the driver reports the fenced committer's JobAlreadyCommittedException
_ROLLED_FORWARD = "JobAlreadyCommittedException: "
#: a Hadoop task attempt ID's task and attempt numbers (the fenced committer's ``commit_task``
#: answers the attempt whose record committed the task)
_ATTEMPT = re.compile(r"_m_(?P<task>\d+)_(?P<attempt>\d+)$")


# -- the committer the harness drives ------------------------------------------------------------


class HadoopCommitter:
    """One actor's committer: each method a call into the JVM, each filesystem call (or S3
    request) it makes a harness step."""

    def __init__(self, factory: HadoopFactory, env: CommitterEnv, job: JobSpec,
                 task: TaskSpec | None) -> None:
        self.factory = factory
        self.env: Any = env
        self.job = job
        self.task = task
        place = _PROCESS.run
        assert place is not None, "a Hadoop committer outside a run of HadoopStore"
        self.place = place
        self.session = _session(place.s3a)

    def _dest(self) -> str:
        rel = hadoop_name(self.job.dest)
        if self.place.s3a:
            bucket, _, key = rel.partition("/")
            if bucket != MODEL_BUCKET:
                raise HadoopCommitterError(self.job.dest, (
                    f"the S3A driver writes the model's bucket {MODEL_BUCKET!r} to a moto "
                    f"bucket of its own; a scenario naming bucket {bucket!r} cannot run there"))
            return f"s3a://{self.place.root}/{key}"
        return f"hlfs://{self.place.root}/{rel}"

    def _shown(self, path: str) -> str:
        """A path as traces show it: below the run's root (the same in every run)."""
        for root in (self.place.root, self.place.local):
            if root in path:
                return path.split(root, 1)[1].lstrip("/")
        return self._shown_text(path)

    def _call(self, method: str, arg: str = "", data: bytes = b"") -> str:
        actor = self.env.actor_name
        task, attempt = (-1, -1) if self.task is None else (self.task.task_id,
                                                            self.task.attempt)
        session = self.session
        try:
            answer = session.call(actor, self.factory.jvm, self._dest(), self.job.job_id,
                                  self.job.attempt, task, attempt, method, arg, data)
        except RuntimeError as error:  # the driver could not even start the call
            raise HadoopCallFailed(str(error)) from None
        while answer.state is State.PENDING:
            call = answer.call
            assert call is not None
            what = f"hadoop {call.kind} {self._shown(call.path)}" + (
                f" {self._shown(call.other)}" if call.other else "")
            took: list[Answer] = []
            try:
                self.env.step(what, self._stepper(actor, call.mutates, took))
                answer = took[-1]
            except TaskKilled:
                _PROCESS.changes += 1
                # the call it waits at throws (a killed task's interrupted call); what it
                # does then (its own clean-up) runs to the end of the call
                answer = session.kill(actor)
                while answer.state is State.PENDING:
                    answer = session.step(actor)
                raise
            except (ActorCrashed, RunAborted):
                session.crash(actor)
                raise
        if answer.state is State.FAILED:
            raise HadoopCallFailed(self._shown_text(answer.value))
        return answer.value

    def _stepper(self, actor: str, mutates: bool, took: list[Answer]) -> Callable[[], str]:
        """The harness step's action: the JVM makes the call its actor waits at and runs to
        its next one (kept in ``took``); the step records what it was told."""
        def step() -> str:
            if mutates:
                _PROCESS.changes += 1
            took.append(self.session.step(actor))
            return self._shown_answer(took[-1])
        return step

    def _shown_text(self, text: str) -> str:
        """``text`` with the run's own directories named as in every run, and the clock
        readings a Java exception quotes (a ``FileStatus``'s times) left out, so that a
        witness replays to the same state."""
        for root, shown in ((self.place.local, "<run>"), (self.place.root, "<root>")):
            text = text.replace(root, shown)
        return _S3_IDS.sub(r"\1 <id>", _CLOCK.sub(r"\1=<t>", text))

    def _shown_answer(self, answer: Answer) -> str:
        """What a step's answer records in the actor's history (the same in every run)."""
        if answer.call is not None:
            call = answer.call
            return self._shown_text(f"{answer.state.value} {call.kind} {call.path} {call.other}"
                                    .rstrip())
        return self._shown_text(f"{answer.state.value} {answer.value}".rstrip())

    def setup_job(self) -> None:
        try:
            self._call("setup_job")
        except HadoopCallFailed as failed:
            # zerorename's fenced committer: an earlier attempt of the job committed it, and
            # this setup published its output (rolled forward)
            if str(failed).startswith(_ROLLED_FORWARD):
                raise JobAlreadyCommitted(str(failed)) from None
            raise

    def setup_task(self) -> None:
        self._call("setup_task")

    def write(self, relpath: str, data: bytes) -> None:
        self._call("write", relpath, data)

    def needs_task_commit(self) -> bool:
        return self._call("needs_task_commit").strip().lower() == "true"

    def commit_task(self) -> object:
        committed_by = self._call("commit_task").strip()
        won = _ATTEMPT.search(committed_by)
        if won and self.task is not None and (int(won["task"]), int(won["attempt"])) != (
                self.task.task_id, self.task.attempt):
            # zerorename's fenced committer: another attempt's record commits the task
            winner = TaskSpec(self.job, int(won["task"]), int(won["attempt"]))
            return CommittedByAnother(winner.attempt_id, None)
        return None  # Hadoop's commitTask gives the driver no message

    def abort_task(self) -> None:
        self._call("abort_task")

    def commit_job(self, messages: list[Any] | None) -> None:
        self._call("commit_job")

    def abort_job(self) -> None:
        self._call("abort_job")

    def cleanup_job(self) -> None:
        self._call("cleanup_job")


class HadoopFactory:
    """The harness's factory for one Hadoop committer (built-in or ``hadoop:<class>``)."""

    #: Spark never calls recoverTask: a restarted job attempt runs every task again
    supports_recovery = False
    #: commitJob finds the tasks' work itself: the driver's messages are not passed
    takes_messages = False

    def __init__(self, name: str) -> None:
        self.name = name
        self.jvm = jvm_name(name)
        model = _model_class(name)
        #: what the model's committer of the same name declares (a class of the user's:
        #: nothing is promised before the job commits)
        self.visible_before_job_commit = bool(getattr(model, "visible_before_job_commit",
                                                      False))

    def __call__(self, env: CommitterEnv, job: JobSpec, task: TaskSpec | None,
                 options: dict[str, str]) -> HadoopCommitter:
        return HadoopCommitter(self, env, job, task)


def _model_class(name: str) -> object:
    if name not in BUILTIN:
        return None
    from zerorename_model.systems.protocols import get

    return get(name)


def hadoop_resolver(committer: str, store: str) -> tuple[HadoopFactory,
                                                         Callable[[], HarnessStore]]:
    """Like :func:`zerorename_model.experiments.verdicts.model_resolver`, for Hadoop's
    committers (module-level, so that the matrix's worker processes can import it)."""
    return HadoopFactory(committer), store_backend(store)


def check_available(committer: str, store: str) -> None:
    """Start the JVM of ``store`` and build ``committer`` once, so that a class that is not
    there fails before any exploration, naming the class and the fix."""
    try:
        place = HadoopStore(store).place
    except HadoopUnavailable as missing:
        raise HadoopCommitterError(committer, f"the research driver cannot start: {missing}"
                                   ) from None
    session = _session(place.s3a)
    dest = (f"s3a://{place.root}/probe" if place.s3a else f"hlfs://{place.root}/probe")
    try:
        session.command("call", "probe", jvm_name(committer), dest, "job0", "0", "-1", "-1",
                        "needs_task_commit", "", "")
    except RuntimeError as error:
        raise HadoopCommitterError(committer, (
            f"the JVM cannot drive it ({error}); put its jar on the class path (--jar or "
            f"${CLASSPATH_VARIABLE}), and give the class the constructor (Path, "
            "TaskAttemptContext) of a PathOutputCommitter")) from None
    finally:
        session.reset()

