"""A finished log scan turned into evidence: each rank's first failure (the most specific line
near the earliest), the watchdog's and store waits' conclusions, a rankless OOM's rank where it
can be inferred, and the launcher's records combined with what the ranks said (triage.load.logs.text
scans; this module concludes)."""

from __future__ import annotations

import re
from dataclasses import replace

from triage.lazy_regex import lazy_regex
from triage.load.logs.line_events import UNFINISHED_TRACEBACK
from triage.load.logs.ray_wrapper import ray_wrapper_alone
from triage.load.logs.scan import (
    EXIT_RECORDS,
    FAILURE_CLUSTER_LINES,
    LogScan,
    signal_number,
)
from triage.model.evidence import (
    Event,
    EventKind,
    ExitInfo,
    PgMembers,
    RankEvidence,
)
from triage.parsing import windows_status
from triage.parsing.crashlog import (
    CrashLine,
    CrashLineKind,
    peer_host,
    shortened,
)
from triage.parsing.mpi_errors import ABORT_TEXT
from triage.parsing.named_failure import named_failure
from triage.parsing.progress import is_progress
from triage.parsing.raise_sites import RaiseSiteKind
from triage.parsing.rendezvous import STORE_WAIT_DETAIL
from triage.parsing.unread_failure import UNREAD_KIND

SETTLE_NAMED = "that rank's own log or traceback would settle what failed and why"
_SPECIFIC = {CrashLineKind.CUDA_OOM: 0, CrashLineKind.CUDA_ERROR: 1, CrashLineKind.NETWORK: 2,
             CrashLineKind.NCCL_ERROR: 3, CrashLineKind.EXCEPTION: 4, CrashLineKind.TERMINATE: 5,
             CrashLineKind.FATAL_SIGNAL: 6}

def _failure_of(items: list[tuple[int, CrashLine, str]]) -> tuple[int, CrashLine, str]:
    """A rank's failure: its first line that is not collateral (else its first line), made as
    specific as the lines right after it allow (``terminate called...`` then ``what(): CUDA error``)."""
    primary = [item for item in items if not item[1].collateral]
    pool = primary or items
    first = pool[0]
    near = [item for item in pool if item[0] - first[0] <= FAILURE_CLUSTER_LINES]
    # a rank's own MPI_Abort is how it ended: a failure it printed just before (the signal its handler caught,
    # PETSc's "Caught signal number 11 SEGV" then MPI_Abort(..., 59)) is what failed
    near = [item for item in near if not (item[1].text.startswith(ABORT_TEXT)
                                          and any(other[0] < item[0] for other in near))] or near
    chosen = min(near, key=lambda item: (_SPECIFIC[item[1].kind], item[0]))
    if chosen[0] == -1 and chosen[1].text.startswith(EXIT_RECORDS):
        # a launcher's record that the rank was the first to exit with a code (Hydra's "EXIT STATUS: 1" box, Open
        # MPI's "The first process to do so was"), which says no more, and the rank's own exception line: the record
        # says how and first, the line what failed (numpy's "LinAlgError: Singular matrix" under -prepend-rank): its
        # last exception line, the one that ended it (a chain's last; not a handled one it went on past)
        said = [item for item in primary if item[1].kind is CrashLineKind.EXCEPTION and item[1].exc_type is not None]
        if said:
            return (chosen[0], said[-1][1], said[-1][2])
    return chosen


def failure_exit(line: CrashLine, order: int, path: str) -> ExitInfo:
    """A failure line as how the rank ended."""
    sig = signal_number(line.signal) if line.kind in (CrashLineKind.FATAL_SIGNAL, CrashLineKind.TERMINATE) else None
    if line.kind is CrashLineKind.CUDA_ERROR and line.signal is None:
        sig = None
    return ExitInfo(exit_code=None if sig is not None else 1, signal=sig, signal_name=line.signal if sig else None,
                    message=shortened(line.text), evidence=(path,), failure_kind=line.kind.value, order=order,
                    collateral=line.collateral, host=_peer_host(line))


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
            detail = event.detail.replace(f"SeqNum={event.seq} ran for", f"SeqNum={event.seq} on pg {pg} ran for", 1)
            scan.events[index] = replace(event, pg=pg, detail=detail)
    for (rank, seq), order in sorted(scan.detected.items(), key=lambda kv: kv[1]):
        if (rank, seq) not in timed:
            pg = scan.pg_of.get((rank, seq))
            on_pg = f" on pg {pg}" if pg else ""
            scan.events.append(Event(EventKind.WATCHDOG_TIMEOUT, f"work {seq}{on_pg} failed or timed out",
                                     rank=rank, pg=pg, seq=seq, order=order))
            scan.first_timeout.setdefault(rank, order)
    scan.detected.clear()


