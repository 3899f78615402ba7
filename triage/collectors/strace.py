"""A bounded strace snippet of one rank: ``strace -f -tt -p PID`` for a few seconds and lines.

strace attaches to every thread, records system calls for ``strace_seconds`` (or until
``strace_max_lines`` lines), then detaches cleanly (SIGINT). The target keeps running while
traced (slower, not stopped). All ranks are traced at the same time, so the windows overlap.
"""

from __future__ import annotations

import contextlib
import signal
import subprocess
import threading
import time
from pathlib import Path
from typing import IO

from triage.bundle import CollectorRecord, CollectorStatus
from triage.collectors.common import (
    DENIED_HINT,
    Target,
    find_tool,
    gone,
    kill_group,
    looks_denied,
    missing,
    process_alive,
    record,
    write_private,
)
from triage.collectors.strace_redact import redact_strace
from triage.layout import BundlePaths, BundleRankPaths
from triage.options import CollectSettings

NAME = "strace"
_LINE_BYTES = 512


def _read_lines(stream: IO[bytes], lines: list[bytes], limit: int, full: threading.Event) -> None:
    for line in iter(stream.readline, b""):
        if len(lines) < limit:
            lines.append(line[:_LINE_BYTES] + (b"...\n" if len(line) > _LINE_BYTES else b""))
        else:
            full.set()
    stream.close()


def collect_strace(target: Target, rank_out: Path, bundle: Path, options: CollectSettings) -> CollectorRecord:
    started = time.monotonic()
    if options.strace_seconds <= 0:
        return record(NAME, CollectorStatus.SKIPPED, target, started, error="disabled (strace_seconds=0)")
    tool = find_tool("strace")
    if tool is None:
        return missing(NAME, "strace", target, started)
    if target.pid is None or not process_alive(target.pid):
        return gone(NAME, target, started)
    argv = [tool, "-f", "-tt", "-qq", "-s", "96", "-p", str(target.pid)]
    try:
        proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                stdin=subprocess.DEVNULL, start_new_session=True)
    except OSError as error:
        return record(NAME, CollectorStatus.FAILED, target, started, error=f"strace: {error}")
    lines: list[bytes] = []
    full = threading.Event()
    if not (proc.stderr is not None):
        raise RuntimeError("internal error: expected proc.stderr is not None")
    reader = threading.Thread(target=_read_lines, args=(proc.stderr, lines, options.strace_max_lines, full),
                              daemon=True)
    reader.start()
    deadline = started + options.strace_seconds
    while time.monotonic() < deadline and proc.poll() is None and not full.is_set():
        time.sleep(0.05)
    exited_early = proc.poll() is not None
    if not exited_early:
        kill_group(proc, signal.SIGINT)            # strace detaches from every thread on SIGINT
        try:
            proc.wait(timeout=3.0)
        except subprocess.TimeoutExpired:
            kill_group(proc)
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=3.0)
    reader.join(timeout=2.0)
    data = b"".join(lines)
    files: list[str] = []
    if data or not exited_early:
        path = BundleRankPaths(rank_out).strace
        write_private(path, redact_strace(data.decode("utf-8", "replace")))
        files.append(BundlePaths(bundle).relative(path))
    text = data.decode("utf-8", "replace")
    if exited_early and proc.returncode != 0:
        if looks_denied(text):
            return record(NAME, CollectorStatus.DENIED, target, started, files,
                          error=" ".join(text.split())[:300], hint=DENIED_HINT)
        return record(NAME, CollectorStatus.FAILED, target, started, files,
                      error=" ".join(text.split())[:300] or f"exit status {proc.returncode}")
    if full.is_set():
        return record(NAME, CollectorStatus.PARTIAL, target, started, files,
                      error=f"stopped at {options.strace_max_lines} lines")
    return record(NAME, CollectorStatus.OK, target, started, files)
