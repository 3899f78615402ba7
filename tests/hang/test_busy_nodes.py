"""Two node agents (``--host n1`` / ``--host n2``) sharing one run directory, one torchrun
``--nnodes 2`` job: the rank busy outside collectives is on one node, the other node's ranks
all wait in a barrier. Neither node stops the job (the waiting node defers to the busy one);
when the busy rank sleeps instead, both nodes stop it."""

from __future__ import annotations

import socket
import subprocess
import uuid

import pytest

from tests.helpers.launch import TORCHRUN, Finished, job_env
from tests.helpers.paths import program
from tests.helpers.processes import kill_tree, triage_cmd
from triage.exitcodes import ExitCode

pytestmark = [pytest.mark.timeout(300), pytest.mark.slow]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _two_nodes(tmp_path, **env_extra: str) -> dict[str, Finished]:  # type: ignore[no-untyped-def]
    run_dir = tmp_path / "run"
    port, rdzv = _free_port(), uuid.uuid4().hex[:8]
    job = [TORCHRUN, "--nnodes", "2", "--nproc-per-node", "2", "--rdzv-backend", "c10d",
           "--rdzv-endpoint", f"127.0.0.1:{port}", "--rdzv-id", rdzv, str(program("agent_busy_checkpoint.py"))]
    env = job_env(AGENT_BUSY_RANK="3", **env_extra)
    procs = {}
    for host in ("n1", "n2"):
        argv = [*triage_cmd("launch", "--run-dir", str(run_dir), "--host", host, "--job-id", "twonodes",
                            "--hang-timeout", "5", "--console", "none", "--strace-seconds", "1", "--"), *job]
        procs[host] = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                                       start_new_session=True, cwd=str(tmp_path))
    done = {}
    try:
        for host, proc in procs.items():
            out, err = proc.communicate(timeout=240)
            done[host] = Finished(proc.returncode, out, err, run_dir)
    finally:
        for proc in procs.values():
            kill_tree(proc.pid)
            proc.wait(timeout=10)
    return done


def _busy_host(run_dir) -> str:  # type: ignore[no-untyped-def]
    return next(run_dir.glob("*/ranks/3/worker.json")).parents[2].name


def test_the_node_waiting_for_a_busy_rank_on_another_node_does_not_stop_the_job(tmp_path) -> None:  # type: ignore[no-untyped-def]
    done = _two_nodes(tmp_path, AGENT_BUSY_SECONDS="20")
    explain = "\n".join(f"=== {h}\n{d.explain()}" for h, d in done.items())
    assert all(d.returncode == 0 for d in done.values()), explain
    busy_host = _busy_host(tmp_path / "run")
    other = "n1" if busy_host == "n2" else "n2"
    assert f"triage[{busy_host}]: rank 3 busy in save_checkpoint" in done[busy_host].stderr, explain
    assert "stopping the job (SIGTERM" not in done[other].stderr, explain
    assert "stopping the job (SIGTERM" not in done[busy_host].stderr, explain
    for rank in range(4):
        log = next((tmp_path / "run").glob(f"*/ranks/{rank}/output.log")).read_text()
        assert f"rank {rank}: last line" in log, explain


def test_a_sleeping_rank_on_one_node_stops_both_nodes(tmp_path) -> None:  # type: ignore[no-untyped-def]
    done = _two_nodes(tmp_path, AGENT_BUSY_MODE="sleep", AGENT_BUSY_SECONDS="300")
    explain = "\n".join(f"=== {h}\n{d.explain()}" for h, d in done.items())
    busy_host = _busy_host(tmp_path / "run")
    assert done[busy_host].returncode == int(ExitCode.HANG_DETECTED), explain
    assert "rank 3 blocked in sleep_outside_collectives" in done[busy_host].stderr, explain
    other = "n1" if busy_host == "n2" else "n2"
    assert done[other].returncode == int(ExitCode.HANG_DETECTED), explain
    # one report for the job: the node that decided prints it, the other points to it
    reports = {h: d.stderr.count("--format html -o triage-report.html") for h, d in done.items()}
    assert sorted(reports.values()) == [0, 1], (reports, explain)
    follower = next(h for h, count in reports.items() if count == 0)
    assert f"triage[{follower}]: report printed by " in done[follower].stderr, explain
    for host, finished in done.items():
        assert all(line.startswith(f"triage[{host}]: ") for line in finished.stderr.splitlines()
                   if line.startswith("triage")), explain
