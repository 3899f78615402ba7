"""triage's own process never imports torch (README: the job's torch matters only inside the job):
`triage report` on real recorded runs, and every command's module with the analysis, collectors,
postmortem and remote layers loaded, leave ``torch`` out of ``sys.modules``."""

from __future__ import annotations

import subprocess
import sys

from tests.helpers.paths import REPO

PROBE = """
import contextlib, importlib, io, sys
from triage.cli import main
for name in ("check", "collect", "dump", "launch", "postmortem", "report", "top"):
    importlib.import_module("triage.cli." + name)
for name in ("triage.postmortem", "triage.remote", "triage.collectors.node_bundle", "triage.analysis.analyze",
             "triage.report", "triage.agent.launch.supervisor"):
    importlib.import_module(name)
for run in sys.argv[1:]:
    with contextlib.redirect_stdout(io.StringIO()):
        code = main(["report", run, "--format", "json"])
    assert code in (0, 1), (run, code)
print(sorted(m for m in sys.modules if m == "torch" or m.startswith("torch.")))
"""


def test_triage_itself_never_imports_torch() -> None:
    runs = [str(REPO / "tests" / "golden" / case / "run") for case in ("crash", "dtype_mismatch", "missing_rank")]
    done = subprocess.run([sys.executable, "-c", PROBE, *runs], capture_output=True, text=True, timeout=300,
                          cwd=REPO, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "[]", done.stdout
