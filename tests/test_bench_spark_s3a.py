"""``bench/spark_write.py --versus-native``'s S3A anchor: its pieces without Spark, and one tiny
run with Spark, moto and the test session's Ceph RGW (over HTTPS).

What the run checks (no timing): every S3 route — zerorename's and Spark's own writer through
S3A's ``magic`` and ``directory``, zerorename's JVM ``fenced`` and the benchmark's ``minimal`` —
wrote the same number of Parquet files in every cell, the servers counted its requests (S3A's
job commit completes one upload per file, so at least that many completes; the minimal's
requests exactly), S3A's counts are the same on moto and RGW (two servers counting the same
client's requests independently), S3A's first writes are reported apart, and the README block
the run renders to has the S3A table with the JVM ``fenced``'s ratios to the minimal.  It runs
each route's first write without warm repeats and no untimed pass (CI time).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))

import spark_native  # noqa: E402
import spark_render  # noqa: E402
import spark_targets  # noqa: E402

from zerorename.spark.s3a import S3AEndpoint, zerorename_jar  # noqa: E402

S3A = [f"s3a-{c}-{s}" for s in ("moto", "rgw") for c in ("magic", "directory")]
#: zerorename's JVM fenced in Spark's writer, on both servers
JVM_FENCED = ["s3a-fenced-moto", "s3a-fenced-rgw"]
#: the benchmark's minimal committer in Spark's writer, on both servers
MINIMAL = ["s3a-minimal-moto", "s3a-minimal-rgw"]


def test_session_conf_gives_each_endpoint_its_own_bucket(tmp_path: Path) -> None:
    moto = S3AEndpoint("http://127.0.0.1:1", "k1", "s1")
    rgw = S3AEndpoint("https://127.0.0.1:2", "k2", "s2", truststore=tmp_path / "t.jks",
                      conditional_writes=False)
    conf = spark_targets.s3a_session_conf({"b-moto": moto, "b-rgw": rgw},
                                          [tmp_path / "a.jar", tmp_path / "b.jar"],
                                          research=tmp_path / "r.jar")
    # zerorename's jar first (its committer factory for the JVM fenced rows), the research
    # jar (the minimal committer), then the set
    assert conf["spark.jars"] == (f"{zerorename_jar()},{tmp_path / 'r.jar'},"
                                  f"{tmp_path / 'a.jar'},{tmp_path / 'b.jar'}")
    assert conf["spark.hadoop.fs.s3a.bucket.b-moto.endpoint"] == "http://127.0.0.1:1"
    assert conf["spark.hadoop.fs.s3a.bucket.b-rgw.endpoint"] == "https://127.0.0.1:2"
    assert conf["spark.hadoop.fs.s3a.bucket.b-rgw.connection.ssl.enabled"] == "true"
    assert conf["spark.hadoop.fs.s3a.bucket.b-moto.connection.ssl.enabled"] == "false"
    assert conf["spark.hadoop.fs.s3a.bucket.b-rgw.create.conditional.enabled"] == "false"
    assert conf["spark.hadoop.fs.s3a.bucket.b-rgw.secret.key"] == "s2"
    assert f"-Djavax.net.ssl.trustStore={tmp_path / 't.jks'}" in conf[
        "spark.driver.extraJavaOptions"]
    # nothing S3A-wide that would point one bucket at the other's server
    assert not [k for k in conf if k.startswith("spark.hadoop.fs.s3a.")
                and not k.startswith("spark.hadoop.fs.s3a.bucket.")]
    # the session's own protocol stays Spark's: native writes must not change
    assert conf[spark_targets.PROTOCOL_KEY] == spark_targets.SPARK_PROTOCOL


def test_two_trust_stores_in_one_session_are_refused(tmp_path: Path) -> None:
    one = S3AEndpoint("https://127.0.0.1:1", "k", "s", truststore=tmp_path / "a.jks")
    two = S3AEndpoint("https://127.0.0.1:2", "k", "s", truststore=tmp_path / "b.jks")
    with pytest.raises(ValueError, match="extraJavaOptions"):
        spark_targets.s3a_session_conf({"a": one, "b": two}, [])


def _summary(strategy: str, ratio: float, per_file: float | None) -> dict[str, Any]:
    row: dict[str, Any] = {"strategy": strategy, "seconds": 1.0, "rows_per_second": 1,
                           "bytes": 1, "time_ratio": ratio, "bytes_ratio": 1.0}
    if per_file is not None:
        row["requests_per_file"] = per_file
    return row


def test_readme_block_has_the_s3a_table_only_when_measured() -> None:
    report: dict[str, Any] = {"cells": [{"rows": 10, "partitioned": False, "summary": [
        _summary("native", 1.0, None), _summary("zr-local", 1.2, None),
        _summary("zr-moto", 1.5, 5.25)]}], "first_write": None}
    assert "S3A" not in spark_render.readme_block(report)
    report["cells"][0]["summary"] += [_summary("s3a-magic-moto", 2.0, 26.75),
                                      _summary("s3a-directory-moto", 1.75, 7.0),
                                      _summary("s3a-fenced-moto", 1.25, 6.5)]
    block = spark_render.readme_block(report)
    assert ("| 10 | no | moto | 2.00x, 26.8 req/file | 1.75x, 7.0 req/file "
            "| 1.25x, 6.5 req/file | 1.50x, 5.2 req/file |") in block
    assert "Ceph RGW |" not in block  # not measured: no row


class _Recorder:
    """What ``s3a_write`` needs of a session and a frame: records the commit protocol set
    when the write runs, and what it is reset to after."""

    def __init__(self) -> None:
        self.settings: dict[str, str] = {}
        self.at_write: str | None = None
        self.conf = self
        self.write = self

    def set(self, key: str, value: str) -> None:
        self.settings[key] = value

    def options(self, **_: str) -> _Recorder:
        return self

    def parquet(self, _dest: str) -> None:
        self.at_write = self.settings[spark_targets.PROTOCOL_KEY]


@pytest.mark.parametrize(("committer", "protocol"), [
    ("magic", "org.apache.spark.internal.io.cloud.PathOutputCommitProtocol"),
    ("directory", "org.apache.spark.internal.io.cloud.PathOutputCommitProtocol"),
    ("fenced", "io.zerorename.spark.FencedCommitProtocol"),
    ("minimal", "zerorename.bench.MinimalCommitProtocol")])
def test_each_s3a_write_uses_the_protocol_a_user_would_get(committer: str, protocol: str) -> None:
    """The benchmark's S3A writes bind the commit protocol ``configure`` gives users: S3A's
    committers Spark's cloud protocol, zerorename's ``fenced`` its own (whose messages carry
    the task records); Spark's default is back after the write."""
    spark = _Recorder()
    spark_native.s3a_write(spark, spark, "s3a://b/out", committer, partitioned=False)
    assert spark.at_write == protocol
    assert spark.settings[spark_targets.PROTOCOL_KEY] == spark_targets.SPARK_PROTOCOL


