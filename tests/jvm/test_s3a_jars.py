"""The S3A jar set as Python hands it to Spark (``zerorename.spark.jars``), the session
settings (``zerorename.spark.s3a``) and ``python -m zerorename.spark.jvm``: no Spark session."""

from __future__ import annotations

import fnmatch
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from zerorename.spark import jars as J
from zerorename.spark import jvm
from zerorename.spark import s3a as S

ROOT = Path(__file__).resolve().parents[2]
POM_NS = {"m": "http://maven.apache.org/POM/4.0.0"}


def _text(element: ET.Element, tag: str) -> str:
    found = element.find(f"m:{tag}", POM_NS)
    return "" if found is None or found.text is None else found.text.strip()


def pom_coordinates() -> list[str]:
    """``group:artifact:version`` of each direct dependency of jvm/s3a/pom.xml, with the
    parent's properties expanded and the SDK modules at the imported BOM's version."""
    parent = ET.parse(ROOT / "jvm" / "pom.xml").getroot()
    props_el = parent.find("m:properties", POM_NS)
    assert props_el is not None
    props = {child.tag.split("}")[1]: (child.text or "").strip() for child in props_el}

    def expand(text: str) -> str:
        for key, value in props.items():
            text = text.replace("${" + key + "}", value)
        assert "${" not in text, text
        return text

    pom = ET.parse(ROOT / "jvm" / "s3a" / "pom.xml").getroot()
    boms = {_text(d, "groupId"): expand(_text(d, "version"))
            for d in pom.iterfind("m:dependencyManagement/m:dependencies/m:dependency",
                                  POM_NS) if _text(d, "scope") == "import"}
    coordinates = []
    for dep in pom.iterfind("m:dependencies/m:dependency", POM_NS):
        group = _text(dep, "groupId")
        version = _text(dep, "version") or boms[group]
        coordinates.append(f"{group}:{expand(_text(dep, 'artifactId'))}:{expand(version)}")
    return coordinates


def test_the_packages_are_the_poms_direct_dependencies() -> None:
    """``--packages`` and the Maven build fetch the same set: neither can drift."""
    assert list(J.S3A_PACKAGES) == pom_coordinates()


def test_no_exclusion_removes_a_package_asked_for() -> None:
    """Spark applies the exclusions to the whole resolution, the packages named included."""
    hit = [c for c in J.S3A_PACKAGES for pattern in J.S3A_EXCLUDES
           if fnmatch.fnmatchcase(c.rsplit(":", 1)[0], pattern)]
    assert hit == []
    # and the check can fail: excluding every Hadoop artifact would take hadoop-aws too
    assert fnmatch.fnmatchcase("org.apache.hadoop:hadoop-aws", "org.apache.hadoop:*")


def test_the_exclusions_cover_what_pyspark_ships_twice_in_spark_hadoop_cloud() -> None:
    """spark-hadoop-cloud's pom drags these in; each is excluded."""
    dragged = ["org.apache.hadoop:hadoop-azure", "org.apache.hadoop:hadoop-client-runtime",
               "com.google.cloud.bigdataoss:gcs-connector", "io.netty:netty-common",
               "com.fasterxml.jackson.core:jackson-databind", "software.amazon.awssdk:bundle"]
    for artifact in dragged:
        assert any(fnmatch.fnmatchcase(artifact, p) for p in J.S3A_EXCLUDES), artifact


def _jar_folder(tmp_path: Path, *names: str) -> Path:
    folder = tmp_path / "jars"
    folder.mkdir()
    for name in names:
        (folder / name).write_bytes(b"PK")
    return folder


def test_a_named_folder_wins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = _jar_folder(tmp_path, "s3-2.35.4.jar", "hadoop-aws-3.5.0.jar", "notes.txt")
    monkeypatch.setenv(J.S3A_JARS_ENV, str(folder))
    monkeypatch.setenv(J.CACHE_ENV, str(tmp_path / "no-cache"))
    assert J.s3a_jars() == [folder / "hadoop-aws-3.5.0.jar", folder / "s3-2.35.4.jar"]


