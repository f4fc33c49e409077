"""zerorename's JVM ``fenced`` committer (and ``auto``) inside Spark's own writers on Ceph RGW,
over HTTPS: the scenarios of ``tests/spark/test_jvm_fenced_*.py`` (moto) on the real server.

What the store needs, set as a user would (``docs/user/stores.md``, "Hadoop's S3A on Ceph
RGW"): S3A at the TLS endpoint, the JVM trusting the server's certificate through the JKS
``rgw-start.sh`` made (``-Djavax.net.ssl.trustStore``, which the committer's own S3 client
uses too), boto3 (these checks, the Python tools) through ``AWS_CA_BUNDLE``.  Unlike S3A's
own committers, the JVM ``fenced`` needs ``fs.s3a.create.conditional.enabled`` left on: it is
its switch for conditional writes.  RGW 16.2 ignores ``If-None-Match`` on a multipart
complete; the committer's store measures that once, and the completes use the job commit's
check of its keys before the commit point (one ListObjectsV2 for a small job, sent on every
store) instead of a HEAD before each complete: a key holding another writer's object refuses
the job before its commit point; a roll-forward lists the keys itself and recognises its own.
Requests are counted at the server, from radosgw's access log.

One Spark session for the module, a fresh bucket per test.  The scenarios are the moto
modules' own (``test_jvm_fenced_scenarios``, ``test_jvm_fenced_python``,
``test_jvm_fenced_task_records``), called with this module's session, server and bucket (the
server object has what their helpers, ``jvm_fenced_helpers``, use: ``endpoint`` and
``client()``).
"""

from __future__ import annotations

import contextlib
import re
import time
import urllib.error
import urllib.request
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

import zerorename as zr
from tests.rgw_plugin import RGWTLS, RGWServer, add_s3_key, empty_and_delete_bucket
from zerorename.formats import SuccessData
from zerorename_bridge.embedded_s3 import classify

from . import test_jvm_fenced_python as moto_python
from . import test_jvm_fenced_scenarios as moto_scenarios
from . import test_jvm_fenced_task_records as moto_records
from .helpers import stop_jvm
from .jvm_fenced_helpers import FACTORY, FACTORY_KEY, _check_published, _frame, _JvmJob, _rows
from .test_jvm_fenced_task_records import _fixed_requests

pytestmark = [pytest.mark.spark, pytest.mark.rgw]

#: the key pair of the package's environment (tests/spark/conftest.py): what workers sign with
KEYS = ("testing", "testing")


@dataclass
class RGWTarget:
    """The RGW's TLS side as the moto helpers of ``jvm_fenced_helpers`` see a server: an
    ``endpoint`` and a ``client()`` (boto3, trusting the certificate), plus new buckets."""

    endpoint: str
    region: str
    buckets: list[str]

    def client(self) -> Any:
        from zerorename.stores import make_s3_client

        return make_s3_client(self.endpoint, self.region, access_key=KEYS[0],
                              secret_key=KEYS[1])

    def create_bucket(self) -> str:
        bucket = f"zr-jvmf-{uuid.uuid4().hex[:12]}"
        self.client().create_bucket(Bucket=bucket)
        self.buckets.append(bucket)
        return bucket


@pytest.fixture(scope="module")
def rgw(rgw_server: RGWServer, rgw_tls: RGWTLS) -> Iterator[RGWTarget]:
    if rgw_tls.truststore is None:
        pytest.skip("the RGW's certificate has no JKS trust store (no keytool at start-up)")
    if not add_s3_key(rgw_server, *KEYS):
        pytest.skip("an external RGW: cannot give its user the Spark workers' key pair")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("AWS_CA_BUNDLE", rgw_tls.ca_bundle)  # before the JVM (and its workers)
        target = RGWTarget(rgw_tls.endpoint.rstrip("/"), rgw_server.region, [])
        yield target
        client = target.client()
        for bucket in target.buckets:  # RGW's memstore keeps every byte in RAM
            empty_and_delete_bucket(client, bucket)


@pytest.fixture
def bucket(rgw: RGWTarget) -> str:
    return rgw.create_bucket()


