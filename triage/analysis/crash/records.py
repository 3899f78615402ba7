"""Crash records (parsed once by triage.load.crash_records) classified: each core with its rank's
own files, each rank without a core from its files only, and the records of a run directory as
crash-analysis events for the report. Pure: analysis parses nothing here."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from triage.analysis.crash.classify import CrashClassification, CrashContext, classify_backtrace
from triage.layout import RankPaths
from triage.model import RankState
from triage.model.backtrace import FAULT_SIGNALS, GdbBacktrace
from triage.model.evidence import CrashRecord, CrashSource, Event, EventKind, Evidence, KernelEvent, RankLogs

CORRELATION_WINDOW_S = 120.0


def events_near(events: tuple[KernelEvent, ...], pids: set[int], when: float | None,
                window_s: float) -> tuple[KernelEvent, ...]:
    """Events for one of ``pids`` (any thread id of the process), or pid-less ones near ``when``."""
    out = []
    for event in events:
        if event.pid is not None and event.pid in pids:
            if when is None or event.time is None or abs(event.time - when) <= window_s:
                out.append(event)
        elif event.pid is None and when is not None and event.time is not None and abs(event.time - when) <= window_s:
            out.append(event)
    return tuple(out)


def _crash_time(record: CrashRecord, notes: Mapping[str, Any],
                events: tuple[KernelEvent, ...]) -> tuple[float | None, str | None]:
    if record.banner_time is not None:
        return record.banner_time, "'Aborted at' banner"
    timed = [e.time for e in events if e.kind == "segfault" and e.time is not None]
    if timed:
        return min(timed), "kernel log"
    if record.logs is not None and record.logs.faulthandler_mtime is not None and record.fatal_signal:
        return record.logs.faulthandler_mtime, "faulthandler.log"
    core_time = notes.get("mtime")
    if isinstance(core_time, (int, float)):
        return float(core_time), "core file time"
    return None, None


def classify_core(record: CrashRecord, events: tuple[KernelEvent, ...]) -> CrashClassification:
    """One core (a CORE record), with its rank's files when the record has them."""
    output, rank = record.core, record.logs
    info: Mapping[str, Any] = output.info if output is not None else {}
    notes = info.get("notes") or {}
    bt = record.backtrace
    pid = notes.get("pid")
    tids = {t for t in notes.get("thread_ids") or [] if isinstance(t, int)}
    core_time = notes.get("mtime") if isinstance(notes.get("mtime"), (int, float)) else None
    near = events_near(events, tids | ({pid} if isinstance(pid, int) else set()), core_time, CORRELATION_WINDOW_S)
    when, source = _crash_time(record, notes, near)
    faulting = (notes.get("thread_ids") or [None])[0]
    python = record.python_frames if rank is not None else ()
    method = "faulthandler.log" if python else "none"
    evidence = [str(info.get("core"))] + [p for p in (output.gdb_path, output.info_path) if p] if output else []
    if rank is not None:
        evidence += [p for p in rank.evidence if not p.endswith(RankPaths.EXIT)]
    problems = tuple(info.get("problems") or ()) + tuple(info.get("executable_notes") or ()) + record.notes
    problems += tuple(f"gdb: {line}" for line in bt.errors)
    problems += tuple(f"gdb: {line}" for line in bt.warnings if "may not match" in line or "truncated" in line)
    context = CrashContext(
        core_path=str(info.get("core")), pid=pid if isinstance(pid, int) else None,
        rank=rank.rank if rank else info.get("rank"), host=rank.host if rank else output.host if output else None,
        signal=notes.get("signal"), faulting_tid=faulting if isinstance(faulting, int) else None,
        fault_address=notes.get("fault_address"), time=when, time_source=source,
        executable=info.get("executable"), kernel_events=near, log_facts=record.log_facts,
        python_frames=python, python_method=method, notes=tuple(dict.fromkeys(problems)),
        evidence=tuple(evidence),
    )
    return classify_backtrace(bt, context)


def with_python_frames(item: CrashClassification, bt: GdbBacktrace, info: Mapping[str, Any],
                       pystack_frames: tuple[str, ...] = ()) -> tuple[CrashClassification, bool]:
    """The crash with pystack's Python frames (read from the core's memory) when neither py-bt nor a
    faulthandler.log gave any, and a note when it still has none; True for the core of a program
    that is not Python at all."""
    if item.python_method == "none" and pystack_frames:
        item = replace(item, python_frames=pystack_frames[:8], python_method="pystack")
    if bt.threads and not any("Py" in f.function for t in bt.threads for f in t.frames):
        return replace(item, notes=item.notes + ("not a Python program's core: no Python frames to show",)), True
    if bt.threads and not item.python_frames:
        why = (info.get("pystack") or {}).get("error") or "pystack found none"
        note = (f"no Python frames: {why}; no trusted py-bt helper (root-owned CPython "
                "*-gdb.py) and no faulthandler.log (use --run-dir)")
        return replace(item, notes=item.notes + (note,)), False
    return item, False


