"""triage.remote.collect, the login-node side of `triage collect` as one library call, on a real SSH
connection attempt that is refused (no node answers: the record says so, the command exits with the
remote-failure code); and the report it shows, which is `triage report`'s on the same directory.
The SLURM and SSH cluster runs are tests/cluster."""

from __future__ import annotations

import io
import json
import os
import subprocess
from contextlib import redirect_stdout
from pathlib import Path

from tests.helpers.paths import REPO
from tests.helpers.processes import triage_cmd
from triage.cli.report import show_report
from triage.exitcodes import ExitCode
from triage.remote.collect import CollectPlan, collect
from triage.remote.ssh import SshOptions
from triage.report import build_report

GOLDEN = Path(__file__).resolve().parent.parent / "golden"


def _refusing_ssh(tmp_path: Path) -> Path:
    """An ssh config that sends every host to a local port nothing listens on."""
    config = tmp_path / "ssh_config"
    config.write_text("Host *\n  HostName 127.0.0.1\n  Port 9\n")
    return config


def test_no_node_answering_is_recorded_and_nothing_is_reported(tmp_path: Path) -> None:
    run_dir = tmp_path / "collected"
    plan = CollectPlan(job_id=None, hosts=("nodeA",), run_dir=run_dir, timeout_s=60.0, progress=False,
                       ssh=SshOptions(config_file=_refusing_ssh(tmp_path), connect_timeout=30.0))
    said: list[str] = []
    collected = collect(plan, said.append)
    [outcome] = collected.outcomes
    assert outcome.node == "nodeA" and not outcome.ok and outcome.error
    assert collected.report_dirs == (run_dir,)
    record = json.loads((run_dir / "collect.json").read_text())
    assert record["missing"] == ["nodeA"] and record["nodes"]["nodeA"]["ok"] is False
    assert json.loads((run_dir / "run.json").read_text())["hosts"] == ["nodeA"]


def test_the_command_exits_with_the_remote_failure_code(tmp_path: Path) -> None:
    result = subprocess.run(triage_cmd("collect", "--hosts", "nodeA", "--no-progress", "--run-dir",
                                       str(tmp_path / "out"), "--ssh-config", str(_refusing_ssh(tmp_path))),
                            capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == int(ExitCode.REMOTE_FAILURE), result.stderr
    assert "triage: nodeA: no bundle:" in result.stderr and "no node could be collected" in result.stderr
    assert "Traceback" not in result.stderr


def test_collect_shows_the_report_as_triage_report_does(tmp_path: Path) -> None:
    run = str(GOLDEN / "crash" / "run")
    shown = io.StringIO()
    with redirect_stdout(shown):
        code = show_report(build_report([run]), [run], "text", 100)
    direct = subprocess.run(triage_cmd("report", "--width", "100", run), capture_output=True, text=True,
                            timeout=120, check=False)
    assert code == direct.returncode == int(ExitCode.PROBLEM_FOUND)
    assert shown.getvalue() == direct.stdout


def _node_side_on_a_gone_pid(tmp_path: Path, pid: int, *options: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TRIAGE_", "XDG_RUNTIME_DIR"))}
    return subprocess.run(triage_cmd("collect", "--node-side", "--pids", str(pid), *options), capture_output=True,
                          text=True, env={**env, "TMPDIR": str(tmp_path), "PYTHONPATH": str(REPO)}, cwd=tmp_path,
                          timeout=120, check=False)


def test_a_node_side_collect_of_no_process_leaves_no_temporary_directory(tmp_path: Path) -> None:
    """`triage collect --node-side --pids PID` of a pid that is gone: the error, and its private
    temporary directory (made before the pid is looked at) is removed, not left in TMPDIR empty."""
    run = _node_side_on_a_gone_pid(tmp_path, 999999999, "--no-stream")
    assert run.returncode == 2 and "no such process: 999999999" in run.stderr, run.stderr
    assert list(tmp_path.glob("triage-collect-*")) == []


def test_a_process_that_has_ended_streamed_or_not(tmp_path: Path) -> None:
    ended = subprocess.Popen(["true"])
    ended.wait()
    for options in (("--no-stream",), ()):
        run = _node_side_on_a_gone_pid(tmp_path, ended.pid, *options)
        assert run.returncode == 2 and f"no such process: {ended.pid}" in run.stderr, run.stderr
        assert run.stdout == ""
        assert list(tmp_path.glob("triage-collect-*")) == []
