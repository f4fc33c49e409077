"""Drive S3A's committers (hadoop-aws 3.5.0: ``magic``, ``directory``, ``partitioned``) through
a model run's schedule on a moto server, and compare what both did (issue 45).

The same alignment as :mod:`.translate` (each model store operation against the S3A actor's
next request), on S3 requests instead of filesystem calls: the Java side
(``S3ACommitDriver``) stops an actor before every request its S3A filesystem sends (an AWS SDK
interceptor through ``fs.s3a.audit.execution.interceptors``).  A request matches a model
operation when it does the same kind of thing (write, read, delete, copy, one of the multipart
steps) to the same key, where keys under the committers' own directories are compared by
what they name, not where: the model keeps magic work under ``__magic/<jobAttempt>/``, S3A
3.5.0 under ``__magic_job-<uuid>/job-<uuid>/<attempt>/tasks/`` — a ``.pending`` file is the
task attempt's and the file's, a ``.pendingset`` the task's, and any other magic path is just
"magic" for reads and deletes.  The staging committers' cluster filesystem and local disks are
local directories on both sides, not paused and not compared: what is compared is the
destination bucket (every object outside the magic directories, byte for byte; ``_SUCCESS``
by presence) and every committer call's outcome.

The model runs replayed are :func:`~zerorename_bridge.hadoop.differential.as_hadoop_35`'s: S3A's
committers run Hadoop's job commit under Spark too (Spark's ``commitJob`` hands them no task
messages), so a Spark-protocol schedule is replayed as the model's run of it under Hadoop's
protocol (``driver="hadoop"``: the job commit lists), with the model's options of S3A 3.5.0.
"""

from __future__ import annotations

import re
import shutil
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from zerorename_bridge.hadoop.recording import MarkedResult
from zerorename_bridge.hadoop.session import FsCall, HadoopSession
from zerorename_bridge.hadoop.translate import (
    Comparison,
    FileDifference,
    Signature,
    _Replay,
    hadoop_name,
    replay_marked,
)
from zerorename_bridge.hadoop.translate import _signature_of_op as _signature_of_hdfs_op
from zerorename_model.engine.harness.events import Channel, Op
from zerorename_model.engine.scenario import JobSpec
from zerorename_model.systems.protocols.staging import staging_job_uuid

#: S3A's committers, by the model's names
S3A_COMMITTERS = ("magic", "directory", "partitioned")
#: S3A's committers that name their work by the job's UUID (the model's staging committers)
STAGING_COMMITTERS = ("directory", "partitioned")
MAGIC = "__magic"
_ID = re.compile(r"(attempt_[^/]+_m_\d{6}_\d+|task_[^/]+_m_\d{6})")

#: witness -> (actor.method that differs, what S3A's call answered): explained differences
#: (docs/research/s3a-findings.md)
PINNED_WITNESSES: dict[str, tuple[str, str]] = {
    # (magic.s3.concurrency.{hadoop,spark}, pinned until the model had 3.5.0's clean-up and
    # per-job magic directory as options, findings 6 and 7, now agree)
    # the staging committers' cluster filesystem is a local one here (finding 4)
    **{f"{c}.s3.liveness.{p}.jsonl": ("j0.t0.a1.commit_task", "")
       for c in ("directory", "partitioned") for p in ("hadoop", "spark")},
    **{f"{c}.s3.valid-outcome.hadoop.jsonl": ("j0.t0.a0.commit_task", "")
       for c in ("directory", "partitioned")},
}
#: the SDK's request names, as the model's kinds of operation
_KINDS = {
    "PutObject": "put", "GetObject": "read", "HeadObject": "read", "ListObjectsV2": "read",
    "ListObjects": "read", "DeleteObject": "delete", "DeleteObjects": "delete",
    "CopyObject": "copy", "CreateMultipartUpload": "mpu-start", "UploadPart": "mpu-part",
    "CompleteMultipartUpload": "mpu-complete", "AbortMultipartUpload": "mpu-abort",
    "ListMultipartUploads": "mpu-list",
}
_MODEL_KINDS = {
    "put": "put", "get": "read", "head": "read", "list_page": "read", "delete": "delete",
    "delete_many": "delete", "copy": "copy", "create_multipart": "mpu-start",
    "upload_part": "mpu-part", "complete_multipart": "mpu-complete",
    "abort_multipart": "mpu-abort", "list_multipart_uploads": "mpu-list",
}
#: HdfsLikeFileSystem's calls, as translate.py names them
_FS_KINDS = {"stat": "read", "list": "read", "open": "read", "create": "create",
             "delete": "delete", "mkdirs": "mkdirs", "rename": "rename"}
