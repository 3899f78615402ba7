#!/usr/bin/env bash
# Installs everything triage and its tests need on a fresh Debian machine (run as root).
set -euo pipefail
cd "$(dirname "$0")/.."

APT_PACKAGES=(gdb strace procps iproute2 util-linux
              slurmctld slurmd slurm-client munge openssh-server openssh-client)
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
