"""`triage launch` end to end with real torchrun/gloo jobs: tagging, run dir, launchers, set-up."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.helpers.launch import (
    HOST,
    TORCHRUN_MODULE,
    job_env,
    launch_argv,
    rank_dir,
    read_json,
    run_launch,
    torchrun,
)
from tests.helpers.paths import example, program
from tests.helpers.tagged import iter_records, reconstruct
from triage.agent.launch.envsetup import BOOTSTRAP_DIR


def _probes(output: bytes) -> dict[int, dict[str, object]]:
    found = {}
    for _host, rank, _whole, segment in iter_records(output):
        if segment.startswith(b"PROBE "):
            found[int(rank)] = json.loads(segment[6:])
    return found


def test_clean_job_is_tagged_and_kept(tmp_path: Path) -> None:
    run = tmp_path / "run"
    result = run_launch(launch_argv(run, torchrun(example("clean_job.py"), 2), quick_hang=False, host=HOST), None, run)
    assert result.returncode == 0, result.stderr
    console = result.stdout_bytes
    for rank in (0, 1):
        assert f"[{HOST}:{rank}] rank {rank}/2 step 4 sum 256\n".encode() in console
        own = (rank_dir(run, rank) / "output.log").read_bytes()
        assert own.startswith(f"rank {rank}/2 step 0".encode())
        assert reconstruct(console, HOST, str(rank)) == own
        assert reconstruct((run / HOST / "merged.log").read_bytes(), HOST, str(rank)) == own
    # every console line is a record of a rank or of the launcher
    assert {r for _h, r, _w, _s in iter_records(console)} == {"0", "1", "launcher"}
    assert len(list(iter_records(console))) == console.count(b"\n")
    assert b"Setting OMP_NUM_THREADS" in (run / HOST / "launcher.log").read_bytes()
    assert read_json(run / "run.json")["layout"] == "triage.run/1"
    node = read_json(run / HOST / "node.json")
    assert node["status"] == "exited" and node["exit_code"] == 0
    for rank in (0, 1):
        worker = read_json(rank_dir(run, rank) / "worker.json")
        assert worker["rank"] == rank and worker["local_rank"] == rank and worker["world_size"] == 2
        assert worker["control_socket"].startswith("@triage/")
        exit_info = read_json(rank_dir(run, rank) / "exit.json")
        assert exit_info["how"] == "exit" and exit_info["exit_code"] == 0 and exit_info["step"] == 5
        fr = read_json(rank_dir(run, rank) / "fr-exit.json")
        ops = [e["profiling_name"] for e in fr["entries"]]
        assert ops.count("gloo:all_reduce") == 5 and "gloo:all_gather" in ops
    assert (run.stat().st_mode & 0o777) == 0o700
    assert (rank_dir(run, 0) / "output.log").stat().st_mode & 0o777 == 0o600
    assert f"triage report {run}" in result.stderr


def test_python_m_torch_distributed_run(tmp_path: Path) -> None:
    run = tmp_path / "run"
    launcher = [*TORCHRUN_MODULE, "--standalone", "--nproc-per-node", "2", example("clean_job.py")]
    result = run_launch(launch_argv(run, launcher, quick_hang=False, host=HOST), None, run)
    assert result.returncode == 0, result.stderr
    assert sorted(p.name for p in (run / HOST / "ranks").iterdir()) == ["0", "1"]
    assert "[testhost:1] rank 1 done\n" in result.stdout


def test_a_rank_whose_arguments_name_torchrun_is_still_a_rank(tmp_path: Path) -> None:
    """Only the interpreter's script or -m module makes a process the launcher, never the program's
    arguments: before, a rank run as ``clean_job.py torchrun`` was taken for torchrun, got no agent, and
    its output went into launcher.log."""
    run = tmp_path / "run"
    result = run_launch(launch_argv(run, torchrun(example("clean_job.py"), 2, "torchrun"), quick_hang=False,
                                    host=HOST), None, run)
    assert result.returncode == 0, result.stderr
    for rank in (0, 1):
        assert read_json(rank_dir(run, rank) / "worker.json")["rank"] == rank
        assert f"rank {rank} done".encode() in (rank_dir(run, rank) / "output.log").read_bytes()
    assert read_json(run / HOST / "node.json")["exit_code"] == 0


def test_plain_multi_process_launcher(tmp_path: Path) -> None:
    run = tmp_path / "run"
    result = run_launch(launch_argv(run, [sys.executable, program("launch_multi.py"), "2", example("clean_job.py")], quick_hang=False, host=HOST),
                        None, run)
    assert result.returncode == 0, result.stderr
    assert "[testhost:launcher] launch_multi: workers exited with [0, 0]\n" in result.stdout
    assert "[testhost:0] rank 0 done\n" in result.stdout
    assert sorted(p.name for p in (run / HOST / "ranks").iterdir()) == ["0", "1"]


def test_slurm_procid_is_a_rank_with_generic_launchers(tmp_path: Path) -> None:
    run = tmp_path / "run"
    env = job_env(SLURM_PROCID="5")
    result = run_launch(launch_argv(run, [sys.executable, program("launch_env_probe.py")], quick_hang=False, host=HOST),
                        env, run)
    assert result.returncode == 0, result.stderr
    probes = _probes(result.stdout_bytes)
    assert probes[5]["rank"] is None              # SLURM_PROCID gave the rank, not RANK
    assert probes[5]["line_buffering"] is False   # triage's stdout is a pipe: buffering as without triage


def test_user_sitecustomize_still_runs(tmp_path: Path) -> None:
    user = tmp_path / "usersite"
    user.mkdir()
    (user / "sitecustomize.py").write_text(
        "import os, sys\nos.environ['USER_SITECUSTOMIZE_RAN'] = 'yes'\nprint('user sitecustomize ran')\n")
    run = tmp_path / "run"
    env = job_env(PYTHONPATH=str(user))
    result = run_launch(launch_argv(run, torchrun(program("launch_env_probe.py"), 2), quick_hang=False, host=HOST),
                        env, run)
    assert result.returncode == 0, result.stderr
    probes = _probes(result.stdout_bytes)
    assert probes[0]["user_sitecustomize"] == "yes"
    assert probes[1]["sitecustomize_file"] == str(user / "sitecustomize.py")
    assert probes[0]["triage_loaded"] is True and probes[0]["torch_loaded"] is False
    # its output went to the rank log (it ran after the redirection)
    assert (rank_dir(run, 1) / "output.log").read_bytes().startswith(b"user sitecustomize ran\n")


def test_noop_outside_triage(tmp_path: Path) -> None:
    code = "import sys, json; print(json.dumps(['triage.worker.agent' in sys.modules, sys.stdout.isatty()]))"
    for extra in ({"RANK": "0"}, {"RANK": "0", "TRIAGE_RUN_DIR": str(tmp_path / "x")},
                  {"TRIAGE_RUN_DIR": str(tmp_path / "x"), "TRIAGE_RANK_VARS": "RANK"}):
        env = job_env(PYTHONPATH=str(BOOTSTRAP_DIR), **extra)
        out = subprocess.run([sys.executable, "-c", code], check=False, capture_output=True, env=env, timeout=30)
        assert out.returncode == 0
        assert json.loads(out.stdout) == [False, False]
    assert not (tmp_path / "x").exists()


def test_cores_nccl_debug_and_line_buffering(tmp_path: Path) -> None:
    run = tmp_path / "run"
    result = run_launch(launch_argv(run, torchrun(program("launch_env_probe.py"), 2), "--cores", "--nccl-debug", "--line-buffered", "always", quick_hang=False, host=HOST),
                        None, run)
    assert result.returncode == 0, result.stderr
    assert "triage: cores: core size limit" in result.stderr
    probes = _probes(result.stdout_bytes)
    import resource

    hard = resource.getrlimit(resource.RLIMIT_CORE)[1]
    for rank in (0, 1):
        assert probes[rank]["core_soft"] == hard
        assert probes[rank]["nccl_debug"] == "INFO" and probes[rank]["nccl_subsys"] == "INIT,COLL"
        assert probes[rank]["nccl_file"] == str(rank_dir(run, rank) / "nccl.log")
        assert probes[rank]["line_buffering"] is True


def test_exception_is_recorded_in_exit_json(tmp_path: Path) -> None:
    run = tmp_path / "run"
    result = run_launch(launch_argv(run, torchrun(program("launch_env_probe.py"), 2), quick_hang=False, host=HOST),
                        job_env(PROBE_RAISE="1"), run)
    assert result.returncode == 1
    exit1 = read_json(rank_dir(run, 1) / "exit.json")
    assert exit1["how"] == "exception" and exit1["exit_code"] == 1
    assert exit1["exception"]["type"] == "ValueError"
    assert exit1["exception"]["message"] == "probe failure on purpose"
    assert "launch_env_probe.py" in exit1["exception"]["where"]
    assert read_json(rank_dir(run, 0) / "exit.json")["how"] == "exit"
    assert "[testhost:1] ValueError: probe failure on purpose\n" in result.stdout


def test_config_file_and_bad_values_from_the_cli(tmp_path: Path) -> None:
    (tmp_path / "triage.yaml").write_text("heartbeat_interval: 0.25\nconsole: launcher\n")
    run = tmp_path / "run"
    result = run_launch(launch_argv(run, [sys.executable, program("launch_signals.py"), "0"], quick_hang=False, host=HOST),
                        job_env(TRIAGE_HEARTBEAT_INTERVAL="3", TRIAGE_TICK_INTERVAL="0.2"), run)
    assert result.returncode == 0, result.stderr
    options = read_json(run / HOST / "node.json")["options"]
    assert options["heartbeat_interval"] == 0.25 and options["tick_interval"] == 0.2
    assert options["console"] == "launcher"
    (tmp_path / "triage.yaml").write_text("hearbeat_interval: 1\n")
    bad = run_launch(launch_argv(tmp_path / "run2", [sys.executable, "-c", "pass"], quick_hang=False, host=HOST),
                     None, tmp_path / "run2")
    assert bad.returncode == 2
    assert bad.stderr.splitlines()[0] == (
        f"triage: error: {tmp_path / 'triage.yaml'}: unknown key 'hearbeat_interval'")
    assert "Traceback" not in bad.stderr
    os.unlink(tmp_path / "triage.yaml")
    bad = run_launch(launch_argv(tmp_path / "run3", [sys.executable, "-c", "pass"], quick_hang=False, host=HOST),
                     job_env(TRIAGE_KILL_GRACE="soon"), tmp_path / "run3")
    assert bad.returncode == 2 and "TRIAGE_KILL_GRACE: 'soon' is not a valid float" in bad.stderr


def test_missing_launcher_is_a_usage_error(tmp_path: Path) -> None:
    result = run_launch(launch_argv(tmp_path / "run", ["no-such-launcher-xyz"], quick_hang=False, host=HOST),
                        None, tmp_path / "run")
    assert result.returncode == 2
    assert "launcher not found: 'no-such-launcher-xyz'" in result.stderr
    assert "Traceback" not in result.stderr


def test_workers_are_line_buffered_when_triage_writes_to_a_terminal(tmp_path: Path) -> None:
    import pty

    master, slave = pty.openpty()
    run = tmp_path / "run"
    argv = launch_argv(run, [sys.executable, program("launch_multi.py"), "1", program("launch_env_probe.py")],
                       quick_hang=False, host=HOST)
    proc = subprocess.Popen(argv, stdout=slave, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL,
                            env=job_env())
    os.close(slave)
    output = b""
    try:
        while True:
            try:
                chunk = os.read(master, 65536)
            except OSError:
                break                      # EIO: the terminal's other side is closed
            if not chunk:
                break
            output += chunk
    finally:
        proc.wait(timeout=60)
        os.close(master)
    assert proc.returncode == 0
    probes = _probes(output.replace(b"\r\n", b"\n"))
    assert probes[0]["line_buffering"] is True


def test_elastic_restart_appends_to_the_rank_logs(tmp_path: Path) -> None:
    run = tmp_path / "run"
    result = run_launch(launch_argv(run, torchrun(program("launch_env_probe.py"), 2, before=("--max-restarts", "1")), quick_hang=False, host=HOST),
                        job_env(PROBE_FAIL_FIRST="1"), run)
    assert result.returncode == 0, result.stderr
    both = 0
    for rank in (0, 1):
        log = (rank_dir(run, rank) / "output.log").read_bytes()
        # the first attempt's rank that exits first gets torchrun to SIGTERM the other, maybe before it printed
        assert b'"restart": "1"' in log and log.count(b"PROBE ") in (1, 2)
        if log.count(b"PROBE ") == 2:
            assert log.index(b'"restart": "0"') < log.index(b'"restart": "1"')     # appended, in order
            both += 1
        assert read_json(rank_dir(run, rank) / "worker.json")["torchelastic_restart_count"] == 1
        assert read_json(rank_dir(run, rank) / "exit.json")["exit_code"] == 0
    assert both >= 1              # the rank that failed first printed in both attempts, kept in one log


def test_console_launcher_only_keeps_ranks_in_the_files(tmp_path: Path) -> None:
    run = tmp_path / "run"
    launcher = [sys.executable, program("launch_multi.py"), "2", program("launch_env_probe.py")]
    result = run_launch(launch_argv(run, launcher, "--console", "launcher", quick_hang=False, host=HOST), None, run)
    assert result.returncode == 0, result.stderr
    assert "[testhost:launcher] launch_multi: starting 2 workers\n" in result.stdout
    assert "PROBE" not in result.stdout
    merged = (run / HOST / "merged.log").read_bytes()
    assert set(_probes(merged)) == {0, 1}
    quiet = run_launch(launch_argv(tmp_path / "run2", launcher, "--console", "none", quick_hang=False, host=HOST),
                       None, tmp_path / "run2")
    assert quiet.returncode == 0 and quiet.stdout == ""