@pytest.fixture(scope="module")
def rgw_spark(rgw: RGWTarget, rgw_tls: RGWTLS, _sessions: Any) -> Iterator[Any]:
    """A ``local[2]`` session bound to the JVM fenced committer on the RGW's TLS endpoint."""
    from pyspark.sql import SparkSession

    from zerorename.spark.s3a import S3AEndpoint, s3a_conf

    _sessions.stop()
    stop_jvm()  # a JVM started by an earlier test has neither S3A's jars nor zerorename's
    assert rgw_tls.truststore is not None
    endpoint = S3AEndpoint(rgw.endpoint, *KEYS, region=rgw.region,
                           truststore=Path(rgw_tls.truststore),
                           truststore_password=rgw_tls.truststore_password)
    conf = s3a_conf(endpoint, "fenced")
    assert conf[f"spark.hadoop.{FACTORY_KEY}"] == FACTORY
    builder = SparkSession.builder.master("local[2]").appName("zerorename-jvm-fenced-rgw")
    for key, value in {**conf, "spark.hadoop.pathoutputcommit.reject.fileoutput": "true",
                       "spark.sql.shuffle.partitions": "2",
                       "spark.ui.enabled": "false"}.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("WARN")
    yield spark
    stop_jvm()


def _read(spark: Any, fmt: str, dest: str, schema: Any) -> Any:
    if fmt == "csv":
        return spark.read.option("header", "true").schema(schema).csv(dest)
    if fmt == "json":
        return spark.read.schema(schema).json(dest)
    return spark.read.format(fmt).load(dest)


@pytest.mark.parametrize(("fmt", "partitioned"), [
    ("parquet", False), ("parquet", True), ("orc", True), ("json", False), ("csv", True)])
def test_formats_through_the_jvm_fenced_committer_on_rgw(
        rgw_spark: Any, rgw: RGWTarget, bucket: str, fmt: str, partitioned: bool) -> None:
    df = _frame(rgw_spark, 120).repartition(2)
    dest = f"s3a://{bucket}/{fmt}"
    writer = df.write.mode("overwrite")
    if partitioned:
        writer = writer.partitionBy("part")
    if fmt == "csv":
        writer = writer.option("header", "true")
    writer.format(fmt).save(dest)
    assert _rows(_read(rgw_spark, fmt, dest, df.schema)) == _rows(df)
    success = _check_published(rgw, bucket, fmt)  # type: ignore[arg-type]
    assert success.diagnostics["committer.class"] == "io.zerorename.committer.FencedCommitter"
    assert "one winner in every round" in success.diagnostics["store.fencing"]
    files = zr.committed_files(zr.S3Store(rgw.client()), dest)
    assert all(f.etag for f in files), "an ETag left empty (RGW's complete answers none)"


def test_a_task_record_is_a_python_pendingset(rgw_spark: Any, rgw: RGWTarget,
                                              bucket: str) -> None:
    moto_python.test_a_task_record_is_a_python_pendingset(rgw_spark, rgw, bucket)


def test_duplicate_attempts_of_one_task_and_a_zombie_after_the_job(
        rgw_spark: Any, rgw: RGWTarget, bucket: str) -> None:
    """The second attempt of a committed task loses (it aborts its upload and returns, naming
    the first); a zombie's task commit after the job commit is fenced; only the first
    attempt's bytes are published."""
    moto_scenarios.test_duplicate_attempts_of_one_task_and_a_zombie_after_the_job(
        rgw_spark, rgw, bucket)


def test_messages_duplicate_attempts_and_a_zombie_after_the_job(
        rgw_spark: Any, rgw: RGWTarget, bucket: str) -> None:
    """Task records in messages: no task commit stores anything; the refused and lost
    attempts' uploads are aborted; only the accepted attempts' bytes are published."""
    moto_records.test_messages_duplicate_attempts_and_a_zombie_after_the_job(
        rgw_spark, rgw, bucket)


def test_messages_abort_aborts_the_accepted_tasks_uploads_beside_another_job(
        rgw_spark: Any, rgw: RGWTarget, bucket: str) -> None:
    moto_records.test_messages_abort_aborts_the_accepted_tasks_uploads_beside_another_job(
        rgw_spark, rgw, bucket)