# Lines that show a job at work (past init): training progress, DETAIL's per-collective lines.


def finish_store_waits(scan: LogScan) -> None:
    """A store get/wait that timed out is an init hang when nothing shows the job past init; once
    the job ran collectives (or trained), it is a rank that waited for a peer that never came (the
    DETAIL wrapper's checks and the object collectives go through the store): a timeout like the
    watchdog's, of the rank that printed it, or of no known rank."""
    if not scan.store_waits:
        return
    if not (scan.past_init or scan.collectives or scan.mismatches or any(
            e.kind is EventKind.WATCHDOG_TIMEOUT for e in scan.events)):
        scan.init_waits.extend(scan.store_waits)
    else:
        for wait in scan.store_waits:
            if wait.rank is not None:
                scan.first_timeout.setdefault(wait.rank, wait.order or 0)
            scan.events.append(Event(EventKind.WATCHDOG_TIMEOUT, f"{STORE_WAIT_DETAIL}: {wait.text[:200]}",
                                     rank=wait.rank, evidence=wait.evidence, order=wait.order))
    scan.store_waits.clear()


# the launchers that start one process per GPU of a node, local rank N on GPU N (triage.parsing.launcher_kind's names)
_PER_GPU_LAUNCHERS = frozenset({"torchrun", "spawn", "deepspeed"})


def infer_oom_rank(scan: LogScan) -> None:
    """The first failure is a CUDA OOM line that names no rank but names its GPU, in an input whose
    lines carry no rank or process prefix at all and name at most one host: one process per GPU on
    one node (mp.spawn, torchrun) makes GPU N local rank N. (Under per-process CUDA_VISIBLE_DEVICES,
    as Ray sets it, every process is GPU 0; Ray's prefixes rule that out here.) The input must show
    a job of several processes (such a launcher, or other ranks, their collectives, a world size): a
    lone OOM line of one process, no launcher or rank in sight, names a device, not a rank. The launcher must be
    shown by its own output (torchelastic's records, spawn's error blocks): a command line that names it, a CI step's
    ``Run torchrun --nproc-per-node 4 ...`` or a notebook cell's ``!torchrun ...``, does not make the lines after it
    those processes' (one process's OOM on GPU 0, printed under any launch, names a device)."""
    if scan.rank_prefixed or len(set(scan.hosts.values())) > 1 or scan.over_nodes:
        return      # (pdsh's launch is one over several nodes: a GPU is no global rank there)
    if scan.launcher_shown not in _PER_GPU_LAUNCHERS and not (scan.spawn_owners or scan.ranks_seen or scan.collectives
                                                         or scan.world_size):
        return
    real = sorted((o for o in scan.orphans if not o[1].collateral), key=lambda o: o[0])
    if not real or real[0][1].kind is not CrashLineKind.CUDA_OOM or real[0][1].gpu is None:
        return
    if any(not item[1].collateral and item[0] < real[0][0] for items in scan.failures.values() for item in items):
        return
    # the OOM lines that lead the failures, each of its own GPU: each that process's (two ranks out of memory)
    leading: dict[int, tuple[int, CrashLine, str]] = {}
    for item in real:
        gpu = item[1].gpu
        if item[1].kind is not CrashLineKind.CUDA_OOM or gpu is None:
            break
        leading.setdefault(gpu, item)
    for gpu, item in leading.items():
        order, line, path = item
        scan.orphans.remove(item)
        named = replace(line, text=f"{line.text[:200]} [rank inferred from GPU {gpu}: one process per GPU on one node]")
        scan.failures.setdefault(gpu, []).append((order, named, path))
        scan.ranks_seen.add(gpu)


