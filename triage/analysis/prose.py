"""What the reporter's own sentences say, where the log's lines do not say it (pure; the sentences are read by
triage.parsing.prose). Prose never overrides a log line's evidence; it is used in three places only:

1. **the node** ("jobs on node dgk713 fail"): a verdict of no culprit rank and no host, from a log none of whose
   lines names a host, is said to be on the node the reporter names (``culprit_host``, "the reporter's words");
2. **a stop from outside** ("our jobs are being sent the SIGTERM signal externally", "the job was preempted",
   "killed by the scheduler"): the verdict, ``stopped``, when the log's own lines hold no stop and every failure
   they show is what a stop looks like from inside: a signal that stops a process (SIGTERM, SIGKILL, SIGINT,
   SIGHUP), a teardown or collateral line, a network error, or a communication runtime's abort (MPI, NCCL, gloo,
   OFI, UCX; "CANCELED"). A fault of the job's own (a crash by a fault signal, a CUDA error, an out-of-memory, a
   Python exception of the program, a watchdog timeout) stays the verdict;
3. **a hang told only in prose** ("hangs right at `initializing ddp ...`", "hangs after `before forward`. Ranks
   1 and 2 never print"): where no rule found anything in the log, a hang, never a refusal: at init when where it
   hangs is the set-up (``init_hang``); the ranks the reporter says never print are stuck outside the collective
   the others wait in when the prose names one (``stuck_outside_collective``), else a hang of those ranks; else a
   hang of no known culprit.
"""

from __future__ import annotations

import signal
from dataclasses import replace

from triage.analysis.failures import Failure
from triage.analysis.ranks import rank_word
from triage.analysis.stopped import first_stop, what_to_do
from triage.analysis.verdict import headline
from triage.lazy_regex import lazy_regex
from triage.model import Cause, Finding, Verdict, VerdictKind
from triage.model.evidence import EventKind, Evidence, ExitInfo
from triage.parsing.progress import says_it_ended

_STOPPING_SIGNALS = (1, 2, 9, 15)
_STOPPING_NAMES = ("SIGTERM", "SIGKILL", "SIGINT", "SIGHUP")
# a communication runtime's abort, or a process ended by a stop: what a stop from outside looks like from inside
_COMMUNICATION = lazy_regex(
    r"\b(?:P?MPI\w*|MPICH|NCCL|gloo|OFI|UCX|ucp|libfabric|RCCL|Connection (?:reset|closed|refused)|Broken pipe|"
    r"CANCELL?ED|Terminated|Killed|SIGTERM|SIGKILL)\b")
_OWN_FAULT_KINDS = ("cuda_oom", "cuda_error", "terminate")


def _stop_explains(failure: Failure) -> bool:
    if failure.teardown or failure.collateral or failure.signal in _STOPPING_SIGNALS:
        return True
    if failure.kind is VerdictKind.NETWORK_ERROR:
        return True
    return failure.kind is VerdictKind.EXCEPTION and _COMMUNICATION.search(failure.detail) is not None


def _stop_explains_line(info: ExitInfo) -> bool:
    if info.collateral or info.signal in _STOPPING_SIGNALS or info.signal_name in _STOPPING_NAMES:
        return True
    if info.failure_kind in _OWN_FAULT_KINDS or info.signal is not None or info.signal_name is not None:
        return False
    return info.failure_kind == "network" or _COMMUNICATION.search(info.message or "") is not None


def prose_stop_verdict(evidence: Evidence, failures: tuple[Failure, ...]) -> tuple[Verdict, Finding] | None:
    """The stop the reporter tells, when the log holds no stop and nothing it shows is a fault of the job's own."""
    said = evidence.prose.stop
    if said is None or first_stop(evidence) is not None or evidence.mismatches or evidence.init_waits:
        return None
    if not all(_stop_explains(f) for f in failures) or not all(_stop_explains_line(u) for u in evidence.unattributed):
        return None
    if any(e.kind is EventKind.WATCHDOG_TIMEOUT for e in evidence.events):
        return None
    shown = [f"rank {f.rank}'s {f.kind.value.replace('_', ' ')}" for f in failures[:3]]
    if evidence.unattributed and len(shown) < 3:
        shown.append("the failure line(s) of no rank")
    after = (f"; what the log shows ({', '.join(shown)}) is what that stop looks like from inside the job"
             if shown else "; the log shows no failure of the job's own")
    # (the node the reporter names, where no line of the log names one: with_prose_host puts it on the verdict too;
    # none: the step's NODE, said to be the node not in this input)
    host = evidence.prose.host if not _log_names_a_host(evidence) else None
    body = (f"the reporter says the job was stopped from outside: \"{said}\"{after}. "
            f"What to do: {what_to_do(said, host)}")
    verdict = headline.verdict(VerdictKind.STOPPED, body, qualifier=" (from outside the job, in the reporter's words)")
    return verdict, Finding(VerdictKind.STOPPED.value, (), verdict.summary, (), root_cause=True)


