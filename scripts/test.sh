#!/usr/bin/env bash
# Sets up (scripts/setup.sh --tests), then runs the whole test suite: the README's test command.
# Extra arguments go to pytest, e.g. `bash scripts/test.sh -k report`.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --tests
source scripts/pyenv.sh
exec "$TRIAGE_PY" -m pytest tests -q "$@"
