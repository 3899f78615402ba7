"""triage.agent.launch.end_report: one report per job of several nodes (the real two-node job:
tests/cluster/test_end_story.py). Each case runs the rule with a real run directory on disk."""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path

import pytest

from triage.agent.launch import end_report
from triage.model import Verdict, VerdictKind

VERDICT = Verdict(kind=VerdictKind.CRASH, summary="CRASH: rank 1 (node2) was killed by SIGSEGV", culprit_ranks=(1,))


def _node(run: Path, host: str, ended: float | None, started: float) -> None:
    (run / host).mkdir(parents=True, exist_ok=True)
    (run / host / "node.json").write_text(json.dumps({"host": host, "started": started, "ended": ended}))


def _printer(printed: list[str], host: str):  # type: ignore[no-untyped-def]
    def print_report() -> Verdict:
        printed.append(host)
        return VERDICT
    return print_report


def test_one_node_prints_its_report_without_a_claim(tmp_path: Path) -> None:
    _node(tmp_path, "node1", time.time(), time.time() - 5)
    printed: list[str] = []
    assert end_report.report_once(tmp_path, "node1", time.time() - 5, _printer(printed, "node1")) == VERDICT
    assert printed == ["node1"] and not (tmp_path / "end_report.json").exists()


def test_the_first_node_prints_and_the_other_points_to_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    started = time.time() - 5
    _node(tmp_path, "node1", time.time(), started)
    _node(tmp_path, "node2", time.time(), started)
    printed: list[str] = []
    assert end_report.report_once(tmp_path, "node2", started, _printer(printed, "node2")) == VERDICT
    record = json.loads((tmp_path / "end_report.json").read_text())
    assert record["host"] == "node2" and record["done"] and record["verdict"]["kind"] == "crash"
    assert end_report.report_once(tmp_path, "node1", started, _printer(printed, "node1")) == VERDICT
    assert printed == ["node2"]
    assert f"report printed by node2; triage report {tmp_path}" in capsys.readouterr().err


def test_the_claimer_waits_for_the_other_nodes_end_before_its_report(tmp_path: Path) -> None:
    started = time.time() - 5
    _node(tmp_path, "node1", None, started)          # still ending
    _node(tmp_path, "node2", time.time(), started)
    seen: list[object] = []

    def print_report() -> Verdict:
        seen.append(json.loads((tmp_path / "node1" / "node.json").read_text())["ended"])
        return VERDICT

    ender = threading.Timer(0.5, lambda: _node(tmp_path, "node1", time.time(), started))
    ender.start()
    try:
        end_report.report_once(tmp_path, "node2", started, print_report)
    finally:
        ender.join()
    assert seen and seen[0] is not None


def test_an_earlier_runs_claim_is_replaced(tmp_path: Path) -> None:
    started = time.time() - 5
    _node(tmp_path, "node1", time.time(), started)
    _node(tmp_path, "node2", time.time(), started)
    (tmp_path / "end_report.json").write_text(json.dumps({"schema": "triage.end_report/1", "host": "node1",
                                                          "time": started - 3600, "verdict": None, "done": True}))
    printed: list[str] = []
    end_report.report_once(tmp_path, "node2", started, _printer(printed, "node2"))
    assert printed == ["node2"] and json.loads((tmp_path / "end_report.json").read_text())["host"] == "node2"


def test_a_planted_link_is_never_written_through_and_the_report_is_not_lost(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    started = time.time() - 5
    _node(tmp_path, "node1", time.time(), started)
    _node(tmp_path, "node2", time.time(), started)
    target = tmp_path / "elsewhere.txt"
    target.write_text("someone else's file\n")
    os.symlink(target, tmp_path / "end_report.json")
    monkeypatch.setattr(end_report, "WAIT_S", 0.3)   # how long a node waits for a claimer that never says
    printed: list[str] = []
    assert end_report.report_once(tmp_path, "node2", started, _printer(printed, "node2")) == VERDICT
    assert printed == ["node2"] and target.read_text() == "someone else's file\n"
