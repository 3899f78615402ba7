"""Run gdb in batch mode on a core (or any target) under a hard timeout.

gdb runs in its own session; on timeout the whole process group is killed and reaped, so a
wedged gdb (huge core, broken debug info, debuginfod) never hangs triage.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass

from triage.collectors.common import run_tool
from triage.parsing.gdb import gdb_bt_commands

DEFAULT_TIMEOUT_S = 120.0
OUTPUT_LIMIT = 32 * 1024 * 1024


@dataclass(frozen=True)
class GdbRun:
    argv: tuple[str, ...]
    text: str                      # stdout then stderr, as gdb printed them
    returncode: int | None
    timed_out: bool
    duration_s: float
    py_helper: str | None = None


def find_gdb() -> str | None:
    """gdb on PATH (a real look-up: no fallback locations)."""
    return shutil.which("gdb")


def gdb_batch_argv(gdb: str, executable: str | None, target: str, py_helper: str | None = None,
                   core: bool = True) -> list[str]:
    # Nothing the target names is ever loaded as code: no auto-loaded scripts of any kind, no
    # libthread_db from the target's own library directory (only the system's).
    argv = [gdb, "-nx", "-batch", "-iex", "set debuginfod enabled off", "-iex", "set auto-load off",
            "-iex", "set auto-load python-scripts off", "-iex", "set libthread-db-search-path $sdir"]
    for command in gdb_bt_commands(py_helper):
        argv += ["-ex", command]
    if core:
        argv += [executable, target] if executable else ["-c", target]
    else:
        argv += ["-p", target]
    return argv


def run_gdb(argv: list[str], timeout: float = DEFAULT_TIMEOUT_S, py_helper: str | None = None) -> GdbRun:
    env = dict(os.environ, LC_ALL="C", TERM="dumb")
    env.pop("DEBUGINFOD_URLS", None)
    run = run_tool(argv, timeout, OUTPUT_LIMIT, env=env)
    if run.start_error:
        raise OSError(run.start_error)
    text = run.stdout.decode("utf-8", "replace") + run.stderr.decode("utf-8", "replace")
    return GdbRun(tuple(argv), text, run.returncode, run.timed_out, run.duration_s, py_helper)
