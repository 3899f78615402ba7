"""`triage top --once` on constructed run directories: states, folding, JSON, text at a fixed
width, bad input. (Real jobs: tests/stragglers/test_jobs.py.)"""

from __future__ import annotations

import io
import json
import subprocess
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from rich.console import Console

from tests.helpers.processes import triage_cmd
from triage.top.render import fold, snapshot_table
from triage.top.snapshot import TopState, take_snapshot

NOW = 1_795_000_000.0
FR_ENTRY = {"collective_seq_id": 42, "op_id": 42, "pg_id": 0, "process_group": ["0", "default_pg"],
            "profiling_name": "gloo:all_reduce", "input_sizes": [[8]], "input_dtypes": ["Float"],
            "output_sizes": [[8]], "state": "scheduled", "time_created_ns": int((NOW - 100) * 1e9), "is_p2p": False}


def rank_files(run: Path, rank: int, host: str = "node0", beat: dict[str, Any] | None = None,
               exit_info: dict[str, Any] | None = None, fault: str | None = None) -> None:
    rdir = run / host / "ranks" / str(rank)
    rdir.mkdir(parents=True, exist_ok=True)
    (rdir / "worker.json").write_text(json.dumps({"rank": rank, "host": host, "pid": 1000 + rank}))
    if beat is not None:
        (rdir / "heartbeat.json").write_text(json.dumps(beat))
    if exit_info is not None:
        (rdir / "exit.json").write_text(json.dumps(exit_info))
    if fault is not None:
        (rdir / "faulthandler.log").write_text(fault)


def beat(age: float, step: int = 7, seq: int = 41, since: float | None = None, pending: bool = False) -> dict[str, Any]:
    return {"time": NOW - age, "step": step, "progress": {"0": {"enqueued": seq, "completed": seq - pending}},
            "fr_state": "ok", "in_flight_since": since,
            "fr": {"version": "2.10", "pg_config": {}, "pg_status": {}, "entries": [FR_ENTRY] if pending else []}}


def every_state(run: Path) -> None:
    (run / "run.json").parent.mkdir(parents=True, exist_ok=True)
    (run / "run.json").write_text(json.dumps({"layout": "triage.run/1"}))
    rank_files(run, 0, beat=beat(0.5))
    rank_files(run, 1, beat=beat(0.5, seq=42, since=NOW - 2.0, pending=True))
    rank_files(run, 2, beat=beat(0.5, seq=42, since=NOW - 100.0, pending=True))
    rank_files(run, 3, host="node1", beat=beat(60.0))
    rank_files(run, 4, host="node1", beat=beat(9.0), exit_info={"how": "exit", "exit_code": 0, "step": 9})
    rank_files(run, 5, host="node1", beat=beat(9.0), exit_info={"how": "exception", "exit_code": 1,
                                                                   "exception": {"type": "ValueError"}})
    rank_files(run, 6, host="node1", beat=beat(9.0), fault="Fatal Python error: Segmentation fault\n\n")
    rank_files(run, 7, host="node1")


def test_every_state(tmp_path: Path) -> None:
    every_state(tmp_path)
    snapshot, _cache = take_snapshot(tmp_path, NOW)
    states = {line.rank: line.state for line in snapshot.ranks}
    assert states == {0: TopState.RUNNING, 1: TopState.IN_COLLECTIVE, 2: TopState.STUCK, 3: TopState.NO_HEARTBEAT,
                      4: TopState.EXITED_OK, 5: TopState.EXITED_ERROR, 6: TopState.CRASHED, 7: TopState.STARTING}
    by_rank = {line.rank: line for line in snapshot.ranks}
    assert (by_rank[1].op, by_rank[1].seq, by_rank[1].in_collective_s) == ("all_reduce", 42, 2.0)
    assert by_rank[2].in_collective_s == 100.0 and by_rank[0].in_collective_s is None
    assert by_rank[0].heartbeat_age_s == 0.5 and by_rank[4].heartbeat_age_s is None and by_rank[4].step == 9
    assert by_rank[3].host == "node1" and snapshot.lag_source is None


def test_text_at_a_fixed_width(tmp_path: Path) -> None:
    every_state(tmp_path)
    snapshot, _cache = take_snapshot(tmp_path, NOW)
    out = io.StringIO()
    Console(file=out, width=110, color_system=None, force_terminal=False).print(
        snapshot_table(replace(snapshot, run_dir="RUN")))
    lines = [line.rstrip() for line in out.getvalue().splitlines()]
    assert lines[0] == ("triage top RUN: 8 ranks on 2 hosts at 11:06:40 UTC; arrival lag from no Flight Recorder "
                        "dump yet (triage dump")
    assert lines[1] == "RUN_DIR)"
    body = "\n".join(lines[2:])
    assert body == """\
ranks ┃ host  ┃ state         ┃ step ┃ last collective        ┃ in coll ┃ heartbeat ┃ lag
━━━━━━╇━━━━━━━╇━━━━━━━━━━━━━━━╇━━━━━━╇━━━━━━━━━━━━━━━━━━━━━━━━╇━━━━━━━━━╇━━━━━━━━━━━╇━━━━
2     │ node0 │ stuck         │ 7    │ all_reduce pg 0 seq 42 │ 100.0s  │ 0.5s      │ -
3     │ node1 │ no_heartbeat  │ 7    │ ? pg 0 seq 41          │ -       │ 60.0s     │ -
5     │ node1 │ exited_error  │ 7    │ ? pg 0 seq 41          │ -       │ -         │ -
6     │ node1 │ crashed       │ 7    │ ? pg 0 seq 41          │ -       │ -         │ -
0     │ node0 │ running       │ 7    │ ? pg 0 seq 41          │ -       │ 0.5s      │ -
1     │ node0 │ in_collective │ 7    │ all_reduce pg 0 seq 42 │ 2.0s    │ 0.5s      │ -
4     │ node1 │ exited_ok     │ 9    │ ? pg 0 seq 41          │ -       │ -         │ -
7     │ node1 │ starting      │ -    │ -                      │ -       │ -         │ -"""


