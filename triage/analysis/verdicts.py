"""Verdict wording: the first line of every report, and what to do next (pure)."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import replace

from triage.analysis.advice import INIT_HANG_STEPS
from triage.analysis.describe import call, who
from triage.analysis.diff import Disagreement, Straggle
from triage.analysis.failures import (
    Failure,
    cut_root_ties,
    same_error,
    same_second_aborts,
    same_second_exits,
    untimed_same_exits,
)
from triage.analysis.gpu_facts import busy_note
from triage.analysis.p2p import P2pProblem
from triage.analysis.ranks import rank_word
from triage.analysis.settle import PER_RANK_OUTPUT, mpi_size_body, size_check_body
from triage.analysis.stall_ended import ENDED, STALL_STEP
from triage.analysis.verdict import headline
from triage.analysis.verdict.headline import Head
from triage.model import (
    Cause,
    Collective,
    CollectiveState,
    Finding,
    MismatchKind,
    Verdict,
    VerdictKind,
)
from triage.model.evidence import AFTER_EXIT_RECORD, RankEvidence
from triage.parsing.crashlog import SIZE_CHECK_TEXT
from triage.parsing.mpi_errors import MPI_COLLECTIVE_SIZE_TEXT, MPI_SIZE_TEXT, mpi_size_sender

Hosts = Mapping[int, str | None]
Paths = Mapping[int, tuple[str, ...]]


def _where(d: Disagreement | Straggle) -> str:
    seq = d.seq
    return f"at seq {seq} of {d.group.label}"


def _mismatch_text(d: Disagreement, hosts: Hosts) -> str:
    if d.kind is MismatchKind.SIZE and d.culprit_call.count == d.majority_call.count:
        return _mismatch_words(d, hosts, lambda c: call(c, out=True))
    return _mismatch_words(d, hosts, call)


def _mismatch_words(d: Disagreement, hosts: Hosts, call: Callable[[Collective], str]) -> str:
    if d.ambiguous:
        return (f"{rank_word(d.culprits)} disagree {_where(d)}: {who(d.majority_call_ranks, hosts)} called "
                f"{call(d.majority_call)} while {who(d.culprit_call_ranks, hosts)} called "
                f"{call(d.culprit_call)}; no clear minority, so the culprit is one of them")
    if d.skipped:
        ahead = "" if set(d.next_ranks) == set(d.majority) else f" ({rank_word(d.next_ranks)} already did)"
        return (f"{who(d.culprits, hosts)} skipped {call(d.majority_call)} {_where(d)}: it was already in "
                f"{call(d.culprit_call)}, the op {rank_word(d.majority)} call next at seq {d.seq + 1}{ahead}")
    return (f"{who(d.culprits, hosts)} called {call(d.culprit_call)} {_where(d)} while "
            f"{rank_word(d.majority)} called {call(d.majority_call)}")


def mismatch_finding(d: Disagreement, hosts: Hosts, root: bool, paths: Paths) -> Finding:
    text = f"{d.kind.value} mismatch: {_mismatch_text(d, hosts)}"
    if d.absent:
        text += f"; {rank_word(d.absent)} never reached seq {d.seq}"
    evidence = _paths(paths, d.culprits[:4] + d.majority[:1])
    return Finding(VerdictKind.COLLECTIVE_MISMATCH.value, d.culprits, text, evidence, root_cause=root)


def _paths(paths: Paths, ranks: tuple[int, ...]) -> tuple[str, ...]:
    """The trace files (dumps, logs) of these ranks: the evidence to open first."""
    out: list[str] = []
    for rank in ranks:
        out.extend(p for p in paths.get(rank, ()) if p not in out)
    return tuple(out[:10])


def mismatch(
    d: Disagreement, hosts: Hosts, finished_cleanly: bool, traces: Mapping[int, tuple[Collective, ...]],
    paths: Paths,
) -> tuple[Verdict, Finding]:
    if d.in_flight:
        head = Head.HANG
    elif finished_cleanly or all(
        c.state is CollectiveState.COMPLETED for r in d.culprits + d.majority for c in traces.get(r, ())
    ):
        head = Head.SILENT_MISMATCH
    else:
        head = Head.MISMATCH
    body = _mismatch_text(d, hosts)
    if head is Head.SILENT_MISMATCH:
        body += " (the collective completed: results are probably wrong)"
    verdict = headline.verdict(VerdictKind.COLLECTIVE_MISMATCH, body, head=head, subkind=d.kind,
                               culprit_ranks=d.culprits, process_group=d.group.pg, seq=d.seq)
    return verdict, mismatch_finding(d, hosts, root=True, paths=paths)


def p2p_finding(problem: P2pProblem, hosts: Hosts, paths: Paths, root: bool) -> Finding:
    where = f"of {problem.group.label}"
    if problem.kind is None:
        side = problem.send or problem.recv
        if not (side is not None):
            raise RuntimeError("internal error: expected side is not None")
        waiter = problem.sender if problem.send is not None else problem.receiver
        other = problem.receiver if problem.send is not None else problem.sender
        missing = "recv" if problem.send is not None else "send"
        text = (f"{who((waiter,), hosts)} waits in {call(side)} (p2p seq {side.seq} {where}) but rank {other} "
                f"never posted the matching {missing}")
        culprits: tuple[int, ...] = (other,)
    else:
        if not (problem.send is not None and problem.recv is not None):
            raise RuntimeError("internal error: expected problem.send is not None and problem.recv is not None")
        text = (f"p2p {problem.kind.value} mismatch {where}: rank {problem.sender} sent {call(problem.send)} "
                f"but rank {problem.receiver} posted {call(problem.recv)}")
        culprits = (problem.sender, problem.receiver)
    return Finding(VerdictKind.COLLECTIVE_MISMATCH.value, culprits, text,
                   _paths(paths, (problem.sender, problem.receiver)), root_cause=root)


def p2p_verdict(problem: P2pProblem, hosts: Hosts, paths: Paths) -> tuple[Verdict, Finding]:
    finding = p2p_finding(problem, hosts, paths, root=True)
    head = Head.HANG if problem.kind is None else Head.MISMATCH
    side = problem.send or problem.recv
    verdict = headline.verdict(VerdictKind.COLLECTIVE_MISMATCH, finding.detail, head=head,
                               subkind=problem.kind or MismatchKind.OP, culprit_ranks=finding.ranks,
                               process_group=problem.group.pg, seq=side.seq if side else None)
    return verdict, finding


def failure(first: Failure, failures: list[Failure], hosts: Hosts) -> tuple[Verdict, Finding]:
    if SIZE_CHECK_TEXT in first.detail:
        return _size_check_mismatch(first, failures, hosts)
    if MPI_SIZE_TEXT in first.detail:
        return _mpi_size_mismatch(first, failures, hosts)
    if first.kind is VerdictKind.NETWORK_ERROR:
        return _network_failure(first, failures)
    if tied := same_second_exits(first, failures):
        return _untold_first(first, tied, hosts, untimed_same_exits(first, failures, tied))
    if aborted := same_second_aborts(first, failures):
        return _untold_abort(first, aborted, hosts)
    cut, how = cut_root_ties(first, failures)
    if cut:
        first = how or first
        body = (f"{rank_word(cut)} failed in the same second; torchrun's root-cause record is cut before its exit "
                "code" + (f"; {how.detail}" if how else ""))
        verdict = headline.verdict(first.kind, body, head=Head.CRASH if how else Head.EXCEPTION, culprit_ranks=cut,
                                   cause=Cause(signal=first.signal))
        return verdict, Finding(first.kind.value, cut, verdict.summary, first.evidence, first.time, True)
    head = Head.CRASH if first.kind is VerdictKind.CRASH else Head.EXCEPTION
    summary = first.detail
    if first.time is not None:
        summary += f" (at {time.strftime('%H:%M:%S', time.gmtime(first.time))} UTC)"
    # one line that names several ranks (NCCL's "Duplicate GPU detected : rank 1 and rank 0") blames them all
    same = tuple(sorted({f.rank for f in failures if f.order is not None and f.order == first.order}
                        | {f.rank for f in failures if _same_fault(f, first)}
                        | {f.rank for f in failures if _DUPLICATE_GPU in first.detail and _DUPLICATE_GPU in f.detail}
                        )) or (first.rank,)
    if len(same) > 1:
        summary += f"; {rank_word([r for r in same if r != first.rank])} failed the same way at the same time"
    alike = sorted({f.rank for f in failures if same_error(f, first)} - set(same))
    if alike:
        summary += (f"; {rank_word(alike)} raised the same error: a cause the ranks share (their arguments, code "
                    "or data), not one rank's")
        same = tuple(sorted(set(same) | set(alike)))
    later = sorted({f.rank for f in failures[1:]} - set(same))
    if later:
        summary += f"; {rank_word(later)} failed after it (collateral)"
    verdict = headline.verdict(first.kind, summary, head=head, culprit_ranks=same, cause=Cause(signal=first.signal))
    return verdict, Finding(first.kind.value, same, first.detail, first.evidence, first.time, True)


def _size_check_mismatch(first: Failure, failures: list[Failure], hosts: Hosts) -> tuple[Verdict, Finding]:
    """NCCL's size check (:func:`size_check_body`): no rank is blamed."""
    body = size_check_body(who((first.rank,), hosts), first.detail)
    others = sorted({f.rank for f in failures if f.rank != first.rank})
    if others:
        body += f"; {rank_word(others)} failed after it"
    verdict = headline.verdict(VerdictKind.COLLECTIVE_MISMATCH, body, qualifier=" (size)", subkind=MismatchKind.SIZE)
    return verdict, Finding(VerdictKind.COLLECTIVE_MISMATCH.value, (), body, first.evidence, first.time, True)


