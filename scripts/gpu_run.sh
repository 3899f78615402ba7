#!/usr/bin/env bash
# The real-GPU scenarios (tests/gpu) on a GPU machine that cannot reach a package index.
#   bash scripts/gpu_run.sh prepare [PYVER]  here: download triage's own dependencies as wheels for
#                                       that machine's CPython (default 3.12, x86-64 manylinux) into
#                                       .gpu-wheels/ (git-ignored), for the trip; torch is not among
#                                       them: the machine's own torch is the one under test
#   bash scripts/gpu_run.sh run [OUT]   there: install the wheels and triage (editable) into the
#                                       python that holds the machine's torch (GPU_PYTHON, default
#                                       python3), then pytest -m gpu tests/gpu; the results,
#                                       nvidia-smi, the versions and the tests' run directories go to
#                                       OUT (default $OUT or ./gpu-results)
# Carry the checkout and .gpu-wheels/ to the machine (with the device tool: carry [".gpu-wheels"]).
# Record the results in docs/compatibility.md: date, GPU, driver, torch, NCCL, scenario results.
set -euo pipefail
cd "$(dirname "$0")/.."
WHEELS=.gpu-wheels
case "${1:-}" in
  prepare)
    mkdir -p "$WHEELS"
    pyver=${2:-3.12}
    platforms=()
    for p in manylinux_2_28_x86_64 manylinux_2_27_x86_64 manylinux_2_24_x86_64 manylinux_2_17_x86_64 \
             manylinux2014_x86_64 manylinux1_x86_64 manylinux_2_34_x86_64; do platforms+=(--platform "$p"); done
    # the machine has torch, numpy, psutil, rich, pyyaml, pytest, pytest-timeout and nvidia-ml-py
    # (device/KINDS.md); these are the rest, with their own dependencies
    python3 -m pip download -q --disable-pip-version-check --only-binary=:all: --python-version "$pyver" \
      --implementation cp "${platforms[@]}" -d "$WHEELS" py-spy pystack paramiko hyperscan
    ls "$WHEELS" >&2
    ;;
  run)
    out=${2:-${OUT:-$PWD/gpu-results}}
    mkdir -p "$out"
    py=${GPU_PYTHON:-python3}
    export PYTHONUNBUFFERED=1
    "$py" -c 'import torch; assert torch.cuda.is_available(), "no CUDA GPU"' \
      || { echo "gpu_run: $py has no torch with a CUDA GPU" >&2; exit 2; }
    "$py" -m pip install -q --disable-pip-version-check --no-index --no-deps --no-compile "$WHEELS"/*.whl
    "$py" -m pip install -q --disable-pip-version-check --no-index --no-deps --no-build-isolation -e .
    scripts=$("$py" -c 'import sysconfig; print(sysconfig.get_path("scripts"))')
    export PATH="$scripts:$PATH"              # py-spy, torchrun
    {
      nvidia-smi --query-gpu=name,driver_version --format=csv,noheader || true
      "$py" -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, "nccl", ".".join(map(str, torch.cuda.nccl.version())))'
      "$py" -m triage --version || true
      command -v py-spy gdb strace pystack || true
      date -u +%Y-%m-%dT%H:%MZ
    } 2>&1 | tee "$out/versions.txt"
    rc=0
    timeout -s INT "${GPU_PYTEST_TIMEOUT:-3000}" "$py" -m pytest tests/gpu -m gpu -v -s -p no:cacheprovider --basetemp /tmp/triage-gpu-tests \
      --junitxml "$out/gpu.xml" ${GPU_TESTS:+-k "$GPU_TESTS"} 2>&1 | tee "$out/pytest.log" || rc=$?
    # the run directories (logs, reports, bundles): real GPU text for the CPU-side tests
    tar czf "$out/rundirs.tgz" --exclude='core*' -C /tmp triage-gpu-tests 2>/dev/null || true
    exit "$rc"
    ;;
  *)
    echo "usage: bash scripts/gpu_run.sh prepare [PYVER] | run [OUT]" >&2
    exit 2
    ;;
esac
