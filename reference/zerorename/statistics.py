"""Every statistic name zerorename records, as documented constants (as Hadoop's
``ManifestCommitterStatisticNames`` and ``CommitterStatisticNames``, whose names these are
where Hadoop has one).

Statistics land in ``_SUCCESS`` (``iostatistics``), in each task commit message and in the
summary report; ``zerorename success`` prints them with :data:`DESCRIPTIONS`.  Call sites use
these constants, never a literal (``tests/test_statistics_names.py`` fails on one), so a
renamed statistic is renamed everywhere and every name has its meaning written here.

A timed statistic (a stage, a request) is a counter of how often it ran plus ``.min``/``.max``/
``.mean`` of its milliseconds; a failed run counts under ``<name>.failures``.
"""

from __future__ import annotations

from typing import Final

# -- job stages (timed) ------------------------------------------------------------------------

#: ``setup_job``: check the destination and record that the job attempt exists
JOB_STAGE_SETUP: Final = "job_stage_setup"
#: find the job's task records (pendingsets, manifests) by listing
JOB_STAGE_SCAN_RECORDS: Final = "job_stage_scan_records"
#: (fenced, Hadoop's protocol) list the task records the job attempt wrote
JOB_STAGE_LIST_TASK_RECORDS: Final = "job_stage_list_task_records"
#: read and validate every committed task's pendingset
JOB_STAGE_LOAD_PENDINGSETS: Final = "job_stage_load_pendingsets"
#: read and validate every committed task's manifest
JOB_STAGE_LOAD_MANIFESTS: Final = "job_stage_load_manifests"
#: apply the conflict mode to the destination (``replace`` deletes, ``fail`` checks)
JOB_STAGE_PREPARE_DESTINATION: Final = "job_stage_prepare_destination"
#: read what else the job owns (intents, records) beside the completes
JOB_STAGE_READ_OWNED: Final = "job_stage_read_owned"
#: (fenced) before the commit point, find which of the job's keys already hold an object and
#: refuse the job when one holds another writer's
JOB_STAGE_CHECK_KEYS: Final = "job_stage_check_keys"
#: (fenced) save the job's commit record: the commit point
JOB_STAGE_SAVE_COMMIT_RECORD: Final = "job_stage_save_commit_record"
#: complete every committed multipart upload: the files become visible
JOB_STAGE_COMPLETE_UPLOADS: Final = "job_stage_complete_uploads"
#: abort the job's uploads that no committed task names
JOB_STAGE_ABORT_UNCOMMITTED: Final = "job_stage_abort_uncommitted"
#: (rename committers) create the destination's directories
JOB_STAGE_CREATE_TARGET_DIRS: Final = "job_stage_create_target_dirs"
#: (rename committers) rename every committed file into the destination
JOB_STAGE_RENAME_FILES: Final = "job_stage_rename_files"
#: (manifest) check each renamed file's size (and etag)
JOB_STAGE_OPTIONAL_VALIDATE_OUTPUT: Final = "job_stage_optional_validate_output"
#: write ``_SUCCESS``
JOB_STAGE_SAVE_SUCCESS_MARKER: Final = "job_stage_save_success_marker"
#: remove the job's records and temporary data after it committed
JOB_STAGE_CLEANUP: Final = "job_stage_cleanup"
#: ``abort_job``: discard what the job owns
JOB_STAGE_ABORT: Final = "job_stage_abort"
#: the whole ``commit_job``
COMMITTER_COMMIT_JOB: Final = "committer_commit_job"

# -- task stages (timed) -----------------------------------------------------------------------

#: ``setup_task``
TASK_STAGE_SETUP: Final = "task_stage_setup"
#: the whole ``commit_task``
TASK_STAGE_COMMIT: Final = "task_stage_commit"
#: save the task's pendingset
TASK_STAGE_SAVE_PENDINGSET: Final = "task_stage_save_pendingset"
#: save the task's manifest
TASK_STAGE_SAVE_MANIFEST: Final = "task_stage_save_manifest"
#: (fenced) the task record's conditional PUT: the first attempt wins
TASK_STAGE_SAVE_TASK_RECORD: Final = "task_stage_save_task_record"
#: ``abort_task``
TASK_STAGE_ABORT_TASK: Final = "task_stage_abort_task"

# -- what a job committed ----------------------------------------------------------------------