def _mpi_size_mismatch(first: Failure, failures: list[Failure], hosts: Hosts) -> tuple[Verdict, Finding]:
    """MPICH's size check in a rank's fatal error: the pair of ranks it names (the receiver, whose call failed, and the
    sender, where the check says it) disagree on a message's size; which of the two called it wrong, it cannot tell."""
    body = mpi_size_body(who((first.rank,), hosts), first.detail)
    sender = mpi_size_sender(first.detail)
    # a collective's check ("message sizes do not match across processes in the collective routine") names only the
    # rank that found it, on a message some other rank of the collective sent: no rank is known to be wrong
    pair = (() if sender is None and MPI_COLLECTIVE_SIZE_TEXT in first.detail
            else tuple(sorted({first.rank} | ({sender} if sender is not None else set()))))
    others = sorted({f.rank for f in failures if f.rank not in pair and f.rank != first.rank})
    if others:
        body += f"; {rank_word(others)} failed after it"
    verdict = headline.verdict(VerdictKind.COLLECTIVE_MISMATCH, body, qualifier=" (size)", subkind=MismatchKind.SIZE,
                               culprit_ranks=pair, culprit_host=None if pair else hosts.get(first.rank))
    return verdict, Finding(VerdictKind.COLLECTIVE_MISMATCH.value, pair, body, first.evidence, first.time, True)


