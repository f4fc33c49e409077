#!/usr/bin/env bash
# Build zerorename's sdist and wheel with `python -m build` (the wheel from the sdist, as a
# release would), and the research wheel; install the zerorename wheel ALONE into a fresh
# virtualenv and smoke-test it there (scripts/clean_install_smoke.py: import, version, py.typed,
# `zerorename --help` and `--version`, a job written to LocalStore); then add its spark extra and
# check that production works without the research tower (scripts/clean_install_probe.py: no
# research package importable, a committer round trip on moto, a local[1] Spark write,
# `zerorename check` naming the distribution to install).  moto goes into that virtualenv as
# test tooling, by a separate pip install: it is not a dependency of zerorename.  Needs nothing
# from the network but PyPI (build's isolated environment, the dependencies).
# Run by tests/test_towers.py (marked slow); runnable alone: bash scripts/check-clean-install.sh
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# the workspace's interpreter: its pip (>= 22.3) installs into another virtualenv (--python)
python="${ZERORENAME_PYTHON:-$root/.venv/bin/python}"
work="$(mktemp -d "${TMPDIR:-/tmp}/zerorename-clean-install.XXXXXX")"
trap 'rm -rf "$work"' EXIT
started=$SECONDS
say() { echo "[clean install] $* ($((SECONDS - started)) s)"; }

# build from a copy of the two project directories: pip builds in the source tree, and
# setuptools would leave build/ there; the copy also proves each builds from its own directory
mkdir -p "$work/src"
tar --exclude=build --exclude='*.egg-info' --exclude=__pycache__ -C "$root" -cf - reference model \
  | tar -xf - -C "$work/src"
"$python" -m build --sdist --wheel --outdir "$work/wheels" "$work/src/reference" >"$work/build.log" 2>&1 \
  || { cat "$work/build.log" >&2; echo "python -m build failed" >&2; exit 1; }
"$python" -m pip wheel --quiet --no-deps --wheel-dir "$work/wheels" "$work/src/model"
production=("$work"/wheels/zerorename-[0-9]*.whl)
sdist=("$work"/wheels/zerorename-[0-9]*.tar.gz)
research=("$work"/wheels/zerorename_research-[0-9]*.whl)
[ -f "${production[0]}" ] && [ -f "${sdist[0]}" ] && [ -f "${research[0]}" ] \
  || { echo "sdist or wheels missing" >&2; exit 1; }
say "built $(basename "${sdist[0]}"), $(basename "${production[0]}") and $(basename "${research[0]}")"

"$python" -m venv --without-pip "$work/venv"
venv_python="$work/venv/bin/python"
"$python" -m pip --python "$venv_python" install --quiet "${production[0]}"
say "installed $(basename "${production[0]}") alone into a fresh virtualenv"
(cd "$work" && PATH="$work/venv/bin:$PATH" "$venv_python" "$root/scripts/clean_install_smoke.py" \
  "${sdist[0]}" "${production[0]}")
"$python" -m pip --python "$venv_python" install --quiet "${production[0]}[spark]"
say "added its spark extra"
"$python" -m pip --python "$venv_python" install --quiet "moto[s3]>=5.0"
say "installed moto (test tooling)"

cd "$work"  # nothing of the repository on the import path
PYSPARK_PYTHON="$venv_python" PYSPARK_DRIVER_PYTHON="$venv_python" PATH="$work/venv/bin:$PATH" \
  "$venv_python" "$root/scripts/clean_install_probe.py"
say "done"
