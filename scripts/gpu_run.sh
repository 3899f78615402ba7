#!/usr/bin/env bash
# The real-GPU scenarios (tests/gpu) on a GPU machine that cannot reach a package index.
#   bash scripts/gpu_run.sh prepare     here: download triage's wheels (py-spy, pystack, nvidia-ml-py, ...)
#                                       into .gpu-wheels/ (git-ignored), for the trip
#   bash scripts/gpu_run.sh run [OUT]   there: a venv on the machine's python that sees its torch
#                                       (--system-site-packages), triage installed from .gpu-wheels/
#                                       without an index, then pytest -m gpu tests/gpu; the results,
#                                       nvidia-smi and the versions go to OUT (default $OUT or ./gpu-results)
# Carry the checkout and .gpu-wheels/ to the machine (with the device tool: carry [".gpu-wheels"]).
# Record the results in docs/compatibility.md: date, GPU, driver, torch, NCCL, scenario results.
set -euo pipefail
cd "$(dirname "$0")/.."
WHEELS=.gpu-wheels
case "${1:-}" in
  prepare)
    mkdir -p "$WHEELS"
    python3 -m pip download -q --disable-pip-version-check -d "$WHEELS" \
      py-spy pystack psutil rich pyyaml paramiko nvidia-ml-py pytest pytest-timeout setuptools wheel 2>&1 \
      | grep -v "^WARNING: Location" >&2 || true
    ls "$WHEELS" >&2
    ;;
  run)
    out=${2:-${OUT:-$PWD/gpu-results}}
    mkdir -p "$out"
    py=${GPU_PYTHON:-python3}
    "$py" -c 'import torch; assert torch.cuda.is_available(), "no CUDA GPU"' \
      || { echo "gpu_run: $py has no torch with a CUDA GPU" >&2; exit 2; }
    venv=/tmp/triage-gpu-venv
    [ -x "$venv/bin/python" ] || "$py" -m venv --system-site-packages "$venv"
    "$venv/bin/python" -m pip install -q --no-index --find-links "$WHEELS" --no-build-isolation -e . \
      nvidia-ml-py pytest pytest-timeout
    {
      nvidia-smi --query-gpu=name,driver_version --format=csv,noheader || true
      "$venv/bin/python" -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, "nccl", ".".join(map(str, torch.cuda.nccl.version())))'
      date -u +%Y-%m-%dT%H:%MZ
    } | tee "$out/versions.txt"
    "$venv/bin/python" -m pytest tests/gpu -m gpu -v -s -p no:cacheprovider --junitxml "$out/gpu.xml" \
      2>&1 | tee "$out/pytest.log"
    ;;
  *)
    echo "usage: bash scripts/gpu_run.sh prepare | run [OUT]" >&2
    exit 2
    ;;
esac
