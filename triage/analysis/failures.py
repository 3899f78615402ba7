"""Crashes, exceptions and log/kernel events as findings (pure). The earliest failure is the
root cause; later ones are collateral."""

from __future__ import annotations

import math
import re
import signal as _signal
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from triage.analysis.describe import signal_name, who
from triage.analysis.ranks import rank_word
from triage.lazy_regex import lazy_regex
from triage.load.logs.line_events import UNFINISHED_TRACEBACK
from triage.model import Finding, VerdictKind
from triage.model.evidence import Event, EventKind, Evidence, RankEvidence
from triage.parsing import windows_status
from triage.parsing.rendezvous import STORE_WAIT_DETAIL

# Signals a launcher sends to tear the other ranks down after a failure.
TEARDOWN_SIGNALS = {int(_signal.SIGTERM), int(_signal.SIGKILL), int(_signal.SIGINT), int(_signal.SIGHUP)}


@dataclass(frozen=True)
class Failure:
    """One rank's failure as the analysis orders them (earliest first)."""
    rank: int
    kind: VerdictKind                      # CRASH, EXCEPTION or NETWORK_ERROR
    detail: str
    time: float | None
    evidence: tuple[str, ...]
    teardown: bool                         # SIGTERM/SIGKILL: probably sent by the launcher
    collateral: bool = False               # the line says it is a consequence (a timeout, a peer gone)
    order: int | None = None               # where the failure stands in the log (logs only)
    signal: int | None = None
    peer_host: str | None = None           # the other end of a failed link the line names (network errors)


def rank_failures(evidence: Evidence, hosts: Mapping[int, str | None]) -> list[Failure]:
    out: list[Failure] = []
    for item in evidence.ranks:
        failure = _failure(item, hosts)
        if failure is not None:
            out.append(failure)
    return sorted(out, key=failure_order)


# Errors that say a peer went away: always a consequence of another rank's failure. (Ascend HCCL's EI0006, "Getting
# socket times out. Reason: Remote Rank did not send the data in time", and its CANN log's "wait socket establish
# timeout": the reporter waited for a peer that never answered; CANN's own first step is the other ranks' errors)
_PEER_GONE = ("connection closed by peer", "connection reset by peer", "remote worker", "broken pipe",
              "remote process exited", "socket closed", "connection refused", "getting socket times out",
              "wait socket establish timeout", "communication error with rank")


def looks_collateral(failure: Failure) -> bool:
    return failure.teardown or failure.collateral or any(marker in failure.detail.lower() for marker in _PEER_GONE)


def failure_order(failure: Failure) -> tuple[int, int, float, int, int, int]:
    """Earliest first, but errors that only say a peer went away (or a launcher's SIGTERM) come
    after real failures; without times, in the order the log shows them, crashes before exceptions."""
    rank_of_kind = 0 if failure.kind is VerdictKind.CRASH and not failure.teardown else (
        1 if failure.kind is not VerdictKind.CRASH else 2)
    has_time = 0 if failure.time is not None else 1
    order = failure.order if failure.order is not None else 1 << 62
    return (int(looks_collateral(failure)), has_time, failure.time if failure.time is not None else 0.0,
            order, rank_of_kind, failure.rank)


# What a failure line says (triage.parsing.crashlog's kinds) as a verdict kind.
_LINE_KINDS = {"network": VerdictKind.NETWORK_ERROR, "cuda_error": VerdictKind.CRASH,
               "terminate": VerdictKind.CRASH, "fatal_signal": VerdictKind.CRASH}
OOM_KILLER_HINT = ("SIGKILL is often the kernel OOM killer: `dmesg -T | grep -i -E 'killed process|oom'` on that host "
                   "confirms it")


def _failure(item: RankEvidence, hosts: Mapping[int, str | None]) -> Failure | None:
    info = item.exit
    if info is None or info.ok:
        return None
    name = who((item.rank,), hosts)
    if info.failure_kind is not None and (info.failure_kind != "fatal_signal" or info.signal is None):
        # (a process that died by a signal the line does not name: "VllmWorker-3 died unexpectedly")
        kind = _LINE_KINDS.get(info.failure_kind, VerdictKind.EXCEPTION)
        verb = {VerdictKind.NETWORK_ERROR: "hit a network error", VerdictKind.CRASH: "failed"}.get(kind, "raised")
        detail = f"{name} {verb}: {info.message}" if info.message else f"{name} failed"
        if info.message and info.message.startswith(UNFINISHED_TRACEBACK):
            detail = f"{name} raised {info.message}"     # ("rank 1 raised an exception; its exception line is not ...")
        return Failure(item.rank, kind, detail, info.time, info.evidence, False, collateral=info.collateral,
                       order=info.order, signal=info.signal,
                       peer_host=info.host if kind is VerdictKind.NETWORK_ERROR else None)
    if info.signal is not None:
        sig = signal_name(info.signal, info.signal_name)
        detail = f"{name} {windows_status.how_it_ended(sig, info.message)}"
        if info.message and info.message not in detail:
            detail += f": {info.message}"
        if info.signal == int(_signal.SIGKILL) and not (info.message or "").startswith("out of memory: "):
            # (a reader that says who killed it for memory, a batch system at its limit, needs no guess at the kernel)
            detail += f" ({OOM_KILLER_HINT})"
        return Failure(item.rank, VerdictKind.CRASH, detail, info.time, info.evidence,
                       info.signal in TEARDOWN_SIGNALS,
                       collateral=info.collateral, order=info.order, signal=info.signal)
    if info.exit_code is None:
        return None
    detail = f"{name} exited with code {info.exit_code}"
    if info.message:
        detail += f": {info.message}"
    return Failure(item.rank, VerdictKind.EXCEPTION, detail, info.time, info.evidence, False,
                   collateral=info.collateral, order=info.order, signal=info.signal)