#: files made visible by the job commit
COMMITTER_FILES_COMMITTED: Final = "committer_files_committed"
#: bytes made visible by the job commit
COMMITTER_BYTES_COMMITTED: Final = "committer_bytes_committed"
#: bytes uploaded by tasks
COMMITTER_BYTES_UPLOADED: Final = "committer_bytes_uploaded"
#: multipart uploads completed
COMMITTER_COMMITS_COMPLETED: Final = "committer_commits_completed"
#: multipart uploads aborted (uncommitted attempts, aborted jobs)
COMMITTER_COMMITS_ABORTED: Final = "committer_commits_aborted"
#: files a failed job commit took back
COMMITTER_COMMITS_REVERTED: Final = "committer_commits_reverted"
#: jobs committed
COMMITTER_JOBS_COMPLETED: Final = "committer_jobs_completed"
#: job commits that failed
COMMITTER_JOBS_FAILED: Final = "committer_jobs_failed"
#: (fenced) jobs a later attempt finished publishing after their commit point
COMMITTER_JOBS_ROLLED_FORWARD: Final = "committer_jobs_rolled_forward"
#: tasks committed (S3A committers' name)
COMMITTER_TASKS_COMPLETED: Final = "committer_tasks_completed"
#: tasks committed (the manifest and FileOutputCommitter families' name)
COMMITTER_TASKS_SUCCEEDED: Final = "committer_tasks_succeeded"
#: task commits that failed
COMMITTER_TASKS_FAILED: Final = "committer_tasks_failed"
#: tasks recovered after a driver restart
COMMITTER_TASKS_RECOVERED: Final = "committer_tasks_recovered"
#: tasks whose output recovery could not find
COMMITTER_TASK_RECOVERY_MISSING: Final = "committer_task_recovery_missing"
#: a task committed by more than one attempt (one was kept)
COMMITTER_TASK_DUPLICATE_COMMITS: Final = "committer_task_duplicate_commits"
#: files per task (min, max, mean)
COMMITTER_TASK_FILE_COUNT: Final = "committer_task_file_count"
#: bytes per task file (min, max, mean)
COMMITTER_TASK_FILE_SIZE: Final = "committer_task_file_size"
#: directories per task (min, max, mean)
COMMITTER_TASK_DIRECTORY_COUNT: Final = "committer_task_directory_count"
#: files a job commit replaced (conflict mode ``replace``)
COMMITTER_FILES_REPLACED: Final = "committer_files_replaced"
#: pending uploads found that no record of this job names (left alone)
COMMITTER_UPLOADS_UNATTRIBUTED: Final = "committer_uploads_unattributed"
#: cleanups that failed after the job published (the job still succeeded)
COMMITTER_CLEANUP_FAILURES: Final = "committer_cleanup_failures"
#: (fenced) records of old jobs removed by expiry
COMMITTER_RECORDS_EXPIRED: Final = "committer_records_expired"
#: summary reports that could not be saved (the job still succeeded)
COMMITTER_SUMMARY_REPORT_FAILURES: Final = "committer_summary_report_failures"
#: (fenced) the store refused the set-up probe's second conditional PUT, as it must
COMMITTER_CONDITIONAL_PUT_PROBE_REFUSED: Final = "committer_conditional_put_probe_refused"
#: (fenced) files written as multipart uploads to their final keys
COMMITTER_FENCED_FILES_CREATED: Final = "committer_fenced_files_created"
#: (magic) files written as multipart uploads to their final keys
COMMITTER_MAGIC_FILES_CREATED: Final = "committer_magic_files_created"
#: pendingsets loaded at job commit
COMMITTER_LOAD_PENDINGSET: Final = "committer_load_pendingset"
#: parts uploaded by the files' output streams
STREAM_WRITE_BLOCK_UPLOADS: Final = "stream_write_block_uploads"

# -- operations of the rename family -----------------------------------------------------------

#: renames done as a server-side copy then a delete (stores without rename)
OP_RENAME_BY_COPY: Final = "op_rename_by_copy"
#: directories created
OP_CREATE_DIRECTORIES: Final = "op_create_directories"
#: files deleted under the destination before a rename (manifest ``delete.target.files``)
OP_DELETE_FILE_UNDER_DESTINATION: Final = "op_delete_file_under_destination"
#: manifests loaded
OP_LOAD_MANIFEST: Final = "op_load_manifest"
#: one file renamed into the destination (timed)
COMMIT_FILE_RENAME: Final = "commit_file_rename"
#: renames found already done by an earlier, interrupted job commit
COMMIT_FILE_RENAME_RECOVERED: Final = "commit_file_rename_recovered"
#: (manifest) files an earlier job attempt had renamed, replaced by this attempt's
COMMIT_FILE_RENAME_REPLACED_EARLIER_ATTEMPT: Final = "commit_file_rename_replaced_earlier_attempt"

# -- store requests ----------------------------------------------------------------------------

