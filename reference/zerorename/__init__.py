"""zerorename: correct, rename-free output committers for object stores.

The public API (see ``docs/user/committers.md``)::

    import zerorename as zr
    store = zr.S3Store(zr.make_s3_client())          # or zr.LocalStore() for file://
    job = zr.JobContext(dest="s3://bucket/out")
    jc = zr.create_committer("magic", store, job)
    tc = zr.create_committer("magic", store, job, task=job.task(3))
    jc.setup_job(); tc.setup_task()
    with tc.open("year=2024/part-00003.parquet") as f:
        f.write(data)
    msg = tc.commit_task()
    jc.commit_job([msg])                              # or commit_job() to discover tasks
    zr.read_success(store, "s3://bucket/out")
"""

from __future__ import annotations

from zerorename._version import __version__
from zerorename.committers import COMMITTERS, BaseCommitter, OutputFile, create_committer
from zerorename.committers.destinations import UnownableDestinationError
from zerorename.context import JobContext, Options, ProgressEvent, TaskContext
from zerorename.errors import (
    AccessDeniedError,
    BadURLError,
    CallOrderError,
    ClientSideError,
    CommitError,
    ConflictError,
    CredentialsError,
    DestinationEscapeError,
    DuplicateDestinationError,
    FormatError,
    JobFailedError,
    NotFoundError,
    OptionValueError,
    PreconditionFailedError,
    StoreError,
    ThrottledError,
    UnsupportedOperationError,
)
from zerorename.formats import (
    PendingSet,
    SinglePendingCommit,
    SuccessData,
    TaskManifest,
    read_success,
)
from zerorename.messages import TaskCommitMessage
from zerorename.reader import committed_files
from zerorename.retry import RetryPolicy
from zerorename.stats import IOStatistics
from zerorename.store import (
    ListPage,
    ObjectInfo,
    Store,
    StoreCapabilities,
    UploadInfo,
    list_all,
    list_dir,
)
from zerorename.stores import LocalStore, S3Store, make_s3_client, rename_by_copy
from zerorename.table_fold import LogExpiryError, compact_table, expire_batch_records
from zerorename.table_log import table_files

__all__ = [
    "COMMITTERS",
    "AccessDeniedError",
    "BadURLError",
    "BaseCommitter",
    "CallOrderError",
    "ClientSideError",
    "CommitError",
    "ConflictError",
    "CredentialsError",
    "DestinationEscapeError",
    "DuplicateDestinationError",
    "FormatError",
    "IOStatistics",
    "JobContext",
    "JobFailedError",
    "ListPage",
    "LocalStore",
    "LogExpiryError",
    "NotFoundError",
    "ObjectInfo",
    "OptionValueError",
    "Options",
    "OutputFile",
    "PendingSet",
    "PreconditionFailedError",
    "ProgressEvent",
    "RetryPolicy",
    "S3Store",
    "SinglePendingCommit",
    "Store",
    "StoreCapabilities",
    "StoreError",
    "SuccessData",
    "TaskCommitMessage",
    "TaskContext",
    "TaskManifest",
    "ThrottledError",
    "UnownableDestinationError",
    "UnsupportedOperationError",
    "UploadInfo",
    "__version__",
    "committed_files",
    "compact_table",
    "create_committer",
    "expire_batch_records",
    "list_all",
    "list_dir",
    "make_s3_client",
    "read_success",
    "rename_by_copy",
    "table_files",
]
