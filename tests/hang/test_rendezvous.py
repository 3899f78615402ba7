"""torchrun's own rendezvous waiting for a node that never comes: a real `torchrun --nnodes 2
--rdzv-backend c10d` on one node under `triage launch --hang-timeout 3`. The agent reports an
init hang (how many nodes, how long, the endpoint) and does not stop the job: torchrun's own join
timeout ends it. `triage report` on the run directory says the same."""

from __future__ import annotations

import json
import re
import socket
import subprocess

import pytest

from tests.helpers.launch import TIMEOUT_S, TORCHRUN, job_env, launch_argv, run_launch
from tests.helpers.paths import program
from tests.helpers.processes import kill_tree, triage_cmd
from triage.agent.hang.rdzv_watch import in_rendezvous, launcher_args
from triage.bundle import read_manifest
from triage.exitcodes import ExitCode

pytestmark = [pytest.mark.timeout(240), pytest.mark.slow]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_launcher_args_read_torchruns_rendezvous_options() -> None:
    args = launcher_args(["torchrun", "--nnodes=2:4", "--rdzv_backend", "c10d", "--rdzv-endpoint", "h:29400",
                          "--rdzv-id", "job7", "--rdzv-conf", "join_timeout=90,last_call_timeout=5", "train.py"])
    assert (args.nnodes_min, args.backend, args.endpoint, args.run_id, args.join_timeout) == (
        2, "c10d", "h:29400", "job7", 90.0)
    default = launcher_args(["torchrun", "--nnodes", "x", "--rdzv-conf", "join_timeout=nan", "t.py"])
    assert default.nnodes_min is None and default.join_timeout == 600.0


def test_in_rendezvous_reads_the_launchers_main_thread() -> None:
    frame = {"name": "DynamicRendezvousHandler.next_rendezvous", "line": 1171,
             "filename": "/x/site-packages/torch/distributed/elastic/rendezvous/dynamic_rendezvous.py"}
    assert in_rendezvous([{"thread_id": 1, "thread_name": "MainThread", "frames": [frame], "owns_gil": False,
                           "active": False}])
    other = {**frame, "name": "main", "filename": "/x/run.py"}
    assert not in_rendezvous([{"thread_id": 1, "thread_name": "MainThread", "frames": [other]}])


def test_a_node_waiting_for_a_node_that_never_comes_is_reported_not_stopped(tmp_path) -> None:  # type: ignore[no-untyped-def]
    run_dir = tmp_path / "run"
    port = _free_port()
    job = [TORCHRUN, "--nnodes", "2", "--nproc-per-node", "1", "--rdzv-backend", "c10d", "--rdzv-endpoint",
           f"127.0.0.1:{port}", "--rdzv-id", "lonely", "--rdzv-conf", "join_timeout=20",
           str(program("agent_init_hang.py"))]
    done = run_launch(launch_argv(run_dir, job), job_env(), run_dir, timeout=150)
    line = done.line("triage: hang suspected: init hang: torchrun's rendezvous")
    assert re.match(rf"triage: hang suspected: init hang: torchrun's rendezvous \(c10d at 127.0.0.1:{port}\) has "
                    r"waited (\d+) s for its 2 nodes \(--nnodes\); no rank has started; triage's agent is up on 1 of "
                    rf"them, 1 did not start, are still queued or cannot reach 127.0.0.1:{port}$",
                    line), line
    assert done.line("triage: not stopping the job: a node may still be on its way")
    assert "stopping the job (SIGTERM" not in done.stderr
    # torchrun's own join timeout ended it, not triage
    assert done.returncode not in (0, int(ExitCode.HANG_DETECTED)), done.explain()
    assert "RendezvousTimeoutError" in next(run_dir.glob("*/launcher.log")).read_text()
    bundle = done.bundle()
    manifest = read_manifest(bundle)
    node = json.loads(next(run_dir.glob("*/node.json")).read_text())
    assert manifest.extra["hang_source"] == "rendezvous" and manifest.extra["verdict_kind"] == "init_hang"
    init = manifest.extra["init"]
    assert (init["nodes_joined"], init["nodes_wanted"], init["store"], init["key"]) == (
        1, 2, f"127.0.0.1:{port}", "lonely")
    # reported within --hang-timeout + 2 s of the launcher's start, plus torchrun's own start-up
    # (importing torch: seconds on a loaded 2-core machine)
    assert init["seconds"] >= TIMEOUT_S and manifest.created - node["started"] <= TIMEOUT_S + 2 + 15

    report = subprocess.run(triage_cmd("report", str(run_dir), "--format", "json"), capture_output=True, text=True,
                            timeout=120, check=False)
    data = json.loads(report.stdout)
    summary = data["verdict"]["summary"]
    assert data["verdict"]["kind"] == "init_hang", summary
    assert summary.startswith(f"INIT HANG: torchrun's rendezvous at 127.0.0.1:{port} (id lonely) has waited ")
    assert "for its 2 nodes (--nnodes); no rank has started; triage's agent is up on 1 of them" in summary
    assert f"cannot reach 127.0.0.1:{port}" in summary and "joined" not in summary
    assert any("join timeout" in step for step in data["next_steps"])
    assert done.line("triage: verdict: ") == f"triage: verdict: {summary}"


