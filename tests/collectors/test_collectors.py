"""Collectors on real plain processes: complete bundles, real ptrace denial, redaction, permissions."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.processes import kill_tree, python_program, running_program, triage_cmd
from triage.bundle import CollectorStatus, Trigger, read_manifest
from triage.collectors.common import Target, find_tool, process_state
from triage.collectors.discover import find_ranks
from triage.collectors.gdbhelper import python_gdb_helper
from triage.collectors.node_bundle import JobInfo, collect_node_bundle
from triage.collectors.redact import REDACTED, redact_argv, redact_env, redact_text
from triage.options import CollectSettings
from triage.parsing.stacks import parse_pyspy_json

RANK_NODE = {"proc", "fr", "stacks", "fr-torch", "pyspy", "gdb", "strace"}
NODE = {"dmesg", "facts", "nvidia-smi", "gpu"}


def statuses(bundle: Path) -> dict[tuple[str, int | None], CollectorStatus]:
    return {(c.name, c.rank): c.status for c in read_manifest(bundle).collectors}


def env_with(**extra: str) -> dict[str, str]:
    return {**os.environ, **extra}


def test_bundle_of_a_plain_process_has_every_collector(tmp_path: Path) -> None:
    env = env_with(RANK="0", HF_TOKEN="s3cr3t-token-value", DB_PASSWORD="pw-value-123")
    with running_program(python_program("collect_target.py", "both", "--password=argv-pw-456"), env=env) as proc:
        bundle = collect_node_bundle(
            JobInfo("job1", started=None), [Target(rank=0, pid=proc.pid)], Trigger.MANUAL, "test",
            CollectSettings(gdb="always", strace_seconds=1.0), tmp_path / "bundles")
    found = statuses(bundle)
    assert {n for n, r in found if r == 0} == RANK_NODE
    assert {n for n, r in found if r is None} == NODE
    for name in ("proc", "pyspy", "gdb", "strace"):
        assert found[(name, 0)] == CollectorStatus.OK, name
    threads = parse_pyspy_json(json.loads((bundle / "rank-0/pyspy.json").read_text()))
    functions = {f.function for t in threads for f in t.frames}
    assert {"sleep_forever", "spin_forever"} <= functions
    assert "sleep_forever" in (bundle / "rank-0/pyspy.txt").read_text()
    gdb_text = (bundle / "rank-0/gdb.txt").read_text()
    assert "Thread" in gdb_text
    if python_gdb_helper(os.path.realpath(sys.executable)):   # CPython's gdb helper: Python frames too
        assert "sleep_forever" in gdb_text and "Traceback (most recent call first)" in gdb_text
    proc_json = json.loads((bundle / "rank-0/proc.json").read_text())
    assert proc_json["state"] in ("R", "S") and proc_json["num_threads"] >= 2
    assert all("wchan" in t for t in proc_json["threads"])
    manifest = read_manifest(bundle)
    assert manifest.finished is not None and manifest.ranks[0].pid is not None
    # secrets: nowhere in the bundle, but the names are kept
    for path in bundle.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            for secret in (b"s3cr3t-token-value", b"pw-value-123", b"argv-pw-456"):
                assert secret not in data, f"{secret!r} leaked into {path}"
    assert proc_json["environ"]["HF_TOKEN"] == REDACTED
    assert "--password=<redacted>" in proc_json["cmdline"]
    # owner-only: dirs 0700, files 0600
    for path in [bundle, *bundle.rglob("*")]:
        mode = stat.S_IMODE(path.stat().st_mode)
        assert mode == (0o700 if path.is_dir() else 0o600), f"{path} has mode {oct(mode)}"


def test_ptrace_denied_for_real_when_another_tracer_is_attached(tmp_path: Path) -> None:
    strace = find_tool("strace")
    assert strace is not None
    with running_program(python_program("collect_target.py", "sleep")) as proc:
        tracer = subprocess.Popen([strace, "-p", str(proc.pid), "-o", os.devnull], stderr=subprocess.PIPE)
        try:
            assert tracer.stderr is not None
            assert b"attached" in tracer.stderr.readline()
            bundle = collect_node_bundle(JobInfo("job1"), [Target(rank=0, pid=proc.pid)], Trigger.MANUAL, "t",
                                         CollectSettings(strace_seconds=1.0), tmp_path)
        finally:
            kill_tree(tracer.pid)
    records = {c.name: c for c in read_manifest(bundle).collectors if c.rank == 0}
    for name in ("pyspy", "gdb", "strace"):
        assert records[name].status == CollectorStatus.DENIED, (name, records[name])
        assert records[name].hint and "ptrace_scope" in records[name].hint and "SYS_PTRACE" in records[name].hint
    assert records["proc"].status == CollectorStatus.OK


def test_timeout_is_recorded_and_the_tool_is_killed(tmp_path: Path) -> None:
    with running_program(python_program("collect_target.py", "sleep")) as proc:
        bundle = collect_node_bundle(JobInfo("job1"), [Target(rank=0, pid=proc.pid)], Trigger.MANUAL, "t",
                                     CollectSettings(collector_timeout=0.001, strace_seconds=0, gdb="never"),
                                     tmp_path)
        assert proc.poll() is None               # the target was detached and is still running
        assert process_state(proc.pid) not in ("T", "t")
    record = next(c for c in read_manifest(bundle).collectors if c.name == "pyspy")
    assert record.status == CollectorStatus.TIMEOUT
    assert record.hint and "--collector-timeout" in record.hint
    # no py-spy left behind: the suite's fixture fails any test that leaves a child process


def test_size_and_line_bounds_give_partial(tmp_path: Path) -> None:
    with running_program(python_program("collect_target.py", "syscalls")) as proc:
        bundle = collect_node_bundle(JobInfo("job1"), [Target(rank=0, pid=proc.pid)], Trigger.MANUAL, "t",
                                     CollectSettings(max_bytes=300, strace_seconds=5.0, strace_max_lines=50),
                                     tmp_path)
    records = {c.name: c for c in read_manifest(bundle).collectors if c.rank == 0}
    assert records["pyspy"].status == CollectorStatus.PARTIAL
    assert (bundle / "rank-0/pyspy.json").stat().st_size <= 300
    assert records["strace"].status == CollectorStatus.PARTIAL
    assert records["strace"].duration_s < 4.0          # stopped at the line bound, not the window
    assert len((bundle / "rank-0/strace.txt").read_text().splitlines()) == 50


def _environment_without_tools(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """triage looks for py-spy in its own environment's scripts directory before PATH (so a pipx or
    unactivated venv install finds it); here that directory is an empty one, as in an environment
    where py-spy is not installed. (tests/hang/test_dump.py does the same with a real venv.)"""
    empty = tmp_path / "env-bin"
    empty.mkdir()
    monkeypatch.setattr("triage.collectors.executable.own_environment_dirs", lambda: [empty])


def test_missing_tools_really_absent_from_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bare = tmp_path / "bin"
    bare.mkdir()
    for tool in ("dmesg",):
        (bare / tool).symlink_to(f"/usr/bin/{tool}")
    monkeypatch.setenv("PATH", str(bare))
    _environment_without_tools(monkeypatch, tmp_path)
    for tool in ("py-spy", "gdb", "strace"):
        assert find_tool(tool) is None
    with running_program(python_program("collect_target.py", "sleep")) as proc:
        bundle = collect_node_bundle(JobInfo("job1"), [Target(rank=0, pid=proc.pid)], Trigger.MANUAL, "t",
                                     CollectSettings(), tmp_path / "b")
    records = {c.name: c for c in read_manifest(bundle).collectors if c.rank == 0}
    for name, word in (("pyspy", "pip install py-spy"), ("gdb", "apt-get install gdb"),
                       ("strace", "apt-get install strace")):
        assert records[name].status == CollectorStatus.MISSING, name
        assert records[name].hint and word in records[name].hint
    assert records["proc"].status == CollectorStatus.OK
    assert (bundle / "rank-0/proc.json").is_file() and (bundle / "node/dmesg.txt").is_file()


def test_gdb_runs_automatically_when_pyspy_is_missing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bare = tmp_path / "bin"
    bare.mkdir()
    (bare / "gdb").symlink_to("/usr/bin/gdb")
    monkeypatch.setenv("PATH", str(bare))
    _environment_without_tools(monkeypatch, tmp_path)
    with running_program(python_program("collect_target.py", "sleep")) as proc:
        bundle = collect_node_bundle(JobInfo("job1"), [Target(rank=0, pid=proc.pid)], Trigger.MANUAL, "t",
                                     CollectSettings(strace_seconds=0), tmp_path / "b")
    records = {c.name: c for c in read_manifest(bundle).collectors if c.rank == 0}
    assert records["pyspy"].status == CollectorStatus.MISSING
    assert records["gdb"].status == CollectorStatus.OK
    text = (bundle / "rank-0/gdb.txt").read_text()
    assert text.startswith("# gdb (py-spy missing)") and "clock_nanosleep" in text


def test_dump_match_finds_ranks_by_environment(tmp_path: Path) -> None:
    # unique on this machine, not only in this session: two test runs at once (CI's two variants) each have a
    # tmp_path of this same name, and --match must find this run's target alone
    tag = f"tag-{os.getpid()}-{tmp_path.name}"
    argv = [*python_program("collect_target.py", "sleep"), tag]
    with running_program(argv, env=env_with(RANK="5", LOCAL_RANK="1")) as proc:
        found = find_ranks(tag)
        assert [(t.rank, t.pid, t.local_rank) for t in found] == [(5, proc.pid, 1)]
        out = tmp_path / "dump"
        result = subprocess.run([*triage_cmd("dump", f"--match={tag}", "--out", str(out),
                                             "--strace-seconds", "0.5")],
                                capture_output=True, text=True, timeout=60, check=False)
    assert result.returncode == 0, result.stderr
    bundle = Path(result.stdout.strip().splitlines()[-1])
    assert bundle.parent.parent.parent == out
    assert f"next: triage report {out}" in result.stderr
    assert statuses(bundle)[("pyspy", 5)] == CollectorStatus.OK
    assert stat.S_IMODE(out.stat().st_mode) == 0o700
    assert stat.S_IMODE(bundle.parent.parent.stat().st_mode) == 0o700


def test_dump_pid_errors_on_a_dead_pid() -> None:
    result = subprocess.run(triage_cmd("dump", "--pid", "999999999"), capture_output=True, text=True, timeout=30, check=False)
    assert result.returncode == 2
    assert "no such process: 999999999" in result.stderr and "Traceback" not in result.stderr


def test_redaction_forms() -> None:
    assert redact_text("export API_KEY=abc123 other=1") == "export API_KEY=<redacted> other=1"
    assert redact_text('{"aws_secret_access_key": "xyz"}') == '{"aws_secret_access_key": "<redacted>"}'
    assert redact_text("train.py --hf-token tok123 --lr 1") == "train.py --hf-token <redacted> --lr 1"
    assert redact_env({"WANDB_API_KEY": "k", "PATH": "/bin"}) == {"WANDB_API_KEY": REDACTED, "PATH": "/bin"}
    assert redact_argv(["x", "--password", "p", "--db-password=q", "--epochs", "3"]) == [
        "x", "--password", REDACTED, "--db-password=<redacted>", "--epochs", "3"]
    assert redact_text("MASTER_ADDR=10.0.0.1 RANK=3") == "MASTER_ADDR=10.0.0.1 RANK=3"


def test_python_program_is_this_interpreter() -> None:
    assert python_program("collect_target.py")[0] == sys.executable
