"""Log text as evidence: a rank's output.log, a job's interleaved log, or a paste from a bug report
(partial, prefixed, wrapped). I/O-free: the loader passes file contents in; every format is parsed
by triage.parsing (this module only routes lines and keeps what they said)."""

from __future__ import annotations

import mmap
import re
import signal
import time
from collections import deque
from dataclasses import dataclass, field, replace

from triage.load.log_facts import WorldSize, world_size_facts
from triage.load.nccl_ras import op_count_splits
from triage.model import Collective, CollectiveState
from triage.model.evidence import (
    Event,
    EventKind,
    ExitInfo,
    InitWaitRecord,
    NcclProcess,
    OpCountSplit,
    PgMembers,
    RankEvidence,
    ReportedFingerprint,
    ReportedLag,
    ReportedMismatch,
)
from triage.parsing.crashlog import (
    CrashLine,
    CrashLineKind,
    duplicate_gpu,
    has_marker,
    parse_crash_line,
    rank_in_message,
)
from triage.parsing.desync import (
    MISMATCH_MARKER,
    RUNNING_MARKER,
    Fingerprint,
    parse_desync_report,
    parse_mismatch,
    parse_running,
)
from triage.parsing.log_prefix import LineOwner, attribute_lines, split_rank_prefix
from triage.parsing.nccl import channel_ranks
from triage.parsing.nccl_tracker import NcclCommState, NcclTracker
from triage.parsing.rendezvous import MARKERS as INIT_MARKERS
from triage.parsing.rendezvous import InitWait, InitWaitKind, parse_init_line
from triage.parsing.textclean import clean_text
from triage.parsing.torchelastic import LauncherFailure, parse_launcher_failures, spawn_error_owner
from triage.parsing.watchdog import WatchdogKind, parse_watchdog_line

_RANK_IN_NAME = re.compile(r"rank[-_]?(\d+)", re.IGNORECASE)
_WATCHDOG_HINTS = ("atchdog", "Timeout at NCCL work", "Heartbeat monitor", "lagging ranks", "Desync")
# Parts of formats we know: a line holding one that nothing parsed is reported as "unparsed".
_KNOWN_HINTS = ("Watchdog caught", "WorkNCCL(", "CollectiveFingerPrint", MISMATCH_MARKER, "NCCL WARN",
                "exitcode", "ncclRemoteError", "ncclSystemError", "ncclInternalError", "Xid")
# How specific a failure line is, when several stand together (a terminate line, then its what()).
_SPECIFIC = {CrashLineKind.CUDA_OOM: 0, CrashLineKind.CUDA_ERROR: 1, CrashLineKind.NETWORK: 2,
             CrashLineKind.NCCL_ERROR: 3, CrashLineKind.EXCEPTION: 4, CrashLineKind.TERMINATE: 5,
             CrashLineKind.FATAL_SIGNAL: 6}
_SUMMARY_FIELD = re.compile(r"\s*(?:traceback|exitcode|error_file|time|host|rank)\s*:")
FAILURE_CLUSTER_LINES = 6       # failure lines of one rank this close together are one failure
LAST_LINES = 6
MAX_UNPARSED = 40


