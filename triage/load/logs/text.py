"""Log text as evidence: a rank's output.log, a job's interleaved log, or a paste from a bug report
(partial, prefixed, wrapped). I/O-free: the loader passes file contents in; every format is parsed
by triage.parsing (this module only routes lines and keeps what they said)."""

from __future__ import annotations

import json
import mmap
import re
from collections import deque
from dataclasses import replace

from triage.load.logs.facts import WorldSize, world_size_facts
from triage.load.logs.records import launcher_records, mpi_records, nccl_records, record_text
from triage.load.logs.scan import (
    FAILURE_CLUSTER_LINES,
    LAST_LINES,
    MAX_UNPARSED,
    LogScan,
    record_world,
)
from triage.load.nccl_ras import op_count_splits
from triage.load.stop_record import stop_from_json
from triage.model import Collective, CollectiveState
from triage.model.evidence import (
    Event,
    EventKind,
    InitWaitRecord,
    ReportedFingerprint,
    ReportedLag,
    ReportedMismatch,
)
from triage.parsing import needles
from triage.parsing.crashlog import (
    DUPLICATE_GPU_LOCAL,
    DUPLICATE_GPU_TEXT,
    SPAWN_BOOTSTRAP_FRAME,
    SPAWN_BOOTSTRAP_NOTE,
    CrashLine,
    CrashLineKind,
    duplicate_gpu,
    has_marker,
    parse_crash_line,
    rank_in_message,
    shortened,
)
from triage.parsing.crashlog import MARKERS as CRASH_MARKERS
from triage.parsing.desync import (
    MISMATCH_MARKER,
    RUNNING_MARKER,
    Fingerprint,
    parse_desync_report,
    parse_mismatch,
    parse_running,
)
from triage.parsing.log_owners import LineOwner, attribute_lines
from triage.parsing.named_failure import FAILURE_WORDS, named_failure
from triage.parsing.nccl.lines import NcclWarn, parse_nccl_line
from triage.parsing.raise_sites import MARKERS as RAISE_SITE_MARKERS
from triage.parsing.raise_sites import raise_site
from triage.parsing.rendezvous import MARKERS as INIT_MARKERS
from triage.parsing.rendezvous import InitWait, InitWaitKind, parse_init_line
from triage.parsing.textclean import clean_text
from triage.parsing.torchelastic import spawn_error_owner
from triage.parsing.watchdog import WatchdogKind, parse_watchdog_line
from triage.schemas import STOP_LOG_RECORD

_RANK_IN_NAME = re.compile(r"rank[-_]?(\d+)", re.IGNORECASE)
_WATCHDOG_HINTS = ("atchdog", "Timeout at NCCL work", "Heartbeat monitor", "lagging ranks", "Desync",
                   "timed out in blocking wait")
# Parts of formats we know: a line holding one that nothing parsed is reported as "unparsed".
_KNOWN_HINTS = ("Watchdog caught", "WorkNCCL(", "CollectiveFingerPrint", MISMATCH_MARKER, "NCCL WARN",
                "exitcode", "ncclRemoteError", "ncclSystemError", "ncclInternalError", "Xid")
# How specific a failure line is, when several stand together (a terminate line, then its what()).
_PROGRESS = re.compile(r"\b(?:epoch|step|iter(?:ation)?|loss|batch|eval(?:uation)?)\b", re.IGNORECASE)
_SPAWN_BOOTSTRAP_LINES = 4     # the start-up frame, its code line, the exception (a blank line at most)
_SUMMARY_FIELD = re.compile(r"\s*(?:traceback|exitcode|error_file|time|host|rank)\s*:")
# Every literal that a check of _line looks for before it parses (and named_failure's words, caseless): a line
# holding none of them skips those checks (a block's lines are sorted in one scan, triage.parsing.needles; the
# same answers: tests/load/test_line_gate.py). A check added to _line behind a new literal adds it here.
_GATE_LITERALS = (*INIT_MARKERS, "Duplicate GPU", "Traceback (most recent call last)", SPAWN_BOOTSTRAP_FRAME,
                  *RAISE_SITE_MARKERS, "terminated with the following error", *_WATCHDOG_HINTS, MISMATCH_MARKER,
                  RUNNING_MARKER, *CRASH_MARKERS, *_KNOWN_HINTS)


def rank_from_name(name: str) -> int | None:
    match = _RANK_IN_NAME.search(name)
    return int(match.group(1)) if match else None


