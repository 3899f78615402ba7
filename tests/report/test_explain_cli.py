"""`triage report --explain` on recorded runs: after the normal report, which verdict rules fired
and why the winner won; the report itself is unchanged, and JSON stays JSON."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from triage.analysis.verdict.rules import RULES
from triage.cli import main

PLACE = {rule.name: n for n, rule in enumerate(RULES, 1)}      # the rules' places as they are now

GOLDEN = Path(__file__).resolve().parent.parent / "golden"


def test_explain_follows_the_text_report(capsys: pytest.CaptureFixture[str]) -> None:
    run = str(GOLDEN / "op_mismatch" / "run")
    assert main(["report", run, "--width", "120"]) == 1
    plain = capsys.readouterr().out
    assert main(["report", run, "--width", "120", "--explain"]) == 1
    out = capsys.readouterr().out
    assert out.startswith(plain)           # the report, then the explanation
    tail = out[len(plain):].splitlines()
    assert tail[0].startswith("how the verdict was decided")
    assert f"winner: mismatch (rule {PLACE['mismatch']})" in tail[1]
    assert any(line.startswith(f"* {PLACE['mismatch']:2d}. mismatch: won") for line in tail)
    assert any("first crash: no candidate" in line for line in tail)
    assert any("watchdog: out of scope (reads an excerpt only)" in line for line in tail)
    assert any(line.startswith("  final step stop decision: kept") for line in tail)


def test_explain_with_json_keeps_stdout_json(capsys: pytest.CaptureFixture[str]) -> None:
    run = str(GOLDEN / "crash" / "run")
    assert main(["report", run, "--format", "json", "--explain"]) == 1
    captured = capsys.readouterr()
    data = json.loads(captured.out)
    assert data["verdict"]["kind"] == "crash" and "explanation" not in data
    assert "first crash: won" in captured.err


def test_no_explain_prints_no_explanation(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", str(GOLDEN / "clean" / "run"), "--no-explain"]) == 0
    captured = capsys.readouterr()
    assert "how the verdict was decided" not in captured.out + captured.err


def test_explain_of_an_excerpt(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = tmp_path / "paste.log"
    log.write_text("[rank1]:[E ProcessGroupNCCL.cpp:616] [Rank 1] Watchdog caught collective operation timeout: "
                   "WorkNCCL(SeqNum=5, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for "
                   "600003 milliseconds before timing out.\n")
    main(["report", str(log), "--explain"])
    out = capsys.readouterr().out
    assert "missing rank: out of scope (reads a whole run only)" in out
    assert f"{PLACE['watchdog']}. watchdog: won" in out