@dataclass
class LogScan:
    """What one or more log texts told us, per rank."""

    collectives: dict[int, list[Collective]] = field(default_factory=dict)
    hosts: dict[int, str] = field(default_factory=dict)
    pids: dict[int, int] = field(default_factory=dict)
    events: list[Event] = field(default_factory=list)
    world_size: int | None = None
    world_source: str | None = None
    ranks_seen: set[int] = field(default_factory=set)
    exits: dict[int, ExitInfo] = field(default_factory=dict)           # launcher summaries
    failures: dict[int, list[tuple[int, CrashLine, str]]] = field(default_factory=dict)  # (order, line, path)
    orphans: list[tuple[int, CrashLine, str]] = field(default_factory=list)  # failures of no known rank
    last_lines: dict[int, deque[str]] = field(default_factory=dict)
    mismatches: list[ReportedMismatch] = field(default_factory=list)
    unparsed: list[str] = field(default_factory=list)
    lines_read: int = 0                                                 # order of the next line
    nccl_processes: list[NcclProcess] = field(default_factory=list)   # NCCL ops of no known rank
    orphan_hosts: dict[int, str] = field(default_factory=dict)         # id(orphan line) -> its host
    pg_of: dict[tuple[int, int], str] = field(default_factory=dict)    # (rank, seq) -> pg, from the watchdog
    detected: dict[tuple[int, int], int] = field(default_factory=dict)  # (rank, seq) the watchdog flagged
    first_timeout: dict[int, int] = field(default_factory=dict)        # rank -> order of its first timeout
    _timeouts: set[tuple[int | None, str | None, int | None]] = field(default_factory=set)
    init_waits: list[InitWaitRecord] = field(default_factory=list)
    op_count_splits: list[OpCountSplit] = field(default_factory=list)   # NCCL RAS reports
    lagging: list[ReportedLag] = field(default_factory=list)             # desync reports
    unprefixed_tail: deque[str] = field(default_factory=lambda: deque(maxlen=LAST_LINES))
    message_rank: tuple[int, int] | None = None
    spawn_owner: int | None = None          # mp.spawn: the process whose traceback the unprefixed lines are     # (rank, order) of the last unprefixed line naming its rank
    tracebacks: list[tuple[int | None, int, str]] = field(default_factory=list)   # (rank, order, path) of headers
    _init_seen: set[tuple[int | None, str, int | None, str | None]] = field(default_factory=set)


def rank_from_name(name: str) -> int | None:
    match = _RANK_IN_NAME.search(name)
    return int(match.group(1)) if match else None


def scan_log_text(text: str, path: str, scan: LogScan, default_rank: int | None = None,
                  nccl_source: bytes | mmap.mmap | None = None) -> None:
    """Fold one log into ``scan``: ranks from prefixes (or ``default_rank`` for a per-rank log).
    ``nccl_source``: the whole file, when ``text`` is an excerpt of it (see triage.load.large_logs)."""
    clean = clean_text(text)
    lines = clean.lines
    owners = attribute_lines(lines)
    single_node = not any(isinstance(o.key, int) for o in owners)
    base = scan.lines_read
    skip_to = 0
    scan.spawn_owner = None
    for index, owner in enumerate(owners):
        if index < skip_to:
            continue
        rank = owner.key if isinstance(owner.key, int) else default_rank
        if isinstance(owner.key, str) and owner.key.startswith("local:") and single_node and default_rank is None:
            rank = int(owner.key.split(":", 1)[1])  # torchrun --tee on one node: local rank = rank
        rest = owner.rest
        if MISMATCH_MARKER in rest and parse_mismatch(rest) is None:
            rest, skip_to = _joined_message(owners, index)   # the message spans several lines
        if rank is not None:
            scan.ranks_seen.add(rank)
        _line(rest, rank, owner.host, path, base + index, scan)
    scan.lines_read = base + len(lines)
    _unfinished_tracebacks(scan)
    body = "\n".join(o.rest for o in owners)
    _hosts(lines, scan)
    _nccl("\n".join(lines) if nccl_source is None else nccl_source, path, scan, default_rank)
    _launcher(body, path, scan, single_node)
    scan.op_count_splits.extend(op_count_splits(body, path))
    scan.lagging.extend(ReportedLag(lag.ranks, lag.never_joined, lag.collective, lag.text, (path,))
                        for lag in parse_desync_report(text))
    facts = world_size_facts(body)
    _world(scan, facts)
    if "Xid" in text or "segfault at" in text or "Killed process" in text:
        from triage.load.kernel import dmesg_events

        scan.events.extend(dmesg_events(text, "?", path))


def _joined_message(owners: list[LineOwner], index: int, limit: int = 12) -> tuple[str, int]:
    """A message printed over several lines, joined until it parses (or ``limit`` lines)."""
    text = owners[index].rest
    stop = min(len(owners), index + 1 + limit)
    for nxt in range(index + 1, stop):
        text = f"{text} {owners[nxt].rest.strip()}"
        if parse_mismatch(text) is not None and text.rstrip().endswith((").", ")")):
            return text, nxt + 1
    return owners[index].rest, index + 1


