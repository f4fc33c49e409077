"""The Maven build (``jvm/``, ``scripts/jvm-build.sh``): compiled against the installed PySpark,
nothing PySpark ships fetched a second time, offline once fetched, the production jar apart from
the research one."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import xml.etree.ElementTree as ET
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
JVM = ROOT / "jvm"
POM_NS = {"m": "http://maven.apache.org/POM/4.0.0"}


def _pyspark_jars() -> Path:
    import pyspark

    return Path(pyspark.__file__).parent / "jars"


def _properties() -> dict[str, str]:
    root = ET.parse(JVM / "pom.xml").getroot()
    props = root.find("m:properties", POM_NS)
    assert props is not None
    return {child.tag.split("}")[1]: (child.text or "") for child in props}


def _system_paths() -> list[str]:
    root = ET.parse(JVM / "pom.xml").getroot()
    return [e.text or "" for e in root.iterfind(".//m:systemPath", POM_NS)]


def _expand(text: str, props: dict[str, str], jars: Path) -> str:
    props = {**props, "pyspark.jars": str(jars)}
    return re.sub(r"\$\{([^}]+)\}", lambda m: props[m.group(1)], text)


def test_every_jar_compiled_against_is_a_file_of_the_installed_pyspark() -> None:
    """The poms name PySpark's files by version: an upgrade of PySpark that changes one fails
    here, not at run time in a user's session."""
    props, jars = _properties(), _pyspark_jars()
    paths = [Path(_expand(p, props, jars)) for p in _system_paths()]
    assert len(paths) >= 10
    missing = [p.name for p in paths if not p.is_file()]
    assert not missing, f"jvm/pom.xml names jars PySpark does not ship: {missing}"


def _artifact(jar_name: str) -> str:
    """``netty-common-4.2.13.Final.jar`` -> ``netty-common``."""
    match = re.match(r"(.+?)-\d[\w.\-]*\.jar$", jar_name)
    assert match, jar_name
    return match.group(1)


def shipped_twice(added: list[str], pyspark: list[str]) -> list[str]:
    """The jars of ``added`` whose artifact PySpark's jar folder already has."""
    have = {_artifact(n) for n in pyspark if n.endswith(".jar")}
    return sorted(n for n in added if n.endswith(".jar") and _artifact(n) in have)


def _s3a_dir() -> Path:
    from zerorename.spark.jars import s3a_jars

    return s3a_jars()[0].parent


def test_the_s3a_jars_bring_nothing_pyspark_already_ships() -> None:
    s3a = sorted(p.name for p in _s3a_dir().glob("*.jar"))
    assert any(n.startswith("hadoop-aws-3.5.0") for n in s3a)
    assert any(n.startswith("spark-hadoop-cloud_") for n in s3a)
    assert any(n.startswith("s3-2.") for n in s3a)
    assert shipped_twice(s3a, sorted(os.listdir(_pyspark_jars()))) == []


def test_the_minidfs_jars_bring_nothing_pyspark_already_ships() -> None:
    """The MiniDFSCluster set (the research driver's real HDFS): hadoop-client-minicluster of
    PySpark's Hadoop and nothing PySpark has (its client-api, client-runtime, snappy, slf4j)."""
    from zerorename_bridge.hadoop.session import minidfs_jars_dir

    minidfs = sorted(p.name for p in minidfs_jars_dir().glob("*.jar"))
    assert minidfs == ["hadoop-client-minicluster-3.5.0.jar"]
    assert shipped_twice(minidfs, sorted(os.listdir(_pyspark_jars()))) == []