@pytest.mark.spark
@pytest.mark.rgw
@pytest.mark.slow
def test_tiny_run_measures_every_route_and_counts_requests(rgw_server: Any, rgw_tls: Any,
                                                           tmp_path: Path) -> None:
    env = dict(os.environ, ZR_RGW_EXTERNAL="1", S3_ENDPOINT=rgw_server.endpoint,
               AWS_ACCESS_KEY_ID=rgw_server.access_key,
               AWS_SECRET_ACCESS_KEY=rgw_server.secret_key, CEPH_BASE=rgw_server.base or "",
               S3_ENDPOINT_TLS=rgw_tls.endpoint, S3_TLS_CA_BUNDLE=rgw_tls.ca_bundle,
               S3_TLS_TRUSTSTORE=rgw_tls.truststore or "",
               S3_TLS_TRUSTSTORE_PASSWORD=rgw_tls.truststore_password)
    proc = subprocess.run(
        [sys.executable, str(REPO / "bench" / "spark_write.py"), "--versus-native", "--rgw",
         "--rows", "4000", "--repeats", "1", "--warm-repeats", "0", "--no-untimed",
         "--out", str(tmp_path)],
        env=env, capture_output=True, text=True, timeout=900, check=False, cwd=REPO)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    report = json.loads((tmp_path / "results.json").read_text())
    assert "over HTTPS" in report["rgw"]
    assert set(report["first_write_s3a"]) == {*S3A, *JVM_FENCED, *MINIMAL}
    for cell in report["cells"]:
        rows = {r["strategy"]: r for r in cell["summary"]}
        assert {*S3A, *JVM_FENCED, *MINIMAL, "native", "zr-moto", "zr-rgw"} <= set(rows)
        runs = {r["strategy"]: r for r in cell["runs"]}
        files = runs["zr-moto"]["files"]
        assert files == (48 if cell["partitioned"] else 4)  # 4 tasks (x 12 months)
        for strategy in [*S3A, *JVM_FENCED, *MINIMAL, "zr-moto", "zr-rgw"]:
            run = runs[strategy]
            assert run["files"] == files, strategy
            assert run["requests"]["CompleteMultipartUpload"] >= files, strategy
            assert run["requests_per_file"] == round(run["requests_total"] / files, 2)
        for committer in ("magic", "directory"):
            assert (runs[f"s3a-{committer}-moto"]["requests"]
                    == runs[f"s3a-{committer}-rgw"]["requests"])
        # the minimal: Spark's own (a HEAD and a LIST of the destination and of its staging
        # directory), then per file S3A's initiate and part and the driver's complete, then
        # _SUCCESS; the same on both servers
        for strategy in MINIMAL:
            assert runs[strategy]["requests"] == {
                "HeadObject": 2, "ListObjectsV2": 2, "CreateMultipartUpload": files,
                "UploadPart": files, "CompleteMultipartUpload": files, "PutObject": 1}, strategy
            fenced = rows[strategy.replace("minimal", "fenced")]
            assert fenced["minimal_requests_ratio"] == round(
                runs[strategy.replace("minimal", "fenced")]["requests_per_file"]
                / runs[strategy]["requests_per_file"], 3)
        assert "requests" not in runs["native"]
    block = spark_render.readme_block(report)
    assert "**Beside Hadoop's S3A committers**" in block and "| Ceph RGW |" in block
    assert "`fenced` / `minimal`, time, requests per file" in block
