"""Attacks on `triage report` whose fixes are in the lead's files (triage/load, triage/report,
triage/cli/report.py). Each test performs the attack for real and asserts the safe outcome."""

from __future__ import annotations

import json
import os
import resource
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
LIMIT_S = 20.0
# A memory ceiling for the child: a report that sizes a structure by a number from the input
# fails with MemoryError (exit 70) long before it can swap the test machine.
MEMORY_LIMIT = 2 << 30


def _limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


def _report(*args: str, stdout: int | None = subprocess.PIPE) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TRIAGE_")}
    try:
        return subprocess.run([sys.executable, "-m", "triage", "report", *args], stdout=stdout,
                              stderr=subprocess.PIPE, text=True, timeout=LIMIT_S, cwd=REPO, env=env,
                              stdin=subprocess.DEVNULL, check=False, preexec_fn=_limit_memory)
    except subprocess.TimeoutExpired:
        pytest.fail(f"triage report {' '.join(args)}: no answer in {LIMIT_S:.0f} s")


def _no_crash(run: subprocess.CompletedProcess[str]) -> None:
    assert run.returncode in (0, 1, 2), (run.returncode, run.stderr[-500:])
    assert "Traceback" not in run.stderr and "internal error" not in run.stderr, run.stderr[-500:]


def _run_dir(root: Path, worker: dict[str, object]) -> Path:
    root.mkdir(parents=True)
    (root / "run.json").write_text(json.dumps({"layout": "triage.run/1", "job_id": "j", "hosts": ["h"]}))
    rank = root / "h" / "ranks" / "0"
    rank.mkdir(parents=True)
    (rank / "worker.json").write_text(json.dumps(worker))
    (rank / "output.log").write_text("hello\n")
    return root


def test_log_naming_a_huge_rank(tmp_path: Path) -> None:
    log = tmp_path / "job.log"
    log.write_text("[rank0]: step 1\n[rank99999999]: RuntimeError: boom\n")
    _no_crash(_report(str(log)))


def test_worker_json_with_a_huge_world_size(tmp_path: Path) -> None:
    run_dir = _run_dir(tmp_path / "run", {"rank": 0, "local_rank": 0, "world_size": 100_000_000, "pid": 1,
                                          "host": "h"})
    _no_crash(_report(str(run_dir)))


def test_escape_sequences_in_a_pg_name_do_not_reach_the_terminal(tmp_path: Path) -> None:
    source = REPO / "tests" / "golden" / "stuck_outside" / "run"
    run_dir = tmp_path / "run"
    shutil.copytree(source, run_dir)
    evil = "\x1b]0;pwned\x07\x1b[2J\x1b[31mtp_group"
    for fr in run_dir.rglob("fr.json"):
        data = json.loads(fr.read_text())
        text = json.dumps(data)
        assert '"default_pg"' in text
        fr.write_text(text.replace('"default_pg"', json.dumps(evil)))
    run = _report(str(run_dir), "--width", "120")
    _no_crash(run)
    assert "\x1b" not in run.stdout and "\x07" not in run.stdout


def test_report_width_zero_is_refused(tmp_path: Path) -> None:
    log = tmp_path / "job.log"
    log.write_text("[rank0]: RuntimeError: boom\n")
    run = _report(str(log), "--width", "0")
    assert run.returncode == 2 and "--width" in run.stderr, run.stderr


def test_report_to_a_closed_stdout(tmp_path: Path) -> None:
    log = tmp_path / "job.log"
    log.write_text("[rank0]: RuntimeError: boom\n" * 50)
    read_end, write_end = os.pipe()
    os.close(read_end)                                # nobody will ever read: EPIPE on the first write
    try:
        run = _report(str(log), stdout=write_end)
    finally:
        os.close(write_end)
    assert run.returncode in (1, 2), (run.returncode, run.stderr)
    assert "internal error" not in run.stderr and "Traceback" not in run.stderr


def test_report_to_a_full_stdout(tmp_path: Path) -> None:
    log = tmp_path / "job.log"
    log.write_text("[rank0]: RuntimeError: boom\n")
    with open("/dev/full", "w") as full:
        run = _report(str(log), stdout=full.fileno())
    assert run.returncode == 2 and "internal error" not in run.stderr, (run.returncode, run.stderr)


def test_fifo_given_to_report(tmp_path: Path) -> None:
    fifo = tmp_path / "job.log"
    os.mkfifo(fifo)
    run = _report(str(fifo))
    assert run.returncode == 2 and "Traceback" not in run.stderr, run.stderr


def test_fifo_worker_json_in_a_run_dir(tmp_path: Path) -> None:
    run_dir = _run_dir(tmp_path / "run", {"rank": 0})
    worker = run_dir / "h" / "ranks" / "0" / "worker.json"
    worker.unlink()
    os.mkfifo(worker)
    _no_crash(_report(str(run_dir)))