def test_the_minidfs_set_without_its_exclusions_would_be_caught() -> None:
    """What hadoop-client-minicluster 3.5.0 depends on (mvn dependency:tree), were its
    exclusions dropped from jvm/minidfs/pom.xml: the check above finds PySpark's own jars."""
    pyspark = sorted(os.listdir(_pyspark_jars()))
    unexcluded = ["hadoop-client-minicluster-3.5.0.jar", "hadoop-client-api-3.5.0.jar",
                  "hadoop-client-runtime-3.5.0.jar", "snappy-java-1.1.10.4.jar",
                  "slf4j-api-1.7.36.jar"]
    assert shipped_twice(unexcluded, pyspark) == sorted(unexcluded[1:])
    pom = ET.parse(JVM / "minidfs" / "pom.xml").getroot()
    exclusions = pom.findall(".//m:exclusion", POM_NS)
    assert [(e.findtext("m:groupId", namespaces=POM_NS), e.findtext("m:artifactId",
             namespaces=POM_NS)) for e in exclusions] == [("*", "*")]


def test_the_duplicate_check_catches_a_second_netty() -> None:
    """The check above can fail: a second netty, slf4j or Hadoop is found."""
    pyspark = ["netty-common-4.2.13.Final.jar", "slf4j-api-2.0.17.jar",
               "hadoop-client-api-3.5.0.jar"]
    added = ["netty-common-4.1.126.Final.jar", "slf4j-api-1.7.36.jar", "s3-2.35.4.jar",
             "hadoop-client-api-3.4.1.jar"]
    assert shipped_twice(added, pyspark) == ["hadoop-client-api-3.4.1.jar",
                                            "netty-common-4.1.126.Final.jar",
                                            "slf4j-api-1.7.36.jar"]


def test_the_production_jar_holds_nothing_of_the_research_drivers() -> None:
    from zerorename.spark import jvm

    with zipfile.ZipFile(jvm.packaged_jar()) as jar:
        names = jar.namelist()
    assert any(n.startswith("io/zerorename/") for n in names)
    assert not [n for n in names if n.startswith("zerorename/")]  # conformance, bench
    spark_pom = (JVM / "spark" / "pom.xml").read_text()
    assert "zerorename-research-jvm" not in spark_pom


def _copy_of_the_build(tmp_path: Path) -> Path:
    """jvm/ and what its tests read beside it (the shared record vectors), under tmp_path."""
    copy = tmp_path / "jvm"
    shutil.copytree(JVM, copy, ignore=shutil.ignore_patterns("target"))
    shutil.copytree(ROOT / "tests" / "vectors", tmp_path / "tests" / "vectors")
    return copy


@pytest.mark.slow
def test_the_build_works_offline_once_fetched(tmp_path: Path) -> None:
    """``mvn -o`` builds a copy of jvm/ from Maven's cache alone (javac warnings as errors)."""
    if shutil.which("mvn") is None:
        pytest.fail("Maven (mvn) is not on PATH: the README's commands need it")
    copy = _copy_of_the_build(tmp_path)
    done = subprocess.run(
        ["mvn", "-B", "-o", "-q", "-Dstyle.color=never", "-f", str(copy / "pom.xml"),
         f"-Dpyspark.jars={_pyspark_jars()}", "-Drevision=0.0.0-test", "package"],
        capture_output=True, text=True, check=False, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert (copy / "spark" / "target" / "zerorename-spark-0.0.0-test.jar").is_file()
    assert (copy / "research" / "target" / "zerorename-research-jvm-0.0.0-test.jar").is_file()


@pytest.mark.slow
def test_a_java_warning_fails_the_build(tmp_path: Path) -> None:
    """-Werror is on: a deprecated call added to the production module fails the build."""
    copy = _copy_of_the_build(tmp_path)
    bad = copy / "spark" / "src" / "main" / "java" / "io" / "zerorename" / "spark" / "Bad.java"
    bad.write_text("package io.zerorename.spark;\n"
                   "final class Bad { static Integer box(int i) { return new Integer(i); } }\n")
    done = subprocess.run(
        ["mvn", "-B", "-o", "-q", "-Dstyle.color=never", "-f", str(copy / "pom.xml"),
         f"-Dpyspark.jars={_pyspark_jars()}", "-Drevision=0.0.0-test", "-pl", "spark",
         "compile"], capture_output=True, text=True, check=False, timeout=600)
    assert done.returncode != 0
    assert "warnings found and -Werror specified" in done.stdout + done.stderr
