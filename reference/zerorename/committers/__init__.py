"""The committers and their factory.

=============  ==================================================================================
name           what it is
=============  ==================================================================================
``magic``      tasks stream multipart uploads to the final keys; job commit completes them (S3)
``fenced``     as ``magic``, every commit decided by one conditional PUT (If-None-Match: *)
``directory``  tasks stage locally, upload at task commit; conflicts checked for the whole dest
``partitioned`` as ``directory``, conflicts checked per partition (in-place partition updates)
``manifest``   tasks write to a temp tree; job commit renames files listed in manifests (rename)
``v1``         Hadoop FileOutputCommitter algorithm 1 (stores with rename)
``v2``         Hadoop FileOutputCommitter algorithm 2 (stores with rename; unsafe, see docs)
=============  ==================================================================================
"""

from __future__ import annotations

from zerorename.committers.base import BaseCommitter
from zerorename.committers.fenced import FencedCommitter
from zerorename.committers.fileoutput import FileOutputCommitterV1, FileOutputCommitterV2
from zerorename.committers.magic import MagicCommitter
from zerorename.committers.manifest import ManifestCommitter
from zerorename.committers.output import OutputFile
from zerorename.committers.staging import (
    DirectoryStagingCommitter,
    PartitionedStagingCommitter,
    StagingCommitter,
)
from zerorename.context import JobContext, TaskContext
from zerorename.errors import CommitError
from zerorename.store import Store

__all__ = [
    "COMMITTERS",
    "BaseCommitter",
    "DirectoryStagingCommitter",
    "FencedCommitter",
    "FileOutputCommitterV1",
    "FileOutputCommitterV2",
    "MagicCommitter",
    "ManifestCommitter",
    "OutputFile",
    "PartitionedStagingCommitter",
    "create_committer",
]

COMMITTERS: dict[str, type[BaseCommitter]] = {
    "v1": FileOutputCommitterV1,
    "v2": FileOutputCommitterV2,
    "directory": DirectoryStagingCommitter,
    "partitioned": PartitionedStagingCommitter,
    "magic": MagicCommitter,
    "fenced": FencedCommitter,
    "manifest": ManifestCommitter,
}


def create_committer(name: str, store: Store, job: JobContext, task: TaskContext | None = None,
                     *, local_store: Store | None = None,
                     cluster_store: Store | None = None) -> BaseCommitter:
    """The committer ``name`` for ``job`` (job side) or for ``task`` (task side).

    ``local_store``: for the staging committers, a store to use as the task's local staging
    area instead of the local file system (the simulation harness passes each actor's disk).
    ``cluster_store``: for the staging committers, a consistent store shared by the driver and
    the tasks (Hadoop's cluster filesystem) that keeps the job's records — upload intents,
    pendingsets, the job marker — under ``fs.s3a.committer.staging.tmp.path`` (a URL on it,
    required), so nothing the committer reads back depends on the destination store's
    consistency.  Other committers refuse it.
    """
    cls = COMMITTERS.get(str(name).strip().lower())
    if cls is None:
        raise CommitError(str(name), f"unknown committer; expected one of {sorted(COMMITTERS)}")
    if issubclass(cls, StagingCommitter):
        return cls(store, job, task, local_store=local_store, cluster_store=cluster_store)
    if cluster_store is not None:
        raise CommitError(str(name), "only the staging committers (directory, partitioned) "
                                     "keep their records on a cluster store")
    return cls(store, job, task)
