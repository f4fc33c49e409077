"""Reference committers, seen by the harness as model committers.

:func:`reference_factory` returns a factory the harness can call like a model protocol's class:
it builds ``zr.create_committer(name, store, JobContext(...), task)`` on the harness's stepped
store, with no retry sleeps.  The committers' thread pools run as actors of the harness
(``workers`` per pool, 2 by default: ``JobContext.pool_backend`` is the harness's
:class:`~zerorename_model.engine.harness.workers.ActorPools`), so exploration chooses the order in
which a job commit's parallel requests land; ``workers=1`` runs every pool inline, in the calling
actor, as a single thread would.  :class:`TranslatingStore` turns model-store errors into
``zerorename`` errors, so reference code sees exactly the exceptions a real store would raise.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields
from typing import Any, TypeVar

import zerorename as zr
from zerorename.committers.fenced_records import (
    JobAlreadyCommittedError,
    TaskCommittedByOtherAttemptError,
)
from zerorename.committers.reliable import ReliableStore
from zerorename.committers.s3a import S3ACommitter
from zerorename.errors import (
    NotFoundError,
    PreconditionFailedError,
    StoreError,
    ThrottledError,
    UnsupportedOperationError,
)
from zerorename.executor import PoolBackend
from zerorename.retry import Landed, RetryPolicy
from zerorename_bridge.reference_variants import UnrecognisingFencedCommitter
from zerorename_model.engine.errors import JobAlreadyCommitted, ModelStoreError
from zerorename_model.engine.harness.workers import DEFAULT_WIDTH
from zerorename_model.engine.scenario import CommittedByAnother, JobSpec, TaskSpec

#: The instant every harness run's records are stamped with (2023-11-14T22:13:20Z).
HARNESS_CLOCK_MILLIS = 1_700_000_000_000

#: options every harness run gives the reference committers: one thread (a pool's width under
#: the harness is the factory's ``workers``, not this), no sleeping, and a fixed clock —
#: wall-clock timestamps and measured durations in records would make every run's store contents
#: (part of the state fingerprint) unique, so exploration could never recognise a state it has
#: already explored.
HARNESS_OPTIONS = {
    "fs.s3a.committer.threads": "1",
    "mapreduce.manifest.committer.io.threads": "1",
    "zerorename.committer.threads": "1",
    "fs.s3a.retry.interval": "0",
    "zerorename.clock.fixed-millis": str(HARNESS_CLOCK_MILLIS),
}


T = TypeVar("T")

#: the suffix of a reference committer's name run with its retry loop's landed checks off
#: (:class:`BlindRetryPolicy`), and for a committer that also recognises its own success itself
#: (:data:`UNRECOGNISING`), without that too: ``fenced+no-landed-check``
NO_LANDED_CHECK = "+no-landed-check"


@dataclass(frozen=True)
class BlindRetryPolicy(RetryPolicy):
    """The reference's retry policy with its landed checks ignored: a repeated request that
    meets its own earlier success (a conditional PUT answering 412 to its own write, a
    complete answering NoSuchUpload for the object it made) raises that error as if another
    writer had caused it.  The research harness sets it on a reference committer's
    :class:`ReliableStore` (the production package has no such switch) to show what the checks
    ``put_landed`` and ``complete_landed`` protect: with it, a lost answer the real loop
    recovers from becomes a failure (issue 34)."""

    def call(self, fn: Callable[[], T], *,
             on_retry: Callable[[int, BaseException, float], None] | None = None,
             landed: Landed[T] | None = None) -> T:
        return super().call(fn, on_retry=on_retry, landed=None)


def blind(policy: RetryPolicy) -> BlindRetryPolicy:
    """``policy`` with the same attempts, delays and predicate, its landed checks ignored."""
    return BlindRetryPolicy(**{f.name: getattr(policy, f.name) for f in fields(policy)})


#: committers that recognise their own earlier success themselves too, and their class without
#: it: a ``+no-landed-check`` row runs this class (with the blind loop)
UNRECOGNISING: dict[str, type[UnrecognisingFencedCommitter]] = {
    "fenced": UnrecognisingFencedCommitter}


def split_variant(name: str) -> tuple[str, bool]:
    """A reference row's name as (the production committer, whether its landed checks run)."""
    if name.endswith(NO_LANDED_CHECK):
        return name[: -len(NO_LANDED_CHECK)], False
    return name, True


#: committers that stage task output on the local disk (the harness gives each actor its own)
STAGING = ("directory", "partitioned")
#: where staging committers keep their records on the harness's consistent cluster filesystem
CLUSTER_TMP = "hdfs://cluster/tmp/staging"


def translate(error: ModelStoreError) -> StoreError:
    """A model error as the reference's error class with the same code."""
    if error.status == 404:
        return NotFoundError(error.url, error.reason, code=error.code)
    if error.status == 412:
        return PreconditionFailedError(error.url, error.reason)
    if error.status == 503:
        return ThrottledError(error.url)
    if error.status == 501:
        return UnsupportedOperationError(error.url, error.reason)
    return StoreError(error.url, error.reason, code=error.code, status=error.status)


