"""Heartbeats keep coming while the main thread is blocked in a hung gloo collective, the agent
sees the in-flight collective, the control socket answers dumps, and SIGTERM leaves stacks."""

from __future__ import annotations

import json
import signal
from pathlib import Path

import psutil

from tests.helpers.launch import HOST, job_env, launch_argv, rank_dir, read_json, torchrun
from tests.helpers.paths import example
from tests.helpers.processes import running_program, wait_for
from triage.agent.launch.ranks import RankTracker
from triage.agent.launch.supervisor import exit_code_of
from triage.collectors.worker_client import ping, request_dump
from triage.layout import BundleRankPaths, RunPaths
from triage.model import CollectiveState


def _beat(run: Path, rank: int) -> dict[str, object]:
    try:
        return read_json(rank_dir(run, rank) / "heartbeat.json")  # type: ignore[no-any-return]
    except (OSError, ValueError):
        return {}


def test_heartbeat_in_flight_dump_and_sigterm(tmp_path: Path) -> None:
    run = tmp_path / "run"
    argv = launch_argv(run, torchrun(example("mismatch_hang.py"), 2), "--heartbeat-interval", "0.2",
                       quick_hang=False, host=HOST)
    with running_program(argv, env=job_env(), timeout=90) as proc:
        wait_for(lambda: all((_beat(run, r).get("fr") or {}).get("entries") for r in (0, 1)), 20,
                 "heartbeats with the in-flight collective")
        first = [int(_beat(run, r)["beat"]) for r in (0, 1)]   # type: ignore[call-overload]
        wait_for(lambda: all(int(_beat(run, r)["beat"]) >= first[r] + 3 for r in (0, 1)), 20,  # type: ignore
                 "heartbeats to advance while blocked")
        # What the node agent knows about each rank
        tracker = RankTracker(RunPaths(run).host(HOST), HOST)
        statuses, _ = tracker.poll(__import__("time").time())
        by_rank = {s.rank: s for s in statuses}
        assert set(by_rank) == {0, 1}
        for rank, op in ((0, "all_reduce"), (1, "all_gather")):
            status = by_rank[rank]
            assert status.alive and status.pid and psutil.pid_exists(status.pid)
            assert status.heartbeat_age_s is not None and status.heartbeat_age_s < 5
            assert status.in_flight is not None
            assert (status.in_flight.op, status.in_flight.pg, status.in_flight.seq) == (op, "0", 4)
            assert status.in_flight.state == CollectiveState.IN_FLIGHT
            assert status.in_flight.count == 1024 and status.in_flight.dtype == "float32"
            assert status.progress == (("0", 4),) and status.step == 3
            assert status.progress_age_s is not None and status.progress_age_s > 0
            beat = _beat(run, rank)
            assert beat["progress_time"] <= beat["time"]  # type: ignore[operator]
        # The control socket answers while the main thread is blocked
        assert ping(rank_dir(run, 1))
        result = request_dump(rank_dir(run, 1), tmp_path / "dump", timeout=10)
        assert result.ok, result
        assert {n: f.status for n, f in result.files.items()} == {
            "fr.json": "ok", "fr.pickle": "skipped", "stacks.txt": "ok"}  # no stack-trace pickle: it loads torch's compiler
        # the in-worker agent imports nothing of triage: its file names must be the bundle contract's
        assert sorted(result.files) == sorted(BundleRankPaths.WORKER_DUMP_FILES)
        stacks = (tmp_path / "dump" / "stacks.txt").read_text()
        assert "in all_gather" in stacks and "mismatch_hang.py" in stacks
        fr = json.loads((tmp_path / "dump" / "fr.json").read_text())
        assert fr["entries"][-1]["profiling_name"] == "gloo:all_gather"
        assert not (tmp_path / "dump" / "fr.pickle").exists()
        bad = request_dump(tmp_path / "nowhere", tmp_path / "dump2", timeout=2)
        assert not bad.ok and bad.error
        # A manual dump request file is picked up and answered with a .done file
        req = run / HOST / "dump-requests" / "req1.json"
        req.write_text(json.dumps({"reason": "test request"}))
        wait_for(lambda: (run / HOST / "dump-requests" / "req1.json.done").exists(), 15, "request handled")
        # SIGUSR1 must not kill the agent
        proc.send_signal(signal.SIGUSR1)
        # SIGTERM: forwarded to torchrun, which stops the workers: their stacks are saved
        proc.send_signal(signal.SIGTERM)
        code = proc.wait(timeout=60)
        node = read_json(run / HOST / "node.json")
        assert code == exit_code_of(node["launcher_returncode"]) and code != 0
    # torchrun sends SIGTERM to each worker in turn: under load one may die first, and the other's
    # collective then fails (gloo: peer gone) before its own SIGTERM comes; its dump shows that path.
    in_collective = 0
    for rank, op in ((0, "all_reduce"), (1, "all_gather")):
        text = (rank_dir(run, rank) / "faulthandler.log").read_text()
        assert "most recent call first" in text, (rank, text)
        in_collective += f"in {op}" in text and "mismatch_hang.py" in text
    assert in_collective >= 1