def test_a_task_attempt_that_died_after_writing_leaves_nothing(
        rgw_spark: Any, rgw: RGWTarget, bucket: str) -> None:
    moto_scenarios.test_a_task_attempt_that_died_after_writing_leaves_nothing(
        rgw_spark, rgw, bucket)


@pytest.mark.parametrize("stage", ["job_stage_save_commit_record",
                                   "job_stage_complete_uploads"])
def test_a_driver_stopping_after_the_commit_point_then_a_rerun_rolls_forward(
        rgw_spark: Any, rgw: RGWTarget, bucket: str, stage: str) -> None:
    """After the commit record (nothing completed) and after every upload was completed (the
    rerun's completes would meet existing objects, which RGW would overwrite: its listing
    finds them, and their sizes and ETags show them the job's own), the rerun finishes the job
    once."""
    moto_scenarios.test_a_driver_dying_at_each_stage_of_job_commit_then_a_rerun(
        rgw_spark, rgw, bucket, stage)


def test_dynamic_partition_overwrite_replaces_only_the_partitions_written(
        rgw_spark: Any, rgw: RGWTarget, bucket: str) -> None:
    moto_scenarios.test_dynamic_partition_overwrite_replaces_only_the_partitions_written(
        rgw_spark, rgw, bucket)


def test_auto_picks_fenced_on_rgw_and_says_why(rgw_spark: Any, rgw: RGWTarget,
                                               bucket: str) -> None:
    moto_scenarios.test_auto_picks_fenced_where_the_store_fences(rgw_spark, rgw, bucket)
    success = SuccessData.from_bytes(
        zr.S3Store(rgw.client()).get(f"s3a://{bucket}/auto/_SUCCESS"), "auto")
    assert "one winner in every round" in success.diagnostics["committer.choice"]


def test_two_jobs_on_one_destination(rgw_spark: Any, rgw: RGWTarget, bucket: str) -> None:
    moto_scenarios.test_two_jobs_on_one_destination(rgw_spark, rgw, bucket)


def test_a_jvm_commit_stopped_after_its_commit_point_is_rolled_forward_by_python(
        rgw_spark: Any, rgw: RGWTarget, bucket: str) -> None:
    moto_python.test_a_jvm_commit_stopped_after_its_commit_point_is_rolled_forward_by_python(
        rgw_spark, rgw, bucket)


def test_a_python_commit_stopped_after_its_commit_point_is_rolled_forward_by_the_jvm(
        rgw_spark: Any, rgw: RGWTarget, bucket: str, monkeypatch: pytest.MonkeyPatch) -> None:
    moto_python.test_a_python_commit_stopped_after_its_commit_point_is_rolled_forward_by_the_jvm(
        rgw_spark, rgw, bucket, monkeypatch)


def test_a_job_commit_never_overwrites_an_object_another_writer_created(
        rgw_spark: Any, rgw: RGWTarget, bucket: str) -> None:
    """RGW completes an upload over an existing object despite ``If-None-Match: *``: the job
    setup's store check measures that (as the Python ``S3Store``'s probe does).  The job
    commit's check of its keys, before its commit point, finds the other writer's object, so
    the job commit is refused as on any store (``JobCommitRefusedException``): no commit
    record, the object stays, and the abort aborts the job's upload."""
    dest = f"s3a://{bucket}/other"
    job = _JvmJob(rgw_spark, dest, "other-writer")
    job.job.setupJob(job.context(0, 0))
    store_class = job.jvm.io.zerorename.committer.store.S3CommitStore
    measured = store_class.measuredConditionalComplete(f"s3 {rgw.endpoint} bucket {bucket}")
    python = zr.S3Store(rgw.client()).capabilities(dest).conditional_complete
    assert measured is python is False, \
        "RGW 16.2 ignores If-None-Match on complete (docs/user/stores.md), measured by both"
    job.task(0, "part-0", b"from the job")
    rgw.client().put_object(Bucket=bucket, Key="other/part-0", Body=b"another writer's")
    with pytest.raises(Exception, match="JobCommitRefusedException"):
        job.job.commitJob(job.context(0, 0))
    assert zr.S3Store(rgw.client()).get(f"{dest}/part-0") == b"another writer's"
    keys = sorted(o["Key"] for o in rgw.client().list_objects_v2(Bucket=bucket, Prefix="other/")
                  .get("Contents", []))
    assert not [k for k in keys if k.endswith("/commit.json")], keys
    job.job.abortJob(job.context(0, 0), job.jvm.org.apache.hadoop.mapreduce.JobStatus.State
                     .FAILED)
    assert rgw.client().list_multipart_uploads(Bucket=bucket).get("Uploads", []) == []
    assert zr.S3Store(rgw.client()).get(f"{dest}/part-0") == b"another writer's"


