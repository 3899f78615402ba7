#!/usr/bin/env bash
# Sets up (scripts/setup.sh), then runs a bundled 4-rank job under triage: rank 3 calls all_gather
# while ranks 0-2 call all_reduce. triage notices the hang after 10 s, saves the evidence, stops the
# job and ends with the verdict (exit code 75: hang detected, job stopped).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
source scripts/pyenv.sh
exec triage launch --hang-timeout 10 -- torchrun --nproc-per-node 4 examples/mismatch_hang.py
