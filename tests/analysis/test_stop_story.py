"""A signal triage launch forwarded to the job (node.json's forwarded_signals), read back by the run
directory's loader and ordered by time against the ranks' failures (pure analysis + the loader)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from triage.analysis.analyze import analyze
from triage.analysis.stopped import with_stop_context
from triage.layout import HostPaths
from triage.load.forwarded import forwarded_stop
from triage.load.run_dir import load_run_dir
from triage.model import Verdict, VerdictKind
from triage.model.evidence import ExitInfo

STOP_T = 1_795_000_000.0
HOST = "node7"


def _run_dir(root: Path, node: dict[str, object], exits: dict[int, dict[str, object]]) -> Path:
    host = root / HOST
    for rank, record in exits.items():
        rank_dir = host / "ranks" / str(rank)
        rank_dir.mkdir(parents=True)
        (rank_dir / "worker.json").write_text(json.dumps({"pid": 100 + rank, "rank": rank, "world_size": len(exits),
                                                           "host": HOST, "started": STOP_T - 100}))
        (rank_dir / "exit.json").write_text(json.dumps({"pid": 100 + rank, "rank": rank, **record}))
    (host / "node.json").write_text(json.dumps({"agent_pid": 42, "host": HOST, "started": STOP_T - 100,
                                                "ended": STOP_T + 9, "status": "exited", **node}))
    return root


def _raised(kind: str, when: float, code: int = 1) -> dict[str, object]:
    return {"how": "exception", "exit_code": code, "time": when + 0.1,
            "exception": {"type": kind, "message": "boom" if kind != "KeyboardInterrupt" else "", "time": when}}


FORWARDED = {"forwarded_signals": ["SIGINT"], "forwarded_at": STOP_T, "exit_code": 1}


def test_exceptions_after_a_forwarded_ctrl_c_are_its_consequence(tmp_path: Path) -> None:
    root = _run_dir(tmp_path, FORWARDED, {0: _raised("KeyboardInterrupt", STOP_T + 0.3, 130),
                                          1: _raised("KeyboardInterrupt", STOP_T + 0.2, 130)})
    report = analyze(load_run_dir(root))
    assert report.verdict.kind is VerdictKind.STOPPED
    assert "triage launch (pid 42) on host node7 received SIGINT and passed it to the launcher" in report.verdict.summary
    assert "Ctrl-C" in report.verdict.summary and report.verdict.culprit_host == HOST


@pytest.mark.parametrize("sig, words", [("SIGHUP", "terminal or ssh session"), ("SIGTERM", "who sent SIGTERM")])
def test_what_to_do_fits_the_signal(tmp_path: Path, sig: str, words: str) -> None:
    root = _run_dir(tmp_path, {**FORWARDED, "forwarded_signals": [sig]}, {0: _raised("RuntimeError", STOP_T + 1)})
    assert words in analyze(load_run_dir(root)).verdict.summary


def test_a_failure_before_the_signal_stays_the_verdict_with_the_stop_after_it(tmp_path: Path) -> None:
    root = _run_dir(tmp_path, FORWARDED, {0: _raised("KeyboardInterrupt", STOP_T + 0.3, 130),
                                          1: _raised("RuntimeError", STOP_T - 4.0)})
    verdict = analyze(load_run_dir(root)).verdict
    assert verdict.kind is VerdictKind.EXCEPTION and verdict.culprit_ranks == (1,)
    assert "RuntimeError: boom" in verdict.summary
    assert verdict.summary.endswith("; then triage launch (pid 42) on host node7 received SIGINT and passed it to "
                                    "the launcher")


def test_without_a_forwarded_signal_nothing_changes(tmp_path: Path) -> None:
    root = _run_dir(tmp_path, {"forwarded_signals": [], "exit_code": 1}, {0: _raised("RuntimeError", STOP_T)})
    assert analyze(load_run_dir(root)).verdict.kind is VerdictKind.EXCEPTION


@pytest.mark.parametrize("node, expected", [
    ({"forwarded_signals": ["SIGINT", "SIGINT"], "forwarded_at": STOP_T, "agent_pid": 9}, (STOP_T, "received SIGINT and")),
    ({"forwarded_signals": ["SIGTERM"]}, (None, "received SIGTERM")),              # a record of before forwarded_at
    ({"forwarded_signals": ["SIGHUP"], "forwarded_at": "soon"}, (None, "received SIGHUP")),
    ({"forwarded_signals": ["SIGINT"], "forwarded_at": True}, (None, "received SIGINT")),
    ({"forwarded_signals": ["SIGKILL", 3]}, None),                                 # never forwarded: not ours
    ({"forwarded_signals": "SIGINT"}, None),
    ({}, None),
    ([], None),
])
def test_the_node_record_is_read_defensively(tmp_path: Path, node: object, expected: tuple[float | None, str] | None,
                                             ) -> None:
    stop = forwarded_stop(HostPaths(tmp_path / HOST), node)
    if expected is None:
        assert stop is None
        return
    assert stop is not None and stop.failure_kind == "stopped" and stop.host == HOST
    assert stop.time == expected[0] and stop.message is not None and expected[1] in stop.message


def test_the_stop_as_context_keeps_who_received_it() -> None:
    from dataclasses import replace

    from tests.helpers.evidence import hang
    stop = ExitInfo(message="triage launch (pid 5) on host h received SIGTERM and passed it to the launcher; how "
                    "the ranks ended after it is its consequence", failure_kind="stopped", time=STOP_T)
    evidence = replace(hang(2, None, 4, {}), unattributed=(stop,))
    said = with_stop_context(Verdict(VerdictKind.EXCEPTION, "EXCEPTION: rank 1 raised"), evidence).summary
    assert said == "EXCEPTION: rank 1 raised; then triage launch (pid 5) on host h received SIGTERM and passed it to " \
        "the launcher"


def test_a_ranks_own_uncaught_keyboard_interrupt_is_a_stop_not_a_failure(tmp_path: Path) -> None:
    """Nothing forwarded: rank 0 alone was interrupted (its record: KeyboardInterrupt, 130; CPython then ends it by
    SIGINT, as torchrun records). The report says an interrupt stopped it, never an exception whose line is missing
    (a bare ``KeyboardInterrupt`` line has no colon) or a crash to debug."""
    root = _run_dir(tmp_path, {"exit_code": 1, "launcher_returncode": 1},
                    {0: _raised("KeyboardInterrupt", STOP_T, 130), 1: {"how": "exit", "exit_code": 0}})
    (root / HOST / "ranks" / "0" / "output.log").write_text(
        'Traceback (most recent call last):\n  File "train.py", line 40, in <module>\nKeyboardInterrupt\n')
    evidence = load_run_dir(root)
    end = next(r for r in evidence.ranks if r.rank == 0).exit
    assert end is not None and end.signal_name == "SIGINT" and end.exit_code is None
    report = analyze(evidence)
    assert report.verdict.kind is VerdictKind.STOPPED, report.verdict
    assert "rank 0 (host node7) was interrupted: an uncaught KeyboardInterrupt" in report.verdict.summary
    assert "find who interrupted it" in report.verdict.summary
    assert "not in this input" not in json.dumps([f.detail for f in report.findings])


def test_a_failure_before_a_ranks_interrupt_stays_the_verdict(tmp_path: Path) -> None:
    root = _run_dir(tmp_path, {"exit_code": 1, "launcher_returncode": 1},
                    {0: _raised("KeyboardInterrupt", STOP_T + 5, 130), 1: _raised("ValueError", STOP_T)})
    report = analyze(load_run_dir(root))
    assert report.verdict.kind is VerdictKind.EXCEPTION and report.verdict.culprit_ranks == (1,), report.verdict
