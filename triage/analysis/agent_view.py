"""The report reads what the live agent knew (pure): its samples, its init-hang verdict, the child
a stuck rank waits on. Input: the :class:`AgentFacts` of each node's latest bundle.

- An agent that stopped the job on an init hang (``verdict_kind`` init_hang) makes the verdict an
  ``init_hang`` naming the ranks that never joined (with their stack tops), the ranks waiting, where
  and on which store, unless the traces already show a worse failure (a crash, a mismatch).
- A culprit rank the agent sampled gets its figures in the verdict (``blocked: CPU 0%, I/O 0 B/s,
  same stack``); every sampled rank gets an ``activity`` finding.
- A culprit rank waiting on a child names that child in the verdict, and every rank waiting on a
  child gets a ``child_wait`` finding (pid, DataLoader worker id, stuck frame, its dump file).
- A culprit of a hang that the agent found waiting on its GPU gets GPU steps (a kernel still
  running, an idle GPU, or its use not known), not the steps of a rank busy or blocked on the CPU.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from triage.analysis.advice import INIT_HANG_STEPS, gpu_wait_steps
from triage.analysis.ranks import rank_word
from triage.analysis.verdict import headline
from triage.model import Finding, Verdict, VerdictKind
from triage.model.evidence import AgentFacts, InitFact, RankActivityFact, RankEvidence

if TYPE_CHECKING:      # (imported where a rank waits on a dumped child: the agent's records only)
    from triage.analysis.child_wait import ChildWait

# verdicts the agent's init-hang view does not replace: the traces show a failure of their own
_KEEP = (VerdictKind.CRASH, VerdictKind.EXCEPTION, VerdictKind.COLLECTIVE_MISMATCH, VerdictKind.NETWORK_ERROR,
         VerdictKind.INIT_HANG)


def child_waits(facts: Sequence[AgentFacts], ranks: Sequence[RankEvidence]) -> dict[int, ChildWait]:
    """rank -> the child it waits on, for every rank whose main stack waits on a dumped child."""
    out: dict[int, ChildWait] = {}
    for item in ranks:
        children = tuple(c for f in facts for c in f.children_of(item.rank))
        if not children or not item.stack:
            continue
        from triage.analysis.child_wait import child_waited_on, main_thread

        found = child_waited_on(item.rank, (main_thread(item.stack),), children)
        if found is not None:
            out[item.rank] = found
    return out


def _activities(facts: Sequence[AgentFacts]) -> dict[int, RankActivityFact]:
    out: dict[int, RankActivityFact] = {}
    for fact in facts:
        for act in fact.activity:
            out[act.rank] = act
    return out


def _init_verdict(fact: AgentFacts, init: InitFact, ranks: Mapping[int, RankEvidence],
                  hosts: Mapping[int, str | None],
                  acts: Mapping[int, RankActivityFact]) -> tuple[Verdict, Finding]:
    store = f" on the store {init.store}" if init.store else ""
    key = f" (key {init.key})" if init.key else ""
    waited = f" for {int(init.seconds)} s" if init.seconds is not None else ""
    parts = []
    if init.nodes_wanted is not None:
        joined = init.nodes_joined if init.nodes_joined is not None else 1
        missing = init.nodes_wanted - joined
        at = f" at {init.store}" if init.store else ""
        rid = f" (id {init.key})" if init.key else ""
        for_how_long = f" {int(init.seconds)} s" if init.seconds is not None else ""
        # (what is known: the nodes whose agent is up in this run directory, not which reached the endpoint)
        up = f"{joined} of them ({fact.host})" if joined == 1 else f"{joined} of them"
        parts.append(f"torchrun's rendezvous{at}{rid} has waited{for_how_long} for its {init.nodes_wanted} nodes "
                     f"(--nnodes); no rank has started; triage's agent is up on {up}: the {missing} "
                     f"other{'s' if missing != 1 else ''} did not start, are still queued, or cannot reach "
                     f"{init.store or 'the endpoint'}; whether any node reached it is not recorded (each node's "
                     "launcher.log would tell)")
    for rank in init.never_joined:
        act = acts.get(rank)
        top = ranks[rank].stack_top if rank in ranks else None
        host = f" ({hosts[rank]})" if hosts.get(rank) else ""
        if act is not None and act.where:
            doing = f": {act.activity} in {act.where}" + (f" ({act.figures()})" if act.figures() else "")
        else:
            doing = f": stuck at {top}" if top else ""
        parts.append(f"rank {rank}{host} never joined {init.where}{doing}")
    if init.waiting:
        parts.append(f"{rank_word(init.waiting)} waited in {init.where}{store}{key}{waited}")
        if not init.never_joined and init.nodes_wanted is None:
            parts.append("the ranks they wait for are not on this node (never started, or on another node)")
    if not parts:
        parts.append(init.reason.removeprefix("init hang: ") or fact.reason)
    culprits = init.never_joined
    evidence = tuple(p for r in culprits if r in ranks for p in ranks[r].evidence if p.endswith(_stack_dumps()))
    verdict = headline.verdict(VerdictKind.INIT_HANG, "; ".join(parts), culprit_ranks=culprits)
    return verdict, Finding(VerdictKind.INIT_HANG.value, culprits or init.waiting, headline.body(verdict.summary),
                            evidence + (fact.bundle,), root_cause=True)


def _stack_findings(culprits: Sequence[int], ranks: Mapping[int, RankEvidence]) -> list[Finding]:
    """The stack of each rank that never joined (innermost first), with its dump file."""
    out = []
    for rank in culprits:
        item = ranks.get(rank)
        if item is None or not item.stack:
            continue
        shown = " <- ".join(_short(line) for line in item.stack[:8]) + (" <- ..." if len(item.stack) > 8 else "")
        dumps = tuple(p for p in item.evidence if p.endswith(_stack_dumps()))
        out.append(Finding("stack", (rank,), f"rank {rank}'s stack: {shown}", dumps))
    return out


def _stack_dumps() -> tuple[str, ...]:
    """The names of a bundle rank's stack dumps (imported here: the agent's records come with a run directory,
    and a log's report leaves the run directory's layout unloaded)."""
    from triage.layout import BundleRankPaths

    return BundleRankPaths.STACK_DUMPS


def _short(line: str) -> str:
    place, _, function = line.rpartition(" in ")
    return f"{function} ({os.path.basename(place)})" if place else line


def init_steps(facts: Sequence[AgentFacts], verdict: Verdict) -> tuple[str, ...]:
    """What to do next on an init hang the agent saw (empty for any other verdict)."""
    init = next((f.init for f in facts if f.init is not None), None)
    if verdict.kind is not VerdictKind.INIT_HANG or init is None:
        return ()
    if init.nodes_wanted is not None:
        where = init.store or "the --rdzv-endpoint"
        return ((f"start the node(s) that never joined, or check that they reach {where} "
                 "(`triage check -- torchrun ...` tests this without the training code)"),
                ("torchrun ends the wait by itself after its rendezvous join timeout (600 s by default; "
                 "--rdzv-conf join_timeout=N); triage does not stop a job whose nodes may still come"))
    steps = []
    if init.never_joined:
        steps.append(f"look at the stack of {rank_word(init.never_joined)} (pyspy.json in the bundle): what it "
                     f"does before {init.where} (a slow or stuck start-up, a rank-only branch before init)")
    return (*steps, *INIT_HANG_STEPS)


# the verdicts whose culprit holds the others up: a GPU wait is the reason it does
_HUNG = (VerdictKind.STUCK_OUTSIDE_COLLECTIVE, VerdictKind.HANG, VerdictKind.FAILURE_UNLOCATED)


def gpu_steps(facts: Sequence[AgentFacts], verdict: Verdict) -> tuple[str, ...]:
    """What to do next when a culprit of a hang waits on its GPU (empty otherwise)."""
    if verdict.kind not in _HUNG:
        return ()
    acts = _activities(facts)
    return tuple(dict.fromkeys(step for r in verdict.culprit_ranks if r in acts
                               for step in gpu_wait_steps(acts[r])))


def agent_view(facts: Sequence[AgentFacts], ranks: Sequence[RankEvidence], hosts: Mapping[int, str | None],
               verdict: Verdict, main: Finding | None) -> tuple[Verdict, Finding | None, list[Finding]]:
    """The verdict and main finding, completed (or replaced) by what the agent knew; plus its findings."""
    by_rank = {r.rank: r for r in ranks}
    acts = _activities(facts)
    findings: list[Finding] = []
    init = next(((f, f.init or InitFact((), (), "init_process_group", reason=f.reason)) for f in facts
                 if f.verdict_kind == VerdictKind.INIT_HANG.value), None)    # an older bundle: its reason
    if init is not None and verdict.kind not in _KEEP:
        verdict, main = _init_verdict(init[0], init[1], by_rank, hosts, acts)
        findings.extend(_stack_findings(init[1].never_joined, by_rank))
    culprits = [r for r in verdict.culprit_ranks if r in acts]
    if culprits and verdict.kind is not VerdictKind.INIT_HANG:
        said = "; ".join((f"it {acts[r].activity}" if len(culprits) == 1 else f"rank {r} {acts[r].activity}")
                         + (f" ({acts[r].figures()})" if acts[r].figures() else "") for r in culprits)
        verdict = replace(verdict, summary=f"{verdict.summary}; the agent found {said}")
    waits = child_waits(facts, ranks)
    named = [waits[r] for r in verdict.culprit_ranks if r in waits]
    if named:
        verdict = replace(verdict, summary=f"{verdict.summary}; " + "; ".join(w.describe() for w in named))
    for wait in sorted(waits.values(), key=lambda w: w.rank):
        findings.append(Finding("child_wait", (wait.rank,), f"{wait.describe()} (it waits for {wait.waits_in})",
                                wait.evidence))
    for act in sorted(acts.values(), key=lambda a: a.rank):
        findings.append(Finding("activity", (act.rank,), f"the agent sampled {act.line()}"))
    if main is not None and headline.body(verdict.summary) != main.detail and (named or culprits):
        main = replace(main, detail=headline.body(verdict.summary))
    return verdict, main, findings


__all__ = ["agent_view", "child_waits", "gpu_steps", "init_steps"]
