#!/usr/bin/env bash
# Installs triage alone with pipx into a scratch home, then checks that the command works from
# there: `triage --help` and `triage report` on a golden run. Used by CI.
set -euo pipefail
cd "$(dirname "$0")/.."
home=${1:?usage: check_pipx.sh SCRATCH_DIR}
mkdir -p "$home"
python3 -m venv "$home/tool"
"$home/tool/bin/python" -m pip install -q --disable-pip-version-check pipx 2>&1 | grep -v "^WARNING: Location" >&2 || true
export PIPX_HOME=$home/pipx PIPX_BIN_DIR=$home/bin PIPX_MAN_DIR=$home/man
"$home/tool/bin/pipx" install -q . >/dev/null
"$home/bin/triage" --help >/dev/null
set +e
"$home/bin/triage" report tests/golden/op_mismatch/run --format json -o "$home/report.json"
code=$?
set -e
[ "$code" = 1 ] || { echo "pipx: triage report exited $code, expected 1 (a problem found)" >&2; exit 1; }
"$home/tool/bin/python" -c "import json,sys; r=json.load(open(sys.argv[1])); assert r['verdict']['kind']=='collective_mismatch', r['verdict']" "$home/report.json"
"$home/bin/triage" report tests/golden/op_mismatch/run >"$home/report.txt" || true   # exit 1 = a problem found
head -3 "$home/report.txt"
grep -q "rank 3" "$home/report.txt" || { echo "pipx: the text report does not name rank 3" >&2; exit 1; }
echo "pipx: triage installed alone works (--help, report on a golden run)"