def _untold_first(first: Failure, tied: tuple[int, ...], hosts: Hosts,
                  untimed: tuple[int, ...] = ()) -> tuple[Verdict, Finding]:
    when = time.strftime('%H:%M:%S', time.gmtime(first.time or 0))
    # (a record of the same exit whose time a paste cut off: the same exit, its second not in the input)
    times = "its record's time is" if len(untimed) == 1 else "their records' times are"
    also = f", and {rank_word(untimed)} with the same code ({times} not in this input)" if untimed else ""
    body = (f"{who(tied, hosts)} exited with the same code in the same second ({when} UTC){also}; the "
               f"launcher lists rank {first.rank} first, but its summary cannot tell which failed first: the ranks' "
               f"own output (their tracebacks: {PER_RANK_OUTPUT}, or run under `triage launch`) would settle it")
    return headline.verdict(VerdictKind.EXCEPTION, body), Finding(first.kind.value, tied, body, first.evidence,
                                                                  first.time, True)


def _untold_abort(first: Failure, tied: tuple[int, ...], hosts: Hosts) -> tuple[Verdict, Finding]:
    when = time.strftime('%H:%M:%S', time.gmtime(first.time or 0))
    summary = (f"{who(tied, hosts)} {'were' if len(tied) > 1 else 'was'} killed by SIGABRT in the same second "
               f"({when} UTC); the launcher lists rank {first.rank} first, but its summary cannot tell which aborted "
               "first, and ranks aborting together are most often ProcessGroupNCCL taking each process down after a "
               f"collective timed out or failed: the ranks' own output (the watchdog's lines: {PER_RANK_OUTPUT}, or "
               "run under `triage launch`) would settle it")
    return (headline.verdict(VerdictKind.CRASH, summary, cause=Cause(signal=first.signal)),
            Finding(first.kind.value, tied, summary, first.evidence, first.time, True))


_DUPLICATE_GPU = "Duplicate GPU detected"   # one set-up error that NCCL reports pair by pair
# SIGILL, SIGBUS, SIGFPE, SIGSEGV: faults no launcher sends. (Not SIGABRT: every rank aborting in the
# same second is PyTorch's watchdog tearing the job down after a timeout, a consequence.)
_FAULTS = frozenset({4, 7, 8, 11})


