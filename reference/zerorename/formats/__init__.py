"""Persistent JSON formats, field-compatible with Hadoop's, validated on every load.

* :class:`SinglePendingCommit` — a ``.pending`` file: one uncompleted multipart upload
  (Hadoop ``org.apache.hadoop.fs.s3a.commit.files.SinglePendingCommit``, version 2).
* :class:`PendingSet` — a ``.pendingset`` file: every upload of one committed task attempt
  (Hadoop ``PendingSet``, version 2); the committing attempt is in ``extraData``
  ``task.attempt.id`` (HADOOP-17258).
* :class:`UploadIntent` — the keys a task attempt is about to create uploads for.
* :class:`TaskManifest` — the manifest committer's per-task record (Hadoop
  ``...committer.manifest.files.TaskManifest/1``) with Hadoop's short keys ``s d z e`` / ``d t l``.
* :class:`SuccessData` — the JSON ``_SUCCESS`` file that both Hadoop families write.

Why validate so strictly: job commit acts on these files — it completes uploads and renames
files to the destinations they name.  A truncated, corrupt, foreign (other job) or future
(newer version) file must stop the commit with a :class:`~zerorename.errors.FormatError` that
names the file and the reason, before anything becomes visible.  Destinations are stored raw
(``destinationKey``) and as a percent-encoded ``uri`` (Hadoop parses it as a URI: HADOOP-17112
was a path with a space), and the two must agree.

One module per format family — :mod:`.uploads` (``.pending``, ``.pendingset``, intents),
:mod:`.manifest`, :mod:`.success` — over the shared :mod:`.base` (the record base class, JSON
parsing, encoded URIs) and :mod:`.fields` (the field checks).  Import the names from here:
this package is the stable place.
"""

from zerorename.formats.base import (
    JsonRecord,
    date_text,
    decode_uri,
    encode_url,
    load,
    now_millis,
    parse_json,
)
from zerorename.formats.manifest import (
    MANIFEST_TYPE,
    MANIFEST_VERSION,
    DirEntry,
    FileEntry,
    TaskManifest,
)
from zerorename.formats.success import (
    SUCCESS_FILE_LIMIT,
    SUCCESS_NAME,
    SuccessData,
    read_success,
)
from zerorename.formats.uploads import (
    INTENT_FORMAT,
    PENDING_VERSION,
    PENDINGSET_VERSION,
    TASK_ATTEMPT_ID,
    PendingSet,
    SinglePendingCommit,
    UploadIntent,
    check_unique_destinations,
)

__all__ = [
    "INTENT_FORMAT",
    "MANIFEST_TYPE",
    "MANIFEST_VERSION",
    "PENDINGSET_VERSION",
    "PENDING_VERSION",
    "SUCCESS_FILE_LIMIT",
    "SUCCESS_NAME",
    "TASK_ATTEMPT_ID",
    "DirEntry",
    "FileEntry",
    "JsonRecord",
    "PendingSet",
    "SinglePendingCommit",
    "SuccessData",
    "TaskManifest",
    "UploadIntent",
    "check_unique_destinations",
    "date_text",
    "decode_uri",
    "encode_url",
    "load",
    "now_millis",
    "parse_json",
    "read_success",
]