def infer_spawn_rank(scan: LogScan) -> None:
    """mp.spawn's ``-- Process N terminated with the following error:`` of one process, with no failure line
    of its own (its traceback cut before the exception), and the first failure an exception line of no rank
    pasted apart from it (above it, as an issue's title): spawn hands the child's exception to the parent,
    which prints it in that block, so that exception is process N's (rank N under spawn)."""
    if scan.rank_prefixed or len(scan.spawn_owners) != 1:
        return
    rank = next(iter(scan.spawn_owners))
    if any(not item[1].collateral for item in scan.failures.get(rank, [])):
        return
    real = sorted((o for o in scan.orphans if not o[1].collateral and o[0] >= 0), key=lambda o: o[0])
    if any(not item[1].collateral for r, items in scan.failures.items() if r != rank for item in items):
        return
    if not real:
        _spawn_block_cut(scan, rank)
        return
    if real[0][1].exc_type is None:
        return        # (a child's own NCCL WARN or log line may be any process's: a raised exception is the parent's)
    order, line, path = real[0]
    scan.orphans.remove(real[0])
    note = (f" [process {rank}'s: mp.spawn's error block of process {rank}, its own exception line not in this input; "
            f"rank {rank} on one node]")
    scan.failures.setdefault(rank, []).append((order, replace(line, text=shortened(line.text) + note), path))
    scan.ranks_seen.add(rank)


def spawn_index_note(index: int) -> str:
    """What mp.spawn's process index says of a rank: the same number on a job of one node whose code passes it as the
    rank (torch.multiprocessing.spawn calls fn(i, *args), i the process's index on its node)."""
    return (f" [mp.spawn's process {index}: rank {index} on one node; on several, its global rank is not in this "
            "input]")


def note_spawn_index(scan: LogScan) -> None:
    """A failure read as rank N because it is under mp.spawn's ``-- Process N terminated with the following error:``
    says so: N is the process's index on its node (torch.multiprocessing.spawn's ``fn(i, *args)``), the global rank
    on one node only (``rank = node_rank * nprocs + i`` on several). Where the same text ties it to a rank (a
    ``[rankN]:`` prefix on the lines, a ``rank N`` in the failure line's own words) it is left as it is."""
    if scan.rank_prefixed:
        return
    for index in scan.spawn_owners:
        items = scan.failures.get(index, [])
        for at, (order, line, path) in enumerate(items):
            own = re.search(rf"\brank[ =:]*{index}\b", line.text, re.IGNORECASE) is not None
            if line.collateral or own or "mp.spawn's" in line.text:
                continue        # (its own words name rank N, NCCL's "rank 1", a "[Rank 1]" head; or already noted)
            items[at] = (order, replace(line, text=shortened(line.text) + spawn_index_note(index)), path)



def _other_evidence(scan: LogScan) -> bool:
    """The input tells more than failure lines: a hang, a mismatch, a wait at start-up or a launcher's record (a
    traceback whose last line was read as one of those is not cut)."""
    return bool(scan.collectives or scan.mismatches or scan.init_waits or scan.store_waits or scan.first_timeout
                or scan.duplicate_gpus or scan.exits or scan.events or scan.unread or scan.named_failures
                or scan.job_config or scan.barrier_error)


def _spawn_block_cut(scan: LogScan, rank: int) -> None:
    """mp.spawn's ``-- Process N terminated with the following error:`` over the child's traceback, the paste cut
    before its exception line, and no failure line anywhere else: spawn's parent prints that block only for a child
    that raised, so the block is process N's error, its exception line not in this input. The child's traceback must
    start below the head (a head alone, or one the paste ends on, tells no error of its own)."""
    if scan.spawn_header is None or _other_evidence(scan):
        return
    head, text, path = scan.spawn_header
    cut = [o for o in scan.orphans if o[0] > head and o[1].collateral and o[1].text.startswith(UNFINISHED_TRACEBACK)]
    if not cut:
        return
    for item in cut:
        scan.orphans.remove(item)
    said = (f"torch.multiprocessing.spawn: process {rank} terminated with an error ({shortened(text)!r}); its"
            " exception line is not in this input (its traceback is cut before it)")
    line = CrashLine(CrashLineKind.EXCEPTION, said)
    scan.failures.setdefault(rank, []).append((head, line, path))
    scan.ranks_seen.add(rank)


