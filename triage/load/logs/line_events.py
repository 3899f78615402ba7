"""What single log lines add to a scan beyond a failure line: NCCL's duplicate-GPU line, a terminate joined with its
what(), the watchdog's timeout and abort lines, init waits, tracebacks left without their exception line. Called
per line by :mod:`triage.load.logs.text`."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from triage.lazy_regex import lazy_regex
from triage.load.logs.facts import WorldSize
from triage.load.logs.scan import (
    FAILURE_CLUSTER_LINES,
    MAX_UNPARSED,
    LogScan,
    record_world,
)
from triage.model.evidence import (
    Event,
    EventKind,
    InitWaitRecord,
    ReportedFingerprint,
)
from triage.parsing.crashlog import (
    DUPLICATE_GPU_LOCAL,
    DUPLICATE_GPU_TEXT,
    REMOTE_TARGET_TEXT,
    CrashLine,
    CrashLineKind,
    has_marker,
    parse_crash_line,
    rank_in_message,
)
from triage.parsing.desync import Fingerprint
from triage.parsing.frameworks import HYDRA_JOB_ERROR_NOTE
from triage.parsing.gloo import GlooTimeout
from triage.parsing.named_failure import named_failure
from triage.parsing.nccl.lines import NcclWarn, parse_nccl_line
from triage.parsing.progress import is_progress_line
from triage.parsing.rendezvous import (
    COORDINATION_KINDS,
    MAX_TASK_LINES,
    InitWait,
    InitWaitKind,
    coordination_more,
)
from triage.parsing.unread_failure import unread_failure
from triage.parsing.watchdog import (
    HEARTBEAT_DETAIL,
    SERVING_STALL_DETAIL,
    VLLM_STALL_DETAIL,
    WatchdogKind,
    parse_watchdog_line,
)


def record_duplicate_gpu(duplicate: tuple[CrashLine, tuple[int, int], str], rest: str, path: str, order: int,
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
            scan.orphan_hosts[orphan] = scan.duplicate_hosts[earlier]


def nccl_detail_of(rank: int | None, order: int, scan: LogScan) -> tuple[int, CrashLine, str] | None:
    """The NCCL error this rank (None: of no known rank) raised just above ``order`` ("DistBackendError: NCCL error
    in: ..., invalid usage (run with NCCL_DEBUG=WARN for details)"), taken out of its failures: the "Last error:"
    detail that follows it says what it was."""
    items = scan.failures.get(rank, []) if rank is not None else scan.orphans
    tail = 0          # this rank's failure lines just above: the exception and NCCL's "ncclXxxError: ..." line
    while tail < len(items) and order - items[-1 - tail][0] <= FAILURE_CLUSTER_LINES:
        tail += 1
    if not tail or not any("NCCL" in item[1].text or item[1].text.startswith("nccl") for item in items[-tail:]):
        return None
    first = next((item for item in items[-tail:] if not item[1].collateral), items[-tail])
    del items[-tail:]
    return first


def colon_message(rest: str, rank: int | None, order: int, scan: LogScan) -> bool:
    """A failure line that ends in its colon ("ERROR: worker 3 failed with:") and this line, the next one of the same
    owner, the message it introduces ("  disk quota exceeded while writing checkpoint"): the failure line takes it, so
    its summary says what failed. Whether it was taken (then this line is read no further)."""
    words = rest.strip()
    if not words or not _after_colon(rank, order, scan) or has_marker(rest) or "Traceback" in rest \
            or words.startswith(("File \"", "frame #")) or named_failure(rest, rank) is not None \
            or unread_failure(rest) is not None or is_progress_line(words):
        return False        # (a line read on its own: a failure of its own, a traceback's, the run's progress)
    items = scan.failures.get(rank, []) if rank is not None else scan.orphans
    if items and items[-1][0] == order - 1 and items[-1][1].text.rstrip().endswith(":"):
        at, line, path = items[-1]
        items[-1] = (at, replace(line, text=f"{line.text.rstrip()} {words}"[:400]), path)
        return True
    if scan.named_failures and scan.named_failures[-1][0] == order - 1 \
            and scan.named_failures[-1][2].text.rstrip().endswith(":"):
        at, who, named, path = scan.named_failures[-1]
        scan.named_failures[-1] = (at, who, replace(named, text=f"{named.text.rstrip()} {words}"[:400]), path)
        return True
    if rank is None and scan.unread and scan.unread[-1][0] == order - 1 \
            and scan.unread[-1][1].text.rstrip().endswith(":"):
        at, unread, host, path = scan.unread[-1]
        scan.unread[-1] = (at, replace(unread, text=f"{unread.text.rstrip()} {words}"[:400]), host, path)
        return True
    return False


def _after_colon(rank: int | None, order: int, scan: LogScan) -> bool:
    """The line before ``order`` was a failure line of this owner (or a named or unread one) that ends in its colon."""
    items = scan.failures.get(rank, []) if rank is not None else scan.orphans
    last = [(items[-1][0], items[-1][1].text)] if items else []
    last += [(scan.named_failures[-1][0], scan.named_failures[-1][2].text)] if scan.named_failures else []
    last += [(scan.unread[-1][0], scan.unread[-1][1].text)] if rank is None and scan.unread else []
    return any(at == order - 1 and text.rstrip().endswith(":") for at, text in last)


def joined_terminate(rest: str, rank: int | None, order: int, scan: LogScan) -> CrashLine | None:
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


# gRPC's detail line under TensorFlow's error ("Additional GRPC error information from remote target
# /job:worker/replica:0/task:2:" or "... task:2 while calling /tensorflow.WorkerService/RecvBuf:"): the task the call
# could not reach, the peer of the network failure just above it
_REMOTE_TARGET = lazy_regex(r"\bfrom remote target (?P<task>/job:[\w.-]{1,64}/replica:\d{1,6}/task:\d{1,6})\b")
_REMOTE_TARGET_LINES = 4
REMOTE_TARGET_MARKER = "remote target /job:"      # (a literal every match holds: the line gate's)


def grpc_remote_target(rest: str, rank: int | None, order: int, scan: LogScan) -> bool:
    """gRPC's ``remote target /job:J/replica:R/task:N`` line under the same process's network failure (or
    TensorFlow's UnavailableError) just above it: that failure names the task it lost. Whether it was read."""
    target = _REMOTE_TARGET.search(rest)
    items = scan.failures.get(rank, []) if rank is not None else scan.orphans
    if target is None or not items or not 0 < order - items[-1][0] <= _REMOTE_TARGET_LINES:
        return False
    line = items[-1][1]
    if line.kind is not CrashLineKind.NETWORK and "UnavailableError" not in line.text:
        return False
    if REMOTE_TARGET_TEXT in line.text:
        return True
    told = f"{line.text} ({REMOTE_TARGET_TEXT} {target.group('task')})"
    items[-1] = (items[-1][0], replace(line, kind=CrashLineKind.NETWORK, text=told[:600]), items[-1][2])
    return True


def watchdog_terminate(rest: str, rank: int | None, path: str, order: int, scan: LogScan) -> None:
    """``terminate called after throwing ...`` then ``  what():  [Rank 7] Watchdog caught collective
    operation timeout ...``: ProcessGroupNCCL taking its process down after the timeout the what()
    tells (read as that rank's timeout), so the pair is one collateral failure of that rank, never a
    crash of its own that would outrank the hang."""
    joined = joined_terminate(rest, rank, order, scan)
    if joined is None:
        return
    who = rank if rank is not None else rank_in_message(joined.text)
    item = (order - 1, joined, path)
    if who is None:
        scan.orphans.append(item)
        return
    scan.ranks_seen.add(who)
    scan.failures.setdefault(who, []).append(item)


# (the words a cut traceback's failure starts with: "rank 1 raised an exception; its exception line ...")
UNFINISHED_TRACEBACK = "an exception; its exception line is not in this input"
# a Python traceback's frame line ("File "train.py", line 61, in main"), as a rank's last lines keep it
_FRAME = lazy_regex(r'File "(?P<file>[^"]{1,200})", line (?P<line>\d+), in (?P<func>\S{1,100})$')


def cut_traceback_words(tail: Sequence[str] | None) -> str:
    """A cut traceback's failure in plain words: where it is cut (its last frame, where the process's
    last lines end on a frame or on its source line), and the one thing that would settle which exception it was."""
    lines = list(tail or ())[-2:]
    frame = next((found for line in reversed(lines) if (found := _FRAME.search(line)) is not None), None)
    if frame is None:
        return (f"{UNFINISHED_TRACEBACK}; the end of its traceback (the exception line below its last frame) would "
                "settle which exception it was")
    file = frame.group("file")
    sep = "\\" if file.count("\\") > file.count("/") else "/"      # (a Windows path's separator)
    if len(file) > 40 and file.count(sep) > 2:      # (a library's long path: its last two parts name it)
        file = f"...{sep}" + sep.join(file.split(sep)[-2:])
    return (f"{UNFINISHED_TRACEBACK} (its traceback is cut after {file} line "
            f"{frame.group('line')} in {frame.group('func')}); the lines after that frame would settle which exception "
            "it was")


def unfinished_tracebacks(scan: LogScan) -> None:
    """A traceback whose exception line is not in the input (a paste cut short) is still failure
    evidence: kept as a collateral failure, so that it never outranks a real one but is never
    taken for an all-clear."""
    _open_together(scan)
    last = {rank: order for rank, order, _ in scan.tracebacks}
    for rank, order, path in scan.tracebacks:
        if order in scan.job_errors and any(who == rank and other > order for who, other, _ in scan.tracebacks):
            continue        # (Hydra's line, its traceback's own head after it: that head's failure)
        later = scan.failures.get(rank, []) if rank is not None else scan.orphans
        if any(item[0] > order for item in later) or (rank is None and any(
                item[0] > order for items in scan.failures.values() for item in items)):
            continue
        said = _ended_in_a_wait(scan, rank, order)
        if said is not None:
            # (its exception line is in the input, read as a wait before the first collective: PyTorch's "[5] is
            # setting up NCCL communicator and retrieving ncclUniqueId from [0] ... got error: ...": that line)
            line = CrashLine(CrashLineKind.EXCEPTION, said[:400], collateral=True)
            (scan.failures.setdefault(rank, []) if rank is not None else scan.orphans).append((order, line, path))
            continue
        # (the process's last lines, where this traceback is its last: the frame the paste ends at)
        tail = None if last[rank] != order else scan.last_lines.get(rank) if rank is not None else scan.unprefixed_tail
        words = cut_traceback_words(tail)
        if order in scan.job_errors:
            words = words.replace(UNFINISHED_TRACEBACK, f"{UNFINISHED_TRACEBACK} ({HYDRA_JOB_ERROR_NOTE})", 1)
        line = CrashLine(CrashLineKind.EXCEPTION, words, collateral=True)
        (scan.failures.setdefault(rank, []) if rank is not None else scan.orphans).append((order, line, path))
    scan.tracebacks.clear()


_WAIT_AFTER = 400      # (the lines after a traceback's head its exception line, read as a wait, is looked for in)


def _ended_in_a_wait(scan: LogScan, rank: int | None, order: int) -> str | None:
    """The line a rank's traceback (its head at ``order``) ends in, where a wait reader took it (an init or store
    wait of the same rank after the head, before that rank's next traceback): the exception line is in the input."""
    after = [other for who, other, _ in scan.tracebacks if who == rank and other > order]
    until = min(after, default=order + _WAIT_AFTER)
    waits = [w for w in (*scan.init_waits, *scan.store_waits)
             if w.rank == rank and w.order is not None and order < w.order <= until]
    return min(waits, key=lambda w: w.order or 0).text if waits else None


def _open_together(scan: LogScan) -> None:
    """How many tracebacks of no rank were open together where the first of them ended (their heads all before any
    exception line of no rank): interleaved, as only several processes writing at once print them (one process prints
    one traceback whole, even where it logs one and then raises it again)."""
    # (Hydra's line is no other process's traceback: its own traceback follows it)
    heads = sorted(order for rank, order, _ in scan.tracebacks if rank is None and order not in scan.job_errors)
    if len(heads) < 2:
        return
    ends = sorted(order for order, line, _ in scan.orphans if line.exc_type is not None and order > heads[0])
    if ends and (together := sum(1 for head in heads if head < ends[0])) >= 2:
        scan.open_together[ends[0]] = together


def record_init_wait(wait: InitWait, rank: int | None, host: str | None, path: str, order: int,
                     scan: LogScan) -> None:
    """A rank waiting (or timed out) before the first collective: one event per distinct line."""
    who = wait.rank if wait.rank is not None else rank
    if who is not None and wait.kind is not InitWaitKind.BARRIER_WAITING:
        scan.ranks_seen.add(who)
    key = (who, wait.kind.value, wait.joined, wait.address, wait.absent, wait.is_timeout)
    if key in scan._init_seen:
        return
    scan._init_seen.add(key)
    target = scan.store_waits if wait.kind is InitWaitKind.STORE_WAIT_TIMEOUT else scan.init_waits
    target.append(InitWaitRecord(wait.kind.value, wait.text, who, host, wait.world_size, wait.joined,
                                 wait.address, wait.timeout_s, wait.is_timeout, (path,), order,
                                 wait.waits_for, wait.absent))


def _list_ends_head(text: str) -> bool:
    """The head's line ends with task names after its "task names:" (a quoted paste joins the list's first line to
    it): the list goes on below."""
    _, found, tail = text.rpartition("task names:")
    return bool(found) and bool(tail.split()) and all(word.startswith("/job:") for word in tail.split())


def coordination_line(rest: str, order: int, scan: LogScan) -> bool:
    """The lines of a coordination service error after its head (the barrier's timeout, the heartbeat failure): "#
    of tasks that reached the barrier: 2/4", "Some timed out task names:", and under that list's head each task on
    its own line (``/job:jax_worker/replica:0/task:3``): one more process that never arrived."""
    last = scan.init_waits[-1] if scan.init_waits else None
    if last is None or last.kind not in COORDINATION_KINDS or last.order is None \
            or order - last.order > MAX_TASK_LINES:
        return False
    if last.order == order - 1 and (last.text.rstrip().endswith(":") or _list_ends_head(last.text)):
        scan.task_list = order - 1                 # the head's own line opens the list (or holds its first names)
    more = coordination_more(rest)
    if more is None:
        return False
    task, opens, reached = more
    if opens:
        scan.task_list = order
    if reached is not None:
        scan.init_waits[-1] = replace(last, joined=reached[0], world_size=reached[1])
    if task is not None:
        if scan.task_list is None or order - scan.task_list > 1:
            return False
        scan.task_list = order
        if task not in last.absent:
            scan.init_waits[-1] = replace(last, absent=(*last.absent, task))
    return True


def reported_fingerprint(fp: Fingerprint) -> ReportedFingerprint:
    return ReportedFingerprint(fp.rank if fp.rank is not None else -1, fp.seq, fp.op, fp.shapes, fp.dtypes)


def record_watchdog(line: str, rank: int | None, path: str, order: int, scan: LogScan) -> bool:
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
        detail = watchdog_detail(event.op, event.seq, on_pg, event.ran_for_ms)
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
    elif event.kind is WatchdogKind.SERVING_STALL:
        # (of no rank: the scheduler's head names the rank whose watchdog saw the batch stall, which every rank of the
        # group runs; not the rank that held it up)
        seconds = f"{event.timeout_ms // 1000} s" if event.timeout_ms else "its watchdog timeout"
        on = f" on rank {who}" if who is not None else ""
        said = (f"{VLLM_STALL_DETAIL} to {event.op} within its timeout (VLLM_EXECUTE_MODEL_TIMEOUT_SECONDS, 300 s "
                f"unless set){on}" if event.op else f"{SERVING_STALL_DETAIL} in {seconds}{on}")
        scan.events.append(Event(EventKind.WATCHDOG_TIMEOUT, f"{said} ({event.raw.strip()[-160:]})", rank=None,
                                 evidence=(path,), order=order))
    elif event.kind is WatchdogKind.HEARTBEAT_TIMEOUT:
        if who is not None:
            scan.first_timeout.setdefault(who, order)
        scan.events.append(Event(EventKind.WATCHDOG_TIMEOUT, HEARTBEAT_DETAIL, rank=who,
                                 evidence=(path,), order=order))
    return True


def watchdog_detail(op: str | None, seq: int | None, on_pg: str, ran_for_ms: int | None) -> str:
    """A watchdog timeout in words; a field the line lacks is said to be not recorded, never "None" or "?"."""
    what = op or "a collective (its op not recorded)"
    number = f"SeqNum={seq}" if seq is not None else "SeqNum not recorded"
    ran = f"ran for {ran_for_ms} ms" if ran_for_ms else "ran for a time not recorded"
    return f"{what} {number}{on_pg} {ran}"


def record_gloo_timeout(timeout: GlooTimeout, rank: int | None, path: str, order: int, scan: LogScan) -> bool:
    """gloo's send/recv that timed out: the rank (when the line's owner is known) waited in a collective or a
    p2p call that a peer never joined: a timeout like the watchdog's, not a failure of its own."""
    key = (rank, f"gloo {timeout.op}", None)
    if key in scan._timeouts:       # the same timeout again (a traceback's last line, then a summary's)
        return True
    scan._timeouts.add(key)
    if rank is not None:
        scan.ranks_seen.add(rank)
        scan.first_timeout.setdefault(rank, order)
    detail = f"gloo's {timeout.op}: {timeout.text}"
    scan.events.append(Event(EventKind.WATCHDOG_TIMEOUT, detail, rank=rank, evidence=(path,), order=order))
    return True
