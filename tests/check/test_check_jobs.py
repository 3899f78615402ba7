"""`triage check` on real torchrun gloo jobs on this machine (one or two "nodes" sharing the host)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.helpers.processes import kill_tree, triage_cmd

TORCHRUN = str(Path(sys.executable).with_name("torchrun"))


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _check(*args: str, timeout: float = 150) -> subprocess.CompletedProcess[str]:
    return subprocess.run(triage_cmd("check", *args), capture_output=True, text=True, timeout=timeout, check=False)


def _start(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(triage_cmd("check", *args), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)


def _finish(proc: subprocess.Popen[str], timeout: float) -> tuple[str, str]:
    try:
        out, err = proc.communicate(timeout=timeout)
    finally:
        kill_tree(proc.pid)
    return out, err


def test_single_node_four_ranks_gloo_is_ok(tmp_path: Path) -> None:
    result = _check("--check-dir", str(tmp_path / "c"), "--timeout", "100", "--",
                    TORCHRUN, "--standalone", "--nproc-per-node", "4")
    assert result.returncode == 0, result.stdout + result.stderr
    first = result.stdout.splitlines()[0]
    assert first.startswith("OK: 1 node, 4 ranks, all collectives and links fine; gloo "), result.stdout
    assert first.endswith("B/s")
    ranks = sorted((tmp_path / "c" / "ranks").glob("rank-*.json"))
    assert len(ranks) == 4
    record = json.loads(ranks[1].read_text())
    assert record["finished"] and record["steps"]["store"]["ok"] and record["steps"]["ring/gloo"]["ok"]
    assert record["steps"]["bandwidth/gloo"]["busbw_gbps"] > 0
    assert "interfaces" in record["steps"]["facts"] and record["steps"]["facts"]["gpus"] == 0
    verdict = json.loads((tmp_path / "c" / "verdict.json").read_text())
    assert verdict["status"] == "ok" and verdict["headline"] == first


def test_json_format_static_rendezvous(tmp_path: Path) -> None:
    port = _free_port()
    result = _check("--format", "json", "--run-dir", str(tmp_path), "--timeout", "100", "--", TORCHRUN,
                    "--nnodes", "1", "--nproc-per-node", "2", "--master-addr", "127.0.0.1", "--master-port", str(port))
    assert result.returncode == 0, result.stdout + result.stderr
    document = json.loads(result.stdout)
    assert document["status"] == "ok" and document["exit_code"] == 0 and document["lead"] is True
    assert document["headline"].startswith("OK: 1 node, 2 ranks")
    assert document["check_dir"] == str(tmp_path / "check")
    assert [n["ranks"] for n in document["nodes"]] == [[0, 1]]
    assert document["nodes"][0]["interface"] == "lo"
    node = json.loads(next((tmp_path / "check" / "nodes").glob("*.json")).read_text())
    assert node["probe"]["reached"] is True and node["probe"]["target"] == f"127.0.0.1:{port}"


def test_node_with_the_wrong_master_port_is_named(tmp_path: Path) -> None:
    good, wrong = _free_port(), _free_port()
    common = ["--check-dir", str(tmp_path / "c"), "--timeout", "60", "--", TORCHRUN, "--nnodes", "2",
              "--nproc-per-node", "2", "--master-addr", "127.0.0.1"]
    began = time.monotonic()
    lead = _start(*common, "--node-rank", "0", "--master-port", str(good))
    other = _start(*common, "--node-rank", "1", "--master-port", str(wrong))
    out, err = _finish(lead, 90)
    other_out, _ = _finish(other, 30)
    took = time.monotonic() - began
    host = socket.gethostname().split(".")[0]
    expected = (f"{host} (node 1) cannot reach the master port 127.0.0.1:{wrong} (connection refused) from lo: "
                f"ranks 2-3 never joined")
    assert lead.returncode == 1, out + err
    assert out.splitlines()[0] == expected
    assert "ranks 0-1 never started: the rendezvous waits for every node" in out
    assert other.returncode == 1 and other_out.splitlines()[0] == expected      # the follower prints the lead's verdict
    assert took < 60 + 10


def test_a_killed_rank_is_named_before_the_collateral(tmp_path: Path) -> None:
    check_dir = tmp_path / "c"
    proc = _start("--check-dir", str(check_dir), "--timeout", "100", "--", TORCHRUN, "--standalone",
                  "--nproc-per-node", "3")
    try:
        victim = check_dir / "ranks" / "rank-2.json"
        deadline = time.monotonic() + 60
        while not victim.exists():
            assert time.monotonic() < deadline and proc.poll() is None, "rank 2 never started"
            time.sleep(0.02)
        pid = json.loads(victim.read_text())["pid"]
        os.kill(pid, signal.SIGKILL)
        out, err = _finish(proc, 120)
    finally:
        kill_tree(proc.pid)
    assert proc.returncode == 1, out + err
    headline = out.splitlines()[0]
    assert headline.startswith(f"rank 2 on {socket.gethostname().split('.')[0]} died (killed or crashed) in step"), out


def test_a_node_that_never_starts_ends_at_the_timeout(tmp_path: Path) -> None:
    began = time.monotonic()
    result = _check("--check-dir", str(tmp_path / "c"), "--timeout", "20", "--", TORCHRUN, "--nnodes", "2",
                    "--nproc-per-node", "1", "--node-rank", "0", "--master-addr", "127.0.0.1",
                    "--master-port", str(_free_port()))
    took = time.monotonic() - began
    assert result.returncode == 1, result.stdout + result.stderr
    assert result.stdout.splitlines()[0].startswith("no rank started: only 1 of 2 expected nodes ran the check")
    assert took < 20 + 8      # + interpreter start-up; the check itself stops at the deadline


@pytest.mark.parametrize(("args", "message"), [
    ([], "triage: error: no launcher given: put it after --"),
    (["--"], "triage: error: no launcher given: put it after --"),
    (["--", "no-such-launcher-xyz"], "triage: error: launcher 'no-such-launcher-xyz' not found"),
    (["--timeout", "0", "--", "torchrun"], "triage: error: --timeout '0': must be a positive"),
    (["--timeout", "-3", "--", "torchrun"], "triage: error: --timeout '-3': must be a positive"),
    (["--timeout", "nan", "--", "torchrun"], "triage: error: --timeout 'nan': must be a positive"),
    (["--", TORCHRUN, "--nproc-per-node", "2", "train.py"], "triage: error: 'train.py': triage check supplies"),
])
def test_bad_input_is_one_line_and_exit_2(args: list[str], message: str, tmp_path: Path) -> None:
    result = _check("--check-dir", str(tmp_path / "c"), *args, timeout=60)
    assert result.returncode == 2
    assert result.stderr.splitlines()[0].startswith(message), result.stderr
    assert "Traceback" not in result.stderr and result.stdout == ""
    assert not (tmp_path / "c").exists()


def test_a_check_dir_with_an_earlier_verdict_is_refused(tmp_path: Path) -> None:
    (tmp_path / "verdict.json").write_text("{}")
    result = _check("--check-dir", str(tmp_path), "--", TORCHRUN, "--standalone", timeout=60)
    assert result.returncode == 2
    assert result.stderr.startswith(f"triage: error: {tmp_path}: holds the verdict of an earlier check")


def test_sigterm_stops_the_check_and_its_launcher(tmp_path: Path) -> None:
    check_dir = tmp_path / "c"
    proc = _start("--check-dir", str(check_dir), "--timeout", "100", "--", TORCHRUN, "--nnodes", "2",
                  "--nproc-per-node", "1", "--node-rank", "0", "--master-addr", "127.0.0.1",
                  "--master-port", str(_free_port()))
    try:
        deadline = time.monotonic() + 60
        launcher = None
        while launcher is None:
            assert time.monotonic() < deadline and proc.poll() is None, "the launcher never started"
            for path in check_dir.glob("nodes/*.json"):
                launcher = json.loads(path.read_text()).get("launcher_pid")
            time.sleep(0.1)
        time.sleep(1)
        began = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        _out, err = _finish(proc, 30)
        took = time.monotonic() - began
    finally:
        kill_tree(proc.pid)
    assert proc.returncode == 130, err
    assert "triage: interrupted" in err and "Traceback" not in err
    assert not (check_dir / "verdict.json").exists()
    assert took < 15
    with pytest.raises(ProcessLookupError):
        os.kill(launcher, 0)


def test_a_gloo_socket_ifname_that_names_no_interface_is_named(tmp_path: Path) -> None:
    env = {**os.environ, "GLOO_SOCKET_IFNAME": "nosuch0"}
    result = subprocess.run(triage_cmd("check", "--check-dir", str(tmp_path / "c"), "--timeout", "100", "--",
                                       TORCHRUN, "--standalone", "--nproc-per-node", "2"),
                            capture_output=True, text=True, timeout=150, check=False, env=env)
    assert result.returncode == 1, result.stdout + result.stderr
    host = socket.gethostname().split(".")[0]
    assert result.stdout.startswith(f"{host}: GLOO_SOCKET_IFNAME=nosuch0 names no interface of this node (it has ")
    assert "Unable to find address for: nosuch0 on ranks 0-1" in result.stdout     # the error itself follows


def test_a_report_on_a_run_dir_with_a_check_says_the_cluster_checked_fine(tmp_path: Path) -> None:
    """`triage check --run-dir RUN` next to a run that hung: the report puts the hang on the job."""
    run = tmp_path / "run"
    shutil.copytree(Path(__file__).resolve().parents[1] / "golden" / "stuck_outside" / "run", run)
    result = _check("--run-dir", str(run), "--timeout", "100", "--", TORCHRUN, "--standalone", "--nproc-per-node", "2")
    assert result.returncode == 0, result.stdout + result.stderr
    report = subprocess.run(triage_cmd("report", str(run), "--format", "json"), capture_output=True, text=True,
                            timeout=60, check=False)
    data = json.loads(report.stdout)
    assert data["verdict"]["kind"] == "stuck_outside_collective"          # the check is not a host of the run
    assert data["extra"]["cluster_check"]["status"] == "ok"
    assert any(f["kind"] == "cluster_check" and "checked fine" in f["detail"] for f in data["findings"])
    text = subprocess.run(triage_cmd("report", str(run), "--width", "100"), capture_output=True, text=True,
                          timeout=60, check=False).stdout
    assert "Cluster check: OK: 1 node, 2 ranks" in text
