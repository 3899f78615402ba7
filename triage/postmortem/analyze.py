"""Turn one core's collector output (core.json + gdb-core.txt) and its surroundings into a classification.

Reads files only (the bundle, the run dir); the kernel log text is passed in already parsed.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from triage.parsing.gdb import GdbBacktrace, PythonFrame, parse_gdb_backtrace
from triage.parsing.stacks import parse_faulthandler, parse_faulthandler_signal
from triage.postmortem.classify import CrashClassification, CrashContext, KernelEvent, classify_backtrace
from triage.postmortem.context import RankFiles, banner_time, events_near, mtime, read_tail

CORRELATION_WINDOW_S = 120.0


@dataclass(frozen=True)
class CoreOutput:
    info: dict[str, Any]
    gdb_text: str | None
    info_path: str
    gdb_path: str | None


def read_core_output(out_dir: Path) -> CoreOutput | None:
    info_path = out_dir / "core.json"
    try:
        info = json.loads(info_path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    gdb_path = out_dir / "gdb-core.txt"
    try:
        text: str | None = gdb_path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        text = None
    return CoreOutput(info if isinstance(info, dict) else {}, text, str(info_path),
                      str(gdb_path) if text is not None else None)


def _python_from_faulthandler(text: str, bt: GdbBacktrace, tid: int | None) -> tuple[PythonFrame, ...]:
    """The crashing thread's Python stack from faulthandler output (matched by pthread id)."""
    threads = parse_faulthandler(text)
    if not threads:
        return ()
    gdb_thread = bt.thread(tid) or bt.faulting_thread()
    wanted = gdb_thread.pthread if gdb_thread else None
    chosen = None
    for thread in threads:
        try:
            if wanted is not None and int(thread.thread_id, 16) == wanted:
                chosen = thread
        except ValueError:
            continue
    chosen = chosen or threads[0]
    return tuple(PythonFrame(f.filename, f.line, f.function) for f in chosen.frames)


def _log_lines(rank: RankFiles | None) -> tuple[str, ...]:
    if rank is None:
        return ()
    lines: list[str] = []
    for path in (rank.paths.output, rank.paths.faulthandler):
        lines += read_tail(path).splitlines()[-400:]
    exit_info = rank.exit or {}
    exception = exit_info.get("exception")
    if isinstance(exception, dict):
        lines.append(f"{exception.get('type')}: {exception.get('message')}")
    return tuple(lines)


def _crash_time(log_text: str, notes: dict[str, Any], events: tuple[KernelEvent, ...],
                rank: RankFiles | None) -> tuple[float | None, str | None]:
    banner = banner_time(log_text)
    if banner is not None:
        return banner, "'Aborted at' banner"
    timed = [e.time for e in events if e.kind == "segfault" and e.time is not None]
    if timed:
        return min(timed), "kernel log"
    if rank is not None:
        written = mtime(rank.paths.faulthandler)
        if written is not None and parse_faulthandler_signal(read_tail(rank.paths.faulthandler)):
            return written, "faulthandler.log"
    core_time = notes.get("mtime")
    if isinstance(core_time, (int, float)):
        return float(core_time), "core file time"
    return None, None