def scan_log_text(text: str, path: str, scan: LogScan, default_rank: int | None = None,
                  nccl_source: bytes | mmap.mmap | None = None) -> None:
    """Fold one log into ``scan``: ranks from prefixes (or ``default_rank`` for a per-rank log).
    ``nccl_source``: the whole file, when ``text`` is an excerpt of it (see triage.load.logs.large)."""
    clean = clean_text(text)
    lines = clean.lines
    owners = attribute_lines(lines)
    single_node = not any(isinstance(o.key, int) for o in owners)
    scan.rank_prefixed = scan.rank_prefixed or any(o.key != "unknown" for o in owners)
    base = scan.lines_read
    skip_to = 0
    scan.spawn_owner = None
    loud = needles.lines_holding([owner.rest for owner in owners], _GATE_LITERALS, FAILURE_WORDS)
    for index, owner in enumerate(owners):
        if index < skip_to:
            continue
        rank = owner.key if isinstance(owner.key, int) else default_rank
        if isinstance(owner.key, str) and owner.key.startswith("local:") and single_node and default_rank is None:
            rank = int(owner.key.split(":", 1)[1])  # torchrun --tee on one node: local rank = rank
        rest = owner.rest
        if lines[index].startswith("[") and (tag := _TRIAGE_TAG.match(lines[index])) is not None:
            _triage_record(lines[index][tag.end():], tag.group(1), path, scan)   # triage's own line, no rank's
            continue
        checked = loud is None or index in loud
        if MISMATCH_MARKER in rest and parse_mismatch(rest) is None:
            rest, skip_to = _joined_message(owners, index)   # the message spans several lines
            checked = True
        if rank is not None:
            scan.ranks_seen.add(rank)
        before = len(scan.orphans)
        _line(rest, rank, owner.host, path, base + index, scan, checked)
        if (owner.unsure or owner.note) and len(scan.orphans) > before:
            _unsure_head(owner, lines[index], scan, before)
    scan.lines_read = base + len(lines)
    _unfinished_tracebacks(scan)
    body = "\n".join(o.rest for o in owners)
    _hosts(owners, scan)
    nccl_records("\n".join(lines) if nccl_source is None else nccl_source, path, scan, default_rank)
    # (pdsh's "node2: " before an agent's line: a launch over nodes; a pod's prefix is one node's)
    agent_hosts = {int(m.group(1)): o.host for o, line in zip(owners, lines) if o.host and "local_rank:" in o.rest
                   and line.startswith(f"{o.host}: ") and (m := _AGENT_PID.search(o.rest)) is not None}
    # (pdsh's "node2: " before DeepSpeed's launcher records: that node's launcher)
    line_hosts = [o.host if o.host and line.startswith(f"{o.host}: ") else None for o, line in zip(owners, lines)] \
        if "exits with return code" in body else None
    launcher_records(record_text(lines, owners, body), path, scan, single_node, agent_hosts, line_hosts)
    mpi_records("\n".join(lines), path, scan)        # (their [host:pid] heads name the host)
    scan.op_count_splits.extend(op_count_splits(body, path))
    scan.lagging.extend(ReportedLag(lag.ranks, lag.never_joined, lag.collective, lag.text, (path,))
                        for lag in parse_desync_report(text))
    facts = world_size_facts(body)
    record_world(scan, facts)
    if "Xid" in text or "segfault at" in text or "Killed process" in text:
        # lazy: the kernel's line parsers, only for a log that holds a kernel line
        from triage.load.kernel import dmesg_events

        scan.events.extend(dmesg_events(text, "?", path))


_AGENT_PID = re.compile(r"local_rank: \d+ \(pid: (\d+)\)")
# triage's own records in a merged.log: "[host:triage] ..." (the agent writes them; no rank does:
# a rank's line that prints one is tagged with the rank first, "[host:3] [host:triage] ...")
_TRIAGE_TAG = re.compile(r"\[([A-Za-z0-9][\w.-]*):triage\] ")


def _triage_record(text: str, host: str, path: str, scan: LogScan) -> None:
    """triage's stop record: the decision it took, with its verdict (the earliest one counts)."""
    if not text.startswith(STOP_LOG_RECORD):
        return
    try:
        data = json.loads(text[len(STOP_LOG_RECORD):])
    except ValueError:
        return
    stop = stop_from_json(data, path, host)
    if stop is not None and (scan.stop is None or stop.time < scan.stop.time):
        scan.stop = stop