def _same_fault(other: Failure, first: Failure) -> bool:
    """Ranks killed by the same fault signal in the same second share a cause (a full /dev/shm, a
    bad host, one bug hit everywhere): all of them are the root, none is collateral."""
    return (first.signal in _FAULTS and other.signal == first.signal and first.time is not None
            and other.time is not None and abs(other.time - first.time) < 1.0)


def _network_failure(first: Failure, failures: list[Failure]) -> tuple[Verdict, Finding]:
    """A rank that reports a network error is where the error surfaced, not its cause: the link, a
    peer that died, or the node's network set-up. No rank is blamed; the reporter is named."""
    reporter, colon, said = first.detail.replace(' hit a network error', '', 1).partition(": ")
    summary = said if colon else ""     # no message: all of it is the head's "(reported by ...)"
    if first.time is not None:
        summary += f" (at {time.strftime('%H:%M:%S', time.gmtime(first.time))} UTC)"
    others = sorted({f.rank for f in failures if f.rank != first.rank})
    if others:
        summary += f"; {rank_word(others)} failed after it"
    qualifier = f" (reported by {reporter})"
    if first.peer_host and first.peer_host not in summary:
        summary += f"; the other end of the failed link: {first.peer_host}"
    if not colon:
        qualifier, summary = qualifier + summary, ""
    verdict = headline.verdict(VerdictKind.NETWORK_ERROR, summary, qualifier=qualifier, culprit_host=first.peer_host)
    return verdict, Finding(first.kind.value, (first.rank,), first.detail, first.evidence, first.time, True)


def straggle(
    s: Straggle, ranks: Mapping[int, RankEvidence], hosts: Hosts, missing: tuple[int, ...], paths: Paths,
    busy: dict[int, int] | None = None,
) -> tuple[Verdict, Finding]:
    """``busy``: rank -> utilization of its GPU, where that GPU is at full utilization."""
    waiting = f"{rank_word(s.waiting)} {'waits' if len(s.waiting) == 1 else 'wait'} in {call(s.call)} {_where(s)}"
    no_data = tuple(sorted(set(s.no_data) | (set(missing) & set(s.group.members))))
    if no_data and not s.behind:
        summary = (f"{who(no_data, hosts)} {_has(no_data)} no dump (no Flight Recorder, no stack, no log) "
                   f"while {waiting}")
        kind = VerdictKind.MISSING_RANK
        culprits = no_data
    else:
        culprits = s.behind
        outside = [r for r in s.behind if _outside(ranks.get(r))]
        tops = sorted({t for r in outside if (t := _top(ranks.get(r)))})
        elsewhere = _waiting_elsewhere(s, ranks)
        last = dict(s.behind_last)
        if outside:
            kind = VerdictKind.STUCK_OUTSIDE_COLLECTIVE
            at = f" at {tops[0]}" if tops else ""
            summary = (f"{who(s.behind, hosts)} never reached seq {s.seq}: outside any collective{at}"
                       f"{busy_note(s.behind, busy or {})}, while {waiting}")
        elif elsewhere is not None:
            kind = VerdictKind.COLLECTIVE_MISMATCH
            summary = (f"{who(s.behind, hosts)} never reached seq {s.seq}: {_is(s.behind)} in "
                       f"{call(elsewhere)} at seq {elsewhere.seq} of pg {elsewhere.pg} instead, while {waiting}")
        elif (drift := _drifted(s, ranks)) is not None:
            kind = VerdictKind.COLLECTIVE_MISMATCH
            summary = (f"{who(s.behind, hosts)} {'is' if len(s.behind) == 1 else 'are'} in {call(drift)} at seq "
                       f"{drift.seq} while "
                       f"{waiting}: a different call, one collective count behind (TORCH_DISTRIBUTED_DEBUG=DETAIL's "
                       "Running-collective lines; its checks hold the ranks in step, so the counts drifted: "
                       f"{rank_word(s.behind)} issued fewer collectives before, e.g. a rank-dependent branch)")
        else:
            kind = VerdictKind.STUCK_OUTSIDE_COLLECTIVE
            seqs = sorted({v for v in last.values() if v is not None})
            were = f" (last seq {seqs[-1]})" if seqs else ""
            summary = f"{who(s.behind, hosts)} never reached seq {s.seq}{were} while {waiting}"
        if no_data:
            summary += f"; {rank_word(no_data)} left no dump"
            culprits = tuple(sorted(set(culprits) | set(no_data)))
    if s.ahead:
        summary += f" ({rank_word(s.ahead)} already got past it)"
    subkind = MismatchKind.OP if kind is VerdictKind.COLLECTIVE_MISMATCH else None
    if kind is VerdictKind.COLLECTIVE_MISMATCH and (drift := _drifted(s, ranks)) is not None:
        subkind = _call_kind(drift, s.call)
    verdict = headline.verdict(kind, summary, head=Head.HANG, subkind=subkind, culprit_ranks=culprits,
                               process_group=s.group.pg, seq=s.seq)
    evidence = _paths(paths, culprits[:4] + s.waiting[:1])
    return verdict, Finding(kind.value, culprits, summary, evidence, root_cause=True)


