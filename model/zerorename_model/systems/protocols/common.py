"""Helpers shared by the model protocols: paths, listings, emulated rename, pending-commit JSON.

Directories are implicit, as in an object store: a directory exists iff some key lies below
``dir/``.  Every helper issues its store operations one by one through the store it is given, so
each is a harness step and, under ``s3-2018``, every LIST may lag the truth; that is how the
paper's failures arise, so nothing here retries or double-checks.
"""

from __future__ import annotations

import json
from typing import TypedDict, cast
from urllib.parse import quote, unquote

# the store protocol and its value types: the production package's types-only module
from zerorename.store import ObjectInfo, Store
from zerorename_model.engine.errors import ModelStoreError, not_found
from zerorename_model.engine.scenario import CommitterEnv, TaskSpec
from zerorename_model.engine.stores.profiles import Profile

TEMPORARY = "_temporary"
SUCCESS = "_SUCCESS"
MAGIC = "__magic"
MAGIC_JOB_PREFIX = "__magic_job-"  # Hadoop 3.5.0: a job's own magic directory
BASE = "__base"
PENDING = ".pending"
PENDINGSET = ".pendingset"

#: SinglePendingCommit / PendingSet format version of Hadoop 3.3+ (s3a_peer_tests.md, section 12)
PENDING_VERSION = 2
SUCCESS_NAME = "org.apache.hadoop.fs.s3a.commit.files.SuccessData/1"
TASK_ATTEMPT_ID = "task.attempt.id"  # the PendingSet extraData key (HADOOP-17258 fix)

#: Hadoop 3.5.0's job clean-up of the S3A committers (magic, directory, partitioned):
#: ``abortPendingUploadsInCleanup`` lists the uploads under the destination and aborts each; an
#: abort answering 404 (the upload was completed or aborted since the listing) fails the call
#: once every listed upload was tried: ``commitJob`` after its files were published, or
#: ``abortJob``.  The deprecated ``cleanupJob`` suppresses it.  Absent: the paper's procedure,
#: a vanished upload counts as aborted.  A model option (Hadoop has no such key; its
#: ``fs.s3a.committer.abort.pending.uploads`` turns the whole abort off); the conformance run
#: against hadoop-aws 3.5.0 sets it (issue 45, docs/research/s3a-findings.md finding 6)
CLEANUP_ABORT_FAILS_ON_MISSING = "zerorename.model.s3a.cleanup-abort-fails-on-missing"


class CommitFailed(Exception):
    """A protocol step refused to go on; the message names the path and the reason."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason


# -- paths ---------------------------------------------------------------------------------------

def join(base: str, *parts: str) -> str:
    """``base/part/...``, ignoring empty parts (a relative path of "" is ``base`` itself)."""
    return "/".join([base.rstrip("/"), *(p.strip("/") for p in parts if p.strip("/"))])


def dir_prefix(url: str) -> str:
    """The directory's listing prefix: ``out/`` never matches ``out10/`` (paper XIV)."""
    return url.rstrip("/") + "/"


def name_of(url: str) -> str:
    return url.rstrip("/").rsplit("/", 1)[-1]


def relative(url: str, base: str) -> str:
    prefix = dir_prefix(base)
    if not url.startswith(prefix):
        raise CommitFailed(url, f"not under {base}")
    return url[len(prefix):]


def hidden(relpath: str) -> bool:
    """Hadoop's rule: a name beginning with ``_`` or ``.`` anywhere in the path is not output."""
    return any(part.startswith(("_", ".")) for part in relpath.split("/") if part)


def task_id(task: TaskSpec) -> str:
    """Hadoop's task ID (Table I ``taskId``): the same for every attempt of the task."""
    return f"task_{task.job.job_id}_m_{task.task_id:06d}"


def split_url(url: str) -> tuple[str, str]:
    """``s3://bucket/key`` -> ``(bucket, key)``."""
    rest = url.split("://", 1)[-1]
    bucket, _, key = rest.partition("/")
    return bucket, key


# -- listings ------------------------------------------------------------------------------------

def list_files(store: Store, directory: str) -> list[ObjectInfo]:
    """Every object LIST shows under ``directory/`` (recursive, all pages)."""
    found: list[ObjectInfo] = []
    token: str | None = None
    while True:
        page = store.list_page(dir_prefix(directory), token=token)
        found += page.objects
        if page.token is None:
            return found
        token = page.token


