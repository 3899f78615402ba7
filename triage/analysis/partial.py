"""Verdicts from partial evidence (pure): what a pasted log allows a maintainer to conclude.

A log excerpt is not the whole job. The ranks it does not show are "not in this input", never
missing; its world size is what it states. From such text this module concludes:
- ``TORCH_DISTRIBUTED_DEBUG=DETAIL`` mismatch errors: the minority call is the culprit; calls that
  differ only in their sequence number are said to be so, with no rank blamed;
- watchdog timeouts: a rank the input shows doing other work while the others time out in one
  collective is stuck outside it; every shown rank timing out in one collective is a hang whose
  culprit is not in this input;
- failure lines no line ties to a rank: what failed, "rank unknown";
- anything else that evidences a failure: ``failure_unlocated`` (triage.analysis.verdict.unlocated).
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Mapping

from triage.analysis.absent_rank import (
    absent_rank0,
    logger_record_of_any_rank,
    metric_dict,
    other_of_two,
    printed_by_any_rank,
    reporters_words,
)
from triage.analysis.describe import who
from triage.analysis.ranks import format_ranks, rank_word
from triage.analysis.settle import (
    SETTLE_EXECUTOR,
    SETTLE_K8S_JOB,
    SETTLE_LAUNCHER,
    SETTLE_RANK,
    SETTLE_SPARK,
    SETTLE_UNREAD,
    SPARK_UNKNOWN,
    mpi_size_body,
    settle_hang,
    settle_network,
    settle_setup,
    size_check_body,
)
from triage.analysis.verdict import headline
from triage.analysis.verdict.headline import Head
from triage.lazy_regex import lazy_regex
from triage.model import Cause, CollectiveState, Finding, MismatchKind, Verdict, VerdictKind
from triage.model.evidence import (
    Event,
    EventKind,
    Evidence,
    ExitInfo,
    RankEvidence,
    ReportedFingerprint,
    ReportedMismatch,
)
from triage.parsing.crashlog import SIZE_CHECK_TEXT
from triage.parsing.frameworks import K8S_JOB_BACKOFF, SPARK_LOST
from triage.parsing.launch_failure import LAUNCHER_ITSELF
from triage.parsing.mpi_errors import MPI_SIZE_TEXT
from triage.parsing.rendezvous import STORE_WAIT_DETAIL
from triage.parsing.unread_failure import UNREAD_KIND
from triage.parsing.watchdog import HEARTBEAT_DETAIL

Hosts = Mapping[int, str | None]
_Call = tuple[str | None, tuple[tuple[int, ...], ...], tuple[str, ...]]
# what a verdict of no rank says of its rank
RANK_UNKNOWN = "rank unknown: no line of this input ties it to a rank"
_LINE_KINDS = {"network": VerdictKind.NETWORK_ERROR, "cuda_error": VerdictKind.CRASH,
               "terminate": VerdictKind.CRASH, "fatal_signal": VerdictKind.CRASH}


def coverage(evidence: Evidence, ranks: tuple[RankEvidence, ...], world_size: int | None) -> dict[str, object]:
    """Which ranks the input holds, out of how many (and where that figure comes from)."""
    shown = tuple(r.rank for r in ranks)
    cov: dict[str, object] = {
        "ranks": format_ranks(shown) if shown else "", "count": len(shown), "world_size": world_size,
        "world_size_source": evidence.coverage_note if world_size else None, "complete": evidence.complete}
    cov["summary"] = coverage_line(cov)
    return cov


def coverage_line(cov: Mapping[str, object]) -> str:
    count = cov.get("count")
    world = cov.get("world_size")
    shown = f"rank {cov['ranks']}" if count == 1 else f"ranks {cov['ranks']}" if count else "no rank"
    if world:
        source = cov.get("world_size_source")
        return f"this input holds {shown} of {world}" + (f" (world size from {source})" if source else "")
    return f"this input holds {shown}; it does not say how many ranks the job had"


def _call(fp: ReportedFingerprint) -> _Call:
    return (fp.op, fp.shapes, fp.dtypes)


def _describe(fp: ReportedFingerprint) -> str:
    shapes = ", ".join("[" + ", ".join(str(d) for d in shape) + "]" for shape in fp.shapes)
    dtypes = ", ".join(fp.dtypes)
    inner = ", ".join(part for part in (shapes, dtypes) if part)
    return f"{(fp.op or '?').lower()}({inner})"


def _at_seq(seq: int | None) -> str:
    return f" at SequenceNumber {seq}" if seq is not None else ""


def _subkind(a: ReportedFingerprint, b: ReportedFingerprint) -> MismatchKind:
    if a.op != b.op:
        return MismatchKind.OP
    if a.shapes != b.shapes:
        return MismatchKind.SIZE
    if a.dtypes != b.dtypes:
        return MismatchKind.DTYPE
    return MismatchKind.SEQ


def reported_mismatch(mismatches: tuple[ReportedMismatch, ...], hosts: Hosts,
                      world_size: int | None) -> tuple[Verdict, Finding] | None:
    """The verdict of DETAIL mismatch errors. Rank X reports "Rank X is running A, but Rank Y is
    running B" for the first rank Y whose call differs from its own, so ranks below Y agree with X."""
    if not mismatches:
        return None
    first = min(mismatches, key=lambda m: m.order if m.order is not None else 1 << 62)
    a, b = first.reporter, first.other
    evidence = tuple(sorted({p for m in mismatches for p in m.evidence}))[:6]
    one_sided = all(m.other.rank < 0 for m in mismatches)
    if one_sided and (told := _another_reporters_call(mismatches, a)) is not None:
        b = told               # one side each, but two ranks told different calls: compare those two
    elif one_sided:
        body = (f"{who((a.rank,), hosts)} reports an inconsistent collective, {_describe(a)}"
                   f"{_at_seq(a.seq)} (TORCH_DISTRIBUTED_DEBUG=DETAIL's message gives one side only: an older PyTorch "
                   "prints no more, or the paste ends inside it): "
                "the other ranks' calls are not in this input")
        verdict = headline.verdict(VerdictKind.COLLECTIVE_MISMATCH, body, seq=a.seq)
        return verdict, Finding(VerdictKind.COLLECTIVE_MISMATCH.value, (), body, evidence, root_cause=True)
    kind = _subkind(a, b)
    if kind is MismatchKind.SEQ:
        body = (f"{who((a.rank,), hosts)} and {who((b.rank,), hosts)} run the "
                f"same {_describe(a)}, at SequenceNumber {a.seq} and {b.seq}; older PyTorch versions report "
                "exactly this as a false positive of TORCH_DISTRIBUTED_DEBUG=DETAIL, so no rank is blamed")
        verdict = headline.verdict(VerdictKind.COLLECTIVE_MISMATCH, body, head=Head.SEQ_ONLY_MISMATCH, subkind=kind,
                                   seq=a.seq)
        return verdict, Finding(VerdictKind.COLLECTIVE_MISMATCH.value, (), body, evidence, root_cause=True)
    sides: dict[_Call, set[int]] = defaultdict(set)
    calls: dict[_Call, ReportedFingerprint] = {}
    for mismatch in mismatches:
        x, y = mismatch.reporter, mismatch.other
        calls.setdefault(_call(x), x)
        calls.setdefault(_call(y), y)
        if x.rank >= 0:
            sides[_call(x)].add(x.rank)
            if y.rank >= 0 and y.rank < (1 << 20):
                sides[_call(x)].update(r for r in range(min(y.rank, 1 << 12)) if r != y.rank)
        if y.rank >= 0:
            sides[_call(y)].add(y.rank)
    for call, ranks in sides.items():   # a rank reported on two sides keeps its own report's side
        for other, other_ranks in sides.items():
            if other != call:
                other_ranks -= {r for r in ranks if any(m.reporter.rank == r and _call(m.reporter) == call
                                                          for m in mismatches)}
    ordered = sorted(sides.items(), key=lambda kv: (len(kv[1]), min(kv[1], default=0)))
    culprit_call, culprit = ordered[0]
    majority_call, majority = ordered[-1]
    culprits: tuple[int, ...] = ()
    if len(culprit) + _unshown(sides, world_size) < len(majority) or (world_size and len(majority) > world_size // 2):
        culprits = tuple(sorted(culprit))
    side_path = _side_path_call(sides, calls) if not culprits else None
    if side_path is not None:
        mine, theirs = calls[side_path], next(calls[c] for c in sides if c != side_path)
        culprits = tuple(sorted(sides[side_path]))
        opposed = sorted(r for c, rs in sides.items() if c != side_path for r in rs)
        body = (f"{who(culprits, hosts)} called {_describe(mine)}{_at_seq(mine.seq)} "
                   f"while {rank_word(opposed)} called {_describe(theirs)} (TORCH_DISTRIBUTED_DEBUG=DETAIL); "
                   f"no majority, but {(mine.op or '?').lower()} is what a side path (checkpoint saving, logging, "
                   f"evaluation, an object broadcast) calls, while {(theirs.op or '?').lower()} is the training "
                   "step's: the rank in the side path is the likelier culprit")
    elif not culprits:
        body = (f"{who((a.rank,), hosts)} runs {_describe(a)} while "
                   f"{who((b.rank,), hosts)} runs {_describe(b)}{_at_seq(a.seq)} "
                   "(TORCH_DISTRIBUTED_DEBUG=DETAIL); which of them left the common path is not in this input")
    else:
        mine, theirs = calls[culprit_call], calls[majority_call]
        reported = sorted({m.reporter.rank for m in mismatches if _call(m.reporter) == majority_call} | {
            m.other.rank for m in mismatches if _call(m.other) == majority_call and m.other.rank >= 0})
        others = rank_word(reported) + (" (and the ranks the checker compared before)" if len(majority) > len(reported)
                                        else "")
        body = (f"{who(culprits, hosts)} called {_describe(mine)}{_at_seq(mine.seq)} "
                   f"while {others} called {_describe(theirs)} (TORCH_DISTRIBUTED_DEBUG=DETAIL)")
    verdict = headline.verdict(VerdictKind.COLLECTIVE_MISMATCH, body, qualifier=f" ({kind.value})", subkind=kind,
                               culprit_ranks=culprits, seq=a.seq)
    return verdict, Finding(VerdictKind.COLLECTIVE_MISMATCH.value, culprits, body, evidence, root_cause=True)


def _another_reporters_call(mismatches: tuple[ReportedMismatch, ...],
                            reporter: ReportedFingerprint) -> ReportedFingerprint | None:
    """An older PyTorch's DETAIL message gives one side only (``Rank 0 is running inconsistent collective:
    ...``), but every rank whose call differs raises it with its own call: a second rank's report of another
    call is the other side."""
    return next((m.reporter for m in mismatches
                 if m.reporter.rank >= 0 and m.reporter.rank != reporter.rank and _call(m.reporter) != _call(reporter)),
                None)


def _unshown(sides: Mapping[_Call, set[int]], world_size: int | None) -> int:
    """How many ranks no side accounts for, at most: of the world size when the input gives it, else
    of the smallest power of two holding the ranks seen (jobs come in whole nodes of 2, 4 or 8 GPUs).
    A minority is only a culprit if it stays one with all of these on its side: rank 1 and the rank
    the checker compared before it (0) against rank 2 is no majority in a job of 4."""
    known = set().union(*sides.values())
    if not known:
        return 0
    world = world_size or 1 << max(known).bit_length()
    return max(0, world - len(known))


# The training step's collectives (gradient sync, sharded parameters) and those of side paths that
# one rank may take on its own (checkpoint saving, logging, evaluation: rooted or object collectives).
_STEP_OPS = frozenset({"all_reduce", "all_gather", "reduce_scatter", "all_to_all"})
_SIDE_PATH_OPS = frozenset({"broadcast", "scatter", "gather", "reduce", "barrier"})


def _side_path_call(sides: Mapping[_Call, set[int]], calls: Mapping[_Call, ReportedFingerprint]) -> _Call | None:
    """Two calls with no majority (1 rank against 1): the call of a side path, when exactly one side
    is in one while the other is in a training-step collective."""
    if len(sides) != 2 or not all(sides.values()):
        return None
    side = [c for c in sides if calls[c].op in _SIDE_PATH_OPS]
    step = [c for c in sides if calls[c].op in _STEP_OPS]
    return side[0] if len(side) == 1 and len(step) == 1 else None


def unattributed_verdict(failures: tuple[ExitInfo, ...], stack: str | None = None) -> tuple[Verdict, Finding] | None:
    """The first failure line that no line ties to a rank (non-collateral ones only); ``stack``: the framework the
    input names (triage.parsing.stack_words): a Spark or YARN job's failure is an executor's or a container's, whose
    job has no ranks."""
    real = [f for f in failures if not f.collateral and f.failure_kind != "stopped"]   # (a stop: its own rule)
    if not real:
        return None
    first = real[0]
    # a size check between ranks (MPICH's on its error stack, NCCL's net transport's): a mismatch, its reporter of
    # no known rank
    size_body = next((make for text, make in ((MPI_SIZE_TEXT, mpi_size_body), (SIZE_CHECK_TEXT, size_check_body))
                      if text in (first.message or "")), None)
    if size_body is not None:
        body = size_body(f"a process of no known rank{f' on {first.host}' if first.host else ''}", first.message or "")
        verdict = headline.verdict(VerdictKind.COLLECTIVE_MISMATCH, body, qualifier=" (size)",
                                   subkind=MismatchKind.SIZE)
        return verdict, Finding(VerdictKind.COLLECTIVE_MISMATCH.value, (), body, first.evidence, root_cause=True)
    where = f" on host {first.host}" if first.host and first.host not in (first.message or "")[:200] else ""
    if first.failure_kind == UNREAD_KIND:
        # words of a library triage has no reader for: what the input says failed, and what would settle it
        who = "a failure of an unknown executor or container" if stack == "spark" else "a failure of unknown rank"
        body = f"{who}{where}: {first.message} [{SETTLE_UNREAD}]"
        verdict = headline.verdict(VerdictKind.FAILURE_UNLOCATED, body, culprit_host=first.host)
        return verdict, Finding(VerdictKind.FAILURE_UNLOCATED.value, (), body, first.evidence, root_cause=True)
    kind = _LINE_KINDS.get(first.failure_kind or "", VerdictKind.EXCEPTION)
    setup = settle_setup(first.message or "", first.host)
    if setup is not None:          # no rank is at fault: never ask for one
        verdict = headline.verdict(kind, f"{first.message} [{setup}]", culprit_host=first.host,
                                   qualifier=f"{where} (no rank at fault: the job's set-up failed)",
                                   cause=Cause(signal=first.signal))
        return verdict, Finding(kind.value, (), verdict.summary, first.evidence, root_cause=True)
    if LAUNCHER_ITSELF in (first.message or ""):      # the launcher's own signal: no rank to ask for
        verdict = headline.verdict(kind, f"{first.message} [{SETTLE_LAUNCHER}]", culprit_host=first.host,
                                   qualifier=f"{where} (no rank at fault: the launcher itself died)",
                                   cause=Cause(signal=first.signal))
        return verdict, Finding(kind.value, (), verdict.summary, first.evidence, root_cause=True)
    # (a network failure: the link settles it, not which rank reported it)
    settle = (settle_network(first.message or "", first.host) if kind is VerdictKind.NETWORK_ERROR
              else SETTLE_K8S_JOB if K8S_JOB_BACKOFF in (first.message or "")
              else SETTLE_SPARK if SPARK_LOST in (first.message or "")
              else SETTLE_EXECUTOR if stack == "spark" else SETTLE_RANK)
    unknown = SPARK_UNKNOWN if stack == "spark" else RANK_UNKNOWN
    verdict = headline.verdict(kind, f"{first.message} [{settle}]", culprit_host=first.host,
                               qualifier=f"{where} ({unknown})", cause=Cause(signal=first.signal))
    return verdict, Finding(kind.value, (), verdict.summary, first.evidence, root_cause=True)


_NOT_WORK = lazy_regex(r"^(?:File |Traceback|frame #|```|--|\.\.\.|\^|\[?[EWIF]\d{3,4}\b|\w*Warning|warnings?\.|"
                       r"Exception raised|Thread\b|\s*$|#\d+ \S+ from \S+:\d+$)|NCCL (?:INFO|WARN)|[Ww]atchdog|"
                       r"Timeout\(ms\)|[Uu]nhandled exception|<Thread\(|:\d+: \w*Warning\b|"
                       # ProcessGroupNCCL's own failure handling: heartbeat, debug-info and Flight Recorder dumps
                       r"^\[[EWIF]\d{0,4}(?: [\d:.]+)?(?: \d+)? ?\w+\.(?:cpp|cc|hpp|h):\d+\]|[Hh]eartbeat monitor|"
                       r"dump(?:ing)? (?:the )?debug info|dump signal|[Ff]light ?[Rr]ecorder|failed collective|"
                       # the command that started the job (a shell's prompt or its `set -x` trace, a CI step's "Run",
                       # a notebook's "!")
                       r"^(?:[$#%] |!|Run |\+{1,9} )|^(?:\w+=\S+ )*(?:torchrun|python[\d.]*|srun|mpirun|mpiexec|"
                       r"deepspeed|accelerate launch|horovodrun|sbatch|salloc|bash|sh) ")
# A periodic training report (a metric per line, a step header, a progress bar short of 100%) is
# the training loop's own progress, which every rank runs: it does not show rank-0-only work.
_METRIC = lazy_regex(r"^[\w./() -]+?\s*[=:]\s*-?[\d.,]+(?:[eE][+-]?\d+)?%?$")
_STEP_REPORT = lazy_regex(r"\bstep[=: ]\s*\d+\s*/\s*\d+", re.IGNORECASE)
_PROGRESS = lazy_regex(r"(?<!\d)(\d{1,3})%\|")
_OUTSIDE = lazy_regex(r"sav(?:e|ing)|checkpoint|eval|valid|test|export|upload|merg", re.IGNORECASE)


def _routine_progress(text: str) -> bool:
    if metric_dict(text):
        return True
    if _OUTSIDE.search(text):
        return False
    bar = _PROGRESS.search(text)
    if bar is not None:
        return int(bar.group(1)) < 100
    return _METRIC.match(text) is not None or _STEP_REPORT.search(text) is not None


def _rank0_at_work(timed_out: list[int], ranks: tuple[RankEvidence, ...], tail: tuple[str, ...]) -> str | None:
    """Rank 0 neither timed out nor shows up, while the unprefixed lines just before the timeouts
    (what training scripts print from rank 0 only: progress, "Saving checkpoint", evaluation)
    show work: the seasoned reading is that rank 0 is busy outside the collective."""
    if not tail or 0 in timed_out or any(r.rank == 0 for r in ranks) or len(timed_out) < 1:
        return None
    for index in range(len(tail) - 1, -1, -1):
        text = tail[index].strip()
        if reporters_words(text):
            return None        # the pasted block starts below: no line of it shows rank 0's own work
        if logger_record_of_any_rank(text) or printed_by_any_rank(tail, index):
            continue           # a logger, a warning or a report every rank may print: not rank 0's own work
        if _is_work(text) and not _frame_source(tail, index):
            return None if _routine_progress(text) else text[:160]
    return None


_FRAME = lazy_regex(r'^File "[^"]+", line \d+')


def _frame_source(tail: tuple[str, ...], index: int) -> bool:
    """A traceback frame's source line (after ``File "x.py", line N``, or continuing one): not work."""
    for back in range(index - 1, max(index - 3, -1), -1):
        before = tail[back].strip()
        if _FRAME.match(before) or not before.endswith((",", "(", "\\")):
            return _FRAME.match(before) is not None
    return False


def _is_work(text: str) -> bool:
    """A line that reads as what a program was doing: not a traceback/frame/log-noise line, and not
    a lone token (a path or address a terminal wrapped onto its own line)."""
    return not _NOT_WORK.search(text) and len(text) >= 8 and len(text.split()) >= 2


def _rank0_before_barrier(timeouts: list[Event], timed_out: list[int], ranks: tuple[RankEvidence, ...],
                          pg: str | None, seq: int | None) -> bool | None:
    """Several ranks (never rank 0) time out in the same 1-element all_reduce of the default group,
    and rank 0 shows no line at all: the rank-0-only work before a barrier (saving a checkpoint).
    Not at SeqNum 1: the group's first collective usually creates its NCCL communicator, which every
    rank joins; with no line of other work, a hang there is more often the link's (P2P, network)."""
    if seq is None or seq <= 1 or len(timed_out) < 2 or 0 in timed_out or pg not in (None, "0"):
        return None
    if any(r.rank == 0 for r in ranks):
        return None
    at = [e for e in timeouts if e.seq == seq and e.pg == pg and e.op]   # ("detected at work N" lines say no op)
    if not at or any(e.op != "all_reduce" or e.count != 1 for e in at):
        return None
    return True


def watchdog_verdict(ranks: tuple[RankEvidence, ...], events: tuple[Event, ...], hosts: Hosts,
                     cov: Mapping[str, object],
                     unprefixed_tail: tuple[str, ...] = (),
                     stopped: tuple[int, ...] = ()) -> tuple[Verdict, Finding] | None:
    """Watchdog timeouts without traces: one collective timed out on the ranks shown (``stopped``: the pids
    torchrun's agent stopped once a worker failed)."""
    timeouts = [e for e in events if e.kind is EventKind.WATCHDOG_TIMEOUT and e.rank is not None]
    if not timeouts:
        return _store_wait_verdict(ranks, events, hosts, unprefixed_tail)
    by_seq = Counter((e.pg, e.seq) for e in timeouts if e.seq is not None)
    timed_out = sorted({e.rank for e in timeouts if e.rank is not None})
    if by_seq:
        (pg, seq), _n = by_seq.most_common(1)[0]
        ops = sorted({e.op for e in timeouts if e.seq == seq and e.pg == pg and e.op})
        where = f"{(ops[0] if ops else 'a collective').upper()} SeqNum={seq}" + (f" of pg {pg}" if pg else "")
    else:
        pg, seq, where = None, None, "a collective"
        if all(e.detail == HEARTBEAT_DETAIL for e in timeouts):
            # (the heartbeat monitor says the watchdog thread itself made no progress, not which collective hung)
            where = ("a collective or a CUDA/NCCL call: ProcessGroupNCCL's heartbeat monitor saw its watchdog stuck "
                     "(\"watchdog got stuck\" / \"Heartbeat monitor timed out\"), which names no collective")
    # (a rank whose last line is ProcessGroupNCCL's own failure handling is in the failure, not at work)
    quiet = [r for r in ranks if r.rank not in timed_out and r.last_lines and r.exit is None
             and _is_work(r.last_lines[-1].strip())]
    if quiet and len(timed_out) >= 1:
        culprits = tuple(r.rank for r in quiet)
        doing = quiet[0].last_lines[-1][:160]
        body = (f"{who(culprits, hosts)} did not time out with the others: its last line shows other "
                   f"work ({doing!r}) while {rank_word(timed_out)} timed out in {where}")
        verdict = headline.verdict(VerdictKind.STUCK_OUTSIDE_COLLECTIVE, body, culprit_ranks=culprits,
                                   process_group=pg, seq=seq)
        return verdict, Finding(verdict.kind.value, culprits, body, root_cause=True)
    # (rank numbers of another group's timeouts are ranks within that group: no global rank 0 to infer)
    rank0 = _rank0_at_work(timed_out, ranks, unprefixed_tail) if pg in (None, "0") else None
    if rank0 is not None:
        body = (f"rank 0 (inferred) did not time out with the others: {rank_word(timed_out)} timed out in "
                   f"{where}, and the last line without a rank prefix before the timeouts (such lines usually come "
                   f"from rank 0 alone) shows other work: {rank0!r}")
        verdict = headline.verdict(VerdictKind.STUCK_OUTSIDE_COLLECTIVE, body, culprit_ranks=(0,), process_group=pg,
                                   seq=seq)
        return verdict, Finding(verdict.kind.value, (0,), body, root_cause=True)
    barrier = _rank0_before_barrier(timeouts, timed_out, ranks, pg, seq)
    if barrier is not None:
        body = (f"rank 0 (inferred) did not reach the barrier-shaped collective that {rank_word(timed_out)} "
                   f"timed out in ({where}, a 1-element all_reduce: how NCCL runs a barrier, or a scalar flag): "
                   "rank 0 is not among the waiting ranks and the input shows none of its lines; rank 0 is the rank "
                   "that does rank-0-only work before such a barrier (checkpoint saving, evaluation, logging)")
        verdict = headline.verdict(VerdictKind.STUCK_OUTSIDE_COLLECTIVE, body, culprit_ranks=(0,), process_group=pg,
                                   seq=seq)
        return verdict, Finding(verdict.kind.value, (0,), body, root_cause=True)
    absent = absent_rank0(timed_out, ranks, (pg, seq, where), sorted({e.op or "" for e in timeouts}),
                          cov.get("world_size"), coverage_line(cov)) or \
        other_of_two(timed_out, ranks, (pg, seq, where), cov.get("world_size"), stopped, coverage_line(cov))
    if absent is not None and len(by_seq) == 1:
        return absent
    ahead = _ranks_ahead(timeouts, pg, seq)
    waiting = [r for r in timed_out if r not in ahead]
    past = ""
    if ahead:
        later = ", ".join(sorted(set(ahead.values())))
        past = (f"; {rank_word(sorted(ahead))} timed out later in the same group ({later}): "
                f"{'it' if len(ahead) == 1 else 'they'} had passed that collective")
    body = (f"{rank_word(waiting)} timed out in {where}{past}; the rank that did not join is not in this "
               f"input ({coverage_line(cov)}): {settle_hang(ranks, timed_out, cov)}")
    verdict = headline.verdict(VerdictKind.HANG, body, process_group=pg, seq=seq)
    return verdict, Finding(VerdictKind.HANG.value, tuple(timed_out), body, root_cause=True)


def _ranks_ahead(timeouts: list[Event], pg: str | None, seq: int | None) -> dict[int, str]:
    """Ranks whose every timeout is in a later collective of the same group than ``seq``: they were
    past the collective the others wait in (rank -> the later collective)."""
    if seq is None:
        return {}
    mine: dict[int, list[Event]] = {}
    for event in timeouts:
        if event.rank is not None and event.seq is not None:
            mine.setdefault(event.rank, []).append(event)
    return {rank: f"{(events[0].op or 'a collective').upper()} SeqNum={events[0].seq}"
            for rank, events in mine.items() if all(e.pg == pg and e.seq is not None and e.seq > seq for e in events)}


def _store_wait_verdict(ranks: tuple[RankEvidence, ...], events: tuple[Event, ...], hosts: Hosts,
                        tail: tuple[str, ...]) -> tuple[Verdict, Finding] | None:
    """Processes of no known rank timed out waiting on the store for a peer, and the input shows
    exactly one rank, alive and at work (or arriving late in its collective): that rank is the peer
    they waited for, busy outside the collective."""
    waits = [e for e in events if e.kind is EventKind.WATCHDOG_TIMEOUT and e.detail.startswith(STORE_WAIT_DETAIL)]
    shown = [r for r in ranks if r.exit is None and (r.last_lines or r.collectives)]
    if not waits or len(shown) != 1 or len(ranks) != 1:
        return None
    rank = shown[0]
    work = rank.last_lines[-1] if rank.last_lines else _work_line(tail)
    if work is None:
        return None
    late = [c for c in rank.collectives if c.state is not CollectiveState.COMPLETED]
    arrived = (f"; it then entered {late[-1].op or 'a collective'} (seq {late[-1].seq}) late" if late else "")
    body = (f"{who((rank.rank,), hosts)} was busy outside the collective ({work[:120]!r}){arrived}, while "
               f"{len(waits)} process{'es' if len(waits) > 1 else ''} of no known rank timed out waiting on the c10d "
               f"store for it ({waits[0].detail.split(': ', 1)[-1][:80]}): a store wait, not a network failure")
    verdict = headline.verdict(VerdictKind.STUCK_OUTSIDE_COLLECTIVE, body, culprit_ranks=(rank.rank,))
    return verdict, Finding(verdict.kind.value, (rank.rank,), body, root_cause=True)


def _work_line(tail: tuple[str, ...]) -> str | None:
    for line in reversed(tail):
        text = line.strip()
        if _is_work(text):
            return text[:160]
    return None
