"""NCCL op lines without init lines (pure): each process is known by ``host:pid (GPU n)`` only.

NCCL numbers the ops of a communicator from 0 (opCount), the same on every member. Each process's
busiest communicator is compared by its last opCount and by the op it called there:
- processes behind the others (a lower last opCount) never reached the others' op;
- at the same opCount, a minority calling another op, count or dtype left the common path;
- otherwise every process is in the same op and nothing in the lines names a culprit.
"""

from __future__ import annotations

from collections import defaultdict

from triage.analysis.describe import call
from triage.analysis.verdict import headline
from triage.model import Finding, MismatchKind, Verdict, VerdictKind
from triage.model.evidence import NcclProcess

MIN_PROCESSES = 2


def _names(processes: list[NcclProcess]) -> str:
    labels = [p.label for p in processes]
    return ", ".join(labels[:4]) + (f" and {len(labels) - 4} more" if len(labels) > 4 else "")


def nccl_process_verdict(processes: tuple[NcclProcess, ...]) -> tuple[Verdict, Finding] | None:
    # ``comm 0x...`` pointers are process-local: processes are matched by communicator size (nranks=),
    # then by opCount, which every member of a communicator counts alike
    by_size: dict[int | None, list[NcclProcess]] = defaultdict(list)
    for process in processes:
        if process.collectives:
            by_size[process.nranks].append(process)
    ranked = max(by_size.values(), key=len, default=[])
    if len(ranked) < MIN_PROCESSES:
        return None
    if (split := _first_split(ranked)) is not None:
        return split
    top = max(p.collectives[-1].seq for p in ranked)
    behind = [p for p in ranked if p.collectives[-1].seq < top]
    ahead = [p for p in ranked if p.collectives[-1].seq == top]
    hosts = sorted({p.host for p in behind})
    if behind and len(behind) < len(ahead):
        last = ahead[0].collectives[-1]
        summary = (f"{_names(behind)} never reached NCCL opCount {top - 1:x} ({call(last)}), which "
                   f"{_names(ahead)} called; these NCCL lines name no rank (no init lines)")
        verdict = headline.verdict(VerdictKind.STUCK_OUTSIDE_COLLECTIVE, summary, seq=top,
                                   culprit_host=hosts[0] if len(hosts) == 1 else None)
        return verdict, Finding(verdict.kind.value, (), summary, root_cause=True)
    by_call: dict[tuple[str, int | None, str | None], list[NcclProcess]] = defaultdict(list)
    for process in ahead:
        last = process.collectives[-1]
        by_call[(last.op, last.count, last.dtype)].append(process)
    if len(by_call) > 1:
        groups = sorted(by_call.items(), key=lambda kv: len(kv[1]))
        (op, count, _dtype), odd = groups[0]
        (op2, count2, _dtype2), common = groups[-1]
        if len(odd) < len(common):
            subkind = MismatchKind.OP if op != op2 else MismatchKind.SIZE if count != count2 else MismatchKind.DTYPE
            odd_hosts = sorted({p.host for p in odd})
            summary = (f"{_names(odd)} called {call(odd[0].collectives[-1])} at NCCL "
                       f"opCount {top - 1:x} while {_names(common)} called {call(common[0].collectives[-1])}; "
                       "these NCCL lines name no rank (no init lines)")
            verdict = headline.verdict(VerdictKind.COLLECTIVE_MISMATCH, summary, qualifier=f" ({subkind.value})",
                                       subkind=subkind, seq=top,
                                       culprit_host=odd_hosts[0] if len(odd_hosts) == 1 else None)
            return verdict, Finding(verdict.kind.value, (), summary, root_cause=True)
    last = ahead[0].collectives[-1]
    summary = (f"the {len(ranked)} processes in these NCCL lines all reached opCount {top - 1:x} "
               f"({call(last)}); none differs (cannot map these NCCL lines to ranks: no init lines)")
    verdict = headline.verdict(VerdictKind.HANG, summary, seq=top)
    return verdict, Finding(VerdictKind.HANG.value, (), summary, root_cause=True)


def _first_split(processes: list[NcclProcess]) -> tuple[Verdict, Finding] | None:
    """The first opCount at which two processes called different ops: a mismatch, even with no
    majority (then which side left the common path is not in these lines)."""
    calls: dict[int, dict[str, list[NcclProcess]]] = defaultdict(lambda: defaultdict(list))
    for process in processes:
        for collective in process.collectives:
            calls[collective.seq][collective.op].append(process)
    for seq in sorted(calls):
        ops = calls[seq]
        if len(ops) < 2:
            continue
        groups = sorted(ops.values(), key=len)
        odd, common = groups[0], groups[-1]
        if len(groups) == 2 and len(odd) < len(common):
            if seq != max(calls):
                break          # a minority off the path earlier: the last-op rules below name it
            return None
        first = {p.label: next(c for c in p.collectives if c.seq == seq) for p in processes
                 if any(c.seq == seq for c in p.collectives)}
        sides = "; ".join(f"{_names(group)} called {call(first[group[0].label])}" for group in groups[::-1])
        summary = (f"at NCCL opCount {seq - 1:x} the processes called different ops: {sides}. "
                   "With no majority these lines cannot say which side left the common path, and they name no "
                   "rank (no init lines): the ranks' own logs, NCCL_DEBUG=INFO from the start (its init lines map "
                   "processes to ranks) or TORCH_DISTRIBUTED_DEBUG=DETAIL would settle it")
        verdict = headline.verdict(VerdictKind.COLLECTIVE_MISMATCH, summary, qualifier=" (op)", subkind=MismatchKind.OP,
                                   seq=seq)
        return verdict, Finding(verdict.kind.value, (), summary, root_cause=True)
    return None
