#!/usr/bin/env bash
# The torch-version matrix: each torch in its own virtual environment, the real-process scenarios of
# tests/matrix on it, and the table in docs/compatibility.md.
#   bash scripts/torch_matrix.sh                 2.4.1 2.6.0 2.8.0 2.11.0 2.13.0 2.14.1
#   bash scripts/torch_matrix.sh 2.4.1 2.14.1    those versions only (the other rows of the table stay)
# Each venv is /tmp/triage-torch-<version> (kept and reused: a CUDA build is ~5 GB and takes ~3 min to
# install; it runs on CPU here). Into it: torch==<version>, numpy, triage itself (pip install -e .,
# which brings py-spy and pystack) and pytest. Results: /tmp/triage-torch-<version>.xml (JUnit) and
# .log; the table rows of the versions run are rewritten, dated today. Exit 1 if any scenario failed.
set -uo pipefail
cd "$(dirname "$0")/.."
REPO=$PWD
VERSIONS=("$@")
[ "${#VERSIONS[@]}" -gt 0 ] || VERSIONS=(2.4.1 2.6.0 2.8.0 2.11.0 2.13.0 2.14.1)
TABLE_PY=${TABLE_PY:-python3}
[ -x .venv/bin/python ] && TABLE_PY=.venv/bin/python

quiet_pip() { "$1/bin/python" -m pip install -q --disable-pip-version-check "${@:2}" 2>&1 \
                | grep -v "^WARNING: Location" >&2 || true; }

setup_venv() {   # VERSION -> the venv's path on stdout; non-zero if torch did not install
  local version=$1 venv=/tmp/triage-torch-$1
  [ -x "$venv/bin/python" ] || python3 -m venv "$venv" >&2 || return 1
  if ! "$venv/bin/python" -c "import torch, sys; sys.exit(torch.__version__.split('+')[0] != '$version')" 2>/dev/null; then
    echo "torch_matrix: installing torch==$version into $venv (a few minutes)" >&2
    quiet_pip "$venv" "torch==$version" numpy
  fi
  quiet_pip "$venv" -e "$REPO" pytest pytest-timeout
  "$venv/bin/python" -c "import torch, triage" >/dev/null 2>&1 || return 1
  echo "$venv"
}

fr_probe() {   # VENV -> "yes" if this torch's Flight Recorder records a gloo collective, else why not
  # (only the probe's own answer: gloo prints its connection lines on stdout too)
  local answer
  answer=$(fr_probe_run "$1" | grep -E "^(yes|no )" | tail -n 1)
  echo "${answer:-probe failed}"
}

fr_probe_run() {
  "$1/bin/python" - <<'PY' 2>/dev/null
import json, os, tempfile
import torch, torch.distributed as dist
c10d = torch._C._distributed_c10d
if not hasattr(c10d, "_dump_fr_trace_json"):
    print("no (no _dump_fr_trace_json)"); raise SystemExit
store = dist.FileStore(os.path.join(tempfile.mkdtemp(), "store"), 1)
dist.init_process_group("gloo", store=store, rank=0, world_size=1)
dist.all_reduce(torch.ones(2))
doc = json.loads(c10d._dump_fr_trace_json(True, False))
print("yes" if doc.get("entries") else "no (records nothing for gloo)")
dist.destroy_process_group()
PY
}

failed=0
for version in "${VERSIONS[@]}"; do
  venv=$(setup_venv "$version") || { echo "torch_matrix: torch $version did not install" >&2;
                                     "$TABLE_PY" scripts/matrix_table.py "$version" --not-installed; failed=1; continue; }
  fr=$(fr_probe "$venv")
  echo "torch_matrix: torch $version (Flight Recorder for gloo: $fr): running tests/matrix" >&2
  RUN_TORCH_MATRIX=1 "$venv/bin/python" -m pytest tests/matrix -m matrix -q -p no:cacheprovider \
      --junitxml "/tmp/triage-torch-$version.xml" >"/tmp/triage-torch-$version.log" 2>&1 || failed=1
  tail -n 3 "/tmp/triage-torch-$version.log" >&2
  "$TABLE_PY" scripts/matrix_table.py "$version" --junit "/tmp/triage-torch-$version.xml" --fr "$fr" || failed=1
done
echo "torch_matrix: table written to docs/compatibility.md" >&2
exit "$failed"
