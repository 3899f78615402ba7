"""A node whose agent ran but left no bundle when the others collected for a hang is named."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from triage.analysis.analyze import analyze
from triage.load.inputs import load_inputs

GOLDEN_RUN = Path(__file__).resolve().parent.parent / "golden" / "op_mismatch" / "run"


def _node_json(host_dir: Path) -> None:
    host_dir.mkdir(parents=True, exist_ok=True)
    (host_dir / "node.json").write_text(json.dumps({"host": host_dir.name, "status": "running"}))


def test_node_without_a_hang_bundle_is_named(tmp_path: Path) -> None:
    run = tmp_path / "run"
    shutil.copytree(GOLDEN_RUN, run)
    for host in ("node01", "node02", "node03"):
        _node_json(run / host)
    report = analyze(load_inputs([str(run)], None))
    missing = [f for f in report.findings if f.kind == "missing_node"]
    assert len(missing) == 1, report.findings
    assert "node03" in missing[0].detail and "node01" not in missing[0].detail
    assert report.verdict.culprit_ranks == (3,)     # the culprit is still named from the rest


def test_no_missing_node_when_every_node_collected(tmp_path: Path) -> None:
    run = tmp_path / "run"
    shutil.copytree(GOLDEN_RUN, run)
    for host in ("node01", "node02"):
        _node_json(run / host)
    report = analyze(load_inputs([str(run)], None))
    assert not [f for f in report.findings if f.kind == "missing_node"]