#: kinds whose key is compared coarsely inside the magic directories
_COARSE = ("read", "delete", "mpu-list")


def normal_key(key: str, *, coarse: bool) -> str:
    """A key below the bucket with the committers' own layout folded away (see the module)."""
    key = key.rstrip("/")
    if MAGIC not in key:
        return key
    head = key.split(MAGIC, 1)[0]
    if coarse:
        return head + MAGIC
    ids = _ID.findall(key)
    return f"{head}{MAGIC}/{ids[-1] if ids else ''}/{key.rsplit('/', 1)[-1]}"


def _bucket_key(url: str) -> str | None:
    """``s3://bucket/out/x`` -> ``out/x`` in Hadoop's spelling; None off the destination
    store (the staging committers' cluster filesystem and local disks)."""
    if not url.startswith("s3://"):
        return None
    return hadoop_name(url).split("/", 1)[-1] if "/" in hadoop_name(url) else ""


#: where the staging committers' wrapped committer keeps its output on the cluster filesystem
#: (``<tmp>/<user>/<uuid>/staging-uploads``: user and UUID differ between the two sides)
STAGING_UPLOADS = "staging-uploads"


def _cluster(path: str) -> str | None:
    """A cluster filesystem path below ``staging-uploads`` (None elsewhere: local disks)."""
    if STAGING_UPLOADS not in path:
        return None
    return "staging:" + path.split(STAGING_UPLOADS, 1)[1].strip("/")


def signature_of_op(op: Op) -> Signature | None:
    pending = op.said.op
    if pending.channel not in (Channel.STORE, Channel.SUBSTEP):
        return None
    if pending.args and str(pending.args[0]).startswith("hdfs://"):
        hdfs = _signature_of_hdfs_op(op)  # the cluster filesystem, as Hadoop's calls are
        if hdfs is None:
            return None
        paths = [_cluster(p) for p in hdfs[1:]]
        return None if None in paths else (hdfs[0], *[p for p in paths if p is not None])
    kind = _MODEL_KINDS.get(pending.op)
    if kind is None or not pending.args:
        return None
    first = pending.args[0]
    if pending.op == "delete_many":
        assert isinstance(first, tuple | list)
        if not first:
            return None
        first = first[0]
    key = _bucket_key(str(first))
    if key is None:
        return None
    if kind == "copy":
        other = _bucket_key(str(pending.args[1])) or ""
        return (kind, normal_key(key, coarse=False), normal_key(other, coarse=False))
    return (kind, normal_key(key, coarse=kind in _COARSE))


def signature_of_request(call: FsCall) -> Signature:
    if call.kind in _FS_KINDS:  # a call on the cluster filesystem (HdfsLikeFileSystem)
        kind = _FS_KINDS[call.kind]
        paths = [_cluster(p) or p for p in (call.path, call.other) if p]
        return (kind, *paths)
    kind = _KINDS.get(call.kind, call.kind)
    if kind == "copy":
        return (kind, normal_key(call.path, coarse=False), normal_key(call.other, coarse=False))
    return (kind, normal_key(call.path, coarse=kind in _COARSE))


def answer_no_such_upload() -> None:
    """moto 5's CompleteMultipartUpload and UploadPart of an upload that no longer exists fail
    with an internal error (a KeyError: HTTP 500, which S3A retries for its whole retry budget,
    longer than the driver waits for a call); S3 answers 404 NoSuchUpload, as moto itself does
    for AbortMultipartUpload.  Patched in this process, where the server runs (idempotent)."""
    from moto.s3.exceptions import NoSuchUpload
    from moto.s3.models import S3Backend

    original = S3Backend.complete_multipart_upload
    if getattr(original, "_zerorename_no_such_upload", False):
        return
    part = S3Backend.upload_part

    def complete(self: Any, bucket_name: str, multipart_id: str, body: Any) -> Any:
        if multipart_id not in self.get_bucket(bucket_name).multiparts:
            raise NoSuchUpload(upload_id=multipart_id)
        return original(self, bucket_name, multipart_id, body)

    def upload_part(self: Any, bucket_name: str, multipart_id: str, part_id: int,
                    value: bytes) -> Any:
        if multipart_id not in self.get_bucket(bucket_name).multiparts:
            raise NoSuchUpload(upload_id=multipart_id)
        return part(self, bucket_name, multipart_id, part_id, value)

    complete._zerorename_no_such_upload = True  # type: ignore[attr-defined]
    S3Backend.complete_multipart_upload = complete  # type: ignore[method-assign]
    S3Backend.upload_part = upload_part  # type: ignore[method-assign]