def prose_hang_verdict(evidence: Evidence) -> tuple[Verdict, Finding] | None:
    """A hang told only in the reporter's sentences."""
    prose = evidence.prose
    if prose.hang is None:
        return None
    told = f"the reporter's words: \"{prose.hang}\""
    silent = prose.silent_ranks
    if prose.hang_at_init:
        kind = VerdictKind.INIT_HANG
        body = (f"the job hangs at its set-up ({told}); no line of the job's own is in this input, so which rank "
                "did not arrive is not in it: the ranks' output (torchrun --tee 3), or a run under `triage launch`, "
                "would tell")
    elif silent and prose.collective is not None:
        kind = VerdictKind.STUCK_OUTSIDE_COLLECTIVE
        body = (f"{rank_word(silent)} never got to the {prose.collective} the other ranks wait in ({told}; "
                f"{rank_word(silent)} never print, as the reporter says): they are stuck before it, outside the "
                "collective; their stacks (py-spy dump, or `triage launch`) would show where")
    elif silent:
        kind = VerdictKind.HANG
        body = (f"{told}; {rank_word(silent)} never print, as the reporter says: they are the ones to look at "
                "(py-spy dump of them, or the job under `triage launch`)")
    else:
        kind = VerdictKind.HANG
        body = (f"the job hangs ({told}); no line of the job's own is in this input, so which rank holds it up is "
                "not in it: py-spy dump of each rank, or the job under `triage launch`, would tell")
    verdict = headline.verdict(kind, body, culprit_ranks=silent, qualifier=" (told in prose)")
    return verdict, Finding(kind.value, silent, verdict.summary, (), root_cause=True)


def prose_exit_verdict(evidence: Evidence, failures: tuple[Failure, ...]) -> tuple[Verdict, Finding] | None:
    """A process a launcher reported ended by a signal, told only in the reporter's sentence ("training fails with
    `exits with return code = -9`"), above a log whose own lines show no failure and not the job's end: a crash by
    that signal, of no known rank. Never where the log's lines show a failure, a stop, an exit of a rank, or the
    run's end (it finished, it went on)."""
    prose = evidence.prose
    if prose.exit is None or prose.exit_signal is None or failures or evidence.unattributed \
            or evidence.finished_cleanly or evidence.went_on or first_stop(evidence) is not None \
            or any(r.exit is not None for r in evidence.ranks) \
            or any(says_it_ended(line) for r in evidence.ranks for line in r.last_lines):
        return None
    sig = prose.exit_signal
    body = (f"a process was ended by {sig}, as the reporter quotes the launcher (\"{prose.exit}\"); no line of the "
            "job's own in this input shows it, so which rank and why are not in it: the ranks' own output "
            "(torchrun --tee 3), or the job under `triage launch`, would tell")
    verdict = headline.verdict(VerdictKind.CRASH, body, qualifier=" (told in prose)",
                               cause=Cause(signal=signal.Signals[sig].value))
    return verdict, Finding(VerdictKind.CRASH.value, (), verdict.summary, (), root_cause=True)


def saving_stall(evidence: Evidence,
                 found: tuple[Verdict, Finding | None] | None) -> tuple[Verdict, Finding] | None:
    """Ranks that timed out in a collective, no rank named as the one that never came, and the reporter says saving
    (a checkpoint, the model) is what times out: the missing ranks are stuck outside the collective, saving (a
    checkpoint's writing, done by some ranks only, runs longer than the others' collective timeout); which ones, the
    input does not say."""
    said = evidence.prose.save_stall
    if said is None or found is None or found[0].kind is not VerdictKind.HANG or found[0].culprit_ranks:
        return None
    body = (f"{headline.body(found[0].summary)}; the reporter says saving is what times out (\"{said[:200]}\"): the "
            "ranks that did not join are stuck outside the collective, writing the checkpoint (longer than the others' "
            "collective timeout); which ranks, this input does not say: their stacks (py-spy dump, or `triage "
            "launch`) would show it, and a longer timeout (init_process_group's timeout=) would avoid it")
    verdict = headline.verdict(VerdictKind.STUCK_OUTSIDE_COLLECTIVE, body,
                               qualifier=" (saving, in the reporter's words)", process_group=found[0].process_group,
                               seq=found[0].seq)
    return verdict, Finding(VerdictKind.STUCK_OUTSIDE_COLLECTIVE.value, (), body, (), root_cause=True)


def _log_names_a_host(evidence: Evidence) -> bool:
    return (bool(evidence.prose.log_hosts) or any(r.host for r in evidence.ranks)
            or any(u.host for u in evidence.unattributed) or any(e.host for e in evidence.events)
            or bool(evidence.nccl_processes))


def with_prose_host(verdict: Verdict, evidence: Evidence) -> Verdict:
    """A verdict of no culprit rank and no host, from a log that names no host, on the node the reporter names."""
    host = evidence.prose.host
    if (host is None or verdict.culprit_ranks or verdict.culprit_host or verdict.kind is VerdictKind.NO_PROBLEM_FOUND
            or _log_names_a_host(evidence)):
        return verdict
    return replace(verdict, culprit_host=host,
                   summary=f"{verdict.summary} [on node {host}: the reporter's words, no line of the log names a host]")


__all__ = ["prose_exit_verdict", "prose_hang_verdict", "prose_stop_verdict", "with_prose_host"]