def test_a_named_folder_without_hadoop_aws_is_refused(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(J.S3A_JARS_ENV, str(_jar_folder(tmp_path, "s3-2.35.4.jar")))
    with pytest.raises(J.S3AJarsMissingError, match=r"no hadoop-aws jar.*ZERORENAME_S3A_JARS"):
        J.s3a_jars()
    monkeypatch.setenv(J.S3A_JARS_ENV, str(tmp_path / "absent"))
    with pytest.raises(J.S3AJarsMissingError, match=r"absent.*not a folder.*jvm-build.sh"):
        J.s3a_jars()


def test_the_cache_is_read_through_its_pointer(tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(J.S3A_JARS_ENV, raising=False)
    monkeypatch.setattr(J, "CHECKOUT_POINTER", tmp_path / "no-checkout-pointer")
    monkeypatch.setenv(J.CACHE_ENV, str(tmp_path))
    with pytest.raises(J.S3AJarsMissingError) as missing:
        J.s3a_jars()
    assert missing.value.path == str(tmp_path / "jvm" / "s3a-current")
    assert "--packages" in missing.value.reason and "jvm-build.sh" in missing.value.reason
    folder = _jar_folder(tmp_path, "hadoop-aws-3.5.0.jar")
    (tmp_path / "jvm").mkdir()
    (tmp_path / "jvm" / "s3a-current").write_text(f"{folder}\n")
    with pytest.raises(J.S3AJarsMissingError, match="incomplete"):
        J.s3a_jars()  # the build did not finish copying
    (folder / ".complete").touch()
    assert J.s3a_jars() == [folder / "hadoop-aws-3.5.0.jar"]


def test_the_builds_cache_holds_the_set() -> None:
    """In a checkout whose Java is built (the README's set-up), the cache has the jars."""
    names = {p.name for p in J.s3a_jars()}
    assert {"hadoop-aws-3.5.0.jar", "s3-2.35.4.jar", "spark-hadoop-cloud_2.13-4.1.2.jar"} <= names


ENDPOINT = S.S3AEndpoint("http://127.0.0.1:9000", access_key="AK", secret_key="SK")


def test_s3a_conf_binds_the_committer_and_the_endpoint(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(J.S3A_JARS_ENV, str(_jar_folder(tmp_path, "hadoop-aws-3.5.0.jar")))
    conf = S.s3a_conf(ENDPOINT, "directory", conflict_mode="replace")
    assert conf["spark.jars"] == str(tmp_path / "jars" / "hadoop-aws-3.5.0.jar")
    assert conf["spark.sql.sources.commitProtocolClass"] == S.PROTOCOL_CLASS
    assert conf["spark.sql.parquet.output.committer.class"] == S.PARQUET_COMMITTER_CLASS
    assert conf["spark.hadoop.mapreduce.outputcommitter.factory.scheme.s3a"] == S.FACTORY_CLASS
    assert conf["spark.hadoop.fs.s3a.committer.name"] == "directory"
    assert conf["spark.hadoop.fs.s3a.committer.staging.conflict-mode"] == "replace"
    assert conf["spark.hadoop.fs.s3a.endpoint"] == "http://127.0.0.1:9000"
    assert conf["spark.hadoop.fs.s3a.connection.ssl.enabled"] == "false"
    assert conf["spark.hadoop.fs.s3a.path.style.access"] == "true"
    assert conf["spark.hadoop.fs.s3a.access.key"] == "AK"
    assert conf["spark.hadoop.fs.s3a.checksum.generation"] == "false"
    assert conf["spark.hadoop.fs.s3a.create.conditional.enabled"] == "true"
    assert "spark.driver.extraJavaOptions" not in conf
    packaged = S.s3a_conf(ENDPOINT, jars="packages")
    assert "spark.jars" not in packaged
    assert packaged["spark.jars.packages"].split(",") == list(J.S3A_PACKAGES)
    assert packaged["spark.jars.excludes"].split(",") == list(J.S3A_EXCLUDES)


def test_a_tls_endpoint_trusts_its_store(tmp_path: Path) -> None:
    store = tmp_path / "rgw.jks"
    tls = S.S3AEndpoint("https://127.0.0.1:8443", "AK", "SK", truststore=store,
                        truststore_password="pw", conditional_writes=False)
    conf = S.endpoint_conf(tls)
    assert conf["spark.hadoop.fs.s3a.connection.ssl.enabled"] == "true"
    assert conf["spark.hadoop.fs.s3a.create.conditional.enabled"] == "false"
    for side in ("driver", "executor"):
        assert conf[f"spark.{side}.extraJavaOptions"] == (
            f"-Djavax.net.ssl.trustStore={store} -Djavax.net.ssl.trustStorePassword=pw")
    with pytest.raises(S.S3AOptionError, match="for an https:// endpoint"):
        S.S3AEndpoint("http://127.0.0.1:1", "AK", "SK", truststore=store)
    with pytest.raises(S.S3AOptionError, match="http:// or https://"):
        S.S3AEndpoint("127.0.0.1:9000", "AK", "SK")


@pytest.mark.parametrize(("committer", "mode", "says"), [
    ("file", None, "choose one of magic, directory, partitioned"),
    ("Magic", None, "choose one of"),
    ("partitioned", "overwrite", "not a conflict mode; choose one of append, replace, fail"),
    ("magic", "replace", "for the staging committers"),
])
def test_bad_committer_choices_are_refused(committer: str, mode: str | None, says: str) -> None:
    with pytest.raises(S.S3AOptionError, match=says):
        S.committer_options(committer, conflict_mode=mode)
    assert issubclass(S.S3AOptionError, ValueError)


def test_committer_options_choose_per_job() -> None:
    assert S.committer_options("partitioned", conflict_mode="append") == {
        "fs.s3a.committer.name": "partitioned",
        "fs.s3a.committer.staging.conflict-mode": "append"}
    assert S.committer_options()["fs.s3a.committer.name"] == "magic"


def _cli(*argv: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """``python -m zerorename.spark.jvm ARGV``, run in this process (``main``) for speed."""
    import contextlib
    import io

    out, err = io.StringIO(), io.StringIO()
    with pytest.MonkeyPatch.context() as patch:
        for key, value in (env or {}).items():
            patch.setenv(key, value)
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = jvm.main(list(argv))
            except SystemExit as exit_:  # argparse
                code = int(exit_.code or 0)
    return subprocess.CompletedProcess(list(argv), code, out.getvalue(), err.getvalue())


def test_the_module_runs_as_a_program() -> None:
    done = subprocess.run([sys.executable, "-m", "zerorename.spark.jvm", "--bogus"],
                          capture_output=True, text=True, check=False, timeout=120)
    assert done.returncode == 2 and "unrecognized arguments: --bogus" in done.stderr
    done = subprocess.run([sys.executable, "-m", "zerorename.spark.jvm", "--packages"],
                          capture_output=True, text=True, check=False, timeout=120)
    assert done.returncode == 0 and done.stdout.startswith("--packages org.apache.hadoop:")
    # run as a program, the module is loaded once: no runpy warning on stderr
    assert done.stderr == "", done.stderr


def test_cli_prints_the_jars_a_session_needs(tmp_path: Path) -> None:
    folder = _jar_folder(tmp_path, "hadoop-aws-3.5.0.jar", "s3-2.35.4.jar")
    env = {J.S3A_JARS_ENV: str(folder)}
    own = str(jvm.packaged_jar())
    assert _cli("--classpath", env=env).stdout.strip() == own
    assert _cli("--classpath", "--s3a", env=env).stdout.strip() == os.pathsep.join(
        [own, str(folder / "hadoop-aws-3.5.0.jar"), str(folder / "s3-2.35.4.jar")])
    assert _cli("--jars", "--s3a", env=env).stdout.strip() == ",".join(
        [own, str(folder / "hadoop-aws-3.5.0.jar"), str(folder / "s3-2.35.4.jar")])
    packages = _cli("--packages").stdout.split()
    assert packages == ["--packages", ",".join(J.S3A_PACKAGES),
                        "--exclude-packages", ",".join(J.S3A_EXCLUDES)]
    lines = [line.split(" ", 1) for line in _cli("--conf", "s3a", env=env).stdout.splitlines()
             if not line.startswith("#")]
    assert dict(lines) == {"spark.jars": ",".join(str(p) for p in sorted(folder.glob("*.jar"))),
                           **S.committer_conf("magic")}


def test_cli_falls_back_to_coordinates_and_refuses_what_it_cannot_do(tmp_path: Path) -> None:
    env = {J.S3A_JARS_ENV: str(tmp_path / "absent")}
    conf = _cli("--conf", "s3a", "--committer", "directory", env=env)
    assert conf.returncode == 0
    assert f"spark.jars.packages {','.join(J.S3A_PACKAGES)}" in conf.stdout
    assert "spark.hadoop.fs.s3a.committer.name directory" in conf.stdout
    missing = _cli("--jars", "--s3a", env=env)
    assert missing.returncode == 1 and "not a folder" in missing.stderr
    assert missing.stdout == ""
    for argv, says in ((["--bogus"], "unrecognized arguments: --bogus"),
                       (["--s3a"], "--s3a goes with --classpath or --jars"),
                       (["--classpath", "--jars"], "not allowed with argument"),
                       (["--conf", "hdfs"], "invalid choice: 'hdfs'")):
        done = _cli(*argv)
        assert done.returncode == 2 and says in done.stderr, (argv, done.stderr)


def test_fenced_and_auto_bind_zerorenames_factory(tmp_path: Path) -> None:
    """``fenced``/``auto``: zerorename's factory for ``s3a``, its committer named, its jar
    first in ``spark.jars``; the CLI prints the same (``--conf fenced``)."""
    factory = "spark.hadoop.mapreduce.outputcommitter.factory.scheme.s3a"
    for name in S.ZERORENAME_COMMITTERS:
        conf = S.committer_conf(name)
        assert conf[factory] == "io.zerorename.committer.FencedCommitterFactory"
        assert conf["spark.hadoop.fs.zerorename.committer"] == name
        # zerorename's protocol: the task records ride in the commit messages
        assert conf["spark.sql.sources.commitProtocolClass"] == (
            "io.zerorename.spark.FencedCommitProtocol")
        # S3A's in-memory magic tracking: a session setting, never a write's option (S3A
        # reads it from the bucket's filesystem, auto's magic from the job: they must agree)
        assert conf[f"spark.hadoop.{S.MAGIC_IN_MEMORY}"] == "true"
        assert S.MAGIC_IN_MEMORY not in S.committer_options(name)
    assert S.committer_conf("magic")[factory] == S.FACTORY_CLASS
    assert f"spark.hadoop.{S.MAGIC_IN_MEMORY}" not in S.committer_conf("magic")
    assert S.committer_conf("magic")["spark.sql.sources.commitProtocolClass"] == (
        S.PROTOCOL_CLASS)
    with pytest.raises(S.S3AOptionError, match="not fenced"):
        S.committer_options("fenced", conflict_mode="append")
    folder = _jar_folder(tmp_path, "hadoop-aws-3.5.0.jar")
    env = {J.S3A_JARS_ENV: str(folder)}
    lines = dict(line.split(" ", 1) for line in _cli("--conf", "auto", env=env).stdout
                 .splitlines() if not line.startswith("#"))
    assert lines["spark.jars"] == ",".join([str(jvm.packaged_jar()),
                                             str(folder / "hadoop-aws-3.5.0.jar")])
    assert lines[factory] == "io.zerorename.committer.FencedCommitterFactory"
    assert lines["spark.hadoop.fs.zerorename.committer"] == "auto"
    assert lines["spark.sql.sources.commitProtocolClass"] == S.ZERORENAME_PROTOCOL_CLASS
    assert lines[f"spark.hadoop.{S.MAGIC_IN_MEMORY}"] == "true"
    endpoint = S.S3AEndpoint("http://127.0.0.1:9", access_key="a", secret_key="b")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(J.S3A_JARS_ENV, str(folder))
        full = S.s3a_conf(endpoint, "fenced")
    assert full["spark.jars"].split(",")[0] == str(jvm.packaged_jar())
