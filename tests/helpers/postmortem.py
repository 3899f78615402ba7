"""Real crashing programs and their real cores, made in tmp dirs and deleted at the end.

RLIMIT_CORE is raised only for the crashing children (preexec). core_pattern is never touched:
it is ``core`` on the test machines, so a core lands in the child's cwd as ``core`` or
``core.PID`` (kernel.core_uses_pid).
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from tests.helpers.paths import REPO

CRASH_TIMEOUT_S = 60.0


@dataclass(frozen=True)
class Crash:
    core: Path
    pid: int
    returncode: int
    output: str


def _unlimited_core() -> None:
    os.setsid()
    resource.setrlimit(resource.RLIMIT_CORE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))


def core_pattern_is_relative_core() -> bool:
    try:
        return Path("/proc/sys/kernel/core_pattern").read_text().strip() == "core"
    except OSError:
        return False


def find_core(cwd: Path, pid: int) -> Path | None:
    for name in (f"core.{pid}", "core"):
        if (cwd / name).is_file():
            return cwd / name
    return None


def crash(argv: list[str], cwd: Path, env: dict[str, str] | None = None) -> Crash:
    """Run ``argv`` in ``cwd`` with cores enabled; it must die by a signal and leave a core."""
    cwd.mkdir(parents=True, exist_ok=True)
    proc = subprocess.Popen(argv, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            stdin=subprocess.DEVNULL, preexec_fn=_unlimited_core,  # noqa: PLW1509
                            env={**os.environ, **(env or {})})
    try:
        out, _ = proc.communicate(timeout=CRASH_TIMEOUT_S)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode < 0, f"{argv} did not die by a signal: rc={proc.returncode} {out!r}"
    core = find_core(cwd, proc.pid)
    assert core is not None, f"no core in {cwd} for {argv} (rc {proc.returncode})"
    return Crash(core, proc.pid, proc.returncode, out.decode("utf-8", "replace"))


def triage_run(*args: str, env: dict[str, str] | None = None, timeout: float = 120.0) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "triage", *args], capture_output=True, text=True, timeout=timeout,
                          cwd=REPO, env={**os.environ, **(env or {})}, check=False)


def report_json(*args: str, env: dict[str, str] | None = None) -> tuple[subprocess.CompletedProcess[str], dict]:
    run = triage_run("postmortem", *args, "--format", "json", env=env)
    assert "Traceback" not in run.stderr, run.stderr
    data = json.loads(run.stdout) if run.stdout.strip() else {}
    return run, data