# -- requests, counted at the server ---------------------------------------------------------

#: one request in radosgw's access log (beast frontend, Ceph 16.2): its method and target
_ACCESS = re.compile(r' beast: \S+: \S+ - \S+ \[[^\]]*\] "([A-Z]+) (\S+) HTTP/[0-9.]+" \d+ ')
_SENTINEL = "/zr-test-sentinel-"


class _RequestLog:
    """The requests the module's RGW answered, by S3 operation, read from its access log.

    radosgw writes that log from a thread of its own, so :meth:`since_last` first sends a
    sentinel request (an anonymous GET of a bucket that does not exist; not counted) and reads
    until its line is there: every request answered before the call is then in the count."""

    def __init__(self, server: RGWServer) -> None:
        assert server.base is not None
        self.path = Path(server.base) / "log" / "client.rgw.x.log"
        self.url = server.endpoint.rstrip("/")
        self.offset = 0

    def since_last(self, timeout: float = 30.0) -> dict[str, int]:
        """The requests answered since the previous call (or since the server started)."""
        marker = f"{_SENTINEL}{uuid.uuid4().hex}"
        with contextlib.suppress(urllib.error.HTTPError):  # 404: the answer expected
            urllib.request.urlopen(self.url + marker, timeout=timeout).close()
        counts: Counter[str] = Counter()
        deadline = time.monotonic() + timeout
        while True:
            with self.path.open("rb") as f:
                f.seek(self.offset)
                data = f.read()
            for line in data.split(b"\n")[:-1]:  # complete lines only
                self.offset += len(line) + 1
                match = _ACCESS.search(line.decode("utf-8", "replace"))
                if match is None:
                    continue
                method, target = match.groups()
                path, _, query = target.partition("?")
                if path == marker:
                    return dict(counts)
                op = None if path.startswith(_SENTINEL) else classify(method, path, query, None)
                if op is not None:
                    counts[op] += 1
            assert time.monotonic() < deadline, f"{self.path}: no line for {marker}"
            time.sleep(0.02)


def _counted_on_rgw(server: RGWServer, write: Callable[[], None]) -> dict[str, int]:
    if server.base is None:
        pytest.skip("an external RGW: its access log is not here to count requests")
    log = _RequestLog(server)
    log.since_last()
    write()
    return log.since_last()


@pytest.mark.parametrize(("partitioned", "files"), [(False, 4), (True, 12)],
                         ids=["flat", "partitioned"])
def test_requests_of_a_fenced_write_on_rgw(rgw_spark: Any, rgw: RGWTarget,
                                           rgw_server: RGWServer, bucket: str,
                                           partitioned: bool, files: int) -> None:
    """What a fenced write asks RGW, by operation: what it asks moto
    (``test_jvm_fenced_task_records._fixed_requests``), no more: the job commit's listing of
    the keys it completes, its check before the commit point on every store, is what the
    completes use here instead of a HEAD each (4 and 12 HEADs more before the check listed on
    every store).
    Counted at the server."""
    df = _frame(rgw_spark, 400).repartition(4)

    def write(prefix: str) -> None:
        writer = df.write.partitionBy("part") if partitioned else df.write
        writer.parquet(f"s3a://{bucket}/{prefix}")

    write("warm")  # the store check: once per store and JVM
    counts = _counted_on_rgw(rgw_server, lambda: write("counted"))
    _check_published(rgw, bucket, "counted")  # type: ignore[arg-type]
    assert counts == _fixed_requests(files), counts
    assert sum(counts.values()) == {4: 24, 12: 48}[files]  # 6.0 and 4.0 a file (7 and 5)