def test_a_thousand_ranks_fold_into_few_rows(tmp_path: Path) -> None:
    (tmp_path / "run.json").write_text(json.dumps({"layout": "triage.run/1"}))
    for rank in range(1024):
        rank_files(tmp_path, rank, host=f"node{rank // 8:03d}", beat=beat(0.5, step=100 + rank % 2, seq=300 + rank % 2))
    rank_files(tmp_path, 77, host="node009", beat=beat(0.5, seq=302, since=NOW - 90.0, pending=True))
    start = time.perf_counter()
    snapshot, _cache = take_snapshot(tmp_path, NOW)
    took = time.perf_counter() - start
    rows = fold(snapshot.ranks)
    assert [(row.state, len(row.ranks)) for row in rows] == [(TopState.STUCK, 1), (TopState.RUNNING, 1023)]
    assert rows[1].steps == (100, 101) and rows[1].seqs == (300, 301) and len(rows[1].hosts) == 128
    assert took < 60, took   # a generous bound: files only, a thousand of them


def test_cli_json_and_bad_input(tmp_path: Path) -> None:
    every_state(tmp_path / "run")
    (tmp_path / "run" / "node0" / "ranks" / "0" / "heartbeat.json").write_text("{half")
    done = subprocess.run(triage_cmd("top", str(tmp_path / "run"), "--once", "--format", "json"),
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert doc["schema"] == "triage.top/1" and len(doc["ranks"]) == 8
    assert any("heartbeat.json: not JSON" in p for p in doc["problems"])
    assert doc["ranks"][0]["state"] == "starting"           # its heartbeat could not be read
    assert f"next: triage report {tmp_path / 'run'}" in done.stderr
    for argv, words in ((["top", str(tmp_path / "nothing"), "--once"], "no such directory"),
                        (["top", str(tmp_path), "--once"], "not a run directory"),
                        (["top", str(tmp_path / "run"), "--format", "json"], "needs --once"),
                        (["top", str(tmp_path / "run"), "--once", "--interval", "0"], "--interval")):
        bad = subprocess.run(triage_cmd(*argv), capture_output=True, text=True, timeout=60, check=False)
        assert bad.returncode == 2 and words in bad.stderr and "Traceback" not in bad.stderr, (argv, bad.stderr)
        assert bad.stderr.startswith("triage: error: ")


def test_live_view_refreshes_and_leaves_on_ctrl_c(tmp_path: Path) -> None:
    import signal

    every_state(tmp_path / "run")
    # Ctrl-C's default action in the child even where this test runs with SIGINT ignored (a
    # background job of a shell without job control passes SIG_IGN down, and the live view then
    # never sees the Ctrl-C this test sends)
    proc = subprocess.Popen(triage_cmd("top", str(tmp_path / "run"), "--interval", "0.5", "--width", "200"),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.default_int_handler))  # noqa: PLW1509
    try:
        time.sleep(4.0)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, err
    assert "triage top " in out and "no_heartbeat" in out and "crashed" in out
    assert f"next: triage report {tmp_path / 'run'}" in err


def _fr(rank: int, late_ms: float) -> dict[str, Any]:
    entries = [{**FR_ENTRY, "collective_seq_id": seq, "op_id": seq, "record_id": seq, "state": "completed",
                "time_created_ns": int((NOW - 100 + seq * 0.2 + late_ms / 1000 * (rank == 1)) * 1e9)}
               for seq in range(1, 61)]
    return {"version": "2.10", "pg_config": {"0": {"name": "0", "desc": "default_pg", "ranks": "[0, 1, 2]"}},
            "pg_status": {}, "entries": entries}


def test_the_newest_dump_wins_the_live_straggler_watch_s_included(tmp_path: Path) -> None:
    """Exit dumps (equal ranks) older than the live watch's fetch (rank 1 late): top reads the newer."""
    import os

    from triage.layout import HostPaths

    (tmp_path / "run.json").write_text(json.dumps({"layout": "triage.run/1"}))
    host = HostPaths(tmp_path / "node0")
    for rank in range(3):
        rank_files(tmp_path, rank, beat=beat(0.5))
        host.rank(rank).fr_exit.write_text(json.dumps(_fr(rank, 0.0)))
        os.utime(host.rank(rank).fr_exit, (NOW - 60, NOW - 60))
    snapshot, _cache = take_snapshot(tmp_path, NOW)
    assert snapshot.lag_source == "exit dumps"
    assert not any(line.straggler for line in snapshot.ranks)
    for rank in range(3):
        host.live_fr(rank).parent.mkdir(parents=True)
        host.live_fr(rank).write_text(json.dumps(_fr(rank, 60.0)))
    snapshot, _cache = take_snapshot(tmp_path, NOW)
    assert snapshot.lag_source == "live straggler watch"
    assert [line.rank for line in snapshot.ranks if line.straggler] == [1]