def infer_thread_rank(scan: LogScan) -> None:
    """A glog FATAL line of no rank whose thread id (glog's third field: the process's pid on its main thread) is the
    pid of exactly one rank, by that rank's NCCL lines (``host:pid:tid [dev] NCCL INFO ...``): that rank's abort. A
    thread of another id (a worker thread's CHECK) stays of no rank."""
    if not scan.pids or not any(item[1].thread is not None for item in scan.orphans):
        return
    by_pid: dict[int, set[int]] = {}
    for rank, pid in scan.pids.items():
        by_pid.setdefault(pid, set()).add(rank)
    for item in list(scan.orphans):
        order, line, path = item
        ranks = by_pid.get(line.thread, set()) if line.thread is not None else set()
        if len(ranks) != 1:
            continue
        rank = next(iter(ranks))
        scan.orphans.remove(item)
        note = f" [rank {rank}'s: glog's thread id {line.thread} is the pid its NCCL lines give]"
        scan.failures.setdefault(rank, []).append((order, replace(line, text=shortened(line.text) + note), path))
        scan.ranks_seen.add(rank)


def infer_sole_process_rank(scan: LogScan) -> None:
    """The processes announce themselves, each rank 0 of a world of one (``| distributed init (rank 0,
    world 1): env://``, or its launch command's ``mpiexec -n 1``), no line carries a rank prefix (a
    ``[host:pid]`` head of one process is no rank's) and no failure is any rank's: the job had one process,
    rank 0, so the failures of no rank are its."""
    if not scan.sole_process or scan.rank_heads or len(scan.process_heads) > 1 or len(set(scan.hosts.values())) > 1:
        return
    if any(not item[1].collateral for items in scan.failures.values() for item in items):
        return
    real = sorted((o for o in scan.orphans if not o[1].collateral), key=lambda o: o[0])
    if not real and not _other_evidence(scan):
        # (a traceback the paste cuts before its exception line, and nothing else: the one process's error, fix55d)
        real = [o for o in scan.orphans if o[1].text.startswith(UNFINISHED_TRACEBACK)][:1]
    if not real:
        return
    order, line, path = real[0]
    scan.orphans.remove(real[0])
    line = replace(line, collateral=False)
    note = " [rank 0's: the job's one process, by its own line announcing rank 0 of a world of one]"
    scan.failures.setdefault(0, []).append((order, replace(line, text=shortened(line.text) + note), path))
    for item in real[1:]:
        scan.orphans.remove(item)
        scan.failures[0].append(item)
    scan.ranks_seen.add(0)


def finish_raise_sites(scan: LogScan) -> None:
    """Frames that raise one thing only, in an input that does not show that thing (a paste cut before
    its exception line, or a thread's C++ frames alone): the failure they stand for, once. The
    watchdog's checkTimeout frame is a timeout only when no timeout line is in the input; the
    rendezvous store call is a network failure only when no failure line follows it; a raise statement
    is an exception only when the input shows no other failure."""
    sites, scan.raise_sites = scan.raise_sites, []
    for rank, order, path, site in sites:
        if site.kind is RaiseSiteKind.WATCHDOG_TIMEOUT:
            if any(e.kind is EventKind.WATCHDOG_TIMEOUT for e in scan.events):
                continue
            if rank is not None:
                scan.ranks_seen.add(rank)
                scan.first_timeout.setdefault(rank, order)
            scan.events.append(Event(EventKind.WATCHDOG_TIMEOUT, site.text, rank=rank, evidence=(path,), order=order))
            continue
        later = [item for items in scan.failures.values() for item in items] + scan.orphans
        if site.kind is RaiseSiteKind.RAISE_STATEMENT:
            if any(not item[1].collateral for item in later) or scan.events or scan.init_waits or scan.mismatches \
                    or any(not e.ok for e in scan.exits.values()):
                continue      # the only failure the input shows, or none: code pasted beside a log is no run
            line = CrashLine(CrashLineKind.EXCEPTION, site.text)
        elif any(item[0] > order for item in later):
            continue
        else:
            line = CrashLine(CrashLineKind.NETWORK, site.text)
        if rank is not None:
            scan.ranks_seen.add(rank)
        (scan.failures.setdefault(rank, []) if rank is not None else scan.orphans).append((order, line, path))