def _line(rest: str, rank: int | None, host: str | None, path: str, order: int, scan: LogScan) -> None:
    """Route one line to the parser its markers call for."""
    parsed = False
    if any(marker in rest for marker in INIT_MARKERS) and (wait := parse_init_line(rest)) is not None:
        _init_wait(wait, rank, host, path, order, scan)
        return
    if "Duplicate GPU" in rest and (duplicate := duplicate_gpu(rest)) is not None:
        for both in duplicate[1]:
            scan.ranks_seen.add(both)
            scan.failures.setdefault(both, []).append((order, duplicate[0], path))
        return
    if rest.lstrip().startswith("Traceback (most recent call last)"):
        scan.tracebacks.append((rank, order, path))
    if rank is None and "terminated with the following error" in rest and (owner := spawn_error_owner(rest)) is not None:
        scan.spawn_owner = owner
        return
    if rank is None and scan.spawn_owner is not None:
        rank = scan.spawn_owner
        scan.ranks_seen.add(rank)
    if rank is None and (in_message := rank_in_message(rest)) is not None:
        scan.message_rank = (in_message, order)    # "[Rank 7] NCCL watchdog thread terminated ...": what follows is rank 7's
    elif rank is None and scan.message_rank and order - scan.message_rank[1] <= FAILURE_CLUSTER_LINES:
        rank = scan.message_rank[0]
        scan.ranks_seen.add(rank)
    if any(hint in rest for hint in _WATCHDOG_HINTS):
        parsed = _watchdog(rest, rank, path, order, scan) and "terminated with exception" not in rest
    if MISMATCH_MARKER in rest:
        mismatch = parse_mismatch(rest)
        if mismatch is not None:
            scan.mismatches.append(ReportedMismatch(_fp(mismatch.reporter), _fp(mismatch.other), (path,), order))
            for side in (mismatch.reporter, mismatch.other):
                if side.rank is not None:
                    scan.ranks_seen.add(side.rank)
            parsed = True
    elif RUNNING_MARKER in rest:
        running = parse_running(rest)
        who = running.rank if running and running.rank is not None else rank
        if running is not None and who is not None and running.seq is not None and running.op:
            scan.collectives.setdefault(who, []).append(Collective(
                rank=who, pg="0", seq=running.seq, op=running.op, count=running.count,
                dtype=running.dtypes[0] if running.dtypes else None, state=CollectiveState.SCHEDULED,
                input_sizes=running.shapes, source="log", pg_name="default_pg"))
            parsed = True
    if not parsed and has_marker(rest) and not _SUMMARY_FIELD.match(rest) and "NCCL WARN" not in rest:
        # (a mismatch/Running line is not the rank's own failure; torchrun's summary is read whole;
        # NCCL WARN lines are read by the NCCL tracker, which knows their process)
        crash = parse_crash_line(rest)
        if rest.lstrip().startswith("what():"):
            crash = _joined_terminate(rest, rank, order, scan) or crash
        if crash is not None and rank is None and (rank := rank_in_message(crash.text)) is not None:
            scan.ranks_seen.add(rank)
        if crash is not None:
            parsed = True
            item = (order, crash, path)
            if rank is not None:
                scan.failures.setdefault(rank, []).append(item)
            else:
                scan.orphans.append(item)
    if rank is not None and rest.strip() and not parsed:
        scan.last_lines.setdefault(rank, deque(maxlen=LAST_LINES)).append(rest.strip()[:300])
    elif rank is None and not parsed and not scan.first_timeout and not scan.failures and rest.strip():
        scan.unprefixed_tail.append(rest.strip()[:300])
    if not parsed and len(scan.unparsed) < MAX_UNPARSED and any(h in rest for h in _KNOWN_HINTS) \
            and "NCCL WARN" not in rest and "exitcode" not in rest:
        scan.unparsed.append(rest.strip()[:500])


