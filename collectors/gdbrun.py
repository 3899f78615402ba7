"""Run gdb in batch mode on a core (or any target) under a hard timeout.

gdb runs in its own session; on timeout the whole process group is killed and reaped, so a
wedged gdb (huge core, broken debug info, debuginfod) never hangs triage.
"""

from __future__ import annotations

import os
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

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


def python_gdb_helper(executable: str | None, mapped: tuple[str, ...] = ()) -> str | None:
    """CPython's gdb extension (``python3.X-gdb.py``/``libpython3.X.so.1.0-gdb.py``) for this interpreter.

    Looked for where gdb's auto-load would find it (next to the binary or libpython, or under
    /usr/share/gdb/auto-load) and, as CPython installs it, next to the binary in its bin dir.
    A helper for another Python version is never used (py-bt would print garbage).
    """
    candidates: list[Path] = []
    for path in [executable, *[m for m in mapped if re.search(r"/libpython3\.\d+", m)]]:
        if not path:
            continue
        real = Path(os.path.realpath(path))
        for base in {real, Path(path)}:
            candidates.append(base.with_name(base.name + "-gdb.py"))
            candidates.append(Path("/usr/share/gdb/auto-load") / (str(base).lstrip("/") + "-gdb.py"))
    version = _python_version(executable, mapped)
    for candidate in candidates:
        if candidate.is_file() and (version is None or f"python{version}" in candidate.name):
            return str(candidate)
    return None


def _python_version(executable: str | None, mapped: tuple[str, ...]) -> str | None:
    for path in [executable or "", *mapped]:
        match = re.search(r"python(3\.\d+)", os.path.basename(os.path.realpath(path)) if path else "")
        if match:
            return match.group(1)
    return None


def gdb_batch_argv(gdb: str, executable: str | None, target: str, py_helper: str | None = None,
                   core: bool = True) -> list[str]:
    argv = [gdb, "-nx", "-batch", "-iex", "set debuginfod enabled off", "-iex", "set auto-load python-scripts off"]
    for command in gdb_bt_commands(py_helper):
        argv += ["-ex", command]
    if core:
        argv += [executable, target] if executable else ["-c", target]
    else:
        argv += ["-p", target]
    return argv


def run_gdb(argv: list[str], timeout: float = DEFAULT_TIMEOUT_S, py_helper: str | None = None) -> GdbRun:
    from triage.collectors.common import run_tool

    env = dict(os.environ, LC_ALL="C", TERM="dumb")
    env.pop("DEBUGINFOD_URLS", None)
    run = run_tool(argv, timeout, OUTPUT_LIMIT, env=env)
    if run.start_error:
        raise OSError(run.start_error)
    text = run.stdout.decode("utf-8", "replace") + run.stderr.decode("utf-8", "replace")
    return GdbRun(tuple(argv), text, run.returncode, run.timed_out, run.duration_s, py_helper)
