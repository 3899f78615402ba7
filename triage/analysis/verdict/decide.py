"""The verdict of an analysis (pure): the rules (:mod:`.rules`), then the named final steps, in
this order:

1. ``what an excerpt cannot tell``: a verdict of an excerpt that names no culprit says which
   ranks the text covers and what would settle it (triage.analysis.untold);
2. ``the reporter's node``: a verdict of no culprit and no host, from a log that names no host, is said on the
   node the reporter's sentences name (triage.analysis.prose);
3. ``stopped from outside after it``: a stop from outside (a time limit, scancel) that came after
   the first failure is said after it ("; then Slurm stopped ...");
4. ``agent view``: what the live agent knew (its init-hang verdict, its samples of the culprit,
   the child a culprit waits on) completes or replaces the verdict;
5. ``teardown crash after the hang``: when the hang the live agent detected is the verdict and the
   only failure after it is a rank that crashed in its teardown after its work (the job left
   running), that crash is said after it ("; then rank 1 ... was killed by SIGABRT: at exit, ...");
6. ``stall that ended by itself``: when that hang then ended by itself (the job went on and every
   rank exited 0), it is said as the stall it was ("STALL: rank 1 ... had not reached seq 2 when the
   agent dumped the job; it ended by itself: ...");
7. ``first non-finite value``: the first NaN/Inf (``triage launch --numerics``) is the story when
   nothing else went wrong, or when it came before the first failure;
8. ``stop decision``: the verdict the agent decided when it stopped the job (``<host>/stop.json``)
   stands; what came after the stop is its collateral;
9. ``straggler headline``: an all-clear names the straggler that slows the run down;
10. ``job-wide configuration error``: an exception of the ranks that reported the program's own check that the
    job's process count does not fit its configuration names no rank (triage.analysis.job_config);
11. ``out of memory``: a failure's verdict whose text shows memory ran out gets subkind ``oom``
    (triage.analysis.oom); its kind stays;
12. ``the culprits' host``: a verdict that names ranks, all of which the input ties to one host (their prefixes,
    a launcher's record, a hostname line), says that host as ``culprit_host`` too;
13. ``the failure's facts``: the facts its words carry (the memory it ran out of, a platform's end) join its cause
    (triage.analysis.cause), from which its next steps are chosen."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from triage.analysis import verdicts
from triage.analysis.agent_view import agent_view
from triage.analysis.cause import with_facts
from triage.analysis.job_config import job_wide
from triage.analysis.mpi_start import start_failed
from triage.analysis.numerics import NumericsResult
from triage.analysis.oom import with_oom
from triage.analysis.prose import with_prose_host
from triage.analysis.stall_ended import ended_by_itself, stall_ended
from triage.analysis.stop import fixed_verdict
from triage.analysis.stopped import with_stop_context
from triage.analysis.stragglers import StragglerResult
from triage.analysis.teardown_after_hang import crash_after_hang, then_crash
from triage.analysis.untold import say_what_is_untold
from triage.analysis.verdict import headline
from triage.analysis.verdict.engine import Decision, Inputs, Step, run_rules, run_steps
from triage.analysis.verdict.rules import RULES
from triage.model import Finding, VerdictKind
from triage.model.evidence import AgentFacts, StopDecision


def _untold(inputs: Inputs) -> Step:
    def step(d: Decision) -> tuple[Decision, tuple[str, ...]]:
        if inputs.complete:
            return d, ("a whole run: not an excerpt",)
        verdict, main = say_what_is_untold(d.verdict, d.main, inputs.coverage or {}, inputs.evidence.launcher)
        return replace(d, verdict=verdict, main=main), (str((inputs.coverage or {}).get("summary", "")),)
    return step


def _prose_host(inputs: Inputs) -> Step:
    def step(d: Decision) -> tuple[Decision, tuple[str, ...]]:
        verdict = with_prose_host(d.verdict, inputs.evidence)
        if verdict == d.verdict:
            return d, ("no node in the reporter's words, or the verdict or the log names one",)
        return replace(d, verdict=verdict), (f"on node {verdict.culprit_host}, in the reporter's words",)
    return step


def _stop_context(inputs: Inputs) -> Step:
    def step(d: Decision) -> tuple[Decision, tuple[str, ...]]:
        verdict = with_stop_context(d.verdict, inputs.evidence)
        if verdict == d.verdict:
            return d, ("no stop from outside after the first failure",)
        return replace(d, verdict=verdict), ("the job was stopped from outside after the first failure",)
    return step


def _agent(facts: Sequence[AgentFacts], inputs: Inputs) -> Step:
    def step(d: Decision) -> tuple[Decision, tuple[str, ...]]:
        if not facts:
            return d, ("no live agent's facts in this input",)
        verdict, main, found = agent_view(facts, inputs.ranks, inputs.hosts, d.verdict, d.main)
        return replace(d, verdict=verdict, main=main, agent_findings=tuple(found)), (
            f"{len(facts)} agent bundle(s)", *(f"agent verdict: {f.verdict_kind}" for f in facts if f.verdict_kind))
    return step


def _crash_after_hang(inputs: Inputs) -> Step:
    def step(d: Decision) -> tuple[Decision, tuple[str, ...]]:
        crash = crash_after_hang(inputs.failures, inputs.evidence.agent, inputs.complete, bool(inputs.straggles))
        if crash is None or d.verdict.kind in (VerdictKind.CRASH, VerdictKind.EXCEPTION):
            return d, ("no teardown crash after a hang the agent detected",)
        verdict = replace(d.verdict, summary=then_crash(d.verdict.summary, crash))
        return replace(d, verdict=verdict), (f"rank {crash.rank} crashed after its exit record, after the hang",)
    return step


def _stall_ended(inputs: Inputs) -> Step:
    def step(d: Decision) -> tuple[Decision, tuple[str, ...]]:
        if not stall_ended(d.verdict, inputs.evidence.agent, inputs.complete, inputs.evidence.finished_cleanly):
            return d, ("no hang the agent dumped that then ended with every rank's exit 0",)
        verdict = ended_by_itself(d.verdict, inputs.evidence.hang_dumps)
        main = d.main if d.main is None else replace(d.main, detail=headline.body(verdict.summary))
        return replace(d, verdict=verdict, main=main), ("the dumped hang ended by itself: every rank exited 0",)
    return step


def _nonfinite(numerics: NumericsResult, inputs: Inputs) -> Step:
    def step(d: Decision) -> tuple[Decision, tuple[str, ...]]:
        times = tuple(f.time for f in inputs.failures if f.time is not None and not f.teardown)
        root = numerics.findings[0] if numerics.verdict else None
        verdict, main, moved = verdicts.nonfinite_rule(d.verdict, d.main, numerics.verdict, root, times)
        reasons = ("no non-finite value recorded (triage launch --numerics)",) if numerics.verdict is None else (
            f"first non-finite value at {root.time if root else None}",
            f"first failure at {min(times)}" if times else "no failure with a time")
        return replace(d, verdict=verdict, main=main, moved=moved), reasons
    return step


def _stop(stop: StopDecision | None) -> Step:
    def step(d: Decision) -> tuple[Decision, tuple[str, ...]]:
        if stop is None:
            return d, ("no stop decision (stop.json) in this input",)
        fixed = fixed_verdict(stop, d.verdict)
        reasons = (f"{stop.host} stopped the job: {stop.reason[:160]}",)
        if fixed == d.verdict:
            return d, reasons
        main = Finding(fixed.kind.value, fixed.culprit_ranks, headline.body(fixed.summary), root_cause=True)
        return replace(d, verdict=fixed, main=main), reasons
    return step


def _stragglers(slow: StragglerResult) -> Step:
    def step(d: Decision) -> tuple[Decision, tuple[str, ...]]:
        named = tuple(f"straggler: {', '.join(map(str, s.ranks))}" for s in slow.stragglers[:3])
        return replace(d, verdict=slow.headline(d.verdict)), named or ("no straggler",)
    return step


def _job_config(inputs: Inputs) -> Step:
    def step(d: Decision) -> tuple[Decision, tuple[str, ...]]:
        culprits = set(d.verdict.culprit_ranks)
        details = [f.detail for f in inputs.failures if f.rank in culprits]
        verdict, main = job_wide(d.verdict, d.main, inputs.evidence.job_config, details,
                                 inputs.evidence.job_config_rank)
        if verdict == d.verdict:
            return d, ("no process-count check of the program under an exception of the ranks that reported it",)
        return replace(d, verdict=verdict, main=main), (f"the program's own check: {inputs.evidence.job_config}",)
    return step


def _mpi_start(inputs: Inputs) -> Step:
    def step(d: Decision) -> tuple[Decision, tuple[str, ...]]:
        verdict, main = start_failed(d.verdict, d.main, inputs.failures, inputs.evidence.unattributed)
        if verdict == d.verdict:
            return d, ("no MPI_Init fatal error of no rank before the ranks' SIGABRT",)
        return replace(d, verdict=verdict, main=main), ("MPICH's fatal error in MPI_Init before the ranks aborted",)
    return step


def _oom(d: Decision) -> tuple[Decision, tuple[str, ...]]:
    verdict = with_oom(d.verdict)
    if verdict is d.verdict:
        return d, ("the verdict's text shows no memory run out",)
    return replace(d, verdict=verdict), ("the verdict's text shows memory ran out: subkind oom",)


def _facts(d: Decision) -> tuple[Decision, tuple[str, ...]]:
    verdict = with_facts(d.verdict)
    cause = verdict.cause
    said = tuple(f"{name}: {getattr(value, 'value', value)}"
                 for name, value in (("signal", cause.signal), ("memory", cause.memory), ("ending", cause.ending),
                                     ("device", cause.device))
                 if value is not None)
    return replace(d, verdict=verdict), said or ("no fact of its failure: no signal, memory run out, platform end",)


def _culprits_host(inputs: Inputs) -> Step:
    def step(d: Decision) -> tuple[Decision, tuple[str, ...]]:
        ranks, verdict = d.verdict.culprit_ranks, d.verdict
        hosts = {inputs.hosts.get(rank) for rank in ranks}
        if not ranks or verdict.culprit_host is not None or len(hosts) != 1 or None in hosts:
            return d, ("no culprit rank, a host already said, or the culprits' hosts are not one known host",)
        host = hosts.pop()
        return replace(d, verdict=replace(verdict, culprit_host=host)), (f"the culprits ran on {host}",)
    return step


def decide(inputs: Inputs, numerics: NumericsResult, slow: StragglerResult, explain: bool = False) -> Decision:
    """The rules in their order, then the final steps. ``explain``: every rule is evaluated."""
    decision = run_rules(RULES, inputs, explain)
    return run_steps(decision, (
        ("what an excerpt cannot tell", _untold(inputs)),
        ("the reporter's node", _prose_host(inputs)),
        ("stopped from outside after it", _stop_context(inputs)),
        ("agent view", _agent(inputs.evidence.agent, inputs)),
        ("teardown crash after the hang", _crash_after_hang(inputs)),
        ("stall that ended by itself", _stall_ended(inputs)),
        ("first non-finite value", _nonfinite(numerics, inputs)),
        ("stop decision", _stop(inputs.evidence.stop)),
        ("straggler headline", _stragglers(slow)),
        ("job-wide configuration error", _job_config(inputs)),
        ("MPI start-up failed", _mpi_start(inputs)),
        ("out of memory", _oom),
        ("the culprits' host", _culprits_host(inputs)),
        ("the failure's facts", _facts),
    ))


__all__ = ["decide"]
