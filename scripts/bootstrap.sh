#!/usr/bin/env bash
# Create .venv when it is missing or older than a pyproject.toml, with both distributions
# installed editable — zerorename with its spark extra (reference/) and zerorename-research
# (model/) — and the top-level pyproject.toml's "dev" dependency group; then build the Java
# (jvm/, Maven, against the venv's PySpark) when it changed: scripts/jvm-build.sh, a no-op when
# nothing did, offline once Maven's cache holds what it needs.  Sourced by the two
# README commands so that a fresh clone needs nothing else.  Concurrent callers (several shells,
# CI steps) wait for one install instead of racing: the install holds a lock (flock, where the
# system has it).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="$root/.venv"
stamp="$venv/.zerorename-installed"
zerorename_needs_install() {
  [ ! -x "$venv/bin/python" ] || [ ! -f "$stamp" ] || [ "$root/pyproject.toml" -nt "$stamp" ] \
    || [ "$root/reference/pyproject.toml" -nt "$stamp" ] || [ "$root/model/pyproject.toml" -nt "$stamp" ]
}
if zerorename_needs_install; then
  mkdir -p "$venv"
  exec 9>"$venv/.bootstrap.lock"
  command -v flock >/dev/null && flock 9
  if zerorename_needs_install; then  # another caller may have installed while we waited
    echo "[bootstrap] installing zerorename[spark], zerorename-research and the dev tools into $venv (first run only)" >&2
    python3 -m venv "$venv"
    "$venv/bin/python" -m pip install --quiet --upgrade pip  # >= 25.1: --group (PEP 735)
    "$venv/bin/python" -m pip install --quiet -e "$root/reference[spark]" -e "$root/model" \
      --group "$root/pyproject.toml:dev"
    touch "$stamp"
  fi
  exec 9>&-
fi
ZERORENAME_PYTHON="$venv/bin/python" bash "$root/scripts/jvm-build.sh"
export PATH="$venv/bin:$PATH"
export PYSPARK_PYTHON="$venv/bin/python"
export PYSPARK_DRIVER_PYTHON="$venv/bin/python"
