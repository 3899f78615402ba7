"""Helpers for the launch tests: run `triage launch` for real and read its run directory."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import psutil
from support import EXAMPLES, PROGRAMS, triage_cmd

HOST = "testhost"
TORCHRUN = [sys.executable, "-m", "torch.distributed.run"]


def torchrun_cmd(nproc: int, *args: str, before: Sequence[str] = ()) -> list[str]:
    """`torchrun` as its console script (so triage recognises it); ``--standalone`` lets it pick
    a free port itself (no race with other jobs); ``before`` are more torchrun options."""
    exe = Path(sys.executable).with_name("torchrun")
    return [str(exe), "--standalone", "--nproc-per-node", str(nproc), *before, *args]


def example(name: str) -> str:
    return str(EXAMPLES / name)


def program(name: str) -> str:
    return str(PROGRAMS / name)


def launch_argv(run_dir: Path, launcher: Sequence[str], *options: str) -> list[str]:
    return triage_cmd("launch", "--run-dir", str(run_dir), "--host", HOST, *options, "--", *launcher)


def clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TRIAGE_")}
    env.update(extra)
    return env


def run_launch(run_dir: Path, launcher: Sequence[str], *options: str, timeout: float = 120,
               env: dict[str, str] | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(launch_argv(run_dir, launcher, *options), check=False, capture_output=True, timeout=timeout,
                          env=env or clean_env(), cwd=cwd, stdin=subprocess.DEVNULL)


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def rank_dir(run_dir: Path, rank: int, host: str = HOST) -> Path:
    return run_dir / host / "ranks" / str(rank)


def read_json(path: Path) -> Any:
    return json.loads(path.read_text())


def wait_for(predicate: Any, timeout: float, what: str, poll: float = 0.1) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(poll)
    raise AssertionError(f"timed out after {timeout}s waiting for {what}")


def kill_pids(pids: Sequence[int]) -> None:
    """Kill processes by pid (and their descendants) and wait until they are gone."""
    procs: list[psutil.Process] = []
    for pid in pids:
        with contextlib.suppress(psutil.Error):
            proc = psutil.Process(pid)
            procs.append(proc)
            procs.extend(proc.children(recursive=True))
    for proc in procs:
        with contextlib.suppress(psutil.Error):
            proc.send_signal(signal.SIGKILL)
    psutil.wait_procs(procs, timeout=10)