def _joined_message(owners: list[LineOwner], index: int, limit: int = 12) -> tuple[str, int]:
    """A message printed over several lines, joined until it parses (or ``limit`` lines)."""
    text = owners[index].rest
    stop = min(len(owners), index + 1 + limit)
    for nxt in range(index + 1, stop):
        text = f"{text} {owners[nxt].rest.strip()}"
        if parse_mismatch(text) is not None and text.rstrip().endswith((").", ")")):
            return text, nxt + 1
    return owners[index].rest, index + 1


def _line(rest: str, rank: int | None, host: str | None, path: str, order: int, scan: LogScan,
          loud: bool = True) -> None:
    """Route one line to the parser its markers call for (``loud`` False: it holds none of _GATE_LITERALS)."""
    parsed = False
    if loud and any(marker in rest for marker in INIT_MARKERS) and (wait := parse_init_line(rest)) is not None:
        _init_wait(wait, rank, host, path, order, scan)
        return
    if loud and "Duplicate GPU" in rest and (duplicate := duplicate_gpu(rest)) is not None:
        if rank is not None:
            _nccl_detail_of(rank, order, scan)      # the NCCL error it details is this line
        _duplicate_gpu(duplicate, rest, path, order, scan)
        return
    if loud and rest.lstrip().startswith("Traceback (most recent call last)"):
        scan.tracebacks.append((rank, order, path))
    if loud and SPAWN_BOOTSTRAP_FRAME in rest:
        scan.spawn_bootstrap = order
    if loud and any(marker in rest for marker in RAISE_SITE_MARKERS) and (site := raise_site(rest)) is not None:
        scan.raise_sites.append((rank, order, path, site))
    owner = spawn_error_owner(rest) if loud and rank is None and "terminated with the following error" in rest \
        else None
    if owner is not None:
        scan.spawn_owner = owner
        return
    if rank is None and scan.spawn_owner is not None:
        rank = scan.spawn_owner
        scan.ranks_seen.add(rank)
    if rank is None and RUNNING_MARKER not in rest and (in_message := rank_in_message(rest)) is not None:
        # (DETAIL's "[Rank N] Running collective" trace lines of all ranks interleave: they own no lines)
        # "[Rank 7] NCCL watchdog thread terminated ...": the unprefixed lines after it are rank 7's
        scan.message_rank = (in_message, order)
    elif rank is None and scan.message_rank and order - scan.message_rank[1] <= FAILURE_CLUSTER_LINES:
        rank = scan.message_rank[0]
        scan.ranks_seen.add(rank)
    elif rank is not None and "terminated with exception" in rest and rank_in_message(rest) == rank:
        # a rank's watchdog exception whose message goes on without the prefix ("ncclRemoteError: ...",
        # "Last error:", its detail): those lines are this rank's
        scan.message_rank = (rank, order)
    if loud and any(hint in rest for hint in _WATCHDOG_HINTS):
        parsed = _watchdog(rest, rank, path, order, scan) and "terminated with exception" not in rest
        if parsed and rest.lstrip().startswith("what():"):
            _watchdog_terminate(rest, rank, path, order, scan)
    if loud and MISMATCH_MARKER in rest:
        mismatch = parse_mismatch(rest)
        if mismatch is not None:
            scan.mismatches.append(ReportedMismatch(_fp(mismatch.reporter), _fp(mismatch.other), (path,), order))
            for side in (mismatch.reporter, mismatch.other):
                if side.rank is not None:
                    scan.ranks_seen.add(side.rank)
            parsed = True
    elif loud and RUNNING_MARKER in rest:
        running = parse_running(rest)
        who = running.rank if running and running.rank is not None else rank
        if running is not None and who is not None and running.seq is not None and running.op:
            scan.collectives.setdefault(who, []).append(Collective(
                rank=who, pg="0", seq=running.seq, op=running.op, count=running.count,
                dtype=running.dtypes[0] if running.dtypes else None, state=CollectiveState.SCHEDULED,
                input_sizes=running.shapes, source="log", pg_name="default_pg"))
            parsed = True
    if rank is not None and scan.last_error.get(rank, -9) == order - 1 and rest.strip() \
            and (joined := _nccl_detail_of(rank, order, scan)) is not None:
        # NCCL's "Last error:" then its detail: the detail says what the exception above it was
        crash = parse_crash_line(f"{joined[1].text}; Last error: {rest.strip()}")
        if crash is not None:
            scan.failures.setdefault(rank, []).append((joined[0], crash, joined[2]))
            return
    if rest.strip() == "Last error:" and rank is not None:
        scan.last_error[rank] = order
        return
    if loud and not parsed and has_marker(rest) and not _SUMMARY_FIELD.match(rest) and "NCCL WARN" not in rest:
        # (a mismatch/Running line is not the rank's own failure; torchrun's summary is read whole;
        # NCCL WARN lines are read by the NCCL tracker, which knows their process)
        crash = parse_crash_line(rest)
        if rest.lstrip().startswith("what():"):
            crash = _joined_terminate(rest, rank, order, scan) or crash
        if crash is not None and crash.kind is CrashLineKind.EXCEPTION and scan.spawn_bootstrap is not None \
                and 0 < order - scan.spawn_bootstrap <= _SPAWN_BOOTSTRAP_LINES:
            crash = replace(crash, text=(crash.text + SPAWN_BOOTSTRAP_NOTE)[:400], collateral=True)
        if crash is not None and rank is None and (rank := rank_in_message(crash.text)) is not None:
            scan.ranks_seen.add(rank)
        if crash is not None:
            parsed = True
            item = (order, crash, path)
            if rank is not None:
                scan.failures.setdefault(rank, []).append(item)
            else:
                scan.orphans.append(item)
                if host:        # a process of no known rank whose prefix names its node (Ray's ip=, a pod)
                    scan.orphan_hosts.setdefault(id(crash), host)
    if loud and (rank is None or not parsed) and len(scan.named_failures) < MAX_UNPARSED \
            and (named := named_failure(rest, rank)) is not None:
        scan.named_failures.append((order, named[0], named[1], path))
    if not parsed and not scan.past_init and (RUNNING_MARKER in rest or _PROGRESS.search(rest)):
        scan.past_init = True
    if rank is not None and rest.strip() and not parsed:
        scan.last_lines.setdefault(rank, deque(maxlen=LAST_LINES)).append(rest.strip()[:300])
    elif rank is None and not parsed and not scan.first_timeout and not scan.failures and rest.strip():
        scan.unprefixed_tail.append(rest.strip()[:300])
    if loud and not parsed and len(scan.unparsed) < MAX_UNPARSED and any(h in rest for h in _KNOWN_HINTS) \
            and "NCCL WARN" not in rest and "exitcode" not in rest:
        scan.unparsed.append(rest.strip()[:500])