def _drifted(s: Straggle, ranks: Mapping[int, RankEvidence]) -> Collective | None:
    """The call a behind rank runs, when DETAIL's Running-collective lines (log lines: starts only)
    show it inside a different collective of the same group at an earlier seq."""
    for rank in s.behind:
        item = ranks.get(rank)
        colls = [c for c in (item.collectives if item else ()) if c.pg == s.group.pg and not c.is_p2p]
        if not colls:
            return None
        last = max(colls, key=lambda c: c.seq)
        if last.source != "log" or last.state is CollectiveState.COMPLETED or s.call.source != "log":
            return None
        if _call_kind(last, s.call) is None:
            return None
        return last
    return None


def _call_kind(a: Collective, b: Collective) -> MismatchKind | None:
    if a.op != b.op:
        return MismatchKind.OP
    if (a.count, a.input_sizes) != (b.count, b.input_sizes):
        return MismatchKind.SIZE
    if a.dtype != b.dtype:
        return MismatchKind.DTYPE
    return None


def _is(ranks: tuple[int, ...]) -> str:
    return "it is" if len(ranks) == 1 else "they are"


def _waiting_elsewhere(s: Straggle, ranks: Mapping[int, RankEvidence]) -> Collective | None:
    """The collective of another group a behind rank waits in (a cross-group ordering hang)."""
    for rank in s.behind:
        item = ranks.get(rank)
        for coll in item.collectives if item else ():
            if coll.pg != s.group.pg and coll.state is not CollectiveState.COMPLETED:
                return coll
    return None


def _has(ranks: tuple[int, ...]) -> str:
    return "has" if len(ranks) == 1 else "have"


def _outside(item: RankEvidence | None) -> bool:
    if item is None:
        return False
    if item.in_collective is not None:
        return not item.in_collective
    return not any(c.state is not CollectiveState.COMPLETED for c in item.collectives)


def _top(item: RankEvidence | None) -> str | None:
    return item.stack_top if item is not None else None


def what_is_missing(missing: tuple[int, ...], paths: Paths) -> str:
    """What ranks without a dump did leave: nothing, or files with no end in them (an output log, a
    worker record)."""
    if any(paths.get(rank) for rank in missing):
        return "no Flight Recorder, no stack, no exit record: only their output and start records"
    return "no Flight Recorder, no stack, no log"


def missing_only(missing: tuple[int, ...], hosts: Hosts, world: int,
                 paths: Paths | None = None) -> tuple[Verdict, Finding]:
    body = (f"{who(missing, hosts)} of {world} {_has(missing)} no dump ({what_is_missing(missing, paths or {})}): "
            "look there first")
    verdict = headline.verdict(VerdictKind.MISSING_RANK, body, culprit_ranks=missing)
    return verdict, Finding(VerdictKind.MISSING_RANK.value, missing, body, root_cause=True)


TEARDOWN_STEPS = (
    ("its work had finished (outputs and checkpoints written before the exit record are complete); the crash "
    "came from what outlives the script: call destroy_process_group() before exiting, stop or join your own threads "
    "(loggers, prefetchers, DataLoader workers with persistent_workers)"),
    "to see where: run with `ulimit -c unlimited` and read the core with `triage postmortem CORE`",
)


def next_steps(verdict: Verdict, finished_cleanly: bool) -> tuple[str, ...]:
    """What to do next after the verdict; a verdict that says a rank then crashed in its teardown (a
    hang, then a crash after the rank's exit record) adds the teardown's first step."""
    steps = _verdict_steps(verdict, finished_cleanly)
    if ENDED in verdict.summary:
        steps = (STALL_STEP, *steps)
    if verdict.kind is not VerdictKind.CRASH and AFTER_EXIT_RECORD in verdict.summary:
        steps = (*steps, *TEARDOWN_STEPS[:1])
    return steps


