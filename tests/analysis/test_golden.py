"""Golden run directories recorded from real torchrun gloo jobs (tests/golden/make_golden.py).

Each holds run/ (the run directory) and expected.json (the reviewed report). The analysis must
reproduce expected.json exactly, whatever order the files are read in.
"""

from __future__ import annotations

import json
import random
import shutil
from dataclasses import replace
from pathlib import Path

import pytest

from triage.analysis.analyze import analyze
from triage.load.inputs import load_inputs

GOLDEN = Path(__file__).resolve().parent.parent / "golden"
CASES = sorted(p.name for p in GOLDEN.iterdir() if (p / "expected.json").is_file())

EXPECTED_VERDICTS = {
    "clean": ("no_problem_found", None, []),
    "crash": ("crash", None, [0]),
    "dtype_mismatch": ("collective_mismatch", "dtype", [1]),
    "missing_rank": ("missing_rank", None, [2]),
    "op_mismatch": ("collective_mismatch", "op", [3]),
    "silent_dtype": ("collective_mismatch", "dtype", [1]),
    "size_mismatch": ("collective_mismatch", "size", [2]),
    "skipped": ("collective_mismatch", "op", [1]),
    "stuck_outside": ("stuck_outside_collective", None, [2]),
    "subgroup_mismatch": ("collective_mismatch", "op", [2]),
}


def test_every_scenario_has_a_golden() -> None:
    assert set(CASES) == set(EXPECTED_VERDICTS)


@pytest.mark.parametrize("case", CASES)
def test_golden_report_is_reproduced_exactly(case: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(GOLDEN / case)
    expected = json.loads(Path("expected.json").read_text())
    report = analyze(load_inputs(["run"]))
    assert report.to_json() == expected
    verdict = expected["verdict"]
    assert (verdict["kind"], verdict["subkind"], verdict["culprit_ranks"]) == EXPECTED_VERDICTS[case]


@pytest.mark.parametrize("case", ["op_mismatch", "skipped", "subgroup_mismatch", "missing_rank", "crash"])
def test_golden_verdict_does_not_depend_on_read_order(case: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(GOLDEN / case)
    evidence = load_inputs(["run"])
    expected = analyze(evidence).to_json()
    rng = random.Random(case)
    for _ in range(4):
        ranks = list(evidence.ranks)
        rng.shuffle(ranks)
        ranks = [replace(r, collectives=tuple(rng.sample(r.collectives, len(r.collectives)))) for r in ranks]
        assert analyze(replace(evidence, ranks=tuple(ranks))).to_json() == expected


def test_silent_mismatch_is_flagged_in_a_run_that_finished(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(GOLDEN / "silent_dtype")
    evidence = load_inputs(["run"])
    assert evidence.finished_cleanly
    assert analyze(evidence).verdict.summary.startswith("SILENT MISMATCH: rank 1 (node01)")


def test_heartbeat_in_flight_entries_stand_in_for_missing_dumps(tmp_path: Path) -> None:
    """Right after a hang, before any bundle: each rank's heartbeat.json carries its in-flight FR
    entries (as the in-worker agent writes them); built here from the stuck_outside golden dumps."""
    run = tmp_path / "run"
    shutil.copytree(GOLDEN / "stuck_outside/run", run)
    for host in ("node01", "node02"):
        for bundle in sorted((run / host / "bundles").iterdir()):
            for rank_dir in sorted(bundle.glob("rank-*")):
                rank = int(rank_dir.name.split("-")[1])
                full = json.loads((rank_dir / "fr.json").read_text())
                mini = {k: full[k] for k in ("version", "pg_config", "pg_status") if k in full}
                mini["entries"] = [e for e in full["entries"] if not e.get("retired")]
                beat = {"pid": 1, "rank": rank, "time": 0.0, "beat": 3, "fr_state": "ok", "fr": mini}
                (run / host / "ranks" / str(rank) / "heartbeat.json").write_text(json.dumps(beat))
        shutil.rmtree(run / host / "bundles")
    report = analyze(load_inputs([run]))
    assert report.verdict.kind.value == "stuck_outside_collective"
    assert report.verdict.culprit_ranks == (2,) and report.verdict.seq == 4
    assert report.verdict.summary.startswith("HANG: rank 2 (node02) never reached seq 4")
