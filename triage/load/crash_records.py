"""Crash records, parsed once: what a crashed process left (a core's gdb output, gdb's output on the
live rank, the rank's faulthandler.log and log tails) turned into the frozen
:class:`~triage.model.evidence.CrashRecord` that analysis classifies (triage.analysis.crash).

Every parse of crash text happens here (through :mod:`triage.parsing.gdb`,
:mod:`triage.parsing.stacks` and :mod:`triage.parsing.crashlog`); analysis parses nothing.
Pure: the callers read the files.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from triage.model.backtrace import GdbBacktrace, PythonFrame, PythonStack
from triage.model.evidence import CoreOutput, CrashRecord, CrashSource, RankLogs
from triage.parsing.crashlog import crash_log_facts
from triage.parsing.gdb import parse_gdb_backtrace
from triage.parsing.stacks import ThreadStack, parse_fatal_banner, parse_faulthandler, parse_faulthandler_signal

LOG_TAIL_LINES = 400     # the lines of a rank's output.log a crash's facts are read from


def banner_time(text: str) -> float | None:
    """The unix time of the last "Aborted at <unix time>" banner (glog / PyTorch / Paddle style)."""
    banner = parse_fatal_banner(text)
    return float(banner.unix_time) if banner is not None and banner.unix_time is not None else None


def _thread_id(text: str) -> int | None:
    try:
        return int(text, 16)
    except ValueError:
        return None


def _python_stack(thread: ThreadStack) -> PythonStack:
    return PythonStack(_thread_id(thread.thread_id),
                       tuple(PythonFrame(f.filename, f.line, f.function) for f in thread.frames))


def rank_logs(rank: int, host: str, pid: int | None, log_text: str, faulthandler_text: str, *,
              faulthandler_mtime: float | None = None, exit_info: Mapping[str, Any] | None = None,
              evidence: tuple[str, ...] = ()) -> RankLogs:
    """A rank's own files, parsed: ``log_text`` is the tails of its output.log and faulthandler.log
    (then its exception), ``faulthandler_text`` its faulthandler.log."""
    return RankLogs(rank=rank, host=host, pid=pid, fatal_signal=parse_faulthandler_signal(faulthandler_text),
                    python_threads=tuple(_python_stack(t) for t in parse_faulthandler(faulthandler_text)),
                    faulthandler_mtime=faulthandler_mtime, log_facts=crash_log_facts(log_text),
                    banner_time=banner_time(log_text), exit=exit_info, evidence=evidence)


def faulting_python(threads: tuple[PythonStack, ...], bt: GdbBacktrace, tid: int | None) -> tuple[PythonFrame, ...]:
    """The crashing thread's Python stack from faulthandler's threads: the one whose thread id is the
    faulting gdb thread's pthread id, else the first printed."""
    if not threads:
        return ()
    gdb_thread = bt.thread(tid) or bt.faulting_thread()
    wanted = gdb_thread.pthread if gdb_thread else None
    chosen = None
    for thread in threads:
        if wanted is not None and thread.thread_id == wanted:
            chosen = thread
    return (chosen or threads[0]).frames


def _from_logs(logs: RankLogs | None) -> dict[str, Any]:
    if logs is None:
        return {}
    return {"fatal_signal": logs.fatal_signal, "log_facts": logs.log_facts, "banner_time": logs.banner_time}


def core_record(output: CoreOutput, rank: int | None, host: str | None, *, logs: RankLogs | None = None,
                pystack_frames: tuple[str, ...] = (), notes: tuple[str, ...] = ()) -> CrashRecord:
    """A core (the core collector's output, its gdb text already parsed), with its rank's own files
    when the run directory is known."""
    tids = (output.info.get("notes") or {}).get("thread_ids") or [None]
    faulting = tids[0] if isinstance(tids, list) and tids and isinstance(tids[0], int) else None
    python = faulting_python(logs.python_threads, output.backtrace, faulting) if logs is not None else ()
    return CrashRecord(CrashSource.CORE, rank, host, core=output, logs=logs, pystack_frames=pystack_frames,
                       notes=notes, backtrace=output.backtrace, python_frames=python, **_from_logs(logs))


def live_gdb_record(gdb_text: str, gdb_path: str | None, rank: int, host: str, *, signal_name: str | None,
                    time: float | None, log_text: str = "") -> CrashRecord:
    """gdb's output on a rank that crashed (taken by the agent right after the crash), with the tail of
    the rank's own output (``log_text``): the crash's facts come from both, as for a core."""
    return CrashRecord(CrashSource.LIVE_GDB, rank, host, gdb_path=gdb_path, signal_name=signal_name, time=time,
                       backtrace=parse_gdb_backtrace(gdb_text), log_facts=crash_log_facts(log_text),
                       banner_time=banner_time(log_text))


def logs_record(logs: RankLogs) -> CrashRecord:
    """A rank of the run that left no core: its own files only (the first thread faulthandler printed)."""
    python = logs.python_threads[0].frames if logs.python_threads else ()
    return CrashRecord(CrashSource.RANK_LOGS, logs.rank, logs.host, logs=logs, python_frames=python,
                       **_from_logs(logs))
