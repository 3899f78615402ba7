"""Python frames of a core or a live process with pystack, which runs nothing the target controls.

pystack (bloomberg/pystack) reads the interpreter's structures straight from the core's or the
process's memory; unlike gdb's ``py-bt`` it needs no ``python-gdb.py`` next to the target (pip
and conda interpreters have none), and it never loads code from where the target lives.

pystack runs in a child process (``python -I -m triage.collectors.pyframes core|remote ...``)
under a time bound: a crafted core that upsets its C++ reader kills the child, never triage.
The child prints one JSON document, schema ``triage.pyframes/1`` (read by triage.parsing.pyframes,
the one reader of that format); on failure it exits 1.
"""

from __future__ import annotations

import json
import sys
import time
from dataclasses import replace
from pathlib import Path

from triage.bundle import CollectorRecord, CollectorStatus
from triage.collectors.common import (
    DENIED_HINT,
    Target,
    gone,
    looks_denied,
    process_alive,
    process_state,
    record,
    resume_if_left_stopped,
    run_tool,
    write_private,
)
from triage.layout import BundlePaths, BundleRankPaths
from triage.options import CollectSettings
from triage.parsing.pyframes import PyFrames, parse_pyframes
from triage.schemas import PYFRAMES_SCHEMA as SCHEMA

NAME = "pystack"
OUTPUT_LIMIT = 8 * 1024 * 1024
INSTALL_HINT = "install it: `pip install pystack` (in the same environment as triage)"


def pystack_available() -> bool:
    try:
        import pystack  # noqa: F401  # lazy: an optional dependency, probed; only the child process uses it
    except ImportError:
        return False
    return True


def run_pystack(mode: str, target: str, executable: str | None = None, timeout: float = 60.0) -> PyFrames:
    """Run the child (``mode`` "core" with ``executable``, or "remote" on a pid); never raises."""
    if not pystack_available():
        return PyFrames({}, "pystack is not installed", missing=True)
    argv = [sys.executable, "-I", "-m", "triage.collectors.pyframes", mode, target]
    if executable:
        argv.append(executable)
    run = run_tool(argv, timeout, OUTPUT_LIMIT)
    text = run.stdout.decode("utf-8", "replace")
    if run.start_error:
        return PyFrames({}, run.start_error)
    if run.timed_out:
        return PyFrames({}, f"pystack did not finish in {timeout:.0f}s", timed_out=True, raw=text)
    frames = parse_pyframes(text, run.stderr_text, run.returncode)
    return replace(frames, denied=True) if frames.error and looks_denied(frames.error) else frames


def collect_pystack_live(target: Target, rank_out: Path, bundle: Path, options: CollectSettings,
                         why: str = "requested") -> CollectorRecord:
    """Python stacks of a live rank with ``pystack remote`` (when py-spy could not give them)."""
    started = time.monotonic()
    if target.pid is None or not process_alive(target.pid):
        return gone(NAME, target, started)
    if not pystack_available():
        return record(NAME, CollectorStatus.MISSING, target, started, error="pystack is not installed",
                      hint=INSTALL_HINT)
    before = process_state(target.pid)
    frames = run_pystack("remote", str(target.pid), timeout=max(options.collector_timeout, 30.0))
    if frames.timed_out:
        resume_if_left_stopped(target.pid, before)
    files: list[str] = []
    if frames.raw:
        path = BundleRankPaths(rank_out).pystack
        write_private(path, frames.raw, escape=True)
        files.append(BundlePaths(bundle).relative(path))
    if frames.timed_out:
        return record(NAME, CollectorStatus.TIMEOUT, target, started, files, error=frames.error)
    if frames.denied:
        return record(NAME, CollectorStatus.DENIED, target, started, files, error=frames.error, hint=DENIED_HINT)
    if frames.error:
        return record(NAME, CollectorStatus.FAILED, target, started, files, error=f"{frames.error} ({why})")
    return record(NAME, CollectorStatus.OK, target, started, files)


def _child(argv: list[str]) -> int:
    """The child: pystack on a core or a pid, JSON on stdout."""
    try:
        # lazy: pystack (and what it reads) loads in this child process only, never in triage's own
        from pystack import engine
        from pystack._version import __version__
    except ImportError as error:
        print(json.dumps({"schema": SCHEMA, "error": f"pystack is not installed: {error}"}))
        return 1
    try:
        if len(argv) >= 3 and argv[0] == "core":
            threads = engine.get_process_threads_for_core(Path(argv[1]), Path(argv[2]),
                                                          native_mode=engine.NativeReportingMode.OFF)
        elif len(argv) == 2 and argv[0] == "remote" and argv[1].isdigit():
            threads = engine.get_process_threads(int(argv[1]), stop_process=True,
                                                 native_mode=engine.NativeReportingMode.OFF)
        else:
            print(json.dumps({"schema": SCHEMA, "error": "usage: core CORE EXECUTABLE | remote PID"}))
            return 2
        out = []
        for thread in threads:
            frames = [{"file": f.code.filename, "line": f.code.location.lineno, "function": f.code.scope}
                      for f in thread.frames]
            out.append({"tid": thread.tid, "name": thread.name, "gil": bool(thread.holds_the_gil > 0),
                        "frames": frames[::-1]})
    except Exception as error:  # noqa: BLE001 - the child reports every failure as one line
        message = " ".join(str(error).split()) or type(error).__name__
        print(json.dumps({"schema": SCHEMA, "error": f"pystack: {message}"}))
        return 1
    pid = int(argv[1]) if argv[0] == "remote" else None
    print(json.dumps({"schema": SCHEMA, "tool": "pystack", "version": __version__, "pid": pid, "threads": out}))
    return 0


if __name__ == "__main__":
    sys.exit(_child(sys.argv[1:]))