def _duplicate_gpu(duplicate: tuple[CrashLine, tuple[int, int], str], rest: str, path: str, order: int,
                   scan: LogScan) -> None:
    """NCCL's duplicate-GPU line blames both ranks it names, unless the same two numbers were told on another
    device too: then they are ranks of several communicators, and the lines are failures of no known rank."""
    line, pair, device = duplicate
    if isinstance(event := parse_nccl_line(rest), NcclWarn):
        scan.duplicate_hosts[order] = event.host          # NCCL's own head: "host:pid:tid [dev] ... NCCL WARN"
    devices = scan.duplicate_gpus.setdefault((min(pair), max(pair)), set())
    devices.add(device)
    local = any(len(told) > 1 for told in scan.duplicate_gpus.values())
    if not local:
        for both in pair:
            scan.ranks_seen.add(both)
            scan.failures.setdefault(both, []).append((order, line, path))
        return
    moved: dict[int, tuple[int, CrashLine, str]] = {}     # those already blamed on two global ranks: not theirs
    for items in scan.failures.values():
        moved.update((item[0], item) for item in items if item[1].text.startswith(DUPLICATE_GPU_TEXT))
        items[:] = [item for item in items if not item[1].text.startswith(DUPLICATE_GPU_TEXT)]
    scan.failures = {rank: items for rank, items in scan.failures.items() if items}
    for earlier, told, where in [*moved.values(), (order, line, path)]:
        orphan = replace(told, text=told.text + DUPLICATE_GPU_LOCAL)
        scan.orphans.append((earlier, orphan, where))
        if earlier in scan.duplicate_hosts:
            scan.orphan_hosts[id(orphan)] = scan.duplicate_hosts[earlier]