def classify_rank_record(record: CrashRecord, events: tuple[KernelEvent, ...]) -> CrashClassification | None:
    """A rank that died by a fatal signal or an exception but left no core (a RANK_LOGS record)."""
    rank = record.logs
    if rank is None:
        return None
    fatal = record.fatal_signal
    exit_info = rank.exit or {}
    exception = exit_info.get("how") == "exception"
    near = events_near(events, {rank.pid} if rank.pid else set(), None, CORRELATION_WINDOW_S)
    if fatal in (None, "Terminated", "Interrupt") and not exception and not any(e.kind == "oom" for e in near):
        return None
    when = record.banner_time
    source = "'Aborted at' banner" if when else None
    if when is None and isinstance(exit_info.get("time"), (int, float)):
        when, source = float(exit_info["time"]), "exit.json"
    if when is None and fatal:
        when, source = rank.faulthandler_mtime, "faulthandler.log"
    frames = record.python_frames
    context = CrashContext(
        pid=rank.pid, rank=rank.rank, host=rank.host, signal=FAULT_SIGNALS.get(fatal or ""), time=when,
        time_source=source, kernel_events=near, log_facts=record.log_facts, python_frames=frames,
        python_method="faulthandler.log" if frames else "none",
        exit_code=1 if exception else None, notes=("no core file for this rank: classified from its logs",),
        evidence=rank.evidence,
    )
    return classify_backtrace(GdbBacktrace(), context)


def classify_core_record(record: CrashRecord, events: tuple[KernelEvent, ...]) -> tuple[CrashClassification, bool]:
    """One core of ``triage postmortem`` (with its rank's logs, pystack's frames and its notes);
    True for the core of a program that is not Python at all."""
    info = record.core.info if record.core is not None else {}
    return with_python_frames(classify_core(record, events), record.backtrace, info, record.pystack_frames)


@dataclass(frozen=True)
class CrashAnalysis:
    """The crashes of a set of cores and rank logs, and how the ranks without a crash ended."""

    classifications: tuple[CrashClassification, ...]
    others: tuple[OtherRank, ...]
    not_python: tuple[CrashRecord, ...]     # cores of programs that are not Python at all


def analyse_crashes(evidence: Evidence) -> CrashAnalysis:
    """Each core classified (with its rank's logs), then each rank without a core from its logs: a rank
    that died is a crash of its own, the others are collateral."""
    classifications: list[CrashClassification] = []
    not_python: list[CrashRecord] = []
    crashed: set[tuple[str, int]] = set()
    for record in evidence.crashes:
        if record.source is not CrashSource.CORE or record.core is None:
            continue
        item, foreign = classify_core_record(record, evidence.kernel_events)
        if foreign:
            not_python.append(record)
        classifications.append(item)
        if record.logs is not None:
            crashed.add((record.logs.host, record.logs.rank))
    quiet = [(r, r.logs) for r in evidence.crashes if r.source is CrashSource.RANK_LOGS and r.logs is not None
             and (r.logs.host, r.logs.rank) not in crashed]
    for record, logs in quiet:
        item_or_none = classify_rank_record(record, evidence.kernel_events)
        if item_or_none is not None:
            classifications.append(item_or_none)
            crashed.add((logs.host, logs.rank))
    others = tuple(other_rank(logs) for _record, logs in quiet if (logs.host, logs.rank) not in crashed)
    return CrashAnalysis(tuple(classifications), others, tuple(not_python))


def crash_record_events(records: tuple[CrashRecord, ...]) -> tuple[Event, ...]:
    """Loaded crash records (cores, gdb on a crashed rank) as crash-analysis events."""
    out: list[Event] = []
    for record in records:
        if record.source is CrashSource.CORE and record.core is not None:
            item = classify_core(record, ())
            if record.core.host and item.host is None:
                item = replace(item, host=record.core.host)
            out.append(_event(item, item.rank, item.host or record.host, item.evidence, item.time))
        elif record.source is CrashSource.LIVE_GDB:
            evidence = (record.gdb_path,) if record.gdb_path else ()
            context = CrashContext(rank=record.rank, host=record.host, signal=record.signal_name, evidence=evidence,
                                   log_facts=record.log_facts)
            item = classify_backtrace(record.backtrace, context)
            out.append(_event(item, record.rank, record.host, evidence, record.time))
    return tuple(out)


def _event(item: CrashClassification, rank: int | None, host: str | None, evidence: tuple[str, ...],
           time: float | None) -> Event:
    return Event(EventKind.CRASH_ANALYSIS, item.summary, rank=rank, host=host, time=time,
                 evidence=evidence, fatal=True)


@dataclass(frozen=True)
class OtherRank:
    """A rank of the same job that left no crash of its own (from the run directory)."""

    rank: int
    host: str | None
    pid: int | None
    state: RankState
    how: str                       # "torn down (Terminated)", "exited 0", "no exit record" ...


def other_rank(rank: RankLogs) -> OtherRank:
    """How a rank without a crash of its own ended, from its faulthandler.log and exit.json."""
    exit_info = rank.exit or {}
    fatal = rank.fatal_signal
    if fatal:
        state, how = RankState.CRASHED, f"torn down ({fatal})"
    elif exit_info.get("how") == "exception":
        state, how = RankState.EXITED_ERROR, "exited with an exception"
    elif exit_info.get("how") == "exit":
        code = exit_info.get("exit_code")
        state = RankState.EXITED_OK if code in (0, None) else RankState.EXITED_ERROR
        how = f"exited {code}"
    else:
        state, how = RankState.UNKNOWN, "no exit record (hung, then killed?)"
    return OtherRank(rank.rank, rank.host, rank.pid, state, how)
