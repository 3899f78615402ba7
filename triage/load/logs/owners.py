"""Whose a failure line of no rank is, where the input tells it: a CUDA OOM's GPU under a launcher of one process
per GPU (``infer_oom_rank``), mp.spawn's error block (``infer_spawn_rank``, ``note_spawn_index``), glog's thread id
as a rank's pid (``infer_thread_rank``), a job of one process (``infer_sole_process_rank``), and a rank named in
plain words (``named_failures``); each says how it knows. (Part of triage.load.logs.finish's conclusions.)"""

from __future__ import annotations

import re
from dataclasses import replace

from triage.load.logs.line_events import UNFINISHED_TRACEBACK
from triage.load.logs.scan import LogScan
from triage.parsing.crashlog import CrashLine, CrashLineKind, shortened

SETTLE_NAMED = "that rank's own log or traceback would settle what failed and why"


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
