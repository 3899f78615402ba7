"""The agent's fixed cost per job: what `triage launch` imports before anything goes wrong.

Its parser and the agent (``triage.agent.launch.supervisor``) load, in a fresh interpreter,
neither the report (its loaders and rich), nor YAML without a ``triage.yaml``, nor what only a
hang, a straggler or a stop needs (the py-spy collectors, the FR loaders and their analysis, the
verdict's stop analysis, the stop's decision, NVML's binding, the numerics watch without
``--numerics``). Those are imported where they are used
(tests/hang, tests/stragglers and tests/launch run them on real jobs). A job that ends well loads, at
its end, neither the report nor the launcher-log parser (the teardown check needs it only for a rank
whose own record says exit 0, in a launcher log that holds something)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

LATER = ("rich", "yaml", "triage.report", "triage.collectors.pyspy", "triage.collectors.node_bundle",
         "triage.load.fr_files", "triage.analysis.stragglers", "triage.analysis.groups", "triage.analysis.stop",
         "triage.model.evidence", "triage.agent.hang.actions", "triage.agent.hang.stop_decision",
         "triage.load.teardown", "triage.load.logs.scan", "pynvml", "triage.agent.numerics_watch")
AT_END = ("rich", "yaml", "triage.report", "triage.agent.hang.stop_decision", "triage.load.teardown",
          "triage.load.logs.scan", "triage.model.evidence", "pynvml")

PROBE = ("import json, sys; import triage.cli.launch, triage.agent.launch.supervisor; "
         "print(json.dumps(sorted(sys.modules)))")


def test_the_agent_starts_without_what_only_a_failure_or_a_report_needs(tmp_path: Path) -> None:
    out = subprocess.run([sys.executable, "-c", PROBE], cwd=tmp_path, capture_output=True, text=True,
                         timeout=300, check=True)
    loaded = set(json.loads(out.stdout))
    assert "triage.agent.launch.supervisor" in loaded
    early = [name for name in LATER if name in loaded]
    assert not early, f"imported at agent start: {early}"


def test_the_lazily_imported_parts_still_import_where_they_are_used(tmp_path: Path) -> None:
    code = ("from triage.agent.straggler_watch import analyze_dumps; "
            "from triage.agent.hang.stop_decision import job_verdict; "
            "result, problems = analyze_dumps({}); print(len(result.stragglers), len(problems)); "
            "print(job_verdict(None, None, 'no progress for 60 s', 'hang').kind.name)")
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True,
                         timeout=300, check=True)
    assert out.stdout.split() == ["0", "0", "HANG"]


@pytest.mark.parametrize("job", [["true"], [sys.executable, "-c", "pass"]], ids=["true", "python -c pass"])
def test_a_job_that_ends_well_loads_no_report_and_no_log_parser_at_its_end(tmp_path: Path, job: list[str]) -> None:
    code = ("import json, sys; from triage.cli import main; "
            f"rc = main(['launch', '--run-dir', {str(tmp_path / 'run')!r}, '--console', 'none', '--', *{job!r}]); "
            "print(json.dumps([rc, sorted(sys.modules)]))")
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True,
                         timeout=300, check=True)
    rc, loaded = json.loads(out.stdout.splitlines()[-1])
    assert rc == 0
    late = [name for name in AT_END if name in loaded]
    assert not late, f"imported by a job that ended well: {late}"


def test_a_failed_job_still_loads_the_report_at_its_end(tmp_path: Path) -> None:
    code = ("import json, sys; from triage.cli import main; "
            f"rc = main(['launch', '--run-dir', {str(tmp_path / 'run')!r}, '--console', 'none', '--', 'false']); "
            "print(json.dumps([rc, sorted(sys.modules)]))")
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True,
                         timeout=300, check=True)
    rc, loaded = json.loads(out.stdout.splitlines()[-1])
    assert rc == 1 and "triage.report" in loaded and "triage.agent.hang.stop_decision" in loaded
