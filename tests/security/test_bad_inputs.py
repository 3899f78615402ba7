"""Table-driven bad input for every command: a one-line error, the right exit code, no traceback,
and every run under 20 s (a FIFO or a bomb that hangs triage fails by timeout).

Each row runs the real CLI in a subprocess. ``{d}`` in an argument is the directory of prepared
bad files (see ``bad_dir``); ``env`` adds environment variables.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
LIMIT_S = 60.0                  # a hang guard (a loaded 2-core machine), not a speed check
USAGE = 2


@dataclass(frozen=True)
class Case:
    id: str
    argv: tuple[str, ...]
    code: int = USAGE
    says: str = ""                                 # a word the error line must contain
    env: dict[str, str] = field(default_factory=dict)


def c(case_id: str, *argv: str, code: int = USAGE, says: str = "", env: dict[str, str] | None = None) -> Case:
    return Case(case_id, argv, code, says, env or {})


@pytest.fixture(scope="module")
def bad_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("bad-inputs")
    (d / "empty").write_bytes(b"")
    (d / "garbage").write_bytes(bytes(range(256)) * 4)
    (d / "nonutf8").write_bytes(b"\xff\xfe\x00bad\x80")
    (d / "badjson").write_text('{"a": ')
    (d / "deepjson").write_text("[" * 100000)
    (d / "nul.log").write_bytes(b"\0" * 4096)
    (d / "elf").write_bytes(Path("/bin/true").read_bytes())
    (d / "elfhead").write_bytes(b"\x7fELF\x02\x01\x01" + b"\0" * 9 + b"\x04\x00" + b"\0" * 200)
    (d / "elf32").write_bytes(b"\x7fELF\x01\x01\x01" + b"\0" * 100)
    (d / "emptydir").mkdir()
    os.mkfifo(d / "fifo")
    (d / "loop1").symlink_to(d / "loop2")
    (d / "loop2").symlink_to(d / "loop1")
    (d / "nan.yaml").write_text("hang_timeout: .nan\n")
    (d / "inf.yaml").write_text("hang_timeout: .inf\n")
    (d / "neg.yaml").write_text("kill_grace: -3\n")
    (d / "nonutf8.yaml").write_bytes(b"\xff\xfe: 1\n")
    (d / "list.yaml").write_text("- a\n")
    (d / "unknown.yaml").write_text("bogus_key: 1\n")
    (d / "badyaml.yaml").write_text("a: [1, 2\n")
    (d / "type.yaml").write_text("cores: maybe\n")
    (d / "host.yaml").write_text("host: ../../etc\n")
    (d / "jobid.yaml").write_text("job_id: a/b\n")
    (d / "deep.yaml").write_text("a: " + "[" * 5000 + "\n")
    (d / "big.yaml").write_text("# x\n" * 400_000)
    (d / "rundir").mkdir()
    (d / "rundir" / "run.json").write_text(json.dumps({"layout": "triage.run/1", "job_id": "x"}))
    return d


CASES: list[Case] = [
    # --- report (what the loaders accept; report-side findings are in test_report_side.py)
    c("report-missing", "report", "{d}/nope", says="no such file"),
    c("report-empty", "report", "{d}/empty", says="empty"),
    c("report-garbage", "report", "{d}/garbage", says="binary"),
    c("report-nonutf8", "report", "{d}/nonutf8"),
    c("report-emptydir", "report", "{d}/emptydir", says="empty directory"),
    c("report-loop", "report", "{d}/loop1"),
    c("report-badjson", "report", "{d}/badjson"),
    c("report-deepjson", "report", "{d}/deepjson"),
    c("report-elf", "report", "{d}/elf", says="binary"),
    c("report-nul", "report", "{d}/nul.log"),
    c("report-format", "report", "--format", "xml", "{d}/garbage", says="invalid choice"),
    c("report-noargs", "report"),
    c("report-unknown-flag", "report", "--frobnicate", "{d}/garbage"),
    # --- dump
    c("dump-nothing", "dump", says="nothing to dump"),
    c("dump-pid-0", "dump", "--pid", "0"),
    c("dump-pid-neg", "dump", "--pid", "-1"),
    c("dump-pid-text", "dump", "--pid", "abc"),
    c("dump-pid-huge", "dump", "--pid", "99999999999999999999"),
    c("dump-pid-float", "dump", "--pid", "1.5"),
    c("dump-pid-dead", "dump", "--pid", "999999999", says="no such process"),
    c("dump-match-paren", "dump", "--match", "(", says="regular expression"),
    c("dump-match-bracket", "dump", "--match", "[", says="regular expression"),
    c("dump-match-star", "dump", "--match", "*", says="regular expression"),
    c("dump-match-none", "dump", "--match", "no-such-process-xyz-123", says="no Python process matches"),
    c("dump-out-file", "dump", "--pid", "1", "--out", "{d}/garbage", says="not a directory"),
    c("dump-out-fifo", "dump", "--pid", "1", "--out", "{d}/fifo", says="not a directory"),
    c("dump-rundir-empty", "dump", "--run-dir", "{d}/emptydir", says="not a triage run directory"),
    c("dump-rundir-missing", "dump", "--run-dir", "{d}/nope", says="not a triage run directory"),
    c("dump-rundir-file", "dump", "{d}/garbage", says="not a triage run directory"),
    c("dump-rundir-nolive", "dump", "{d}/rundir", says="no running agent"),
    c("dump-wait-nan", "dump", "--pid", "1", "--wait", "nan", says="finite"),
    c("dump-wait-neg", "dump", "--pid", "1", "--wait", "-5", says="finite"),
    c("dump-ctimeout-neg", "dump", "--pid", "1", "--collector-timeout", "-1", says="finite"),
    c("dump-ctimeout-inf", "dump", "--pid", "1", "--collector-timeout", "inf", says="finite"),
    c("dump-strace-inf", "dump", "--pid", "1", "--strace-seconds", "inf", says="finite"),
    c("dump-gdb-choice", "dump", "--pid", "1", "--gdb", "sometimes", says="is not one of auto, always, never"),
    c("dump-both", "dump", "{d}/rundir", "--pid", "1"),
    # --- collect
    c("collect-nowhere", "collect", says="say where"),
    c("collect-both", "collect", "--job", "1", "--hosts", "a"),
    c("collect-host-empty", "collect", "--hosts", ","),
    c("collect-host-slash", "collect", "--hosts", "bad/host", says="invalid host"),
    c("collect-host-space", "collect", "--hosts", "a b", says="invalid host"),
    c("collect-host-dash", "collect", "--hosts=-oProxyCommand=x", says="invalid host"),
    c("collect-host-dotdot", "collect", "--hosts", "..", says="invalid host"),
    c("collect-host-nul", "collect", "--hosts", "a\x01b", says="invalid host"),
    c("collect-job-dotdot", "collect", "--job", "../../x", says="invalid SLURM job id"),
    c("collect-job-semicolon", "collect", "--job", "1;rm -rf /", says="invalid SLURM job id"),
    c("collect-job-letters", "collect", "--job", "abc", says="invalid SLURM job id"),
    c("collect-job-neg", "collect", "--job", "-5"),
    c("collect-fanout-0", "collect", "--hosts", "a", "--fanout", "0"),
    c("collect-timeout-nan", "collect", "--hosts", "a", "--timeout", "nan", says="finite"),
    c("collect-timeout-neg", "collect", "--hosts", "a", "--timeout", "-1", says="finite"),
    c("collect-timeout-inf", "collect", "--hosts", "a", "--timeout", "inf", says="finite"),
    c("collect-connect-nan", "collect", "--hosts", "a", "--connect-timeout", "nan", says="finite"),
    c("collect-strace-neg", "collect", "--hosts", "a", "--strace-seconds", "-2", says="finite"),
    c("collect-width-0", "collect", "--hosts", "a", "--width", "0", says="--width"),
    c("collect-width-neg", "collect", "--hosts", "a", "--width", "-3", says="--width"),
    c("collect-match-paren", "collect", "--hosts", "a", "--match", "(", says="regular expression"),
    c("collect-pids-text", "collect", "--hosts", "a", "--pids", "x,y"),
    c("collect-remote-empty", "collect", "--hosts", "a", "--remote-triage", "", says="empty"),
    c("collect-format", "collect", "--hosts", "a", "--format", "pdf", says="invalid choice"),
    c("collect-node-side-dead-pid", "collect", "--node-side", "--pids", "999999999", "--no-stream",
      says="no such process"),
    c("collect-node-side-pid-1", "collect", "--node-side", "--pids", "1", "--no-stream", env={"SUDO_UID": "0"},
      code=0),
    # --- postmortem
    c("pm-noargs", "postmortem"),
    c("pm-missing", "postmortem", "{d}/nope", says="no such file"),
    c("pm-empty", "postmortem", "{d}/empty", says="not an ELF"),
    c("pm-garbage", "postmortem", "{d}/garbage", says="not an ELF"),
    c("pm-exe", "postmortem", "{d}/elf", says="not a core"),
    c("pm-elfhead", "postmortem", "{d}/elfhead"),
    c("pm-elf32", "postmortem", "{d}/elf32", says="64-bit"),
    c("pm-dir", "postmortem", "{d}/emptydir", says="directory"),
    c("pm-fifo", "postmortem", "{d}/fifo", says="not a regular file"),
    c("pm-loop", "postmortem", "{d}/loop1"),
    c("pm-keep-file", "postmortem", "--keep", "{d}/garbage", "{d}/elf", says="not a directory"),
    c("pm-gdbt-nan", "postmortem", "--gdb-timeout", "nan", "{d}/elf", says="finite"),
    c("pm-gdbt-neg", "postmortem", "--gdb-timeout", "-1", "{d}/elf", says="finite"),
    c("pm-gdbt-zero", "postmortem", "--gdb-timeout", "0", "{d}/elf", says="finite"),
    c("pm-width-0", "postmortem", "--width", "0", "{d}/elf", says="--width"),
    c("pm-width-huge", "postmortem", "--width", "100000000", "{d}/elf", says="--width"),
    c("pm-rundir-empty", "postmortem", "--run-dir", "{d}/emptydir", "{d}/elf", says="not a triage run"),
    c("pm-dmesg-fifo", "postmortem", "--dmesg", "{d}/fifo", "{d}/elf", says="not a regular file"),
    c("pm-dmesg-missing", "postmortem", "--dmesg", "{d}/nope", "{d}/elf", says="cannot read"),
    c("pm-dmesg-dir", "postmortem", "--dmesg", "{d}/emptydir", "{d}/elf"),
    c("pm-format", "postmortem", "--format", "xml", "{d}/elf", says="invalid choice"),
    c("pm-output-dir", "postmortem", "-o", "{d}/emptydir", "{d}/elf", says="is a directory"),
    c("pm-many-bad", "postmortem", "{d}/empty", "{d}/garbage", "{d}/elf"),
    # --- launch (config, flags, environment)
    c("launch-nothing", "launch", says="nothing to launch"),
    c("launch-cfg-nan", "launch", "--config", "{d}/nan.yaml", "--", "true", says="finite"),
    c("launch-cfg-inf", "launch", "--config", "{d}/inf.yaml", "--", "true", says="finite"),
    c("launch-cfg-neg", "launch", "--config", "{d}/neg.yaml", "--", "true", says="negative"),
    c("launch-cfg-nonutf8", "launch", "--config", "{d}/nonutf8.yaml", "--", "true", says="UTF-8"),
    c("launch-cfg-list", "launch", "--config", "{d}/list.yaml", "--", "true", says="mapping"),
    c("launch-cfg-unknown", "launch", "--config", "{d}/unknown.yaml", "--", "true", says="unknown key"),
    c("launch-cfg-syntax", "launch", "--config", "{d}/badyaml.yaml", "--", "true", says="YAML"),
    c("launch-cfg-type", "launch", "--config", "{d}/type.yaml", "--", "true", says="bool"),
    c("launch-cfg-host", "launch", "--config", "{d}/host.yaml", "--", "true", says="not a valid name"),
    c("launch-cfg-jobid", "launch", "--config", "{d}/jobid.yaml", "--", "true", says="not a valid name"),
    c("launch-cfg-deep", "launch", "--config", "{d}/deep.yaml", "--", "true"),
    c("launch-cfg-big", "launch", "--config", "{d}/big.yaml", "--", "true", says="larger than"),
    c("launch-cfg-missing", "launch", "--config", "{d}/nope.yaml", "--", "true", says="not found"),
    c("launch-cfg-dir", "launch", "--config", "{d}/emptydir", "--", "true", says="not a regular file"),
    c("launch-cfg-fifo", "launch", "--config", "{d}/fifo", "--", "true", says="not a regular file"),
    c("launch-flag-nan", "launch", "--hang-timeout", "nan", "--", "true", says="finite"),
    c("launch-flag-neg", "launch", "--hang-timeout", "-5", "--", "true", says="negative"),
    c("launch-flag-interval-0", "launch", "--heartbeat-interval", "0", "--", "true", says="greater than 0"),
    c("launch-flag-host", "launch", "--host", "../../x", "--", "true", says="not a valid name"),
    c("launch-flag-jobid", "launch", "--job-id", "a/../../b", "--", "true", says="not a valid name"),
    c("launch-flag-choice", "launch", "--console", "loud", "--", "true", says="not one of"),
    c("launch-rundir-file", "launch", "--run-dir", "{d}/garbage", "--", "true", says="refusing to write"),
    c("launch-env-nan", "launch", "--", "true", env={"TRIAGE_HANG_TIMEOUT": "nan"}, says="TRIAGE_HANG_TIMEOUT"),
    c("launch-env-inf", "launch", "--", "true", env={"TRIAGE_HANG_TIMEOUT": "inf"}, says="finite"),
    c("launch-env-neg", "launch", "--", "true", env={"TRIAGE_KILL_GRACE": "-1"}, says="negative"),
    c("launch-env-text", "launch", "--", "true", env={"TRIAGE_HANG_TIMEOUT": "soon"}, says="not a valid float"),
    c("launch-env-host", "launch", "--", "true", env={"TRIAGE_HOST": "../../x"}, says="TRIAGE_HOST"),
    c("launch-env-jobid", "launch", "--", "true", env={"TRIAGE_JOB_ID": "../../x"}, says="TRIAGE_JOB_ID"),
    c("launch-env-tick-0", "launch", "--", "true", env={"TRIAGE_TICK_INTERVAL": "0"}, says="greater than 0"),
    c("launch-env-bool", "launch", "--", "true", env={"TRIAGE_CORES": "perhaps"}, says="not a valid bool"),
    # --- the top level
    c("top-unknown-command", "frobnicate"),
    c("top-unknown-flag", "--frobnicate"),
]


def test_the_table_is_large_and_covers_every_command() -> None:
    assert len(CASES) >= 100
    assert len({case.id for case in CASES}) == len(CASES)
    commands = {case.argv[0] for case in CASES if case.argv}
    assert {"report", "dump", "collect", "postmortem", "launch"} <= commands


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_bad_input(case: Case, bad_dir: Path, tmp_path: Path) -> None:
    argv = [arg.replace("{d}", str(bad_dir)) for arg in case.argv]
    env = {k: v for k, v in os.environ.items() if not k.startswith("TRIAGE_")}
    env.update(case.env)
    try:
        run = subprocess.run([sys.executable, "-m", "triage", *argv], capture_output=True, text=True,
                             timeout=LIMIT_S, cwd=tmp_path, env=env, stdin=subprocess.DEVNULL, check=False)
    except subprocess.TimeoutExpired:
        pytest.fail(f"{case.id}: no answer in {LIMIT_S:.0f} s")
    assert "Traceback" not in run.stderr + run.stdout, run.stderr
    assert run.returncode == case.code, (run.returncode, run.stderr[-600:])
    if case.code == 0:
        # the node side's run directory, kept by design under --no-stream (its JSON line names it): this test's own
        for said in re.finditer(r'"run_dir": "([^"]+)"', run.stdout):
            kept = Path(said.group(1))
            if kept.name.startswith("triage-collect-node-") and kept.parent == Path(tempfile.gettempdir()):
                shutil.rmtree(kept, ignore_errors=True)
        return
    errors = [line for line in run.stderr.splitlines() if "error:" in line]
    assert errors, run.stderr
    assert all(len(line) < 400 for line in errors)
    if case.says:
        assert any(case.says in line for line in errors), (case.says, errors)