def _joined_terminate(rest: str, rank: int | None, order: int, scan: LogScan) -> CrashLine | None:
    """``terminate called after throwing ...`` then ``  what():  NCCL error: ...`` on the next line:
    the what() says what the abort was (a network error, a CUDA error); the pair is one failure."""
    items = scan.failures.get(rank, []) if rank is not None else scan.orphans
    if not items or items[-1][0] != order - 1 or items[-1][1].kind is not CrashLineKind.TERMINATE:
        return None
    joined = parse_crash_line(f"{items[-1][1].text} {rest.strip()}")
    if joined is None:
        return None
    items.pop()
    return joined


def _unfinished_tracebacks(scan: LogScan) -> None:
    """A traceback whose exception line is not in the input (a paste cut short) is still failure
    evidence: kept as a collateral failure, so that it never outranks a real one but is never
    taken for an all-clear."""
    for rank, order, path in scan.tracebacks:
        later = scan.failures.get(rank, []) if rank is not None else scan.orphans
        if any(item[0] > order for item in later) or (rank is None and any(
                item[0] > order for items in scan.failures.values() for item in items)):
            continue
        line = CrashLine(CrashLineKind.EXCEPTION, "a Python traceback whose exception line is not in this input",
                         collateral=True)
        (scan.failures.setdefault(rank, []) if rank is not None else scan.orphans).append((order, line, path))
    scan.tracebacks.clear()


def _init_wait(wait: InitWait, rank: int | None, host: str | None, path: str, order: int, scan: LogScan) -> None:
    """A rank waiting (or timed out) before the first collective: one event per distinct line."""
    who = wait.rank if wait.rank is not None else rank
    if who is not None and wait.kind is not InitWaitKind.BARRIER_WAITING:
        scan.ranks_seen.add(who)
    key = (who, wait.kind.value, wait.joined, wait.address)
    if key in scan._init_seen:
        return
    scan._init_seen.add(key)
    scan.init_waits.append(InitWaitRecord(wait.kind.value, wait.text, who, host, wait.world_size, wait.joined,
                                          wait.address, wait.timeout_s, wait.is_timeout, (path,), order,
                                          wait.waits_for))


def _fp(fp: Fingerprint) -> ReportedFingerprint:
    return ReportedFingerprint(fp.rank if fp.rank is not None else -1, fp.seq, fp.op, fp.shapes, fp.dtypes)


def _watchdog(line: str, rank: int | None, path: str, order: int, scan: LogScan) -> bool:
    event = parse_watchdog_line(line)
    if event is None:
        return False
    who = event.rank if event.rank is not None else rank
    if who is not None:
        scan.ranks_seen.add(who)
    if event.kind is WatchdogKind.TIMEOUT:
        if event.seq is None and len(scan.unparsed) < MAX_UNPARSED:
            scan.unparsed.append(line.strip()[:500])     # a timeout, but which collective did not parse
        key = (who, event.op, event.seq)
        if key in scan._timeouts:   # the same timeout again (the watchdog's what() line)
            return True
        scan._timeouts.add(key)
        if who is not None:
            scan.first_timeout.setdefault(who, order)
        detail = (f"{event.op or '?'} SeqNum={event.seq} on pg {event.pg or '?'} ran for "
                  f"{event.ran_for_ms or '?'} ms")
        scan.events.append(Event(EventKind.WATCHDOG_TIMEOUT, detail, rank=who, evidence=(path,),
                                 pg=event.pg, seq=event.seq, op=event.op, count=event.numel_in, order=order))
        if who is not None and event.op in ("all_gather", "reduce_scatter") and event.numel_in and event.numel_out:
            ratio = max(event.numel_in, event.numel_out) // min(event.numel_in, event.numel_out)
            if (event.pg in (None, "0")) and ratio > 1 and max(event.numel_in, event.numel_out) % min(
                    event.numel_in, event.numel_out) == 0:
                _world(scan, WorldSize(ratio, f"NumelIn/NumelOut of {event.op} on the default group"))
    elif event.kind in (WatchdogKind.EXCEPTION_DETECTED, WatchdogKind.TIMEOUT_AT) and who is not None \
            and event.seq is not None:
        # "[PG 1 Rank 3] Exception ... detected by watchdog at work: 1580": the rank's pg for that seq
        if event.pg is not None:
            scan.pg_of.setdefault((who, event.seq), event.pg)
        scan.detected.setdefault((who, event.seq), order)
    elif event.kind is WatchdogKind.HEARTBEAT_TIMEOUT:
        if who is not None:
            scan.first_timeout.setdefault(who, order)
        scan.events.append(Event(EventKind.WATCHDOG_TIMEOUT, "heartbeat monitor timed out", rank=who,
                                 evidence=(path,), order=order))
    return True