def named_failures(scan: LogScan) -> None:
    """An input that shows no failure of a known rank and no sign of trouble (no timeout, mismatch,
    init wait, failed exit), but whose plain words name a rank and a failure (``rank 3 died from
    signal 11``, ``[rank3] was killed``, ``Worker 2 exited with exit code 1``): those lines are those
    ranks' failures, never "nothing recognisable" or an all-clear."""
    if not scan.named_failures or scan.failures or scan.events or scan.mismatches or scan.init_waits \
            or scan.lagging or scan.op_count_splits or any(not e.ok for e in scan.exits.values()):
        return
    named = {order for order, *_ in scan.named_failures}
    if any(not line.collateral and order not in named for order, line, _ in scan.orphans):
        return    # a failure line of no rank (or a launcher record of none) stands apart from the named ones
    for order, rank, line, path in scan.named_failures:
        scan.ranks_seen.add(rank)
        words = f"{line.text} [the line names rank {rank} in words triage reads no further: {SETTLE_NAMED}]"
        scan.failures.setdefault(rank, []).append((order, replace(line, text=words[:400]), path))
        scan.orphans = [item for item in scan.orphans if item[0] != order]


# a rank's own error line in its own words: "Error: cannot open mesh file ...", "ERROR: mesh file ... has 0 cells",
# "Fatal error: ..." (a word of error at the line's start, a colon, then what)
_OWN_ERROR = lazy_regex(r"^\W{0,3}(?:error|fatal error|fatal)\s*:\s*\w", re.IGNORECASE)


def own_words_before_abort(scan: LogScan) -> None:
    """A rank whose only failure is its own MPI_Abort (Open MPI's record) and whose last own lines hold its error
    line in plain words (``Error: cannot open mesh file ...``), with no progress of its after that line: that line is
    what failed, the abort how it ended (the rule _failure_of states for a signal line before MPI_Abort)."""
    for rank, items in scan.failures.items():
        if not items or not items[0][1].text.startswith(ABORT_TEXT):
            continue
        said = None
        for line in reversed(scan.last_lines.get(rank, ())):
            if _OWN_ERROR.match(line):
                said = line
                break
            if is_progress(line):
                break          # (its error line, if any, is one it went on past)
        if said is not None:
            order, abort, path = items[0]
            how = abort.text.split(" (", 1)[0].split(": ", 1)[0]
            own = CrashLine(CrashLineKind.EXCEPTION, f"{said} (then {how})"[:400])
            scan.failures[rank] = [(order, own, path), *items[1:]]


def _own_error_line(scan: LogScan, rank: int) -> str | None:
    """The rank's own error line in plain words among its last lines, with no progress of its after it."""
    for line in reversed(scan.last_lines.get(rank, ())):
        if _OWN_ERROR.match(line):
            return line
        if is_progress(line):
            return None         # (its error line, if any, is one it went on past)
    return None


def lost_rank_said_first(scan: LogScan) -> None:
    """A rank's failure line whose words name another rank as the one that failed or was lost (rank 0's ``FATAL ERROR:
    worker 2 stopped responding``), where that rank has no failure read but its own error line in plain words among
    its last lines (rank 2's ``ERROR: NaN detected ...``): the named rank's line is the first failure (the other
    rank's line is what it saw of it: collateral), by who the line names as by cause."""
    for rank, items in list(scan.failures.items()):
        first = next((item for item in items if not item[1].collateral), None)
        named = named_failure(first[1].text) if first is not None else None
        if first is None or named is None or named[0] == rank or scan.failures.get(named[0]):
            continue
        said = _own_error_line(scan, named[0])
        if said is None:
            continue
        order, _, path = first
        scan.failures[named[0]] = [(order - 1 if order > 0 else order, CrashLine(CrashLineKind.EXCEPTION, said[:400]),
                                    path)]
        scan.ranks_seen.add(named[0])
        scan.failures[rank] = [(o, replace(c, collateral=True) if (o, c, p) == first else c, p) for o, c, p in items]


