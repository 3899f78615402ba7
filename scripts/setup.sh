#!/usr/bin/env bash
# Installs everything triage needs on a fresh Debian/Ubuntu machine.
#   bash scripts/setup.sh          the tool: gdb, strace, torch==2.13.0 (CPU) + numpy, triage itself
#   bash scripts/setup.sh --tests  also what the tests use: slurm, munge, sshd, iproute2, chromium
# Python packages go into the active virtual environment, or into ./.venv (created here).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/pyenv.sh

APT_PACKAGES=(gdb strace procps)
if [ "${1:-}" = "--tests" ]; then
  APT_PACKAGES+=(iproute2 util-linux slurmctld slurmd slurm-client munge
                 openssh-server openssh-client chromium nftables)
fi
# Debian's and Ubuntu's python3 creates venvs only with python3-venv (ensurepip).
if [ ! -x "$TRIAGE_PY" ] && ! python3 -c 'import ensurepip, venv' >/dev/null 2>&1; then
  APT_PACKAGES+=(python3-venv)
fi
missing=()
for pkg in "${APT_PACKAGES[@]}"; do
  dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
done
if [ "${#missing[@]}" -gt 0 ]; then
  if [ "$(id -u)" = 0 ]; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  else
    echo "setup: not root; skipping apt packages: ${missing[*]}" >&2
  fi
fi

if [ ! -x "$TRIAGE_PY" ]; then
  echo "setup: creating the virtual environment $TRIAGE_ENV" >&2
  python3 -m venv "$TRIAGE_ENV"
fi
pip_install() { "$TRIAGE_PY" -m pip install -q --disable-pip-version-check "$@" 2>&1 | grep -v "^WARNING: Location" >&2 || true; }
# torch is pinned: the 2.13.0 CPU build. A bare `torch` pulls a multi-GB CUDA build.
pip_install 'torch==2.13.0' numpy
extras=torch
[ "${1:-}" = "--tests" ] && extras=torch,test
pip_install -e ".[$extras]"
# An editable install leaves no byte-code, and with PYTHONDONTWRITEBYTECODE none is ever written:
# every `triage launch` would compile ~180 modules again (0.4-0.6 s of CPU per job). Compile once.
"$TRIAGE_PY" -m compileall -q triage >/dev/null || true
"$TRIAGE_PY" -c 'import triage, torch' || { echo "setup: triage or torch did not install into $TRIAGE_ENV" >&2; exit 1; }
echo "setup: triage is installed in $TRIAGE_ENV (run it as $TRIAGE_ENV/bin/triage, or activate that environment)" >&2