def _world(scan: LogScan, facts: WorldSize | None) -> None:
    if facts is None:
        return
    if scan.world_size is None or facts.size > scan.world_size:
        scan.world_size, scan.world_source = facts.size, facts.source


def _launcher(text: str, path: str, scan: LogScan, single_node: bool) -> None:
    """torchrun's "Failures:" / "Root Cause" summary (or its per-rank "failed (exitcode: N)" lines)."""
    if "exitcode" not in text and "exits with return code" not in text and "terminated with" not in text:
        return
    failures = parse_launcher_failures(text)
    hosts = {f.host for f in failures if f.host}
    for failure in failures:
        rank = failure.rank
        if rank is None and failure.local_rank is not None and single_node and len(hosts) <= 1:
            rank = failure.local_rank     # one node: the local rank is the rank
        if rank is None:
            _unattributed_launcher_failure(failure, path, scan)
            continue
        scan.ranks_seen.add(rank)
        if failure.host:
            scan.hosts.setdefault(rank, failure.host)
        sig = _signal_number(failure.signal)
        message = None
        if failure.traceback and not failure.traceback.startswith(("Signal ", "To enable traceback")):
            message = failure.traceback.strip().splitlines()[-1].strip()[:300]
        old = scan.exits.get(rank)
        scan.exits[rank] = ExitInfo(
            exit_code=None if sig is not None else failure.exitcode, signal=sig, signal_name=failure.signal,
            time=_launcher_time(failure.timestamp), message=message or (old.message if old else None),
            evidence=(path,), collateral=sig is not None and sig in (int(signal.SIGTERM), int(signal.SIGINT)),
            order=-1 if failure.root_cause else None)   # torchrun's "Root Cause (first observed failure)"


def _unattributed_launcher_failure(failure: LauncherFailure, path: str, scan: LogScan) -> None:
    """A launcher's failure record that names no rank (a local rank on one of several nodes, or no
    rank at all) is still a failure: kept as one of no known rank."""
    who = f"local rank {failure.local_rank}" if failure.local_rank is not None else "a process"
    if failure.pid is not None:
        who += f" (pid {failure.pid})"
    if failure.signal:
        line = CrashLine(CrashLineKind.FATAL_SIGNAL, f"{who} was killed by {failure.signal}", signal=failure.signal,
                         collateral=failure.signal in ("SIGTERM", "SIGINT") and not failure.root_cause)
    else:
        line = CrashLine(CrashLineKind.EXCEPTION, f"{who} exited with code {failure.exitcode}")
    scan.orphans.append((-1 if failure.root_cause else scan.lines_read, line, path))
    if failure.host:
        scan.orphan_hosts[id(line)] = failure.host


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


def _hosts(lines: tuple[str, ...], scan: LogScan) -> None:
    for line in lines[:20000]:
        if "[" not in line and ":" not in line:
            continue
        prefix = split_rank_prefix(line)
        if prefix.rank is not None and not prefix.local and prefix.host:
            scan.hosts.setdefault(prefix.rank, prefix.host)


