"""gdb ``thread apply all bt`` of a live rank (on request, and automatically when py-spy failed).

gdb stops every thread of the target while it walks the stacks and detaches at the end
(``-batch``). Loading the symbols of large libraries (libtorch) is most of the time spent
(about 8 s per torch rank here), so gdb gets at least 60 s and runs at most one per CPU.
"""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

from triage.bundle import CollectorRecord, CollectorStatus
from triage.collectors.common import (
    DENIED_HINT,
    Target,
    find_tool,
    gone,
    looks_denied,
    missing,
    process_alive,
    process_state,
    record,
    resume_if_left_stopped,
    run_tool,
    tool_error,
    write_private,
)
from triage.collectors.gdbhelper import python_gdb_helper
from triage.collectors.gdbrun import gdb_batch_argv
from triage.layout import BundlePaths, BundleRankPaths
from triage.options import CollectSettings

NAME = "gdb"
MIN_TIMEOUT_S = 60.0
# gdb is CPU-bound while it loads symbols (~8 s for a torch rank): run at most one per CPU so
# that parallel ranks finish one by one instead of all hitting the time bound together.
_SLOTS = threading.BoundedSemaphore(max(1, os.cpu_count() or 1))
_ATTACH_DENIED = ("ptrace: operation not permitted", "could not attach to process")


def gdb_argv(tool: str, pid: int) -> list[str]:
    """The same batch commands as for a core (triage.collectors.gdbrun), attached to a live pid:
    shared-library table, all threads' backtraces, and Python frames (py-bt) when CPython's gdb
    helper for this interpreter is installed. Parsed by triage.parsing.gdb."""
    try:
        executable: str | None = os.readlink(f"/proc/{pid}/exe")
    except OSError:
        executable = None
    helper = python_gdb_helper(executable)
    return gdb_batch_argv(tool, None, str(pid), helper, core=False)


def collect_gdb(target: Target, rank_out: Path, bundle: Path, options: CollectSettings,
                why: str = "requested") -> CollectorRecord:
    started = time.monotonic()
    tool = find_tool("gdb")
    if tool is None:
        return missing(NAME, "gdb", target, started)
    if target.pid is None or not process_alive(target.pid):
        return gone(NAME, target, started)
    with _SLOTS:
        if not process_alive(target.pid):
            return gone(NAME, target, started)
        before = process_state(target.pid)
        run = run_tool(gdb_argv(tool, target.pid), max(options.collector_timeout, MIN_TIMEOUT_S),
                       options.max_bytes)
        if run.timed_out:
            resume_if_left_stopped(target.pid, before)
    files: list[str] = []
    text = run.stdout.decode("utf-8", "replace")
    if text or run.stderr:
        path = BundleRankPaths(rank_out).gdb
        write_private(path, f"# gdb ({why})\n" + text + "\n# stderr\n" + run.stderr_text + "\n", escape=True)
        files.append(BundlePaths(bundle).relative(path))
    lowered = (run.stderr_text + text).lower()
    if run.start_error:
        return record(NAME, CollectorStatus.FAILED, target, started, files, error=run.start_error)
    if run.timed_out:
        return record(NAME, CollectorStatus.TIMEOUT, target, started, files,
                      error=f"gdb did not finish in {run.duration_s:.1f}s",
                      hint="raise --collector-timeout (symbol loading of big libraries is slow)")
    if any(marker in lowered for marker in _ATTACH_DENIED) or (
            "thread " not in text.lower() and looks_denied(lowered)):
        return record(NAME, CollectorStatus.DENIED, target, started, files,
                      error=tool_error(run), hint=DENIED_HINT)
    if "Thread " not in text and " in " not in text:
        return record(NAME, CollectorStatus.FAILED, target, started, files, error=tool_error(run))
    if run.truncated:
        return record(NAME, CollectorStatus.PARTIAL, target, started, files, error="output cut at the size bound")
    return record(NAME, CollectorStatus.OK, target, started, files)