_BARE_EXIT = lazy_regex(r" exited with code (-?\d+)$")


def same_second_exits(first: Failure, failures: list[Failure]) -> tuple[int, ...]:
    """Ranks that, like ``first``, only exited with the same code in the same second, by a launcher's
    record that says nothing more (torchrun's "exitcode: 1" with no error file). Its "first observed
    failure" is then the first it polled, not the first that failed: the record cannot tell."""
    code = _BARE_EXIT.search(first.detail)
    if first.kind is not VerdictKind.EXCEPTION or code is None or first.time is None or first.collateral:
        return ()
    same = sorted({f.rank for f in failures if f.kind is VerdictKind.EXCEPTION and f.time is not None
                   and abs(f.time - first.time) < 1.0 and (m := _BARE_EXIT.search(f.detail)) is not None
                   and m.group(1) == code.group(1)})
    return tuple(same) if len(same) > 1 else ()


def untimed_same_exits(first: Failure, failures: list[Failure], tied: tuple[int, ...]) -> tuple[int, ...]:
    """Ranks beside ``tied`` (:func:`same_second_exits`) whose launcher's record says the same bare exit code with no
    time: a record whose head, with its time, a paste cut off (torchrun's summary pasted from its second record on).
    They exited alike; when, the input does not say."""
    code = _BARE_EXIT.search(first.detail)
    if code is None:
        return ()
    return tuple(sorted({f.rank for f in failures if f.kind is VerdictKind.EXCEPTION and f.time is None
                         and f.rank not in tied and (m := _BARE_EXIT.search(f.detail)) is not None
                         and m.group(1) == code.group(1)}))


_SIGABRT = 6


def same_second_aborts(first: Failure, failures: list[Failure]) -> tuple[int, ...]:
    """Ranks that, like ``first``, were killed by SIGABRT in the same second (torchrun's summary of
    several "exitcode: -6" records). Which aborted first the record cannot tell (its "first observed
    failure" is the first the agent polled), and ranks aborting together are, as a rule, each
    process's ProcessGroupNCCL taking it down after a collective timed out or failed: a consequence."""
    if first.kind is not VerdictKind.CRASH or first.signal != _SIGABRT or first.time is None or first.collateral:
        return ()
    same = sorted({f.rank for f in failures if f.kind is VerdictKind.CRASH and f.signal == _SIGABRT
                   and f.time is not None and abs(f.time - first.time) < 1.0})
    return tuple(same) if len(same) > 1 else ()


CUT_RECORD = "its exit code is not in this input"


def cut_root_ties(first: Failure, failures: list[Failure]) -> tuple[tuple[int, ...], Failure | None]:
    """torchrun's root-cause record cut before its exit code, with other ranks failing in the same
    second: the record does not say how the root ended, so the ranks that failed with it are named
    beside it, and a fault signal among them (SIGBUS, SIGSEGV ...) says how. ((), None) otherwise."""
    if CUT_RECORD not in first.detail or first.time is None:
        return (), None
    tied = [f for f in failures if f.time is not None and abs(f.time - first.time) < 1.0 and not f.teardown]
    if len(tied) < 2:
        return (), None
    signalled = next((f for f in tied if f.kind is VerdictKind.CRASH and f.signal is not None), None)
    return tuple(sorted({f.rank for f in tied})), signalled


def same_error(other: Failure, first: Failure) -> bool:
    """Ranks that raised the same exception (the same words up to numbers), none of them a consequence: a
    cause the ranks share (their common arguments, code or data), so each is a root, none collateral of the
    first (one rank's failure does not make another raise its own error)."""
    return (first.kind is VerdictKind.EXCEPTION and other.kind is VerdictKind.EXCEPTION and not first.collateral
            and not other.collateral and not first.teardown and not other.teardown
            and _after_who(first.detail).startswith("raised: ")       # an exception's words, not an exit code
            and (_error_key(other.detail) == _error_key(first.detail) or _same_abort(other.detail, first.detail)))


