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
# in CI a Ceph RGW (with its HTTPS side) that cannot start fails the run instead of skipping
# its tests (tests/rgw_plugin.py); by hand, without Ceph, they skip and say why
if [ "${CI:-}" = "true" ]; then export ZR_RGW_REQUIRED="${ZR_RGW_REQUIRED:-1}"; fi
# two worker processes (CI has two cores; ZR_TEST_WORKERS=0 runs in this process alone), the
# groups of tests/conftest.py each whole in one worker; the slowest tests are listed at the
# end of every run, to keep CI within its time
set +e
pytest -n "${ZR_TEST_WORKERS:-2}" --dist loadgroup --no-loadscope-reorder --durations=40 "$@"
status=$?
if [ "$status" -eq 5 ]; then
  echo "pytest collected no tests: that is a failure" >&2
  exit 1
fi
exit "$status"
