#!/usr/bin/env bash
# Installs everything triage needs on a fresh Debian machine (run as root).
#   bash scripts/setup.sh          the tool: gdb, strace, torch==2.13.0 (CPU), triage itself
#   bash scripts/setup.sh --tests  also what the tests use: slurm, munge, sshd, iproute2, chromium
set -euo pipefail
cd "$(dirname "$0")/.."

APT_PACKAGES=(gdb strace procps)
if [ "${1:-}" = "--tests" ]; then
  APT_PACKAGES+=(iproute2 util-linux slurmctld slurmd slurm-client munge
                 openssh-server openssh-client chromium)
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

PY=${PYTHON:-python3}
# torch is pinned: the 2.13.0 CPU build. A bare `torch` pulls a multi-GB CUDA build.
"$PY" -m pip install -q --disable-pip-version-check 'torch==2.13.0'
"$PY" -m pip install -q --disable-pip-version-check -e '.[test]'
# pyenv: make the new console scripts (torchrun, triage) visible through its shims
if command -v pyenv >/dev/null 2>&1; then pyenv rehash || true; fi