def scan_to_ranks(scan: LogScan) -> tuple[RankEvidence, ...]:
    own_words_before_abort(scan)
    lost_rank_said_first(scan)
    named_failures(scan)
    finish_raise_sites(scan)
    finish_store_waits(scan)
    infer_oom_rank(scan)
    infer_spawn_rank(scan)
    note_spawn_index(scan)
    infer_thread_rank(scan)
    ray_wrapper_alone(scan)
    infer_sole_process_rank(scan)
    finish_watchdog(scan)
    out: list[RankEvidence] = []
    root = _launcher_root(scan)
    root_of_records = _launcher_first(scan)
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
        elif rank == root and (own := [o for o in scan.orphans if not o[1].collateral
                                       and not o[1].text.startswith(EXIT_RECORDS)
                                       and not _after_kill(scan, rank, o[0], o[1])]):
            # one rank failed by the launcher's account; the log's unprefixed failure lines are its (not another
            # launcher's bare exit code of the whole command, SageMaker's "ExitCode 1": the rank's record says more;
            # not a line after srun's record of its task's death by a signal: Snakemake's "WorkflowError", a batch
            # script's own error, tell the step's end after the task had died)
            order, line, path = _failure_of(own)
            failure = failure_exit(line, order, path)
            if (note := _same_end_note(scan, own, line, rank)) is not None:
                failure = replace(failure, message=(failure.message or "") + note)
        if launcher is not None and failure is None and launcher.signal is None and (
                scan.mismatches or any(wait.timed_out for wait in scan.init_waits) or _timeout_echo(scan, launcher)
                or _barrier_echo(scan, rank, launcher)):
            # every rank raises the DETAIL mismatch error and exits with it, or its init wait timed out
            # (a store-based barrier that never filled) and it exits, or its collective timed out (the
            # RuntimeError "NCCL communicator was aborted ... Watchdog caught ...") and it exits: the exit is
            # its consequence
            launcher = replace(launcher, collateral=True)
        if launcher is not None and failure is not None and (failure.message or "").startswith(UNFINISHED_TRACEBACK) \
                and not launcher.ok and not launcher.collateral and rank == root_of_records:
            # (the launcher's first observed failure, its traceback cut before its exception line: its own failure,
            # not a consequence of another's)
            failure = replace(failure, collateral=False)
        exit_info = _combine(launcher, failure)
        out.append(RankEvidence(
            rank=rank, host=scan.hosts.get(rank), pid=scan.pids.get(rank), world_size=scan.world_size,
            collectives=colls, has_trace=bool(colls),
            groups=(PgMembers("0", "default_pg", None),) if colls else (),
            exit=exit_info, evidence=(), last_lines=tuple(scan.last_lines.get(rank, ())),
        ))
    return tuple(out)


def _same_end_note(scan: LogScan, own: list[tuple[int, CrashLine, str]], line: CrashLine, rank: int) -> str | None:
    """Where tracebacks of no rank printed together (interleaved: several processes at once) end in the same exception
    line as the one the launcher's record gives its one failed rank (torchelastic's "failed (exitcode: 1) local_rank:
    0" names its first observed failure only): the exception is of that many processes, and which ranks the others
    were is not in the input."""
    if line.exc_type is None:
        return None
    orders = sorted(order for order, other, _ in own if other.text == line.text)
    same = min(len(orders), scan.open_together.get(orders[0], 0)) if orders else 0
    if same < 2:
        return None
    others = "the other was" if same == 2 else f"the other {same - 1} were"
    return (f" [{same} processes raised it: {same} tracebacks printed together end in it; the launcher's record names "
            f"rank {rank} only (its first observed failure): which rank {others} is not in this input]")


