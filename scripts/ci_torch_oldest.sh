#!/usr/bin/env bash
# CI: the oldest torch of the supported range (2.4.1, no Flight Recorder for gloo) on a small
# real-process subset of tests/matrix: a stall (a rank spinning in Python while the other waits in
# all_reduce: detected from heartbeats and stacks), a collective mismatch, and a silent dtype
# mismatch (reported as not recorded, never as "all match"). About 3 min for the install (a ~5 GB
# CUDA build, run on CPU; skipped when /tmp/triage-torch-2.4.1 already holds it) plus ~2 min
# (2 min 12 s measured on the shared 2-core development machine, 2026-11-25).
#   bash scripts/ci_torch_oldest.sh [VERSION]     (default 2.4.1)
set -euo pipefail
cd "$(dirname "$0")/.."
version=${1:-2.4.1}
venv=/tmp/triage-torch-$version
# Two checkouts may run this at once (two CI clones on one machine): one venv, so one at a time.
mkdir -p "$venv"
if [ -L "$venv" ] || [ ! -O "$venv" ]; then
  echo "ci_torch_oldest: $venv is not a directory of this user; remove it and run again" >&2
  exit 2
fi
exec 9<"$venv"
flock 9
# A venv whose creation was cut short has an interpreter and no pip: make it again.
"$venv/bin/python" -m pip --version >/dev/null 2>&1 || python3 -m venv --clear "$venv"
pip_install() { "$venv/bin/python" -m pip install -q --disable-pip-version-check "$@" 2>&1 \
                  | grep -v "^WARNING: Location" >&2 || true; }
if ! "$venv/bin/python" -c "import torch, sys; sys.exit(torch.__version__.split('+')[0] != '$version')" 2>/dev/null; then
  pip_install "torch==$version" numpy
fi
pip_install -e . pytest pytest-timeout
RUN_TORCH_MATRIX=1 "$venv/bin/python" -m pytest tests/matrix -m matrix -q -p no:cacheprovider \
    -k "stall or mismatch or dtype"