def _nccl(text: str | bytes | mmap.mmap, path: str, scan: LogScan, default_rank: int | None) -> None:
    tracker = NcclTracker(history=16)
    if isinstance(text, str):
        if "NCCL" not in text:
            return
        tracker.feed_text(text)
    else:
        if text.find(b"NCCL") < 0:
            return
        tracker.feed_bytes(text)
    states = tracker.last_ops()
    world = max((s.nranks or 0 for s in states), default=0) or max(
        (i.nranks or 0 for i in tracker.inits()), default=0)
    if world:
        _world(scan, WorldSize(world, "nranks in NCCL's lines"))
    unmapped: dict[tuple[str, int], NcclCommState] = {}
    for state in states:
        rank = state.global_rank if state.global_rank is not None else default_rank
        if rank is None:
            old = unmapped.get((state.host, state.pid))
            if old is None or len(state.history) > len(old.history):
                unmapped[(state.host, state.pid)] = state
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
    for (host, pid), state in sorted(unmapped.items()):
        scan.nccl_processes.append(NcclProcess(host, pid, state.last.cuda_dev, tuple(
            Collective(rank=-1, pg=f"comm:{state.comm}", seq=op.op_count + 1, op=op.op, count=op.count,
                       dtype=op.dtype, state=CollectiveState.SCHEDULED, source="nccl") for op in state.history),
            state.nranks))
    by_channel: dict[tuple[str, int], int] | None = None
    for warn in tracker.warnings():
        rank = warn.launcher_rank
        if rank is None:
            rank = tracker.global_rank(warn.host, warn.pid)
        if rank is None and isinstance(text, str):
            by_channel = channel_ranks(text) if by_channel is None else by_channel
            rank = by_channel.get((warn.host, warn.pid))
            if rank is not None:
                scan.ranks_seen.add(rank)
                scan.hosts.setdefault(rank, warn.host)
        scan.events.append(Event(EventKind.NCCL_WARN, warn.message[:300], rank=rank, host=warn.host,
                                 evidence=(path,)))
        crash = parse_crash_line(warn.message)
        if crash is None and "out of memory" in warn.message:
            crash = CrashLine(CrashLineKind.CUDA_OOM, warn.message.strip()[:300])
        if crash is not None and crash.kind in (CrashLineKind.NETWORK, CrashLineKind.CUDA_OOM, CrashLineKind.CUDA_ERROR):
            # a transport failure NCCL itself reports: tied to its process (host:pid, GPU) even without a rank
            where = f"{warn.host}:{warn.pid}" + (f" (GPU {warn.cuda_dev})" if warn.cuda_dev is not None else "")
            named = replace(crash, text=f"{where}: NCCL WARN {crash.text}"[:400])
            item = (scan.lines_read, named, path)
            if rank is not None:
                scan.failures.setdefault(rank, []).append(item)
            else:
                scan.orphans.append(item)
                scan.orphan_hosts.setdefault(id(named), warn.host)


def _failure_of(items: list[tuple[int, CrashLine, str]]) -> tuple[int, CrashLine, str]:
    """A rank's failure: its first line that is not collateral (else its first line), made as
    specific as the lines right after it allow (``terminate called...`` then ``what(): CUDA error``)."""
    primary = [item for item in items if not item[1].collateral]
    pool = primary or items
    first = pool[0]
    near = [item for item in pool if item[0] - first[0] <= FAILURE_CLUSTER_LINES]
    return min(near, key=lambda item: (_SPECIFIC[item[1].kind], item[0]))


def failure_exit(line: CrashLine, order: int, path: str) -> ExitInfo:
    """A failure line as how the rank ended."""
    sig = _signal_number(line.signal) if line.kind in (CrashLineKind.FATAL_SIGNAL, CrashLineKind.TERMINATE) else None
    if line.kind is CrashLineKind.CUDA_ERROR and line.signal is None:
        sig = None
    return ExitInfo(exit_code=None if sig is not None else 1, signal=sig, signal_name=line.signal if sig else None,
                    message=line.text[:300], evidence=(path,), failure_kind=line.kind.value, order=order,
                    collateral=line.collateral)