# the first rank's own error line with the MPI_Abort that ended it (triage.load.logs.own_words.own_words_before_abort)
_THEN_ABORT = lazy_regex(r" \(then (called MPI_Abort [^)]*)\)$")


def _same_abort(other: str, first: str) -> bool:
    """Another rank that called MPI_Abort with the same words (its code) as the first, whose own error line went
    before its abort: the same error, its own line unshown (each rank's check of the same input)."""
    then = _THEN_ABORT.search(first)
    return then is not None and _after_who(other).startswith("raised: " + then.group(1))


_OOM = "CUDA out of memory"


def _error_key(detail: str) -> str:
    """What an exception says, up to numbers; a CUDA OOM is one error whatever its sizes, its GPU, or the text
    another process's output glued to its line."""
    said = _after_who(detail)
    return _OOM if said.startswith("raised: ") and _OOM in said else _DIGITS.sub("N", said)


def failure_findings(failures: list[Failure], culprits: tuple[int, ...] = ()) -> list[Finding]:
    """The first (earliest) failure is the root cause, with the ranks that raised the same error (and the
    verdict's other culprits, ``culprits``, when the first is among them: ranks that failed the same way);
    the rest are collateral, and collateral failures that say the same thing (up to numbers: ports, pids)
    fold into one finding."""
    if not failures:
        return []
    first = failures[0]
    also = set(culprits) if first.rank in culprits else set()
    roots = tuple(sorted({first.rank} | also | {f.rank for f in failures[1:] if same_error(f, first)}))
    findings = [Finding(first.kind.value, roots, first.detail, first.evidence, first.time, True)]
    folded: dict[tuple[str, str], list[Failure]] = {}
    rooted = set(roots)
    for failure in failures[1:]:
        if failure.rank in rooted:
            continue
        folded.setdefault((failure.kind.value, _DIGITS.sub("N", _after_who(failure.detail))), []).append(failure)
    for (kind, _), group in folded.items():
        ranks = tuple(sorted(f.rank for f in group))
        detail = group[0].detail
        if len(group) > 1:
            detail = f"{rank_word(ranks)}: {_after_who(detail)} (the same on each, up to numbers)"
        times = [f.time for f in group if f.time is not None]
        evidence = tuple(p for f in group for p in f.evidence)[:6]
        findings.append(Finding(kind, ranks, f"{detail} (collateral: after rank {first.rank})", evidence,
                                min(times) if times else None, False))
    return findings


_DIGITS = lazy_regex(r"\d+")


def _after_who(detail: str) -> str:
    """"rank 3 (node02) exited with code 1: X" -> "exited with code 1: X"."""
    match = re.match(r"ranks? [\d,-]+(?: \([^)]*\))? (.*)", detail, re.DOTALL)
    return match.group(1) if match else detail


_EVENT_TITLES = {
    EventKind.WATCHDOG_TIMEOUT: "watchdog timeout",
    EventKind.NCCL_WARN: "NCCL WARN",
    EventKind.XID: "GPU Xid",
    EventKind.SEGFAULT: "segfault",
    EventKind.OOM: "out of memory",
    EventKind.LAUNCHER_FAILURE: "launcher reported a failure",
    EventKind.EXCEPTION: "exception",
    EventKind.CRASH_ANALYSIS: "crash analysis",
    EventKind.AGENT_DIED: "triage agent",
    EventKind.DISK_FULL: "run directory's disk full",
}


def event_findings(events: Iterable[Event]) -> list[Finding]:
    """Events folded by (kind, detail): 4,096 identical watchdog lines become one finding."""
    folded: dict[tuple[EventKind, str], list[Event]] = defaultdict(list)
    for event in events:
        folded[(event.kind, event.detail)].append(event)
    findings: list[Finding] = []
    for (kind, detail), group in sorted(folded.items(), key=lambda kv: (_sort_time(kv[1]), kv[0][0].value,
                                                                          kv[0][1])):
        ranks = tuple(sorted({e.rank for e in group if e.rank is not None}))
        paths = tuple(sorted({p for e in group for p in e.evidence}))[:8]
        title = _EVENT_TITLES.get(kind, kind.value)
        if kind is EventKind.WATCHDOG_TIMEOUT and detail.startswith(STORE_WAIT_DETAIL):
            title, detail = "c10d store wait", detail.replace(f"{STORE_WAIT_DETAIL}: ", "timed out: ", 1)
        findings.append(Finding(kind.value, ranks, f"{title}: {detail}", paths, _first_time(group)))
    return findings


def _sort_time(events: list[Event]) -> float:
    first = _first_time(events)
    return first if first is not None else math.inf


def _first_time(events: list[Event]) -> float | None:
    times = [e.time for e in events if e.time is not None and math.isfinite(e.time)]
    return min(times) if times else None
