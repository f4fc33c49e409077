"""The manifest committer (seed 004; protocol in manifest_fileoutput_peer_tests.md Parts F, G, J).

Tasks write into their attempt directory under ``dest/_temporary``; task commit *scans* that
directory and saves a TaskManifest (write a temporary name, then rename it onto
``<taskId>-manifest.json``: the rename is the task commit); job commit runs the stages load
manifests, create directories, rename files, save ``_SUCCESS``, cleanup.  No data moves in task
commit and no directory is renamed, so it needs consistent listings and atomic *file* rename
only (ABFS, GCS, HDFS).  On S3 the file renames are copy-and-delete: correct on today's
consistent S3, but O(data), and the manifest is PUT directly since there is no rename.

Layout::

    dest/_temporary/<jobId>/<NN>/tasks/<taskAttemptId>/...          task attempt directory
    dest/_temporary/<jobId>/<NN>/manifests/<taskId>-manifest.json   committed task manifest
"""

from __future__ import annotations

from typing import TypedDict, cast

from zerorename_model.engine.errors import ModelStoreError
from zerorename_model.engine.scenario import CommitterEnv, JobSpec, TaskSpec
from zerorename_model.systems.protocols import ModelCommitter, register
from zerorename_model.systems.protocols.common import (
    SUCCESS,
    TEMPORARY,
    CommitFailed,
    decode_json,
    delete_recursive,
    encode_json,
    has_directories,
    join,
    list_children,
    list_files,
    relative,
    rename_or_copy,
    success_data,
    task_id,
)

MANIFEST_TYPE = "org.apache.hadoop.mapreduce.lib.output.committer.manifest.files.TaskManifest/1"
MANIFEST_SUFFIX = "-manifest.json"
DELETE_TARGET = "mapreduce.manifest.committer.delete.target.files"
#: Hadoop 3.5.0's option (MAPREDUCE-7474): how many times task commit tries to save its
#: manifest; 3.5.0 tries at least twice whatever it is set to.  Absent here: Hadoop 3.3.x, which
#: has no such retry (one try); set: 3.5.0's behaviour (the version option of this protocol)
SAVE_ATTEMPTS = "mapreduce.manifest.committer.manifest.save.attempts"


class FileEntry(TypedDict):
    """One file of a TaskManifest (Hadoop's FileEntry, with its short JSON names)."""

    s: str  # source: the file in the task attempt directory
    d: str  # destination URL
    z: int  # size
    e: str  # ETag


class DirEntry(TypedDict):
    """One directory of a TaskManifest (Hadoop's DirEntry)."""

    d: str  # destination URL
    t: int  # status: 0, not probed
    l: int  # noqa: E741 (Hadoop's name): depth below the destination


class TaskManifest(TypedDict):
    """A task's manifest, as saved by task commit and loaded by job commit."""

    type: str
    version: int
    jobId: str
    jobAttemptNumber: int
    taskID: str
    taskAttemptID: str
    taskAttemptDir: str
    files: list[FileEntry]
    directories: list[DirEntry]
    extraData: dict[str, str]
    iostatistics: dict[str, int]