def _after_kill(scan: LogScan, rank: int, order: int, line: CrashLine | None = None) -> bool:
    """A line of no rank after srun's record that the rank's task died by a signal, with no later srun record of that
    task after it: the caller's account of the step (a killed process prints nothing after its death), not the task's.
    A later record of the same task after the line (a requeued or restarted step's end) makes the line that run's.
    Not a GPU runtime's own words of a fault (ROCm's "Memory access fault by GPU node-2 ...", HSA_STATUS_ERROR_*, a
    CUDA error): the dying process's stderr, which reaches the job's output after srun's record of its signal, is
    what the signal ended (srun's record says how it ended)."""
    killed = scan.killed_at.get(rank)
    if killed is None or order <= killed or (line is not None and line.kind is CrashLineKind.CUDA_ERROR):
        return False
    return not any(killed < at and order < at for at in scan.srun_records.get(rank, ()))


def _timeout_echo(scan: LogScan, launcher: ExitInfo) -> bool:
    """A launcher's bare record of an exit with an error code (torchrun's "exitcode: 1", no message) in
    an input that shows collective timeouts and no failure line other than their consequences: each
    waiting rank raises the timeout and exits with it (torchrun had stopped the job at once had a rank
    failed first), so the exit is the timeout's echo, not a first failure."""
    if not scan.first_timeout or launcher.exit_code is None or launcher.message:
        return False
    lines = [line for found in scan.failures.values() for _, line, _ in found] + [o[1] for o in scan.orphans]
    return all(line.collateral for line in lines)


def _barrier_echo(scan: LogScan, rank: int, launcher: ExitInfo) -> bool:
    """A launcher's bare exit record of a rank that a failed monitored_barrier did not name, in an input
    whose failure lines are all consequences: the rank raised the barrier's error (it waited for the
    ranks named) and exited with it."""
    if launcher.exit_code is None or launcher.message or not any(
            lag.never_joined and lag.collective == 0 and rank not in lag.ranks for lag in scan.lagging):
        return False
    lines = [line for found in scan.failures.values() for _, line, _ in found] + [o[1] for o in scan.orphans]
    return all(line.collateral for line in lines)


def log_failure(scan: LogScan, rank: int) -> ExitInfo | None:
    """What a rank's own log says it failed with (its first failure line, as specific as the lines
    near it allow): the classification both the log path and the run directory use."""
    if rank not in scan.failures:
        return None
    order, line, path = _failure_of(scan.failures[rank])
    return failure_exit(line, order, path)


def with_log_failure(ended: ExitInfo | None, scan: LogScan, rank: int) -> ExitInfo | None:
    """How a rank ended (exit.json, faulthandler, a launcher's record) joined with why, from its
    own log: a CUDA error the watchdog aborted on is that CUDA error, not "Fatal Python error:
    Aborted". Only for a rank that did end: a live rank's log lines do not end it."""
    if ended is None or ended.ok:
        return ended
    failure = log_failure(scan, rank)
    if failure is not None and (failure.message or "").startswith(UNFINISHED_TRACEBACK) and ended.message:
        return ended        # the exit record names the exception that traceback ended with (a bare `KeyboardInterrupt`)
    return _combine(ended, failure)


def _launcher_first(scan: LogScan) -> int | None:
    """The one rank the launcher's records say failed on its own (not torn down), if exactly one, whatever the log's
    failure lines say of it."""
    real = [rank for rank, info in scan.exits.items() if not info.ok and not info.collateral]
    return real[0] if len(real) == 1 else None


def _launcher_root(scan: LogScan) -> int | None:
    """The one rank the launcher's summary says failed on its own (not torn down), if exactly one and no failure line
    of the log is that rank's (_launcher_first, where the log's lines said nothing of it)."""
    first = _launcher_first(scan)
    return first if first is not None and first not in scan.failures else None


def _combine(launcher: ExitInfo | None, failure: ExitInfo | None) -> ExitInfo | None:
    """The launcher's record says how the rank ended; the log's failure line says why."""
    if launcher is None:
        return failure
    if failure is None:
        return launcher
    return ExitInfo(launcher.exit_code, launcher.signal, launcher.signal_name, launcher.time,
                    failure.message or launcher.message, launcher.evidence + failure.evidence,
                    failure.failure_kind, failure.order, failure.collateral, failure.host)