class MotoEndpoint:
    """A moto server (127.0.0.1, a free port) and a client of it; one bucket per scenario.

    The server serves moto's S3 application alone: moto's own server (``ThreadedMotoServer``)
    finds each request's service by walking moto's package directory (some 175 ``stat`` calls
    a request), which doubled the cost of every S3 request S3A sends."""

    def __init__(self) -> None:
        import logging
        import threading

        import boto3
        from moto.moto_server.werkzeug_app import MotoRequestHandler, create_backend_app
        from werkzeug.serving import make_server

        answer_no_such_upload()
        logging.getLogger("werkzeug").setLevel(logging.ERROR)  # no access log
        self._server = make_server("127.0.0.1", 0, create_backend_app("s3"), threaded=True,
                                   request_handler=MotoRequestHandler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True,
                                        name="moto-s3")
        self._thread.start()
        self.url = f"http://127.0.0.1:{self._server.server_port}"
        self.client: Any = boto3.client(
            "s3", endpoint_url=self.url, region_name="us-east-1",
            aws_access_key_id="testing", aws_secret_access_key="testing")

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()

    def new_bucket(self) -> str:
        name = f"zr-{uuid.uuid4().hex[:12]}"
        self.client.create_bucket(Bucket=name)
        return name

    def empty(self, bucket: str) -> None:
        """Abort every upload in ``bucket`` and delete every object: the next scenario
        starts on an empty bucket (the same one, so that S3A's cached filesystems of the
        actors serve it again; see ``S3ACommitDriver``).  A bucket that is gone is made again
        under its name: moto's state is per process, and another test of the same process
        (``mock_aws`` leaving its context) resets every bucket, this server's included."""
        client = self.client
        try:
            uploads = client.list_multipart_uploads(Bucket=bucket).get("Uploads", [])
        except client.exceptions.NoSuchBucket:
            client.create_bucket(Bucket=bucket)
            return
        for upload in uploads:
            client.abort_multipart_upload(Bucket=bucket, Key=upload["Key"],
                                          UploadId=upload["UploadId"])
        keys = list(self.objects(bucket, read=False))
        for start in range(0, len(keys), 1000):
            client.delete_objects(Bucket=bucket, Delete={
                "Objects": [{"Key": k} for k in keys[start:start + 1000]]})

    def _bucket(self, bucket: str) -> Any:
        """moto's own object of ``bucket`` (the server runs in this process)."""
        from moto.s3.models import s3_backends

        for regions in s3_backends.values():
            found = regions["global"].buckets.get(bucket)
            if found is not None:
                return found
        raise KeyError(f"no bucket {bucket} on the moto server")

    def objects(self, bucket: str, *, read: bool = True) -> dict[str, bytes]:
        """Every object of ``bucket`` with its bytes (``read=False``: keys only, empty
        bytes), read from moto's memory rather than over HTTP (a GET an object cost more
        than a scenario's own requests in ``check``); only while no request is under way."""
        return {key: (bytes(value.value) if read else b"")
                for key, value in sorted(self._bucket(bucket).keys.items())}

    def uploads(self, bucket: str) -> list[str]:
        """The keys of the uploads under way in ``bucket`` (from moto's memory)."""
        return sorted(upload.key_name for upload in self._bucket(bucket).multiparts.values())

    def s3a_options(self) -> dict[str, str]:
        """S3A against this server (jvm.md's settings for a local endpoint)."""
        return {
            "fs.s3a.endpoint": self.url,
            "fs.s3a.endpoint.region": "us-east-1",
            "fs.s3a.path.style.access": "true",
            "fs.s3a.connection.ssl.enabled": "false",
            "fs.s3a.aws.credentials.provider":
                "org.apache.hadoop.fs.s3a.SimpleAWSCredentialsProvider",
            "fs.s3a.access.key": "testing",
            "fs.s3a.secret.key": "testing",
        }