class TranslatingStore:
    """Wraps a (stepped) model store; every ``ModelStoreError`` becomes a ``zr`` error."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self.name = getattr(inner, "name", "model")

    def capabilities(self) -> zr.StoreCapabilities:
        caps: zr.StoreCapabilities = self._inner.capabilities()  # the model uses zr's type
        return caps

    def request_counts(self) -> dict[str, int]:
        counts: dict[str, int] = self._inner.request_counts()
        return counts

    def __getattr__(self, op: str) -> Any:
        method = getattr(self._inner, op)

        def call(*args: Any, **kwargs: Any) -> Any:
            try:
                return method(*args, **kwargs)
            except ModelStoreError as error:
                raise translate(error) from None

        return call


class ReferenceCommitter:
    """The harness's Committer interface over one reference committer instance."""

    supports_recovery = False

    def __init__(self, name: str, store: Any, job: JobSpec, task: TaskSpec | None,
                 options: dict[str, str], local_store: Any = None,
                 cluster_store: Any = None, pools: PoolBackend | None = None,
                 landed_checks: bool = True) -> None:
        merged = {**HARNESS_OPTIONS, **options}
        if cluster_store is not None:
            merged.setdefault("fs.s3a.committer.staging.tmp.path", CLUSTER_TMP)
        self.context = zr.JobContext(dest=job.dest, job_id=job.job_id, attempt=job.attempt,
                                     options=merged, pool_backend=pools)
        self.task = self.context.task(task.task_id, task.attempt) if task else None
        unrecognising = None if landed_checks else UNRECOGNISING.get(name)
        self.committer = (
            unrecognising(store, self.context, self.task) if unrecognising is not None
            else zr.create_committer(name, store, self.context, task=self.task,
                                     local_store=local_store, cluster_store=cluster_store))
        if not landed_checks:
            for value in vars(self.committer).values():  # the store and any records store
                if isinstance(value, ReliableStore):
                    value.policy = blind(value.policy)

    def setup_job(self) -> None:
        try:
            self.committer.setup_job()
        except JobAlreadyCommittedError as done:  # rolled forward: the job is committed
            raise JobAlreadyCommitted(str(done)) from done

    def setup_task(self) -> None:
        self.committer.setup_task()

    def write(self, relpath: str, data: bytes) -> None:
        with self.committer.open(relpath) as f:
            f.write(data)

    def needs_task_commit(self) -> bool:
        return bool(self.committer.needs_task_commit())

    def commit_task(self) -> Any:
        try:
            message = self.committer.commit_task()
        except TaskCommittedByOtherAttemptError as lost:
            # the task is committed, by the winner: what Spark's writer reports to the driver
            won = None if lost.message is None else lost.message.to_json()
            return CommittedByAnother(lost.winner, won)
        return None if message is None else message.to_json()

    def abort_task(self) -> None:
        self.committer.abort_task()

    def commit_job(self, messages: Sequence[Any] | None) -> None:
        parsed = None if messages is None else [
            zr.TaskCommitMessage.from_json(m) for m in messages if m is not None]
        self.committer.commit_job(parsed)

    def abort_job(self) -> None:
        self.committer.abort_job()

    def cleanup_job(self) -> None:
        self.committer.cleanup_job()


def default_workers(name: str) -> int:
    """How many actors each pool of committer ``name`` runs on by default: 2, except for the
    S3A committers (magic, directory, partitioned), whose pools run inline by default.  They
    can run on workers (their job commit reads beside its pool through
    ``BoundedExecutor.beside``), but two workers grow their exhaustive property scopes 20 to 100
    times in runs (driver-crash scope: directory 22 -> 600, magic 25 -> 2,435; task-crash:
    directory 9 -> 200, magic 11 -> 391; magic's abort scope does not finish in 6,000), and in
    the abort scope the abortability property, which looks at the instant the driver's cleanup
    ends, sees the upload of an attempt killed mid task commit that its abort_task has not
    aborted yet (Spark does not wait for killed tasks).
    tests/model/test_harness_workers.py and test_staging_kill_workers.py explore them with
    workers in small scopes."""
    cls = zr.COMMITTERS.get(name)  # an unknown name fails where the committer is made
    return 1 if cls is not None and issubclass(cls, S3ACommitter) else DEFAULT_WIDTH


class ReferenceFactory:
    """A picklable factory: ``ReferenceFactory("magic")(env, job, task, options)``.
    ``workers``: how many actors each of the committer's pools runs on (1: inline; None:
    :func:`default_workers`).  A name ending in :data:`NO_LANDED_CHECK` runs the production
    committer with :class:`BlindRetryPolicy` (its retry loop's landed checks off)."""

    supports_recovery = False

    def __init__(self, name: str, workers: int | None = None) -> None:
        self.name, self.landed_checks = split_variant(name)
        self.workers = default_workers(self.name) if workers is None else workers

    @property
    def visible_before_job_commit(self) -> bool:
        """What the production committer class declares (the property suites read it)."""
        return zr.COMMITTERS[self.name].visible_before_job_commit

    def __call__(self, env: Any, job: JobSpec, task: TaskSpec | None,
                 options: dict[str, str]) -> ReferenceCommitter:
        staging = self.name in STAGING
        local = TranslatingStore(env.local()) if staging else None
        cluster = TranslatingStore(env.cluster) if staging else None  # paper Section VI.1
        pools = env.worker_pools(self.workers) if self.workers > 1 else None
        return ReferenceCommitter(self.name, TranslatingStore(env.store), job, task, options,
                                  local, cluster, pools, self.landed_checks)


def reference_factory(name: str, workers: int | None = None) -> ReferenceFactory:
    return ReferenceFactory(name, workers)
