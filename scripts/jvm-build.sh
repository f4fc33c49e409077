#!/usr/bin/env bash
# The one Maven build for all of zerorename's Java (jvm/), run by scripts/bootstrap.sh when the
# Java, the poms or PySpark changed, or by hand.  It
#   * compiles and tests jvm/ against the installed PySpark's own jars (-Dpyspark.jars), with
#     javac warnings as errors, at the wheel's version (reference/zerorename/_version.py);
#   * puts the production jar into the zerorename package (it travels with the wheel) and the
#     research jar into zerorename_bridge (the conformance drivers);
#   * copies the S3A jars (hadoop-aws, the AWS SDK v2 modules, spark-hadoop-cloud) into the
#     cache, $ZERORENAME_CACHE_DIR (default ~/.cache/zerorename)/jvm/s3a-<set>/, where <set> is
#     a hash of what decides the set (the two poms, PySpark's jar list): a folder, once complete,
#     is never changed or removed, so sessions running from it (other checkouts too) are safe;
#     the checkout's own choice is written beside its jar (spark/jars/s3a-jars.path);
#   * copies the MiniDFSCluster set (hadoop-client-minicluster: a real HDFS for the research
#     driver) the same way into $cache/jvm/minidfs-<set>/, its choice written beside the
#     research jar (hadoop/jars/minidfs-jars.path).
# Maven's own cache is ~/.m2 (or $MAVEN_REPO_LOCAL): it tries offline first (mvn -o) and goes
# online only for what that cache lacks.  Nothing fetched is committed.
# Usage: scripts/jvm-build.sh [--force]   (needs .venv: source scripts/bootstrap.sh first)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
python="${ZERORENAME_PYTHON:-$root/.venv/bin/python}"
force="${1:-}"
pyspark_dir="$("$python" -c 'import pathlib, pyspark; print(pathlib.Path(pyspark.__file__).parent)')"
export PYSPARK_JARS="$pyspark_dir/jars"
version="$("$python" -c 'import runpy, sys; print(runpy.run_path(sys.argv[1])["__version__"])' \
  "$root/reference/zerorename/_version.py")"
cache="${ZERORENAME_CACHE_DIR:-$HOME/.cache/zerorename}"
# the key: every pom and source under jvm/, the version, and PySpark's jar list
key="$( (cd "$root" && find jvm -type f \( -name '*.java' -o -name 'pom.xml' -o -path '*/resources/*' \) \
          -not -path '*/target/*' | LC_ALL=C sort | xargs sha256sum;
         echo "$version"; ls "$PYSPARK_JARS") | sha256sum | cut -c1-16)"
s3a_key="$( (cd "$root" && sha256sum jvm/pom.xml jvm/s3a/pom.xml; ls "$PYSPARK_JARS") \
            | sha256sum | cut -c1-16)"
prod_jar="$root/reference/zerorename/spark/jars/zerorename-spark.jar"
s3a_pointer="$root/reference/zerorename/spark/jars/s3a-jars.path"
research_jar="$root/model/zerorename_bridge/hadoop/jars/zerorename-research-jvm.jar"
minidfs_key="$( (cd "$root" && sha256sum jvm/pom.xml jvm/minidfs/pom.xml; ls "$PYSPARK_JARS") \
                | sha256sum | cut -c1-16)"
minidfs_dir="$cache/jvm/minidfs-$minidfs_key"
minidfs_pointer="$root/model/zerorename_bridge/hadoop/jars/minidfs-jars.path"
s3a_dir="$cache/jvm/s3a-$s3a_key"
stamp="$root/jvm/target/.built-$key"
if [ "$force" != "--force" ] && [ -f "$stamp" ] && [ -f "$prod_jar" ] && [ -f "$research_jar" ] \
   && [ -f "$s3a_dir/.complete" ] && [ -f "$s3a_pointer" ] \
   && [ -f "$minidfs_dir/.complete" ] && [ -f "$minidfs_pointer" ]; then
  exit 0
fi
command -v mvn >/dev/null || { echo "[jvm-build] Maven (mvn) is needed to build jvm/" >&2; exit 1; }
mvn_args=(-B -q -Dstyle.color=never -f "$root/jvm/pom.xml" "-Drevision=$version" "-Dpyspark.jars=$PYSPARK_JARS")
[ -n "${MAVEN_REPO_LOCAL:-}" ] && mvn_args+=("-Dmaven.repo.local=$MAVEN_REPO_LOCAL")
echo "[jvm-build] building jvm/ (version $version) against $PYSPARK_JARS" >&2
# the S3A set is copied by the s3a module only, into a folder of this process, then renamed
partial="$s3a_dir.partial-$$"
rm -rf "$partial"; mkdir -p "$partial"
minidfs_partial="$minidfs_dir.partial-$$"
rm -rf "$minidfs_partial"; mkdir -p "$minidfs_partial"
run() { mvn "${mvn_args[@]}" "$@" package && \
        { [ -f "$s3a_dir/.complete" ] || \
          mvn "${mvn_args[@]}" "$@" -pl s3a dependency:copy-dependencies -DincludeScope=runtime \
            "-DoutputDirectory=$partial"; } && \
        { [ -f "$minidfs_dir/.complete" ] || \
          mvn "${mvn_args[@]}" "$@" -pl minidfs dependency:copy-dependencies \
            -DincludeScope=runtime "-DoutputDirectory=$minidfs_partial"; }; }
log="$(mktemp -t zerorename-mvn.XXXXXX)"
if ! run -o >"$log" 2>&1; then
  echo "[jvm-build] offline build incomplete (first run?): fetching from Maven Central into ~/.m2" >&2
  if ! run >"$log" 2>&1; then
    sed 's/\x1b\[[0-9;]*m//g' "$log" >&2
    rm -f "$log"
    echo "[jvm-build] the Maven build failed (its output is above)" >&2
    exit 1
  fi
fi
rm -f "$log"
mkdir -p "$(dirname "$prod_jar")" "$(dirname "$research_jar")"
cp "$root/jvm/spark/target/zerorename-spark-$version.jar" "$prod_jar.partial" && mv "$prod_jar.partial" "$prod_jar"
cp "$root/jvm/research/target/zerorename-research-jvm-$version.jar" "$research_jar.partial" \
  && mv "$research_jar.partial" "$research_jar"
if [ ! -f "$s3a_dir/.complete" ]; then
  touch "$partial/.complete"
  rm -rf "$s3a_dir"  # an incomplete one (a build that died): never a complete one
  mv "$partial" "$s3a_dir" 2>/dev/null || true  # another build may have won the race: fine
fi
rm -rf "$partial"
if [ ! -f "$minidfs_dir/.complete" ]; then
  touch "$minidfs_partial/.complete"
  rm -rf "$minidfs_dir"
  mv "$minidfs_partial" "$minidfs_dir" 2>/dev/null || true
fi
rm -rf "$minidfs_partial"
echo "$minidfs_dir" > "$minidfs_pointer"
echo "$minidfs_dir" > "$cache/jvm/minidfs-current"
echo "$s3a_dir" > "$s3a_pointer"
echo "$s3a_dir" > "$cache/jvm/s3a-current"
rm -f "$root"/jvm/target/.built-*; mkdir -p "$root/jvm/target"; touch "$stamp"
echo "[jvm-build] $prod_jar, $research_jar; S3A jars in $s3a_dir; MiniDFS jars in $minidfs_dir" >&2