@contextmanager
def s3a_translator() -> Iterator[S3ATranslator]:
    """A JVM with S3A's driver, a moto server, and the translator over both."""
    endpoint = MotoEndpoint()
    try:
        with HadoopSession(s3a=True) as session:
            translator = S3ATranslator(session, endpoint)
            try:
                yield translator
            finally:
                translator.close()
    finally:
        endpoint.close()


class _S3AReplay(_Replay):
    def __init__(self, session: HadoopSession, bucket: str, committer: str) -> None:
        super().__init__(session, bucket, committer)
        self.bucket = bucket

    def _dest(self, job: JobSpec) -> str:
        return f"s3a://{self.bucket}/{_bucket_key(job.dest)}"

    def _signature(self, call: FsCall) -> Signature:
        return signature_of_request(call)

    def _job_uuid(self, job: JobSpec) -> str:
        """The staging committers' job UUID is the model's (its own for each job, even where
        two jobs share a job ID, as Spark's ``writeJobUUID`` is); the model's magic names a
        job by its job ID, the driver's default."""
        if self.committer in STAGING_COMMITTERS:
            return staging_job_uuid(job)
        return ""


class S3ATranslator:
    """Replays marked model runs of S3A's committers against hadoop-aws 3.5.0 on moto."""

    def __init__(self, session: HadoopSession, endpoint: MotoEndpoint) -> None:
        self.session = session
        self.endpoint = endpoint
        self.workdir = Path(tempfile.mkdtemp(prefix="zerorename-s3a-"))
        self._count = 0
        self._bucket: str | None = None

    def _empty_bucket(self) -> str:
        """The translator's bucket, emptied: one for all its scenarios (see
        :meth:`MotoEndpoint.empty`)."""
        if self._bucket is None:
            self._bucket = self.endpoint.new_bucket()
        else:
            self.endpoint.empty(self._bucket)
        return self._bucket

    def close(self) -> None:
        shutil.rmtree(self.workdir, ignore_errors=True)

    def compare(self, marked: MarkedResult, name: str,
                options: dict[str, str] | None = None) -> Comparison:
        scenario = marked.result.scenario
        if scenario.committer not in S3A_COMMITTERS or scenario.store != "s3":
            raise ValueError(f"{name}: S3A's driver runs {S3A_COMMITTERS} on s3 only, not "
                             f"{scenario.committer} on {scenario.store}")
        self._count += 1
        local = self.workdir / str(self._count)
        shutil.rmtree(local, ignore_errors=True)
        (local / "buffer").mkdir(parents=True)
        bucket = self._empty_bucket()
        self.session.reset({
            **self.endpoint.s3a_options(),
            # the cluster filesystem: a local directory (HdfsLikeFileSystem as the default
            # filesystem breaks the staging committers' clean-up of their local directories,
            # which they qualify against it: "URI scheme is not file")
            "fs.s3a.committer.staging.tmp.path": f"file://{local}/cluster",
            "fs.s3a.buffer.dir": str(local / "buffer"),
            **dict(scenario.options), **(options or {})})
        replay = _S3AReplay(self.session, bucket, scenario.committer)
        comparison = replay_marked(replay, marked, name, signature_of_op)
        self.session.reset()  # end the actors (and their filesystems) before reading
        comparison.files = self._files(marked, bucket)
        shutil.rmtree(local, ignore_errors=True)
        return comparison

    def _files(self, marked: MarkedResult, bucket: str) -> list[FileDifference]:
        model: dict[str, bytes] = {}
        for url, data in marked.result.final.items():
            key = _bucket_key(url)
            if key is not None and MAGIC not in key:
                model[key] = data
        found = {k: v for k, v in self.endpoint.objects(bucket).items()
                 if MAGIC not in k and not k.endswith("/")}  # not S3A's directory markers
        differences = []
        for path in sorted(set(model) | set(found)):
            mine, theirs = model.get(path), found.get(path)
            if mine is not None and theirs is not None and (
                    mine == theirs or path.endswith("_SUCCESS")):
                continue
            differences.append(FileDifference(path, mine, theirs))
        return differences


def s3a_witness_paths(directory: Path | None = None) -> list[Path]:
    """The shipped ``s3`` witnesses of S3A's committers (both protocols)."""
    from zerorename_bridge.hadoop.differential import TRACES

    return sorted(p for p in (directory or TRACES).glob("*.jsonl")
                  if ".s3." in p.name and p.name.split(".")[0] in S3A_COMMITTERS)