def finish_watchdog(scan: LogScan) -> None:
    """Join a rank's watchdog lines: the pg its "Exception ... detected by watchdog at work: N" line
    names is the pg of its timeout at seq N; a rank with only that line timed out too."""
    timed: set[tuple[int, int]] = set()
    for index, event in enumerate(scan.events):
        if event.kind is not EventKind.WATCHDOG_TIMEOUT or event.rank is None or event.seq is None:
            continue
        timed.add((event.rank, event.seq))
        pg = scan.pg_of.get((event.rank, event.seq))
        if event.pg is None and pg is not None:
            detail = event.detail.replace(" on pg ?", f" on pg {pg}")
            scan.events[index] = replace(event, pg=pg, detail=detail)
    for (rank, seq), order in sorted(scan.detected.items(), key=lambda kv: kv[1]):
        if (rank, seq) not in timed:
            pg = scan.pg_of.get((rank, seq))
            scan.events.append(Event(EventKind.WATCHDOG_TIMEOUT, f"work {seq} on pg {pg or '?'} failed or timed out",
                                     rank=rank, pg=pg, seq=seq, order=order))
            scan.first_timeout.setdefault(rank, order)
    scan.detected.clear()


def scan_to_ranks(scan: LogScan) -> tuple[RankEvidence, ...]:
    finish_watchdog(scan)
    out: list[RankEvidence] = []
    root = _launcher_root(scan)
    for rank in sorted(scan.ranks_seen | set(scan.collectives) | set(scan.exits)):
        colls = tuple(scan.collectives.get(rank, ()))
        launcher = scan.exits.get(rank)
        failure = None
        if rank in scan.failures:
            order, line, path = _failure_of(scan.failures[rank])
            failure = failure_exit(line, order, path)
            timed_out = scan.first_timeout.get(rank)
            if timed_out is not None and order >= timed_out - FAILURE_CLUSTER_LINES and not failure.collateral:
                # what a rank raised after its own watchdog fired is the timeout's consequence
                failure = replace(failure, collateral=True)
        elif rank == root and (own := [o for o in scan.orphans if not o[1].collateral]):
            # one rank failed by the launcher's account; the log's unprefixed failure lines are its
            order, line, path = _failure_of(own)
            failure = failure_exit(line, order, path)
        exit_info = _combine(launcher, failure)
        out.append(RankEvidence(
            rank=rank, host=scan.hosts.get(rank), pid=scan.pids.get(rank), world_size=scan.world_size,
            collectives=colls, has_trace=bool(colls),
            groups=(PgMembers("0", "default_pg", None),) if colls else (),
            exit=exit_info, evidence=(), last_lines=tuple(scan.last_lines.get(rank, ())),
        ))
    return tuple(out)


def _launcher_root(scan: LogScan) -> int | None:
    """The one rank the launcher's summary says failed on its own (not torn down), if exactly one."""
    real = [rank for rank, info in scan.exits.items() if not info.ok and not info.collateral]
    return real[0] if len(real) == 1 and real[0] not in scan.failures else None


def _combine(launcher: ExitInfo | None, failure: ExitInfo | None) -> ExitInfo | None:
    """The launcher's record says how the rank ended; the log's failure line says why."""
    if launcher is None:
        return failure
    if failure is None:
        return launcher
    return ExitInfo(launcher.exit_code, launcher.signal, launcher.signal_name, launcher.time,
                    failure.message or launcher.message, launcher.evidence + failure.evidence,
                    failure.failure_kind, failure.order, failure.collateral)


def orphan_failures(scan: LogScan) -> tuple[ExitInfo, ...]:
    """Failures no line ties to a rank, first (non-collateral) ones first."""
    if _launcher_root(scan) is not None:
        return ()
    ordered = sorted(scan.orphans, key=lambda item: (item[1].collateral, item[0]))
    return tuple(replace(failure_exit(line, order, path), host=scan.orphan_hosts.get(id(line)) or _peer_host(line))
                 for order, line, path in ordered[:20])


def _peer_host(line: CrashLine) -> str | None:
    """The peer of a failed link ("Got completion from peer 10.0.0.5<1234>"): the host the line ties
    the network failure to, when no line names the reporting host."""
    if line.kind is not CrashLineKind.NETWORK or not line.peer:
        return None
    return line.peer.split("<", 1)[0].rsplit(":", 1)[0] or None