def classify_core_output(output: CoreOutput, rank: RankFiles | None, events: tuple[KernelEvent, ...],
                         extra_notes: tuple[str, ...] = ()) -> tuple[CrashClassification, GdbBacktrace]:
    info, notes = output.info, output.info.get("notes") or {}
    bt = parse_gdb_backtrace(output.gdb_text or "", info.get("executable"))
    pid = notes.get("pid")
    tids = {t for t in notes.get("thread_ids") or [] if isinstance(t, int)}
    log_lines = _log_lines(rank)
    log_text = "\n".join(log_lines)
    core_time = notes.get("mtime") if isinstance(notes.get("mtime"), (int, float)) else None
    near = events_near(events, tids | ({pid} if isinstance(pid, int) else set()), core_time, CORRELATION_WINDOW_S)
    when, source = _crash_time(log_text, notes, near, rank)
    faulting = (notes.get("thread_ids") or [None])[0]
    python: tuple[PythonFrame, ...] = ()
    method = "none"
    if rank is not None:
        python = _python_from_faulthandler(read_tail(rank.paths.faulthandler), bt, faulting)
        method = "faulthandler.log" if python else "none"
    evidence = [str(output.info.get("core"))] + [p for p in (output.gdb_path, output.info_path) if p]
    if rank is not None:
        evidence += [str(p) for p in (rank.paths.faulthandler, rank.paths.output) if p.is_file()]
    problems = tuple(info.get("problems") or ()) + tuple(info.get("executable_notes") or ()) + extra_notes
    problems += tuple(f"gdb: {line}" for line in bt.errors)
    problems += tuple(f"gdb: {line}" for line in bt.warnings if "may not match" in line or "truncated" in line)
    context = CrashContext(
        core_path=str(info.get("core")), pid=pid if isinstance(pid, int) else None,
        rank=rank.rank if rank else info.get("rank"), host=rank.host if rank else None,
        signal=notes.get("signal"), faulting_tid=faulting if isinstance(faulting, int) else None,
        fault_address=notes.get("fault_address"), time=when, time_source=source,
        executable=info.get("executable"), kernel_events=near, log_lines=log_lines,
        python_frames=python, python_method=method, notes=tuple(dict.fromkeys(problems)),
        evidence=tuple(evidence),
    )
    return classify_backtrace(bt, context), bt


def classify_rank_without_core(rank: RankFiles, events: tuple[KernelEvent, ...]) -> CrashClassification | None:
    """A rank that died by a fatal signal or an exception but left no core (from its logs only)."""
    fh_text = read_tail(rank.paths.faulthandler)
    fatal = parse_faulthandler_signal(fh_text)
    exit_info = rank.exit or {}
    exception = exit_info.get("how") == "exception"
    if fatal in (None, "Terminated", "Interrupt") and not exception:
        oom = events_near(events, {rank.pid} if rank.pid else set(), None, CORRELATION_WINDOW_S)
        if not any(e.kind == "oom" for e in oom):
            return None
    log_lines = _log_lines(rank)
    near = events_near(events, {rank.pid} if rank.pid else set(), None, CORRELATION_WINDOW_S)
    when = banner_time("\n".join(log_lines))
    source = "'Aborted at' banner" if when else None
    if when is None and isinstance(exit_info.get("time"), (int, float)):
        when, source = float(exit_info["time"]), "exit.json"
    if when is None and fatal:
        when, source = mtime(rank.paths.faulthandler), "faulthandler.log"
    signal = {"Segmentation fault": "SIGSEGV", "Aborted": "SIGABRT", "Bus error": "SIGBUS",
              "Floating point exception": "SIGFPE", "Illegal instruction": "SIGILL"}.get(fatal or "")
    python = parse_faulthandler(fh_text)
    frames = tuple(PythonFrame(f.filename, f.line, f.function) for f in python[0].frames) if python else ()
    context = CrashContext(
        pid=rank.pid, rank=rank.rank, host=rank.host, signal=signal, time=when, time_source=source,
        kernel_events=near, log_lines=log_lines, python_frames=frames,
        python_method="faulthandler.log" if frames else "none",
        exit_code=1 if exception else None, notes=("no core file for this rank: classified from its logs",),
        evidence=tuple(str(p) for p in (rank.paths.faulthandler, rank.paths.exit, rank.paths.output) if p.is_file()),
    )
    return classify_backtrace(GdbBacktrace(), context)


def classify_bundle_cores(bundle: Path, events: tuple[KernelEvent, ...] = ()) -> list[CrashClassification]:
    """Every core the core collector put in a node bundle (``*/core.json``), classified.

    For ``triage report``: reads the bundle only (the manifest gives the host).
    """
    host = None
    try:
        manifest = json.loads((bundle / "manifest.json").read_text(encoding="utf-8"))
        host = manifest.get("host") if isinstance(manifest, dict) else None
    except (OSError, ValueError):
        pass
    results = []
    for info_path in sorted(bundle.glob("*/core.json")):
        output = read_core_output(info_path.parent)
        if output is None or not output.info.get("notes"):
            continue
        item, _bt = classify_core_output(output, None, events)
        if host and item.host is None:
            item = replace(item, host=str(host))
        results.append(item)
    return results