def unread_failures(scan: LogScan, unattributed: tuple[ExitInfo, ...]) -> tuple[ExitInfo, ...]:
    """The input's failure lines in words triage has no reader for (triage.parsing.unread_failure), as failures of
    no rank: only where the input shows nothing else failing or stuck (no failure of a rank or of none, no event, no
    timeout, mismatch, init wait, failed exit, collective, NCCL record, stop or hang told), so that they never
    displace a stronger reading; the first one first, a death by a signal before a line that only says it failed
    (the process's end, where the library's error line is what it printed before)."""
    if not scan.unread or unattributed or scan.failures or scan.events or scan.mismatches or scan.init_waits \
            or scan.op_count_splits or scan.lagging or scan.nccl_processes or scan.stop is not None \
            or scan.prose.hang or scan.prose.stop or any(scan.collectives.values()) \
            or any(not e.ok for e in scan.exits.values()):
        return unattributed
    out = []
    for order, unread, host, path in scan.unread:
        sig = signal_number(unread.signal) if unread.signal else None
        said = (f"a process {windows_status.how_it_ended(unread.signal or '', unread.text)}: {unread.text}"
                if sig is not None else unread.text)
        out.append(ExitInfo(exit_code=None if sig is not None else 1, signal=sig,
                            signal_name=unread.signal if sig is not None else None, message=shortened(said),
                            evidence=(path,), failure_kind=CrashLineKind.FATAL_SIGNAL.value if sig is not None
                            else UNREAD_KIND, order=order, host=host))
    out.sort(key=lambda info: info.signal is None)
    return tuple(out[:20])


def orphan_failures(scan: LogScan) -> tuple[ExitInfo, ...]:
    """Failures no line ties to a rank, first (non-collateral) ones first."""
    if _launcher_root(scan) is not None:
        return ()
    ordered = sorted(scan.orphans, key=lambda item: (item[1].collateral, item[0]))
    # an exception whose message goes on over the next lines and says there that it is a CUDA error (JAX/XLA:
    # "JaxRuntimeError: INTERNAL: Failed to ...:" then "  CUDA error: Could not synchronize CUDA stream:" and
    # "  CUDA_ERROR_ILLEGAL_INSTRUCTION: ...") is that CUDA error, as a rank's exception is (_failure_of)
    if ordered and not ordered[0][1].collateral and ordered[0][1].kind is CrashLineKind.EXCEPTION:
        first = ordered[0]
        cuda = [item for item in ordered if not item[1].collateral and 0 < item[0] - first[0] <= FAILURE_CLUSTER_LINES
                and item[1].kind in (CrashLineKind.CUDA_ERROR, CrashLineKind.CUDA_OOM)]
        if cuda:
            best = min(cuda, key=lambda item: item[0])
            ordered.remove(best)
            ordered.insert(0, best)
    # NCCL's retry notices ("Call to connect returned Connection refused, retrying") come before its
    # failure line, which names the peer: a network failure of no rank is told by the line naming one
    named = [item for item in ordered if item[1].kind is CrashLineKind.NETWORK and item[1].peer
             and not item[1].collateral]
    if named and ordered[0][1].kind is CrashLineKind.NETWORK and not ordered[0][1].peer:
        ordered.remove(named[0])
        ordered.insert(0, named[0])
    return tuple(replace(failure_exit(line, order, path), host=_culprit_host(line, scan.orphan_hosts.get(line)))
                 for order, line, path in ordered[:20])


def _culprit_host(line: CrashLine, reporter: str | None) -> str | None:
    """A connect that failed names the host that could not be reached: that peer is the finding,
    not the host that tried. Otherwise the reporting host, else the peer of a failed link."""
    if line.kind is CrashLineKind.NETWORK and line.peer and ("Connect to " in line.text or "ssh" in line.text):
        return _peer_host(line)
    return reporter or _peer_host(line)


def _peer_host(line: CrashLine) -> str | None:
    """The peer of a failed link ("Got completion from peer 10.0.0.5<1234>"): the host the line ties
    the network failure to, when no line names the reporting host."""
    if line.kind is not CrashLineKind.NETWORK or not line.peer:
        return None
    return peer_host(line.peer)