def list_children(store: Store, directory: str) -> tuple[list[ObjectInfo], list[str]]:
    """The files directly in ``directory`` and its subdirectories (URLs without trailing ``/``),
    as one delimited LIST shows them (FileSystem.listStatus)."""
    files: list[ObjectInfo] = []
    dirs: list[str] = []
    token: str | None = None
    while True:
        page = store.list_page(dir_prefix(directory), delimiter="/", token=token)
        files += page.objects
        dirs += [p.rstrip("/") for p in page.prefixes if p.rstrip("/") not in dirs]
        if page.token is None:
            return files, dirs
        token = page.token


def has_directories(env: CommitterEnv) -> bool:
    """The destination has real directories (HDFS: :attr:`Profile.directories`), so that an
    empty listing may mean "no such directory", which Hadoop's listStatus reports as an error.
    The harness's environment says so through its store's profile; an environment without a
    profile (a real store through the bridge) is taken to have none."""
    profile = getattr(env, "profile", None)
    return isinstance(profile, Profile) and profile.directories


def exists_dir(store: Store, directory: str) -> bool:
    """``exists(fs, dir)`` for an implicit directory: one LIST of at most one key."""
    page = store.list_page(dir_prefix(directory), max_keys=1)
    return bool(page.objects or page.prefixes)


def stat(store: Store, url: str) -> str | None:
    """``getFileStatus``: "file", "dir" or None; HEAD first, then LIST (as S3A probes)."""
    if store.head(url) is not None:
        return "file"
    return "dir" if exists_dir(store, url) else None


def delete_file(store: Store, url: str) -> None:
    store.delete(url)


def delete_recursive(store: Store, url: str) -> None:
    """``delete(fs, path, recursive)`` emulated as an object store does: LIST, then one bulk
    DELETE of what the LIST showed (and the path itself, in case it is a file)."""
    keys = [o.url for o in list_files(store, url)]
    store.delete_many([url.rstrip("/"), *keys])


def rename_or_copy(store: Store, src: str, dst: str, *, directory: bool = False) -> None:
    """``rename(fs, src, dst)``: the store's own rename where it has one; otherwise S3A's
    emulation, file by file COPY then DELETE of whatever a LIST of ``src/`` shows: O(data),
    non-atomic, and blind to keys a lagging listing omits (paper Section V)."""
    if store.capabilities().rename:
        store.rename(src, dst)
        return
    if not directory:
        store.copy(src, dst)
        store.delete(src)
        return
    children = list_files(store, src)
    if not children:
        raise not_found(src)
    for obj in children:
        store.copy(obj.url, join(dst, relative(obj.url, src)))
        store.delete(obj.url)


# -- task commit messages ------------------------------------------------------------------------

class TaskReport(TypedDict):
    """The task commit message of a committer whose task commit publishes or claims files
    (EMR, lakeFS, Stocator): the attempt and the files (relative paths) it committed."""

    attempt: str
    files: list[str]


# -- pending uploads (SinglePendingCommit / PendingSet, paper Section VI) -----------------------

class UploadRef(TypedDict):
    """What names one multipart upload: enough to abort it."""

    uri: str  # the destination URL, percent-encoded (see :func:`commit_url`)
    uploadId: str


class PendingCommit(UploadRef):
    """A SinglePendingCommit (a ``.pending`` file): one uncompleted upload of one file."""

    version: int
    bucket: str
    destinationKey: str
    etags: list[str]
    length: int
    jobId: str
    taskId: str
    text: str
    extraData: dict[str, str]


class PendingSet(TypedDict):
    """A PendingSet (a ``.pendingset`` file, or a staging task's commit message): every
    pending upload of one task attempt."""

    version: int
    jobId: str
    commits: list[PendingCommit]
    extraData: dict[str, str]


def encode_json(value: object) -> bytes:
    """The committers' JSON files (``sort_keys``, so equal records are equal bytes)."""
    return json.dumps(value, sort_keys=True, indent=1).encode()


def decode_json(data: bytes, url: str) -> object:
    """Parse a JSON file; its shape is the caller's to check (hence ``object``)."""
    try:
        parsed: object = json.loads(data)
    except ValueError as error:
        raise CommitFailed(url, f"corrupt JSON: {error}") from None
    return parsed


def upload_pending(store: Store, url: str, data: bytes, job_id: str,
                   attempt_id: str) -> PendingCommit:
    """Start a multipart upload to ``url`` and upload ``data`` as its single part, without
    completing it: nothing is visible until the job commit POSTs the completion."""
    upload_id = store.create_multipart(url)
    try:
        etag = store.upload_part(url, upload_id, 1, data)
    except ModelStoreError:
        abort_pending(store, {"uri": quote(url, safe=":/"), "uploadId": upload_id})
        raise
    bucket, key = split_url(url)
    return {
        "version": PENDING_VERSION, "uri": quote(url, safe=":/"), "bucket": bucket,
        "destinationKey": key, "uploadId": upload_id, "etags": [etag], "length": len(data),
        "jobId": job_id, "taskId": attempt_id, "text": "", "extraData": {},
    }