@register("manifest", takes_messages=False)
class ManifestCommitter(ModelCommitter):
    name = "manifest"

    def __init__(self, env: CommitterEnv, job: JobSpec, task: TaskSpec | None,
                 options: dict[str, str]) -> None:
        self.fs = env.store
        self.dest = job.dest
        self.job = job
        self.task = task
        self.delete_target = options.get(DELETE_TARGET, "false").lower() == "true"
        self.directories = has_directories(env)
        self.save_attempts = (max(2, int(options[SAVE_ATTEMPTS])) if SAVE_ATTEMPTS in options
                              else 1)
        self.job_attempt_dir = join(self.dest, TEMPORARY, job.job_id, f"{job.attempt:02d}")
        self.manifest_dir = join(self.job_attempt_dir, "manifests")
        if task is not None:
            self.task_attempt_dir = join(self.job_attempt_dir, "tasks", task.attempt_id)
        self._cleaned = False

    # -- job and task set-up -------------------------------------------------------------------

    def setup_job(self) -> None:
        """Stage job_stage_setup: create the job attempt and manifest directories (implicit
        here) and delete any ``_SUCCESS`` of an earlier job."""
        self.fs.delete(join(self.dest, SUCCESS))

    def setup_task(self) -> None:
        """Stage task_stage_setup: create the task attempt directory (implicit here)."""

    def write(self, relpath: str, data: bytes) -> None:
        assert self.task is not None
        self.fs.put(join(self.task_attempt_dir, relpath), data)

    def needs_task_commit(self) -> bool:
        """Always true, so that a task's statistics reach the job even if it wrote nothing."""
        return True

    # -- task commit and abort -----------------------------------------------------------------

    def scan_directory(self) -> TaskManifest:
        """Stage task_stage_scan_directory: one entry per file (source, destination, size,
        etag) and per directory (destination, status 0 = not probed here, depth)."""
        assert self.task is not None
        files: list[FileEntry] = []
        dirs: set[str] = set()
        found = list_files(self.fs, self.task_attempt_dir)
        if not found and self.directories:
            # Hadoop's scan is a listStatus of the attempt directory: on a filesystem with
            # directories, one that does not exist (another job's clean-up deleted it) fails
            # the task commit instead of saving an empty manifest; the delimited LIST is that
            # listStatus (the store answers "not found" for a missing directory)
            list_children(self.fs, self.task_attempt_dir)
        for obj in found:
            rel = relative(obj.url, self.task_attempt_dir)
            files.append({"s": obj.url, "d": join(self.dest, rel), "z": obj.size, "e": obj.etag})
            parts = rel.split("/")[:-1]
            dirs |= {"/".join(parts[: i + 1]) for i in range(len(parts))}
        return {
            "type": MANIFEST_TYPE, "version": 1, "jobId": self.job.job_id,
            "jobAttemptNumber": self.job.attempt, "taskID": task_id(self.task),
            "taskAttemptID": self.task.attempt_id, "taskAttemptDir": self.task_attempt_dir,
            "files": files,
            "directories": [{"d": join(self.dest, d), "t": 0, "l": d.count("/") + 1}
                            for d in sorted(dirs)],
            "extraData": {}, "iostatistics": {},
        }

    def commit_task(self) -> TaskManifest:
        """Stage task_stage_commit: scan the attempt directory, save the manifest."""
        manifest = self.scan_directory()
        self.save_task_manifest(manifest)
        return manifest

    def save_task_manifest(self, manifest: TaskManifest) -> None:
        """Stage task_stage_save_manifest: write ``<attemptId>-manifest.json.tmp``, delete
        ``<taskId>-manifest.json``, rename the one onto the other (a later attempt of the task
        replaces an earlier one's manifest).  Without rename, one PUT of the final name.

        Hadoop 3.5.0 (``save_attempts`` > 1) deletes any earlier temporary file first and, if
        the rename fails (another attempt's manifest appeared meanwhile, or a clean-up deleted
        the temporary file), tries the whole save again, up to ``save_attempts`` times."""
        assert self.task is not None
        final = join(self.manifest_dir, task_id(self.task) + MANIFEST_SUFFIX)
        if not self.fs.capabilities().rename:
            self.fs.put(final, encode_json(manifest))
            return
        temp = join(self.manifest_dir, self.task.attempt_id + MANIFEST_SUFFIX + ".tmp")
        for attempt in range(1, self.save_attempts + 1):
            if self.save_attempts > 1:
                self.fs.delete(temp)
            self.fs.put(temp, encode_json(manifest))
            self.fs.delete(final)
            try:
                self.fs.rename(temp, final)
                return
            except ModelStoreError:
                if attempt == self.save_attempts:
                    raise

    def abort_task(self) -> None:
        """Stage task_stage_abort_task: delete the task attempt directory."""
        delete_recursive(self.fs, self.task_attempt_dir)

    # -- job commit ----------------------------------------------------------------------------

    def commit_job(self, messages: list[object] | None) -> None:
        """Stage committer_commit_job: load manifests, create directories, rename files, save
        ``_SUCCESS``, cleanup.  Like every Hadoop committer it discovers the committed tasks by
        listing (the manifests directory), so ``messages`` are not used."""
        manifests = self.load_manifests()
        self.create_directories(manifests)
        committed = self.rename_files(manifests)
        self.save_success(committed)
        self.cleanup()

    def load_manifests(self) -> list[TaskManifest]:
        """Stage job_stage_load_manifests: list ``manifests/`` for ``*-manifest.json``; load
        and validate each (type, version, job ID, no destination written twice)."""
        files, _dirs = list_children(self.fs, self.manifest_dir)
        manifests: list[TaskManifest] = []
        for obj in files:
            if obj.url.endswith(MANIFEST_SUFFIX):
                manifests.append(self.validate(decode_json(self.fs.get(obj.url), obj.url),
                                               obj.url))
        return manifests

    def validate(self, manifest: object, url: str) -> TaskManifest:
        """Check what job commit relies on (type, version, job, destinations); the entries
        are then taken to be as task commit wrote them, hence the cast."""
        if not isinstance(manifest, dict) or manifest.get("type") != MANIFEST_TYPE:
            raise CommitFailed(url, "not a TaskManifest")
        if manifest.get("version") != 1 or manifest.get("jobId") != self.job.job_id:
            raise CommitFailed(url, "wrong manifest version or job")
        destinations = [str(entry.get("d", "")) for entry in manifest.get("files", [])]
        for dest in destinations:
            if not dest.startswith(self.dest.rstrip("/") + "/"):
                raise CommitFailed(url, f"destination {dest} outside {self.dest}")
        if len(set(destinations)) != len(destinations):
            raise CommitFailed(url, "a destination is written to by more than one entry")
        return cast(TaskManifest, manifest)

    def create_directories(self, manifests: list[TaskManifest]) -> None:
        """Stage job_stage_create_target_dirs: directories are implicit in the model's
        stores, so the leaf directories need not (and cannot) be created."""

    def rename_files(self, manifests: list[TaskManifest]) -> list[str]:
        """Stage job_stage_rename_files: one file rename per entry (optionally deleting the
        target first); never a directory rename."""
        committed = []
        for manifest in manifests:
            for entry in manifest["files"]:
                if self.delete_target:
                    self.fs.delete(entry["d"])
                rename_or_copy(self.fs, entry["s"], entry["d"])
                committed.append(relative(entry["d"], self.dest))
        return committed

    def save_success(self, committed: list[str]) -> None:
        """Stage job_stage_save_success_marker: the JSON ManifestSuccessData."""
        self.fs.put(join(self.dest, SUCCESS), success_data(self.name, self.job.job_id, committed))

    def cleanup(self) -> None:
        """Stage job_stage_cleanup: delete ``dest/_temporary``."""
        if not self._cleaned:
            delete_recursive(self.fs, join(self.dest, TEMPORARY))
            self._cleaned = True

    def abort_job(self) -> None:
        """Stage job_stage_abort: the cleanup stage."""
        self.cleanup()

    def cleanup_job(self) -> None:
        """Stage job_stage_cleanup (already run by a successful job commit)."""
        self.cleanup()
