"""`triage report` from the command line: bad input, real dumps, real logs, output files."""

from __future__ import annotations

import json
import os
import pickle
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from triage.cli import main

GOLDEN = Path(__file__).resolve().parent.parent / "golden"
REPO = GOLDEN.parent.parent


def _err_line(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return err.splitlines()[0]


class _Evil:
    def __reduce__(self) -> tuple[object, tuple[str]]:
        return (os.system, ("touch /tmp/triage-pwned",))


@pytest.mark.parametrize("kind", ["missing", "empty_dir", "garbage", "truncated", "evil_pickle", "bundle_only",
                                  "empty_log", "binary"])
def test_bad_input_is_one_line_exit_2(kind: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "input"
    if kind == "empty_dir":
        target.mkdir()
    elif kind == "garbage":
        target.mkdir()
        (target / "fr_trace_0").write_text("{ this is not json")
    elif kind == "truncated":
        target.mkdir()
        good = (GOLDEN / "op_mismatch/run/node01/bundles/20261122T000000.000-hang/rank-0/fr.json").read_bytes()
        (target / "fr_trace_0").write_bytes(good[: len(good) // 2])
    elif kind == "evil_pickle":
        target = tmp_path / "fr_trace_0"
        target.write_bytes(pickle.dumps({"version": "2.10", "entries": [_Evil()]}))
    elif kind == "bundle_only":
        shutil.copytree(GOLDEN / "op_mismatch/run/node01/bundles/20261122T000000.000-hang", target)
    elif kind == "empty_log":
        target = tmp_path / "job.log"
        target.write_text("")
    elif kind == "binary":
        target = tmp_path / "job.log"
        target.write_bytes(b"\x00\x01\x02garbage")
    code = main(["report", str(target)])
    line = _err_line(capsys)
    assert code == 2
    assert line.startswith("triage: error: ") and str(target) in line
    assert not Path("/tmp/triage-pwned").exists()


def test_partial_dump_dir_reports_and_says_what_was_skipped(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    bundle = GOLDEN / "op_mismatch/run"
    for rank, host in ((0, "node01"), (1, "node01"), (3, "node02")):
        src = bundle / host / "bundles/20261122T000000.000-hang" / f"rank-{rank}" / "fr.json"
        shutil.copy(src, tmp_path / f"nccl_trace_rank_{rank}")
    (tmp_path / "nccl_trace_rank_2").write_text('{"version": "2.10", "entries": [')
    code = main(["report", str(tmp_path), "--format", "json"])
    data = json.loads(capsys.readouterr().out)
    assert code == 1
    assert data["verdict"]["culprit_ranks"] == [3]
    assert any(f["kind"] == "unreadable_input" and "nccl_trace_rank_2" in f["detail"] for f in data["findings"])
    assert any(f["kind"] == "missing_rank" and f["ranks"] == [2] for f in data["findings"])


@pytest.fixture(scope="module")
def real_dumps(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """fr_json_<r> and fr_pickle_<r> from a real hung 3-rank gloo job: rank 2 sleeps outside any
    collective while ranks 0,1 wait in all_reduce (gloo aborts or hangs on real mismatches depending
    on timing, so the deterministic hang is the one used here; the goldens cover mismatches)."""
    out = tmp_path_factory.mktemp("frdumps")
    run = tmp_path_factory.mktemp("run")
    script = REPO / "tests/programs/report_golden_worker.py"
    subprocess.run([sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "3",
                    str(script), "stuck_outside", str(run)], check=True, timeout=120,
                   capture_output=True, env=dict(os.environ, OMP_NUM_THREADS="1", REPORT_FR_DIR=str(out)))
    return out


def test_real_fr_dump_dir_end_to_end(real_dumps: Path) -> None:
    for prefix in ("fr_json_", "fr_pickle_"):
        proc = subprocess.run([sys.executable, "-m", "triage", "report", str(real_dumps), "--prefix", prefix,
                               "--format", "json"], capture_output=True, text=True, timeout=60, check=False)
        assert proc.returncode == 1, proc.stderr
        verdict = json.loads(proc.stdout)["verdict"]
        assert verdict["kind"] == "stuck_outside_collective"
        assert verdict["culprit_ranks"] == [2] and verdict["seq"] == 4
        assert verdict["summary"] == ("HANG: rank 2 never reached seq 4: outside any collective, while ranks 0,1 "
                                      "wait in all_reduce(count=8, float32) at seq 4 of pg 0 (default_pg)")
        assert "next: triage report" in proc.stderr


def test_interleaved_torchrun_log_end_to_end(tmp_path: Path) -> None:
    """The real torchrun output of the crash golden job, as pasted from a job run without triage."""
    out = tmp_path / "report.html"
    proc = subprocess.run([sys.executable, "-m", "triage", "report", str(GOLDEN / "crash/job.log"), "--format",
                           "json"], capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == 1, proc.stderr
    verdict = json.loads(proc.stdout)["verdict"]
    assert verdict["kind"] == "crash" and verdict["culprit_ranks"] == [0]
    assert "SIGABRT" in verdict["summary"]
    code = main(["report", str(GOLDEN / "crash/job.log"), "--format", "html", "-o", str(out)])
    assert code == 1 and out.read_text().startswith("<!DOCTYPE html>")


def test_clean_run_exits_0_and_text_width(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    # The evidence files are listed by their paths as given, unbroken (a path is copied whole): a relative path keeps
    # the width independent of where the checkout lies (a long absolute path alone would pass 80 columns).
    monkeypatch.chdir(GOLDEN)
    code = main(["report", "clean/run", "--width", "80"])
    out = capsys.readouterr().out
    assert code == 0
    assert "NO PROBLEM FOUND" in out
    assert max(len(line) for line in out.splitlines()) <= 80


def test_bad_input_as_a_real_subprocess(tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "triage", "report", str(tmp_path / "nope")],
                          capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == 2
    assert proc.stderr.startswith(f"triage: error: {tmp_path / 'nope'}: no such file or directory")
    assert "Traceback" not in proc.stderr and proc.stdout == ""


def test_mixed_sources_dumps_and_a_log(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """FR dumps of ranks 0,1,3 plus a log that says what rank 2 did: one report over both."""
    dumps = tmp_path / "dumps"
    dumps.mkdir()
    run = GOLDEN / "stuck_outside/run"
    for rank, host in ((0, "node01"), (1, "node01"), (3, "node02")):
        shutil.copy(run / host / "bundles/20261122T000000.000-hang" / f"rank-{rank}" / "fr.json",
                    dumps / f"fr_{rank}")
    log = tmp_path / "rank2.log"
    log.write_text("Traceback (most recent call last):\n  File \"train.py\", line 3, in <module>\n"
                   "ValueError: bad batch\n")
    code = main(["report", str(dumps), str(log), "--format", "json"])
    data = json.loads(capsys.readouterr().out)
    assert code == 1
    assert data["verdict"]["kind"] == "exception" and data["verdict"]["culprit_ranks"] == [2]
    assert "ValueError: bad batch" in data["verdict"]["summary"]
    assert data["sources"] == [str(dumps), str(log)]


def test_unknown_fr_version_is_read_and_said(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = GOLDEN / "op_mismatch/run"
    for rank, host in ((0, "node01"), (1, "node01"), (2, "node02"), (3, "node02")):
        data = json.loads((run / host / "bundles/20261122T000000.000-hang" / f"rank-{rank}" / "fr.json").read_text())
        data["version"] = "9.1"
        (tmp_path / f"trace_{rank}").write_text(json.dumps(data))
    assert main(["report", str(tmp_path), "--format", "json"]) == 1
    data = json.loads(capsys.readouterr().out)
    assert data["verdict"]["culprit_ranks"] == [3]
    assert any("unknown Flight Recorder version '9.1'" in f["detail"] for f in data["findings"])