def commit_url(commit: UploadRef, *, decode: bool = True) -> str:
    """The destination of a pending commit.  ``uri`` is stored percent-encoded, so it must be
    decoded; skipping that is HADOOP-17112 (paths with spaces broke job commit)."""
    uri = commit["uri"]
    return unquote(uri) if decode else uri


def complete_pending(store: Store, commit: PendingCommit, *, decode: bool = True) -> str:
    """POST the completion: the object appears, atomically, at its final key."""
    url = commit_url(commit, decode=decode)
    parts = [(number, etag) for number, etag in enumerate(commit["etags"], start=1)]
    store.complete_multipart(url, commit["uploadId"], parts)
    return url


def complete_all(store: Store, commits: list[PendingCommit], *, decode: bool = True) -> list[str]:
    """``for p in Pending: completeUpload(p)``; if one fails, delete what was completed and
    abort the rest, so a failed job commit leaves nothing behind (TestStagingCommitter)."""
    done: list[str] = []
    try:
        for commit in commits:
            done.append(complete_pending(store, commit, decode=decode))
    except Exception:
        for url in done:
            store.delete(url)
        for commit in commits[len(done):]:
            abort_pending(store, commit)
        raise
    return done


def abort_pending(store: Store, commit: UploadRef) -> None:
    """Abort one upload; one already gone (completed or aborted elsewhere) is not an error."""
    try:
        store.abort_multipart(commit_url(commit), commit["uploadId"])
    except ModelStoreError as error:
        if error.code != "NoSuchUpload":
            raise


def abort_uploads_under(store: Store, prefix: str) -> list[str]:
    """``for f in listPendingUploads(prefix): abortUpload(f)``; ``prefix`` is taken literally,
    so callers pass :func:`dir_prefix` (a bare ``out1`` also matches ``out10/``).  An upload
    already gone (completed or aborted since the listing) is passed over; the URLs of those
    are returned, for a caller that fails on them (:data:`CLEANUP_ABORT_FAILS_ON_MISSING`)."""
    gone: list[str] = []
    for upload in store.list_multipart_uploads(prefix):
        try:
            store.abort_multipart(upload.url, upload.upload_id)
        except ModelStoreError as error:
            if error.code != "NoSuchUpload":
                raise
            gone.append(upload.url)
    return gone


def cleanup_abort_fails(options: dict[str, str]) -> bool:
    """:data:`CLEANUP_ABORT_FAILS_ON_MISSING` is set ("true")."""
    return options.get(CLEANUP_ABORT_FAILS_ON_MISSING, "false").lower() == "true"


def raise_if_gone(gone: list[str]) -> None:
    """S3A 3.5.0's clean-up with :data:`CLEANUP_ABORT_FAILS_ON_MISSING`: every listed upload
    was aborted (the pool runs them all), then the first that answered 404 fails the call."""
    if gone:
        raise CommitFailed(gone[0], "Aborting multipart upload: NoSuchUpload (completed or "
                                    "aborted since the clean-up listed it)")


def pending_set(job_id: str, attempt_id: str, commits: list[PendingCommit]) -> PendingSet:
    """A PendingSet: every pending upload of one task attempt."""
    return {"version": PENDING_VERSION, "jobId": job_id, "commits": commits,
            "extraData": {TASK_ATTEMPT_ID: attempt_id}}


def load_pending_set(data: bytes, url: str) -> PendingSet:
    """Parse and validate a PendingSet (or a single ``.pending`` wrapped as one).  Only what
    the protocols rely on is checked (the version, a commits list, no destination twice), as
    Hadoop does; the entries are taken to be the commits a committer wrote, hence the cast."""
    value = decode_json(data, url)
    if not isinstance(value, dict) or value.get("version") != PENDING_VERSION:
        raise CommitFailed(url, "not a version 2 pending set")
    commits = value.get("commits", [value] if "uploadId" in value else None)
    if not isinstance(commits, list):
        raise CommitFailed(url, "no commits list")
    keys = [c.get("destinationKey") for c in commits]
    if len(set(keys)) != len(keys):
        raise CommitFailed(url, "a destination is written to by more than one pending commit")
    return cast(PendingSet, {**value, "commits": commits})


def success_data(committer: str, job_id: str, filenames: list[str]) -> bytes:
    """The JSON ``_SUCCESS`` (SuccessData), listing the committed files (capped at 100)."""
    return encode_json({"name": SUCCESS_NAME, "committer": committer, "jobId": job_id,
                        "filenames": filenames[:100], "diagnostics": {}, "metrics": {},
                        "success": True})
