"""How each rank ended, as the log tells it: a rank's first failure (the most specific line near the earliest,
``failure_of``), a failure line as an exit (``failure_exit``), the launcher's record joined with the log's line
(``combine``), and the failures of no rank: those no line ties to a rank (``orphan_failures``) and those in words
triage has no reader for (``unread_failures``). (Part of triage.load.logs.finish's conclusions.)"""

from __future__ import annotations

from dataclasses import replace

from triage.load.logs.collateral import launcher_root
from triage.load.logs.line_events import UNFINISHED_TRACEBACK
from triage.load.logs.scan import (
    EXIT_RECORDS,
    FAILURE_CLUSTER_LINES,
    LogScan,
    signal_number,
)
from triage.model.evidence import ExitInfo
from triage.parsing import windows_status
from triage.parsing.crashlog import (
    CrashLine,
    CrashLineKind,
    peer_host,
    shortened,
)
from triage.parsing.mpi_errors import ABORT_TEXT
from triage.parsing.unread_failure import UNREAD_KIND

_SPECIFIC = {CrashLineKind.CUDA_OOM: 0, CrashLineKind.CUDA_ERROR: 1, CrashLineKind.NETWORK: 2,
             CrashLineKind.NCCL_ERROR: 3, CrashLineKind.EXCEPTION: 4, CrashLineKind.TERMINATE: 5,
             CrashLineKind.FATAL_SIGNAL: 6}


def failure_of(items: list[tuple[int, CrashLine, str]]) -> tuple[int, CrashLine, str]:
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


def log_failure(scan: LogScan, rank: int) -> ExitInfo | None:
    """What a rank's own log says it failed with (its first failure line, as specific as the lines
    near it allow): the classification both the log path and the run directory use."""
    if rank not in scan.failures:
        return None
    order, line, path = failure_of(scan.failures[rank])
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
    return combine(ended, failure)


def combine(launcher: ExitInfo | None, failure: ExitInfo | None) -> ExitInfo | None:
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
    if launcher_root(scan) is not None:
        return ()
    ordered = sorted(scan.orphans, key=lambda item: (item[1].collateral, item[0]))
    # an exception whose message goes on over the next lines and says there that it is a CUDA error (JAX/XLA:
    # "JaxRuntimeError: INTERNAL: Failed to ...:" then "  CUDA error: Could not synchronize CUDA stream:" and
    # "  CUDA_ERROR_ILLEGAL_INSTRUCTION: ...") is that CUDA error, as a rank's exception is (failure_of)
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
