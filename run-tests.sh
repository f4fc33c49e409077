#!/usr/bin/env bash
# Every check CI runs: lint, types, the TLA+ syntax check and the whole test suite (model,
# property suites, reference committers on moto and Ceph RGW, Spark, notebooks, and the
# production wheel installed alone in a clean virtualenv: tests/test_towers.py, marked slow).
# Extra arguments go to pytest (for example: ./run-tests.sh -m "not spark" -x).
set -uo pipefail
cd "$(dirname "$0")"
source scripts/bootstrap.sh
set -e
echo "== ruff"; ruff check .
echo "== mypy --strict (the reference, the model and the bridge)"; mypy
echo "== pytest"
set +e
pytest "$@"
status=$?
if [ "$status" -eq 5 ]; then
  echo "pytest collected no tests: that is a failure" >&2
  exit 1
fi
exit "$status"
