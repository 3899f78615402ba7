"""Read log text (per-rank or interleaved) into evidence. I/O-free helpers take text; the
loader passes file contents in. All format parsing is done by triage.parsing."""

from __future__ import annotations

import re
import signal
import time
from dataclasses import dataclass, field

from triage.model import Collective, CollectiveState
from triage.model.evidence import Event, EventKind, ExitInfo, PgMembers, RankEvidence
from triage.parsing.log_prefix import split_interleaved_log, split_rank_prefix
from triage.parsing.nccl import NcclTracker
from triage.parsing.torchelastic import parse_launcher_failures
from triage.parsing.watchdog import WatchdogKind, scan_watchdog

_TRACEBACK_END = re.compile(r"^\s*([A-Za-z_][\w.]*(?:Error|Exception|Interrupt|Exit))(?::\s?(.*))?$")
_RANK_IN_NAME = re.compile(r"rank[-_]?(\d+)", re.IGNORECASE)


@dataclass
class LogScan:
    """What one or more log texts told us, per rank."""

    collectives: dict[int, list[Collective]] = field(default_factory=dict)
    hosts: dict[int, str] = field(default_factory=dict)
    pids: dict[int, int] = field(default_factory=dict)
    exceptions: dict[int, str] = field(default_factory=dict)
    events: list[Event] = field(default_factory=list)
    world_size: int | None = None
    ranks_seen: set[int] = field(default_factory=set)
    exits: dict[int, ExitInfo] = field(default_factory=dict)


def rank_from_name(name: str) -> int | None:
    match = _RANK_IN_NAME.search(name)
    return int(match.group(1)) if match else None


def scan_log_text(text: str, path: str, scan: LogScan, default_rank: int | None = None) -> None:
    """Fold one log file into ``scan``: ranks from prefixes (or ``default_rank`` for a per-rank log)."""
    groups = split_interleaved_log(text)
    single_node = not any(isinstance(k, int) for k in groups)
    for key, lines in groups.items():
        rank = key if isinstance(key, int) else default_rank
        if isinstance(key, str) and key.startswith("local:") and single_node and default_rank is None:
            rank = int(key.split(":", 1)[1])  # torchrun --tee on one node: local rank = rank
        body = "\n".join(lines)
        if rank is not None:
            scan.ranks_seen.add(rank)
            _exception(body, rank, path, scan)
        _watchdog(body, rank, path, scan)
    _hosts(text, scan)
    _nccl(text, path, scan, default_rank)
    _launcher(text, path, scan)
    if "Xid" in text or "segfault at" in text or "Killed process" in text:
        from triage.load.kernel import dmesg_events

        scan.events.extend(dmesg_events(text, "?", path))


def _launcher(text: str, path: str, scan: LogScan) -> None:
    """torchrun's "Failures:" / "Root Cause" summary: how each failed rank ended."""
    if "exitcode" not in text:
        return
    for failure in parse_launcher_failures(text):
        if failure.rank is None:
            continue
        scan.ranks_seen.add(failure.rank)
        if failure.host:
            scan.hosts.setdefault(failure.rank, failure.host)
        sig = _signal_number(failure.signal)
        message = None
        if failure.traceback and not failure.traceback.startswith(("Signal ", "To enable traceback")):
            message = failure.traceback.strip().splitlines()[-1].strip()[:300]
        old = scan.exits.get(failure.rank)
        scan.exits[failure.rank] = ExitInfo(
            exit_code=None if sig is not None else failure.exitcode, signal=sig, signal_name=failure.signal,
            time=_launcher_time(failure.timestamp), message=message or (old.message if old else None),
            evidence=(path,))


def _signal_number(name: str | None) -> int | None:
    if not name:
        return None
    try:
        return int(signal.Signals[name])
    except KeyError:
        return None


def _launcher_time(stamp: str | None) -> float | None:
    """torchrun prints local time as 2026-11-22_00:23:37."""
    if not stamp:
        return None
    try:
        return time.mktime(time.strptime(stamp, "%Y-%m-%d_%H:%M:%S"))
    except ValueError:
        return None


