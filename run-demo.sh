#!/usr/bin/env bash
# The main job: PySpark writes through every zerorename committer on an embedded S3 (moto on
# 127.0.0.1, no account needed), with injected faults, then the quick model verdict matrix.
# Pass --help for options (for example a real --endpoint-url and --bucket).
set -euo pipefail
cd "$(dirname "$0")"
source scripts/bootstrap.sh
exec zerorename demo "$@"
