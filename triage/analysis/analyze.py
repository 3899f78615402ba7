"""Evidence -> Report (pure). The verdict names who did what; findings rank everything else."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from triage.analysis import verdicts
from triage.analysis.advice import INIT_HANG_STEPS, excerpt_steps
from triage.analysis.agent_view import gpu_steps, init_steps
from triage.analysis.describe import who
from triage.analysis.diff import (
    Disagreement,
    Straggle,
    all_waiting,
    build_tables,
    find_straggle,
    first_disagreement,
    index_by_pg,
)
from triage.analysis.failures import Failure, event_findings, failure_findings, rank_failures
from triage.analysis.gpu_facts import gpu_findings
from triage.analysis.groups import Group, resolve_groups
from triage.analysis.numerics import analyze_numerics
from triage.analysis.p2p import check_p2p
from triage.analysis.partial import coverage
from triage.analysis.ranks import format_ranks, rank_word
from triage.analysis.stop import split_at_stop, stop_finding
from triage.analysis.stragglers import find_stragglers
from triage.analysis.summaries import rank_summaries
from triage.analysis.unrecorded import unrecorded_finding
from triage.analysis.verdict.decide import decide
from triage.analysis.verdict.engine import Inputs
from triage.model import (
    Collective,
    CollectiveState,
    Finding,
    Report,
    Verdict,
    VerdictKind,
)
from triage.model.evidence import MISSING_NODE_REASON, Event, EventKind, Evidence, RankEvidence

if TYPE_CHECKING:
    from triage.analysis.crash import CrashAnalysis


def analyze_crashes(evidence: Evidence) -> tuple[Report, CrashAnalysis]:
    """What :func:`analyze` does with crashes-only Evidence (``triage postmortem``'s cores and rank
    logs), with the classifications the report was built from: each core is classified once."""
    # (imported here: only cores and crash records are classified; a log's report never loads the classifier)
    from triage.analysis.crash import analyse_crashes, crash_analysis_report

    found = analyse_crashes(evidence)
    return crash_analysis_report(found, evidence), found


@dataclass(frozen=True)
class _Context:
    """What the analysis reads of the evidence once, for every rule."""
    evidence: Evidence
    hosts: dict[int, str | None]
    traces: dict[int, tuple[Collective, ...]]
    groups: tuple[Group, ...]
    world: tuple[int, ...]
    paths: dict[int, tuple[str, ...]]
    ranks: tuple[RankEvidence, ...] = ()


def analyze(evidence: Evidence, explain: bool = False) -> Report:
    """The whole analysis: a Report whose verdict does not depend on the order of the inputs.
    ``explain``: the verdict engine evaluates every rule (``Report.explanation``), not only those
    up to the winner."""
    if evidence.crashes_only:
        return analyze_crashes(evidence)[0]
    if evidence.crashes:
        from triage.analysis.crash import crash_record_events

        evidence = replace(evidence, events=evidence.events + crash_record_events(evidence.crashes), crashes=())
    evidence, after_stop = split_at_stop(evidence)      # the verdict is the one fixed at the stop
    merged = sorted(_merge_ranks(evidence.ranks), key=lambda r: r.rank)
    ranks = tuple(replace(r, collectives=_with_watchdog(r, evidence.events)) for r in merged)
    world_size = evidence.world_size or (_world_size(ranks) if evidence.complete else None)
    world_size = _bounded(world_size, ranks)
    if world_size is not None and not evidence.complete and any(r.rank >= world_size for r in ranks):
        world_size = None      # an excerpt's "world_size=" was a subgroup's size: the world is unknown
    traces = {r.rank: r.collectives for r in ranks if r.collectives or r.has_trace}
    # an excerpt shows some ranks: the others are not in the input, not missing
    groups = resolve_groups(ranks, world_size if evidence.complete else None)
    world = tuple(range(world_size)) if world_size and evidence.complete else tuple(r.rank for r in ranks)
    ctx = _Context(evidence, {r.rank: r.host for r in ranks}, traces, groups, world,
                   {r.rank: r.evidence for r in ranks}, ranks)
    disagreements, straggles, waits = _diff_all(ctx)
    p2p = [problem for group in groups for problem in check_p2p(group, traces)]
    failures = rank_failures(replace(evidence, ranks=ranks), ctx.hosts)
    missing = _missing(ctx, ranks)
    cov = coverage(evidence, ranks, world_size)
    numerics = analyze_numerics(evidence.numerics, ctx.hosts)
    slow = find_stragglers(groups, traces, ctx.hosts, {r.rank: r.stack for r in ranks}, ctx.paths)
    decision = decide(Inputs(evidence, ranks, ctx.hosts, traces, world, ctx.paths, tuple(disagreements),
                             tuple(straggles), tuple(waits), tuple(failures), missing, tuple(p2p), cov),
                      numerics, slow, explain)
    verdict, main_finding = decision.verdict, decision.main
    findings = _findings(ctx, main_finding, disagreements, failures, missing, verdict)
    findings.extend([*decision.moved, *numerics.findings[1 if numerics.verdict else 0:]])
    findings[1 if findings else 0:1 if findings else 0] = decision.agent_findings
    if evidence.stop is not None:
        findings.append(stop_finding(evidence.stop))
        findings.extend(after_stop)
    findings[1:1] = [verdicts.p2p_finding(p, ctx.hosts, ctx.paths, root=False) for p in p2p
                     if main_finding is None or verdicts.p2p_finding(p, ctx.hosts, ctx.paths, True) != main_finding]
    summaries = rank_summaries(ranks, world, traces)
    findings.extend(slow.findings)
    excerpt = excerpt_steps(verdict, evidence.launcher, gpu=evidence.shows_gpu is not False, stack=evidence.stack,
                            rocm=evidence.shows_rocm, platform=evidence.platform,
                            nccl=evidence.shows_nccl or evidence.shows_gpu is None)
    steps = (excerpt if not evidence.complete or (not traces and verdict.kind in _HANGS)
             else slow.steps(verdicts.next_steps(verdict, evidence.finished_cleanly)))
    if verdict.kind is VerdictKind.NONFINITE:
        steps = numerics.steps + steps
    if init_steps(evidence.agent, verdict):     # the agent's steps replace the generic init-hang ones
        steps = init_steps(evidence.agent, verdict) + tuple(s for s in steps if s not in INIT_HANG_STEPS
                                                            and not s.startswith("nothing to do"))
    if gpu_steps(evidence.agent, verdict):      # the culprit waits on its GPU: not busy or blocked on the CPU
        generic = set(verdicts.next_steps(verdict, evidence.finished_cleanly)) | set(excerpt)
        steps = gpu_steps(evidence.agent, verdict) + tuple(s for s in steps if s not in generic)
    checked: dict[str, Any] = {}
    if evidence.cluster_check is not None:    # (a run directory's `triage check` record only)
        from triage.analysis.cluster_check import cluster_check_finding, cluster_check_json, cluster_check_step

        findings.append(cluster_check_finding(evidence.cluster_check))
        step = cluster_check_step(evidence.cluster_check, verdict)
        steps = (step, *steps) if step else steps
        checked = {"cluster_check": cluster_check_json(evidence.cluster_check)}
    return Report(
        verdict=verdict,
        findings=tuple(findings),
        ranks=summaries,
        next_steps=steps,
        evidence=tuple(sorted({p for r in ranks for p in r.evidence} | set(evidence.extra_evidence))),
        sources=evidence.sources,
        recent=_recent(traces, verdict.process_group, verdict.seq), traces=tuple(sorted(traces.items())),
        explanation=decision.trace,
        extra={"skipped": list(evidence.skipped), "world_size": world_size, "coverage": cov,
               "unparsed": list(evidence.unparsed), **slow.json_extra(), **checked, **numerics.extra,
               **({"kernel_events_of_others": evidence.kernel_others} if evidence.kernel_others else {}),
               "groups": [{"pg": g.pg, "name": g.name, "ranks": format_ranks(g.members),
                           "rebuilt": g.rebuilt} for g in groups]},
    )


# hang verdicts without any trace come from stacks alone: the job was not run under triage launch
_HANGS = (VerdictKind.COLLECTIVE_MISMATCH, VerdictKind.STUCK_OUTSIDE_COLLECTIVE, VerdictKind.HANG)


def _recent(traces: dict[int, tuple[Collective, ...]], pg: str | None, seq: int | None,
            before: int = 4, after: int = 1) -> tuple[tuple[int, tuple[Collective, ...]], ...]:
    """Each rank's collectives in the verdict's group around its seq (the HTML picture)."""
    group = pg if pg is not None else "0"
    out: list[tuple[int, tuple[Collective, ...]]] = []
    top = seq
    if top is None:
        top = max((c.seq for colls in traces.values() for c in colls if c.pg == group and not c.is_p2p), default=0)
    for rank in sorted(traces):
        window = tuple(sorted((c for c in traces[rank] if c.pg == group and not c.is_p2p
                               and top - before <= c.seq <= top + after), key=lambda c: c.seq))
        out.append((rank, window))
    return tuple(out)


def _merge_ranks(items: tuple[RankEvidence, ...]) -> list[RankEvidence]:
    """Several sources for one rank (a log and a dump) become one RankEvidence."""
    merged: dict[int, RankEvidence] = {}
    for item in sorted(items, key=lambda r: (r.rank, not r.has_trace, r.evidence)):
        first = merged.get(item.rank)
        if first is None:
            merged[item.rank] = item
            continue
        merged[item.rank] = RankEvidence(
            rank=item.rank, host=first.host or item.host, pid=first.pid or item.pid,
            world_size=first.world_size or item.world_size,
            collectives=_union(first.collectives, item.collectives),
            has_trace=first.has_trace or item.has_trace, trace_at_exit=first.trace_at_exit or item.trace_at_exit,
            groups=first.groups + item.groups, stack=first.stack or item.stack,
            stack_top=first.stack_top or item.stack_top,
            in_collective=first.in_collective if first.in_collective is not None else item.in_collective,
            stack_collective=first.stack_collective or item.stack_collective,
            last_lines=first.last_lines or item.last_lines,
            alive=first.alive if first.alive is not None else item.alive,
            exit=first.exit or item.exit, evidence=tuple(sorted(set(first.evidence + item.evidence))),
            histories=first.histories or item.histories,  # complete either way
        )
    return list(merged.values())


_SOURCE_RANK = {"fr": 0, "nccl": 1, "log": 2, "watchdog": 3}


def _union(a: tuple[Collective, ...], b: tuple[Collective, ...]) -> tuple[Collective, ...]:
    """One rank's collectives from several files: the best source only (FR over NCCL logs over
    watchdog lines), each (pg, seq, op...) once, completed if any copy says so."""
    both = a + b
    if not both:
        return ()
    best = min(_SOURCE_RANK.get(c.source, 9) for c in both)
    kept: dict[tuple[object, ...], Collective] = {}
    for coll in both:
        if _SOURCE_RANK.get(coll.source, 9) != best:
            continue
        key = (coll.pg, coll.seq, coll.is_p2p, coll.peer, coll.op, coll.count, coll.dtype)
        old = kept.get(key)
        if old is None or (old.state is not CollectiveState.COMPLETED and coll.state is CollectiveState.COMPLETED):
            kept[key] = coll
    return tuple(sorted(kept.values(), key=lambda c: (c.pg, c.is_p2p, c.seq, c.op)))


def _world_size(ranks: tuple[RankEvidence, ...]) -> int | None:
    sizes = [r.world_size for r in ranks if r.world_size]
    if sizes:
        return max(sizes)
    return max((r.rank for r in ranks), default=-1) + 1 or None


def _with_watchdog(item: RankEvidence, events: tuple[Event, ...]) -> tuple[Collective, ...]:
    """A rank without a trace still tells, through its watchdog, which collective it waits in."""
    if item.has_trace:
        return item.collectives
    extra = tuple(
        Collective(rank=item.rank, pg=e.pg or "0", seq=e.seq, op=e.op, count=e.count,
                   state=CollectiveState.IN_FLIGHT, source="watchdog")
        for e in events
        if e.kind is EventKind.WATCHDOG_TIMEOUT and e.rank == item.rank and e.seq is not None and e.op
    )
    return item.collectives + extra


def _diff_all(ctx: _Context) -> tuple[list[Disagreement], list[Straggle], list[tuple[Group, int, Collective]]]:
    disagreements: list[Disagreement] = []
    straggles: list[Straggle] = []
    waits: list[tuple[Group, int, Collective]] = []
    indexes = {rank: index_by_pg(colls) for rank, colls in ctx.traces.items()}
    histories = {r.rank: dict(r.histories) for r in ctx.ranks if r.histories}
    for group in ctx.groups:
        tables = build_tables(group, indexes)
        found = first_disagreement(group, tables, histories)
        if found is not None:
            disagreements.append(found)
        straggle = find_straggle(group, tables)
        if straggle is not None:
            straggles.append(straggle)
        wait = all_waiting(group, tables)
        if wait is not None:
            waits.append((group, wait[0], wait[1]))
    disagreements.sort(key=lambda d: (not d.in_flight, _time(d.majority_call, d.culprit_call), d.group.pg, d.seq))
    straggles.sort(key=lambda s: (-len(s.waiting), s.group.pg))
    return disagreements, straggles, waits


def _time(*calls: Collective) -> int:
    times = [c.time_ns for c in calls if c.time_ns]
    return min(times) if times else 0


def _missing(ctx: _Context, ranks: tuple[RankEvidence, ...]) -> tuple[int, ...]:
    if not ctx.evidence.complete:
        return ()      # an excerpt: a rank it does not show is not in this input, not missing
    # a rank sampled whose stack triage could not read is not missing: its stack is not recorded (said below)
    known = {r.rank for r in ranks if r.has_trace or r.exit or r.stack or r.collectives or r.stack_unread}
    return tuple(r for r in ctx.world if r not in known)


def _bounded(world_size: int | None, ranks: tuple[RankEvidence, ...]) -> int | None:
    """A world size read from the input never sizes a structure beyond what the input holds."""
    if world_size is None or world_size <= MAX_WORLD:
        return world_size
    highest = max((r.rank for r in ranks), default=-1) + 1
    return highest if 0 < highest <= MAX_WORLD else None


MAX_WORLD = 1 << 17


def _findings(
    ctx: _Context, main: Finding | None, disagreements: list[Disagreement], failures: list[Failure],
    missing: tuple[int, ...], verdict: Verdict,
) -> list[Finding]:
    findings: list[Finding] = [main] if main is not None else []
    for extra in disagreements[1:]:
        findings.append(verdicts.mismatch_finding(extra, ctx.hosts, root=False, paths=ctx.paths))
    crash_findings = failure_findings(failures, verdict.culprit_ranks if verdict.kind in (
        VerdictKind.CRASH, VerdictKind.EXCEPTION) else ())
    if verdict.kind not in (VerdictKind.CRASH, VerdictKind.EXCEPTION, VerdictKind.NETWORK_ERROR) or (
            verdict.culprit_ranks and failures and failures[0].rank not in verdict.culprit_ranks):
        crash_findings = [Finding(f.kind, f.ranks, f.detail, f.evidence, f.time, False) for f in crash_findings]
    findings.extend(f for f in crash_findings if main is None or f.detail != main.detail)
    if missing and verdict.kind is VerdictKind.STOPPED:      # stopped from outside: not missing, unrecorded
        findings.append(Finding("end_not_recorded", missing,
                                f"how {rank_word(missing)} ended after the stop is not recorded "
                                f"({verdicts.what_is_missing(missing, ctx.paths)})"))
    elif missing and verdict.kind is not VerdictKind.MISSING_RANK:
        findings.append(Finding(VerdictKind.MISSING_RANK.value, missing,
                                f"{rank_word(missing)} of {len(ctx.world)} "
                                f"{'has' if len(missing) == 1 else 'have'} no dump "
                                f"({verdicts.what_is_missing(missing, ctx.paths)})"))
    for rank in ctx.evidence.ranks:
        if rank.stack_unread and not (rank.stack or rank.has_trace or rank.exit):
            findings.append(Finding("stack_not_recorded", (rank.rank,),
                                    f"{who((rank.rank,), ctx.hosts)} was sampled, but triage could not read its "
                                    f"stack: not recorded ({rank.stack_unread})", rank.evidence))
    events = event_findings(ctx.evidence.events)
    # what a core/gdb says about the culprit belongs right under the root cause
    near = [f for f in events if f.kind == EventKind.CRASH_ANALYSIS.value and set(f.ranks) & set(verdict.culprit_ranks)]
    findings[1:1] = near
    findings.extend(f for f in events if f not in near)
    findings.extend(_skipped_findings(ctx.evidence.skipped))
    findings.extend(gpu_findings(ctx.evidence.gpus))
    unrecorded = unrecorded_finding(ctx.evidence, ctx.world, ctx.traces)
    if unrecorded is not None and verdict.kind is not VerdictKind.NO_PROBLEM_FOUND:
        findings.append(unrecorded)
    return findings


def _skipped_findings(notes: tuple[str, ...]) -> list[Finding]:
    """"PATH: reason" notes, folded by reason: 4,096 dumps of an unknown version make one finding."""
    by_reason: dict[str, list[str]] = {}
    for note in notes:
        path, _, reason = note.partition(": ")
        by_reason.setdefault(reason or path, []).append(path)
    out: list[Finding] = []
    for reason, paths in by_reason.items():
        kind = ("ignored_input" if reason.startswith("ignored ")
                else "missing_node" if reason.startswith(MISSING_NODE_REASON) else "unreadable_input")
        where = paths[0] if len(paths) == 1 else f"{len(paths)} files ({paths[0]}, ...)"
        out.append(Finding(kind, (), f"skipped {where}: {reason}", tuple(paths[:8])))
    return out