def _verdict_steps(verdict: Verdict, finished_cleanly: bool) -> tuple[str, ...]:
    culprits = rank_word(verdict.culprit_ranks) if verdict.culprit_ranks else "the culprit"
    kind = verdict.kind
    if kind is VerdictKind.COLLECTIVE_MISMATCH:
        steps = [(f"open the code path {culprits} took before seq {verdict.seq}: look for a collective "
                 "called under a rank-dependent condition (if rank == ..., data-dependent early exit)")]
        if verdict.subkind is MismatchKind.SIZE:
            steps.append("check tensor shapes per rank (uneven last batch, padding, a rank-dependent split)")
        if verdict.subkind is MismatchKind.DTYPE:
            steps.append("check autocast / .to(dtype) on that rank: every rank must pass the same dtype")
        steps.append("re-run with TORCH_DISTRIBUTED_DEBUG=DETAIL to make torch check collectives as they run")
        return tuple(steps)
    if kind is VerdictKind.CRASH and AFTER_EXIT_RECORD in verdict.summary:
        return TEARDOWN_STEPS
    if kind is VerdictKind.CRASH:
        return (f"read the faulthandler/gdb stacks of {culprits} (they are in the bundle)",
                "for CUDA errors re-run with CUDA_LAUNCH_BLOCKING=1 or under compute-sanitizer",
                "check dmesg on that host for Xid, segfault or OOM lines near that time")
    if kind is VerdictKind.EXCEPTION:
        return (f"read the traceback in the output log of {culprits}; the other ranks failed because it left",)
    if kind is VerdictKind.STUCK_OUTSIDE_COLLECTIVE:
        return ((f"look at the stack of {culprits} (pyspy.json / stacks.txt in its bundle): it is busy (or "
                 "blocked) outside any collective"),
                ("typical causes: a rank-only branch (checkpoint saving, logging, data loading), a deadlock "
                "on a lock or queue, an infinite loop"))
    if kind is VerdictKind.MISSING_RANK:
        return (f"check the host of {culprits}: was the process started, did it die, was it OOM-killed?",
                "run `triage collect` on that host, or look at its dmesg and launcher log")
    if kind is VerdictKind.INIT_HANG:          # never "the traces agree": no rank got to its first collective
        return INIT_HANG_STEPS
    if kind is VerdictKind.NONFINITE:
        return ((f"look at what {culprits} computed at that step: the module named, its input batch, its "
                 "learning rate and loss scale"),)
    if kind is VerdictKind.HANG:
        return (("every rank waits in the same collective: check the network between hosts and whether a "
                "process outside the job (another rank set) should have joined"),)
    if kind is VerdictKind.STOPPED:            # the job is gone: nothing left to collect from
        return (("no rank failed before the stop: if it was a time limit or a preemption, resume from the last "
                 "checkpoint"),
                ("if it was stopped because it hung or slowed down, next time run `triage dump RUN_DIR` while it "
                 "still runs, before stopping it (or set --hang-timeout below your patience)"))
    if finished_cleanly:
        return ("nothing to do: the traces agree",)
    return ("if the job still misbehaves, collect again while it hangs: `triage dump RUN_DIR`",)


def nonfinite_rule(verdict: Verdict, main: Finding | None, nonfinite: Verdict | None, root: Finding | None,
                   failure_times: tuple[float, ...]) -> tuple[Verdict, Finding | None, tuple[Finding, ...]]:
    """The first NaN/Inf (triage launch --numerics) is the story when nothing else went wrong, or when it
    came before the first failure (a NaN loss, then a diverged rank, then a crash or a hang); the other
    verdict then stays as a finding. Returns (verdict, main finding, findings to add)."""
    if nonfinite is None or root is None:
        return verdict, main, ()
    if verdict.kind is VerdictKind.NO_PROBLEM_FOUND:
        return nonfinite, root, ()
    earliest = min(failure_times, default=None)
    if root.time is not None and (earliest is None or root.time <= earliest):
        demoted = main or Finding(verdict.kind.value, verdict.culprit_ranks, verdict.summary)
        return nonfinite, root, (replace(demoted, root_cause=False),)
    return verdict, main, (replace(root, root_cause=False),)
