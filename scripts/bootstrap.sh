#!/usr/bin/env bash
# Create .venv from pyproject.toml when it is missing or older than pyproject.toml.
# Sourced by the two README commands so that a fresh clone needs nothing else.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="$root/.venv"
stamp="$venv/.zerorename-installed"
if [ ! -x "$venv/bin/python" ] || [ ! -f "$stamp" ] || [ "$root/pyproject.toml" -nt "$stamp" ]; then
  echo "[bootstrap] installing zerorename with its dev and spark extras into $venv (first run only)" >&2
  python3 -m venv "$venv"
  "$venv/bin/python" -m pip install --quiet --upgrade pip
  "$venv/bin/python" -m pip install --quiet -e "$root[dev,spark]"
  touch "$stamp"
fi
export PATH="$venv/bin:$PATH"
export PYSPARK_PYTHON="$venv/bin/python"
export PYSPARK_DRIVER_PYTHON="$venv/bin/python"