#: the prefix of every request statistic: ``store_<op>`` is timed once per request sent
REQUEST_PREFIX: Final = "store_"
#: the store operations a committer sends, each timed under :func:`request` of its name
REQUEST_OPS: Final = ("put", "get", "head", "list_page", "delete", "delete_many", "copy",
                      "rename", "create_multipart", "upload_part", "complete_multipart",
                      "abort_multipart", "list_multipart_uploads")
#: requests repeated by the retry loop
STORE_RETRIES: Final = "store_retries"
#: completes whose repeat found the upload already completed by the first attempt
STORE_COMPLETE_RECOVERED: Final = "store_complete_recovered"
#: LIST pages a fenced job commit sent to find which of its keys already exist, instead of a HEAD
#: per key: the check before the commit point (both implementations), and the JVM's listing on a
#: roll-forward where the store ignores If-None-Match on complete
COMMITTER_COMPLETE_LIST_PAGES: Final = "committer_complete_list_pages"
#: the job's keys whose existence those pages answered
COMMITTER_COMPLETE_KEYS_LISTED: Final = "committer_complete_keys_listed"
#: the job's keys the listing did not reach (its page budget spent), checked with a HEAD each
COMMITTER_COMPLETE_KEYS_HEADED: Final = "committer_complete_keys_headed"

FAILURES_SUFFIX: Final = ".failures"

_STAGE_PREFIXES = ("job_stage_", "task_stage_")
#: counters that say what a stage did beside files and bytes (logged with it)
_OUTCOMES = frozenset({
    COMMITTER_COMMITS_ABORTED, COMMITTER_COMMITS_REVERTED, COMMITTER_FILES_REPLACED,
    COMMITTER_UPLOADS_UNATTRIBUTED, COMMITTER_CLEANUP_FAILURES, COMMITTER_JOBS_ROLLED_FORWARD,
    COMMITTER_TASK_DUPLICATE_COMMITS, OP_RENAME_BY_COPY, STORE_RETRIES,
})


def request(op: str) -> str:
    """The statistic of one kind of store request (``put`` → ``store_put``)."""
    if op not in REQUEST_OPS:
        raise ValueError(f"unknown store operation {op!r}: add it to REQUEST_OPS")
    return REQUEST_PREFIX + op


def request_op(name: str) -> str:
    """``store_put`` (or ``store_put.failures``) → ``put``."""
    return name.removeprefix(REQUEST_PREFIX).removesuffix(FAILURES_SUFFIX)


def is_request(name: str) -> bool:
    """Whether ``name`` counts requests sent (a success or a failure of one kind)."""
    return request_op(name) in REQUEST_OPS and name.startswith(REQUEST_PREFIX)


def is_stage(name: str) -> bool:
    return name.startswith(_STAGE_PREFIXES) or name == COMMITTER_COMMIT_JOB


def is_task_stage(name: str) -> bool:
    return name.startswith("task_stage_")


def is_outcome(name: str) -> bool:
    return name in _OUTCOMES


def stage_title(name: str) -> str:
    """``job_stage_complete_uploads`` → ``complete uploads``; the whole commit is ``job commit``."""
    if name == COMMITTER_COMMIT_JOB:
        return "job commit"
    for prefix in _STAGE_PREFIXES:
        if name.startswith(prefix):
            return ("task " if prefix == "task_stage_" else "") + \
                name.removeprefix(prefix).replace("_", " ")
    return name


def _documented() -> dict[str, str]:
    """Every constant's name → its ``#:`` comment, read from this module's source."""
    import inspect
    import re

    source = inspect.getsource(__import__(__name__, fromlist=["_"]))
    pairs = re.findall(r"^#: (.+)\n([A-Z_]+): Final = \"([a-z_.]+)\"$", source, re.M)
    return {value: doc for doc, _const, value in pairs}


#: statistic name → what it means (for ``zerorename success`` and the docs)
DESCRIPTIONS: Final[dict[str, str]] = _documented()
#: every statistic name defined here (requests included)
NAMES: Final[frozenset[str]] = frozenset(DESCRIPTIONS) | {request(op) for op in REQUEST_OPS}


def describe(name: str) -> str:
    """What a statistic (or ``<name>.failures``, ``.min``, ``.max``, ``.mean``) means."""
    base = name
    for suffix in (".min", ".max", ".mean"):
        base = base.removesuffix(suffix)
    failed = base.endswith(FAILURES_SUFFIX)
    base = base.removesuffix(FAILURES_SUFFIX)
    if base.startswith(REQUEST_PREFIX) and request_op(base) in REQUEST_OPS:
        text = f"{request_op(base)} requests sent"
    else:
        text = DESCRIPTIONS.get(base, "")
    text = text.replace("``", "")
    return f"{text} (failed)" if failed and text else text
