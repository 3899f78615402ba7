"""A full run directory in `triage report RUN_DIR`: what is known of the ranks' end, never a guess
(the disk guard's own line read back, the launcher's exit status from the agent's end record)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from triage.analysis.analyze import analyze
from triage.layout import HostPaths
from triage.load.agent_end import agent_end_event
from triage.load.run_dir import load_run_dir
from triage.model import VerdictKind
from triage.parsing.disk_guard import disk_full_note
from triage.private_files import rewrite_json_in_place
from triage.worker.diskguard import note

HOST = "node3"
T = 1_795_000_000.0


def test_the_parser_reads_the_line_the_worker_writes() -> None:
    lines = ["rank 0 line 7 yyyy", *note(2_097_152, 3_355_443).splitlines()]
    assert disk_full_note(lines) == "the run directory's file system had 2097152 bytes free (reserve 3355443)"
    assert disk_full_note(["[node3:0] " + note(5, 6).strip()]) is not None      # as merged.log tags it
    assert disk_full_note(["the run directory's file system has 5 bytes free", "No space left on device"]) is None


def _run(root: Path, node: dict[str, object], guard: bool = True, exit_of: dict[int, int] | None = None) -> Path:
    host = root / HOST
    for rank in (0, 1):
        rank_dir = host / "ranks" / str(rank)
        rank_dir.mkdir(parents=True)
        (rank_dir / "worker.json").write_text(json.dumps({"pid": 10 + rank, "rank": rank, "world_size": 2,
                                                           "host": HOST, "started": T}))
        (rank_dir / "output.log").write_text("READY\n" + (note(1024, 4096) if guard else ""))
        if exit_of and rank in exit_of:
            (rank_dir / "exit.json").write_text(json.dumps({"pid": 10 + rank, "how": "exit", "exit_code": exit_of[rank],
                                                            "time": T + 5}))
    # the agent's pid: one that is surely not running (pid_max is below 2**22)
    (host / "node.json").write_text(json.dumps({"agent_pid": 1 << 22, "host": HOST, "started": T, **node}))
    return root


RUNNING = {"status": "running", "ended": None}
ENDED_0 = {"status": "exited", "ended": T + 9, "exit_code": 0, "launcher_returncode": 0}


def test_no_end_record_and_no_exit_records_on_a_full_disk_is_not_recorded(tmp_path: Path) -> None:
    report = analyze(load_run_dir(_run(tmp_path, RUNNING)))
    summary = report.verdict.summary
    assert report.verdict.kind is VerdictKind.MISSING_RANK and report.verdict.culprit_ranks == (0, 1)
    assert "how ranks 0,1 (node3) ended is not recorded: the run directory's disk was full" in summary
    assert "1024 bytes free (reserve 4096)" in summary
    assert "no dump" not in summary and "SIGKILL" not in summary
    agent = [f for f in report.findings if f.kind == "agent_died"]
    assert agent and "the run directory's disk was full" in agent[0].detail and " died" not in agent[0].detail


def test_the_launchers_0_from_the_end_record_is_what_is_known(tmp_path: Path) -> None:
    report = analyze(load_run_dir(_run(tmp_path, ENDED_0)))
    assert report.verdict.kind is VerdictKind.NO_PROBLEM_FOUND, report.verdict.summary
    assert [f.ranks for f in report.findings if f.kind == "disk_full"] == [(0, 1)]
    assert not [f for f in report.findings if f.kind == "agent_died"]


def test_a_rank_that_failed_before_the_disk_filled_stays_the_verdict(tmp_path: Path) -> None:
    report = analyze(load_run_dir(_run(tmp_path, {**ENDED_0, "exit_code": 3, "launcher_returncode": 3},
                                       exit_of={1: 3})))
    assert report.verdict.kind is VerdictKind.EXCEPTION and report.verdict.culprit_ranks == (1,)


def test_without_the_guards_line_an_agent_with_no_end_record_died(tmp_path: Path) -> None:
    root = _run(tmp_path, RUNNING, guard=False)
    event = agent_end_event(HostPaths(root / HOST))
    assert event is None or "disk was full" not in event.detail


def test_rewrite_in_place_only_within_the_blocks_the_file_holds(tmp_path: Path) -> None:
    path = tmp_path / "node.json"
    path.write_text(json.dumps({"status": "running", "pad": "x" * 1500}))
    assert rewrite_json_in_place(path, {"status": "exited", "launcher_returncode": 0})
    assert json.loads(path.read_text()) == {"launcher_returncode": 0, "status": "exited"}
    before = path.read_bytes()
    assert not rewrite_json_in_place(path, {"pad": "y" * (os.stat(path).st_blocks * 512 + 1)})
    assert path.read_bytes() == before
    link = tmp_path / "link.json"
    link.symlink_to(path)
    assert not rewrite_json_in_place(link, {"status": "exited"})
    assert not rewrite_json_in_place(tmp_path / "absent.json", {})


@pytest.mark.parametrize("guard", [True, False])
def test_ranks_with_their_exit_records_are_never_unrecorded(tmp_path: Path, guard: bool) -> None:
    report = analyze(load_run_dir(_run(tmp_path, ENDED_0, guard=guard, exit_of={0: 0, 1: 0})))
    assert report.verdict.kind is VerdictKind.NO_PROBLEM_FOUND
