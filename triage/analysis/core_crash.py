"""Classify crashed processes from their core output and their own logs (pure: both are read by the
caller), turn loaded crash records into events for the report, and build the crash report of
``triage postmortem`` (verdict kind ``crash``: the first crash is the root cause, the ranks that
went down after it are collateral)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from triage.analysis.crash import (
    CrashClassification,
    CrashContext,
    CrashKind,
    classify_backtrace,
    crash_findings,
)
from triage.analysis.ranks import rank_word
from triage.layout import RankPaths
from triage.model import Finding, RankState, RankSummary, Report, Verdict, VerdictKind
from triage.model.evidence import (
    CoreOutput,
    CrashRecord,
    CrashSource,
    Event,
    EventKind,
    Evidence,
    KernelEvent,
    RankLogs,
)
from triage.parsing.crashlog import FAULT_SIGNALS
from triage.parsing.gdb import GdbBacktrace, PythonFrame, parse_gdb_backtrace
from triage.parsing.stacks import parse_fatal_banner, parse_faulthandler, parse_faulthandler_signal

CORRELATION_WINDOW_S = 120.0



def banner_time(text: str) -> float | None:
    """The unix time of the last "Aborted at <unix time>" banner (glog / PyTorch / Paddle style)."""
    banner = parse_fatal_banner(text)
    return float(banner.unix_time) if banner is not None and banner.unix_time is not None else None


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


def _crash_time(log_text: str, notes: Mapping[str, Any], events: tuple[KernelEvent, ...],
                rank: RankLogs | None) -> tuple[float | None, str | None]:
    banner = banner_time(log_text)
    if banner is not None:
        return banner, "'Aborted at' banner"
    timed = [e.time for e in events if e.kind == "segfault" and e.time is not None]
    if timed:
        return min(timed), "kernel log"
    if rank is not None and rank.faulthandler_mtime is not None and parse_faulthandler_signal(rank.faulthandler_text):
        return rank.faulthandler_mtime, "faulthandler.log"
    core_time = notes.get("mtime")
    if isinstance(core_time, (int, float)):
        return float(core_time), "core file time"
    return None, None


def classify_core_output(output: CoreOutput, rank: RankLogs | None, events: tuple[KernelEvent, ...],
                         extra_notes: tuple[str, ...] = ()) -> tuple[CrashClassification, GdbBacktrace]:
    info, notes = output.info, output.info.get("notes") or {}
    bt = parse_gdb_backtrace(output.gdb_text or "", info.get("executable"))
    pid = notes.get("pid")
    tids = {t for t in notes.get("thread_ids") or [] if isinstance(t, int)}
    log_lines = rank.log_lines if rank else ()
    core_time = notes.get("mtime") if isinstance(notes.get("mtime"), (int, float)) else None
    near = events_near(events, tids | ({pid} if isinstance(pid, int) else set()), core_time, CORRELATION_WINDOW_S)
    when, source = _crash_time("\n".join(log_lines), notes, near, rank)
    faulting = (notes.get("thread_ids") or [None])[0]
    python: tuple[PythonFrame, ...] = ()
    method = "none"
    if rank is not None:
        python = _python_from_faulthandler(rank.faulthandler_text, bt, faulting)
        method = "faulthandler.log" if python else "none"
    evidence = [str(output.info.get("core"))] + [p for p in (output.gdb_path, output.info_path) if p]
    if rank is not None:
        evidence += [p for p in rank.evidence if not p.endswith(RankPaths.EXIT)]
    problems = tuple(info.get("problems") or ()) + tuple(info.get("executable_notes") or ()) + extra_notes
    problems += tuple(f"gdb: {line}" for line in bt.errors)
    problems += tuple(f"gdb: {line}" for line in bt.warnings if "may not match" in line or "truncated" in line)
    context = CrashContext(
        core_path=str(info.get("core")), pid=pid if isinstance(pid, int) else None,
        rank=rank.rank if rank else info.get("rank"), host=rank.host if rank else output.host,
        signal=notes.get("signal"), faulting_tid=faulting if isinstance(faulting, int) else None,
        fault_address=notes.get("fault_address"), time=when, time_source=source,
        executable=info.get("executable"), kernel_events=near, log_lines=log_lines,
        python_frames=python, python_method=method, notes=tuple(dict.fromkeys(problems)),
        evidence=tuple(evidence),
    )
    return classify_backtrace(bt, context), bt


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


def classify_rank_logs(rank: RankLogs, events: tuple[KernelEvent, ...]) -> CrashClassification | None:
    """A rank that died by a fatal signal or an exception but left no core (from its logs only)."""
    fatal = parse_faulthandler_signal(rank.faulthandler_text)
    exit_info = rank.exit or {}
    exception = exit_info.get("how") == "exception"
    near = events_near(events, {rank.pid} if rank.pid else set(), None, CORRELATION_WINDOW_S)
    if fatal in (None, "Terminated", "Interrupt") and not exception and not any(e.kind == "oom" for e in near):
        return None
    when = banner_time("\n".join(rank.log_lines))
    source = "'Aborted at' banner" if when else None
    if when is None and isinstance(exit_info.get("time"), (int, float)):
        when, source = float(exit_info["time"]), "exit.json"
    if when is None and fatal:
        when, source = rank.faulthandler_mtime, "faulthandler.log"
    python = parse_faulthandler(rank.faulthandler_text)
    frames = tuple(PythonFrame(f.filename, f.line, f.function) for f in python[0].frames) if python else ()
    context = CrashContext(
        pid=rank.pid, rank=rank.rank, host=rank.host, signal=FAULT_SIGNALS.get(fatal or ""), time=when,
        time_source=source, kernel_events=near, log_lines=rank.log_lines, python_frames=frames,
        python_method="faulthandler.log" if frames else "none",
        exit_code=1 if exception else None, notes=("no core file for this rank: classified from its logs",),
        evidence=rank.evidence,
    )
    return classify_backtrace(GdbBacktrace(), context)


def classify_core_record(record: CrashRecord, core: CoreOutput,
                         events: tuple[KernelEvent, ...]) -> tuple[CrashClassification, bool]:
    """One core of ``triage postmortem`` (with its rank's logs, pystack's frames and its notes);
    True for the core of a program that is not Python at all."""
    item, bt = classify_core_output(core, record.logs, events, record.notes)
    return with_python_frames(item, bt, core.info, record.pystack_frames)


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
        item, foreign = classify_core_record(record, record.core, evidence.kernel_events)
        if foreign:
            not_python.append(record)
        classifications.append(item)
        if record.logs is not None:
            crashed.add((record.logs.host, record.logs.rank))
    quiet = [r.logs for r in evidence.crashes if r.source is CrashSource.RANK_LOGS and r.logs is not None
             and (r.logs.host, r.logs.rank) not in crashed]
    for logs in quiet:
        item_or_none = classify_rank_logs(logs, evidence.kernel_events)
        if item_or_none is not None:
            classifications.append(item_or_none)
            crashed.add((logs.host, logs.rank))
    others = tuple(other_rank(logs) for logs in quiet if (logs.host, logs.rank) not in crashed)
    return CrashAnalysis(tuple(classifications), others, tuple(not_python))


def crash_analysis_report(found: CrashAnalysis, evidence: Evidence) -> Report:
    """The crash report of ``triage postmortem`` from its crashes, classified once by
    :func:`analyse_crashes`: the earliest crash is the root cause."""
    return crash_report(found.classifications, found.others, sources=evidence.sources, problems=evidence.skipped)


def crash_record_events(records: tuple[CrashRecord, ...]) -> tuple[Event, ...]:
    """Loaded crash records (cores, gdb on a crashed rank) as crash-analysis events."""
    out: list[Event] = []
    for record in records:
        if record.source is CrashSource.CORE and record.core is not None:
            item, _bt = classify_core_output(record.core, None, ())
            if record.core.host and item.host is None:
                item = replace(item, host=record.core.host)
            out.append(_event(item, item.rank, item.host or record.host, item.evidence, item.time))
        elif record.source is CrashSource.LIVE_GDB:
            evidence = (record.gdb_path,) if record.gdb_path else ()
            context = CrashContext(rank=record.rank, host=record.host, signal=record.signal_name, evidence=evidence)
            item = classify_backtrace(parse_gdb_backtrace(record.gdb_text), context)
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
    fatal = parse_faulthandler_signal(rank.faulthandler_text)
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


def classification_json(item: CrashClassification) -> dict[str, Any]:
    return {
        "kind": item.kind.value, "signal": item.signal, "rank": item.rank, "host": item.host, "pid": item.pid,
        "time": item.time, "time_source": item.time_source, "summary": item.summary, "next_step": item.next_step,
        "faulting_thread": item.faulting_thread,
        "faulting_role": item.faulting_role.value if item.faulting_role else None,
        "faulting_name": item.faulting_name, "crash_frame": item.crash_frame, "library": item.library,
        "top_frames": list(item.top_frames), "python_frames": list(item.python_frames),
        "python_method": item.python_method, "stack_top": item.stack_top,
        "threads": [{"lwp": t.lwp, "role": t.role.value, "name": t.name, "top": t.top} for t in item.threads],
        "kernel_events": list(item.kernel_events), "notes": list(item.notes), "evidence": list(item.evidence),
    }


def _state(item: CrashClassification) -> RankState:
    return RankState.EXITED_ERROR if item.kind is CrashKind.EXCEPTION_EXIT else RankState.CRASHED


def _verdict(ordered: list[CrashClassification], problems: tuple[str, ...]) -> Verdict:
    if not ordered:
        reason = problems[0] if problems else "no core could be read"
        return Verdict(VerdictKind.CRASH, f"no crash could be explained: {reason}")
    root = ordered[0]
    kind = VerdictKind.EXCEPTION if root.kind is CrashKind.EXCEPTION_EXIT else VerdictKind.CRASH
    summary = root.summary
    if len(ordered) > 1:
        summary = summary.replace(" crashed: ", " crashed first: ", 1) + f" [first of {len(ordered)} failures]"
    culprits = () if root.rank is None else (root.rank,)
    return Verdict(kind, summary, culprit_ranks=culprits)


def _collateral(others: tuple[OtherRank, ...], root: CrashClassification | None) -> list[Finding]:
    if not others or root is None:
        return []
    who = f"rank {root.rank}" if root.rank is not None else f"pid {root.pid}"
    findings = []
    for how in sorted({o.how for o in others}):
        ranks = tuple(sorted(o.rank for o in others if o.how == how))
        findings.append(Finding(kind="collateral", ranks=ranks,
                                detail=f"{rank_word(ranks)}: {how} after {who} crashed (collateral)"))
    return findings


def crash_report(classifications: Iterable[CrashClassification], others: tuple[OtherRank, ...] = (),
                 sources: tuple[str, ...] = (), problems: tuple[str, ...] = ()) -> Report:
    """The ``triage.report/1`` Report of a set of crashes: the earliest is the root cause."""
    classifications = list(classifications)
    findings = crash_findings(classifications)
    ordered = sorted(classifications, key=lambda c: (c.time is None, c.time or 0.0))
    root = ordered[0] if ordered else None
    ranks = [RankSummary(c.rank, c.host, c.pid, _state(c), stack_top=c.stack_top)
             for c in ordered if c.rank is not None]
    ranks += [RankSummary(o.rank, o.host, o.pid, o.state) for o in others]
    steps = [root.next_step] if root else []
    steps += [f"note: {n}" for n in (root.notes if root else ())]
    steps += [f"note: {p}" for p in problems]
    evidence = tuple(dict.fromkeys(e for c in ordered for e in c.evidence))
    extra: dict[str, Any] = {"postmortem": [classification_json(c) for c in ordered]}
    if len(ordered) > 1 and root is not None:
        extra["first_crash"] = {"rank": root.rank, "pid": root.pid, "time": root.time,
                                "core": root.evidence[0] if root.evidence else None}
    if problems:
        extra["problems"] = list(problems)
    return Report(
        verdict=_verdict(ordered, problems), findings=tuple(findings + _collateral(others, root)),
        ranks=tuple(sorted(ranks, key=lambda r: r.rank)), next_steps=tuple(dict.fromkeys(steps)),
        evidence=evidence, sources=sources, extra=extra,
    )