def _hosts(text: str, scan: LogScan) -> None:
    for line in text.splitlines()[:20000]:
        if "[" not in line and ":" not in line:
            continue
        prefix = split_rank_prefix(line)
        if prefix.rank is not None and not prefix.local and prefix.host:
            scan.hosts.setdefault(prefix.rank, prefix.host)


def _exception(body: str, rank: int, path: str, scan: LogScan) -> None:
    if "Traceback (most recent call last)" not in body:
        return
    last: str | None = None
    for line in body.splitlines():
        match = _TRACEBACK_END.match(line)
        if match and not line.startswith((" ", "\t")):
            last = f"{match.group(1)}: {match.group(2) or ''}".strip().rstrip(":")
    if last and rank not in scan.exceptions:
        scan.exceptions[rank] = last[:300]
        scan.events.append(Event(EventKind.EXCEPTION, last[:300], rank=rank, evidence=(path,)))


def _watchdog(body: str, rank: int | None, path: str, scan: LogScan) -> None:
    for event in scan_watchdog(body):
        who = event.rank if event.rank is not None else rank
        if event.kind is WatchdogKind.TIMEOUT:
            detail = (f"{event.op or '?'} SeqNum={event.seq} on pg {event.pg or '?'} ran for "
                      f"{event.ran_for_ms or '?'} ms")
            scan.events.append(Event(EventKind.WATCHDOG_TIMEOUT, detail, rank=who, evidence=(path,),
                                     pg=event.pg, seq=event.seq, op=event.op, count=event.numel_in))
        elif event.kind is WatchdogKind.HEARTBEAT_TIMEOUT:
            scan.events.append(Event(EventKind.WATCHDOG_TIMEOUT, "heartbeat monitor timed out", rank=who,
                                     evidence=(path,)))


def _nccl(text: str, path: str, scan: LogScan, default_rank: int | None) -> None:
    if "NCCL" not in text:
        return
    tracker = NcclTracker(history=16)
    tracker.feed_text(text)
    states = tracker.last_ops()
    world = max((s.nranks or 0 for s in states), default=0) or max(
        (i.nranks or 0 for i in tracker.inits()), default=0)
    if world:
        scan.world_size = max(scan.world_size or 0, world)
    for state in states:
        rank = state.global_rank if state.global_rank is not None else default_rank
        if rank is None:
            continue
        pg = state.comm_id or f"comm:{state.comm}"
        if state.nranks and state.nranks == world and not state.comm_id:
            pg = "0"
        scan.ranks_seen.add(rank)
        scan.hosts.setdefault(rank, state.host)
        scan.pids.setdefault(rank, state.pid)
        for op in state.history:
            p2p = op.op in ("send", "recv")
            scan.collectives.setdefault(rank, []).append(Collective(
                rank=rank, pg=pg, seq=op.op_count + 1, op=op.op, count=op.count, dtype=op.dtype,
                state=CollectiveState.COMPLETED if op is not state.last else CollectiveState.SCHEDULED,
                is_p2p=p2p, peer=op.root if p2p else None, source="nccl",
                pg_name="default_pg" if pg == "0" else None))
    for warn in tracker.warnings():
        rank = warn.launcher_rank
        if rank is None:
            rank = tracker.global_rank(warn.host, warn.pid)
        scan.events.append(Event(EventKind.NCCL_WARN, warn.message[:300], rank=rank, host=warn.host,
                                 evidence=(path,)))


def scan_to_ranks(scan: LogScan) -> tuple[RankEvidence, ...]:
    out: list[RankEvidence] = []
    for rank in sorted(scan.ranks_seen | set(scan.collectives) | set(scan.exits)):
        colls = tuple(scan.collectives.get(rank, ()))
        exc = scan.exceptions.get(rank)
        launcher = scan.exits.get(rank)
        if launcher is not None and exc and not launcher.message:
            launcher = ExitInfo(launcher.exit_code, launcher.signal, launcher.signal_name, launcher.time, exc,
                                launcher.evidence)
        out.append(RankEvidence(
            rank=rank, host=scan.hosts.get(rank), pid=scan.pids.get(rank), world_size=scan.world_size,
            collectives=colls, has_trace=bool(colls),
            groups=(PgMembers("0", "default_pg", None),) if colls else (),
            exit=launcher or (ExitInfo(exit_code=1, message=exc) if exc else None),
            evidence=(),
        ))
    return tuple(out)
