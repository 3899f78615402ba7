"""Run gdb in batch mode on a core (or any target) under a hard timeout.

gdb runs in its own session; on timeout the whole process group is killed and reaped, so a
wedged gdb (huge core, broken debug info, debuginfod) never hangs triage.
"""

from __future__ import annotations

import os
import re
import shutil
import stat
from dataclasses import dataclass
from pathlib import Path

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


def python_gdb_helper(executable: str | None, mapped: tuple[str, ...] = ()) -> str | None:
    """CPython's gdb extension (``python3.X-gdb.py``/``libpython3.X.so.1.0-gdb.py``) for this interpreter,
    but only one that triage may run as root: see :func:`helper_problem`.

    The executable and the mapped files are named by the target (``/proc/PID/exe``, a core's
    NT_FILE note), whose owner controls them: a helper found next to them is gdb Python code
    that gdb would run with triage's rights. So a helper is used only if root owns it and every
    directory above it, none of them group- or world-writable, and it is for the same Python
    version. Everything else gives no py-bt (pystack gives the Python frames instead).
    """
    for candidate in helper_candidates(executable, mapped):
        if helper_problem(candidate, _python_version(executable, mapped)) is None:
            return str(candidate)
    return None


def helper_candidates(executable: str | None, mapped: tuple[str, ...] = ()) -> list[Path]:
    """Where gdb's auto-load would look for a helper (next to the binary or libpython, or under
    /usr/share/gdb/auto-load), and, as CPython installs it, next to the binary in its bin dir."""
    candidates: list[Path] = []
    for path in [executable, *[m for m in mapped if re.search(r"/libpython3\.\d+", m)]]:
        if not path or "\0" in path:
            continue
        real = Path(os.path.realpath(path))
        for base in (real, Path(path)):
            for candidate in (base.with_name(base.name + "-gdb.py"),
                              Path("/usr/share/gdb/auto-load") / (str(base).lstrip("/") + "-gdb.py")):
                if candidate not in candidates:
                    candidates.append(candidate)
    return candidates


def helper_problem(candidate: Path, version: str | None) -> str | None:
    """Why ``candidate`` must not be sourced into gdb, or None when it is trusted."""
    if version is not None and f"python{version}" not in candidate.name:
        return f"{candidate}: not for python{version}"
    try:
        info = os.lstat(candidate)
    except OSError as error:
        return f"{candidate}: {error.strerror or error}"
    if stat.S_ISLNK(info.st_mode):
        real = Path(os.path.realpath(candidate))
        problem = _trusted_path(candidate.parent)
        return problem or helper_problem(real, version)
    if not stat.S_ISREG(info.st_mode):
        return f"{candidate}: not a regular file"
    if info.st_uid != 0:
        return f"{candidate}: not owned by root (uid {info.st_uid})"
    if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return f"{candidate}: group- or world-writable"
    return _trusted_path(candidate.parent)


def _trusted_path(directory: Path) -> str | None:
    """None when ``directory`` and every directory above it is root's and not group/world-writable."""
    probe = Path(os.path.realpath(directory))
    while True:
        try:
            info = os.stat(probe)
        except OSError as error:
            return f"{probe}: {error.strerror or error}"
        if info.st_uid != 0:
            return f"{probe}: not owned by root (uid {info.st_uid})"
        if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
            return f"{probe}: group- or world-writable"
        if probe == probe.parent:
            return None
        probe = probe.parent


def _python_version(executable: str | None, mapped: tuple[str, ...]) -> str | None:
    for path in [executable or "", *mapped]:
        match = re.search(r"python(3\.\d+)", os.path.basename(os.path.realpath(path)) if path else "")
        if match:
            return match.group(1)
    return None


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