def _nccl_detail_of(rank: int, order: int, scan: LogScan) -> tuple[int, CrashLine, str] | None:
    """The NCCL error this rank raised just above ``order`` ("DistBackendError: NCCL error in: ...,
    invalid usage (run with NCCL_DEBUG=WARN for details)"), taken out of its failures: the
    "Last error:" detail that follows it says what it was."""
    items = scan.failures.get(rank, [])
    tail = 0          # this rank's failure lines just above: the exception and NCCL's "ncclXxxError: ..." line
    while tail < len(items) and order - items[-1 - tail][0] <= FAILURE_CLUSTER_LINES:
        tail += 1
    if not tail or not any("NCCL" in item[1].text or item[1].text.startswith("nccl") for item in items[-tail:]):
        return None
    first = next((item for item in items[-tail:] if not item[1].collateral), items[-tail])
    del items[-tail:]
    return first


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


def _watchdog_terminate(rest: str, rank: int | None, path: str, order: int, scan: LogScan) -> None:
    """``terminate called after throwing ...`` then ``  what():  [Rank 7] Watchdog caught collective
    operation timeout ...``: ProcessGroupNCCL taking its process down after the timeout the what()
    tells (read as that rank's timeout), so the pair is one collateral failure of that rank, never a
    crash of its own that would outrank the hang."""
    joined = _joined_terminate(rest, rank, order, scan)
    if joined is None:
        return
    who = rank if rank is not None else rank_in_message(joined.text)
    item = (order - 1, joined, path)
    if who is None:
        scan.orphans.append(item)
        return
    scan.ranks_seen.add(who)
    scan.failures.setdefault(who, []).append(item)


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
    target = scan.store_waits if wait.kind is InitWaitKind.STORE_WAIT_TIMEOUT else scan.init_waits
    target.append(InitWaitRecord(wait.kind.value, wait.text, who, host, wait.world_size, wait.joined,
                                 wait.address, wait.timeout_s, wait.is_timeout, (path,), order,
                                 wait.waits_for))


def _fp(fp: Fingerprint) -> ReportedFingerprint:
    return ReportedFingerprint(fp.rank if fp.rank is not None else -1, fp.seq, fp.op, fp.shapes, fp.dtypes)


def _watchdog(line: str, rank: int | None, path: str, order: int, scan: LogScan) -> bool:
    event = parse_watchdog_line(line)
    if event is None:
        return False
    # the line's own prefix ("[rank13]:") is the global rank; the message's "[Rank 1]" / "[PG ID 3 ... Rank 1]"
    # is the rank within its group, which differs from the global one in a subgroup
    who = rank if rank is not None else event.rank
    subgroup = rank is not None and event.rank is not None and rank != event.rank
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
        on_pg = f" on pg {event.pg}" if event.pg else ""       # (an older line names no pg: none is said)
        detail = f"{event.op or '?'} SeqNum={event.seq}{on_pg} ran for {event.ran_for_ms or '?'} ms"
        scan.events.append(Event(EventKind.WATCHDOG_TIMEOUT, detail, rank=who, evidence=(path,),
                                 pg=event.pg, seq=event.seq, op=event.op, count=event.numel_in, order=order))
        if who is not None and event.op in ("all_gather", "reduce_scatter") and event.numel_in and event.numel_out:
            ratio = max(event.numel_in, event.numel_out) // min(event.numel_in, event.numel_out)
            if (event.pg in (None, "0")) and not subgroup and ratio > 1 and max(event.numel_in, event.numel_out) % min(
                    event.numel_in, event.numel_out) == 0:
                record_world(scan, WorldSize(ratio, f"NumelIn/NumelOut of {event.op} on the default group"))
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


def _hosts(owners: list[LineOwner], scan: LogScan) -> None:
    for owner in owners[:20000]:
        if isinstance(owner.key, int) and owner.host:
            scan.hosts.setdefault(owner.key, owner.host)


def _unsure_head(owner: LineOwner, line: str, scan: LogScan, start: int) -> None:
    """A failure under a "[host:N]" head that the input cannot tell a rank's from a process's, or under a head that
    names a local rank of one of several replicas (torchx): said with it."""
    head = line[:line.find("]") + 1] if line.startswith("[") else f"[{owner.key}]"
    note = owner.note or (f" (its head {head} is host:pid for Open MPI and others, host:rank for triage's tag; this "
                          f"input does not tell which: read as a process; the launcher's rank tags or the job's size "
                          f"would settle it)")
    for i in range(start, len(scan.orphans)):
        order, crash, path = scan.orphans[i]
        scan.orphans[i] = (order, replace(crash, text=shortened(crash.text) + note), path)
        if (host := scan.orphan_hosts.pop(id(crash), None)) is not None:
            scan.orphan_hosts[id(scan.orphans[i][1])] = host