def _plain(text: str) -> str:
    return re.sub(r"^triage\[[^\]]+\]: ", "triage: ", text, flags=re.MULTILINE)


def test_a_node_that_comes_late_lets_the_job_finish_and_is_a_finding(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """No harm: the second node starts after the agent reported the wait; the job runs to its end."""
    run_dir = tmp_path / "run"
    port = _free_port()
    job = [TORCHRUN, "--nnodes", "2", "--nproc-per-node", "1", "--rdzv-backend", "c10d", "--rdzv-endpoint",
           f"127.0.0.1:{port}", "--rdzv-id", "late", "--rdzv-conf", "join_timeout=120",
           str(program("agent_init_hang.py"))]
    env = job_env(AGENT_INIT_RANK="99")
    agent = subprocess.Popen(launch_argv(run_dir, job), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             env=env, start_new_session=True, cwd=str(tmp_path))
    late = None
    try:
        assert agent.stderr is not None
        seen = []
        for line in agent.stderr:
            line = _plain(line)        # --nnodes 2: the lines name their host (triage[vm]: ...)
            seen.append(line)
            if line.startswith("triage: not stopping the job"):
                break
        assert any(s.startswith("triage: hang suspected: init hang: torchrun's rendezvous") for s in seen), seen
        late = subprocess.Popen(job, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env,
                                start_new_session=True, cwd=str(tmp_path))
        late_out, _ = late.communicate(timeout=150)
        _out, err = agent.communicate(timeout=150)
    finally:
        for proc in (agent, late):
            if proc is not None:
                kill_tree(proc.pid)
                proc.wait(timeout=10)
    stderr = "".join(seen) + _plain(err)
    assert agent.returncode == 0, stderr + late_out
    assert late.returncode == 0, late_out
    assert re.search(r"^triage: slow start: torchrun's rendezvous waited \d+ s for its nodes; then they came and "
                     r"the job went on$", stderr, re.MULTILINE), stderr
    assert "triage: finding: slow start: torchrun's rendezvous waited" in stderr
    assert "stopping the job (SIGTERM" not in stderr
    local = next(run_dir.glob("*/ranks/*/output.log")).read_text()
    assert re.search(r"rank \d: last line", local), local


def test_no_report_while_every_wanted_node_has_its_agent_here(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Both nodes' agents are up (a slow rendezvous, not a missing node): nothing to report."""
    from triage.agent.hang.rdzv_watch import RendezvousWatch

    run_dir = tmp_path / "run"
    argv = ["torchrun", "--nnodes", "2", "--rdzv-endpoint", "h:1", "t.py"]
    (run_dir / "n1").mkdir(parents=True)
    (run_dir / "n1" / "node.json").write_text(json.dumps({"launcher_pid": 1, "argv": argv}))
    watch = RendezvousWatch(3.0, run_dir / "n1", run_dir, started=100.0)
    watch._seen_in, watch._first_seen, watch._probed_at = True, 100.0, 1e12    # the probe saw it there
    found = watch.tick((), 104.0)
    assert found is not None and found.init is not None and (found.init.nodes_joined, found.init.nodes_wanted) == (1, 2)
    (run_dir / "n2").mkdir()
    (run_dir / "n2" / "node.json").write_text(json.dumps({"launcher_pid": 2, "argv": argv}))
    again = RendezvousWatch(3.0, run_dir / "n1", run_dir, started=100.0)
    again._seen_in, again._first_seen, again._probed_at = True, 100.0, 1e12
    assert again.tick((), 104.0) is None
