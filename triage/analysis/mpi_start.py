"""An MPI start-up that failed (pure): MPICH's (Cray MPICH's) fatal error in MPI_Init, a record of no rank (the process
has no rank before MPI_Init returns), then the launcher's record of the tasks it started ending by SIGABRT (srun's
``tasks 0-4,7-11: Aborted``): MPICH aborts a process whose MPI_Init failed, so the aborts are the start-up's
consequence, and the job's MPI layer, not one rank, failed. The verdict names no rank and says the start-up's own
error and the node its record names. A crash by another signal, or an error of a rank's own, is the input's story and
stays."""

from __future__ import annotations

import signal as _signal
from collections.abc import Sequence
from dataclasses import replace

from triage.analysis.failures import Failure
from triage.analysis.ranks import rank_word
from triage.analysis.verdict.headline import line
from triage.lazy_regex import lazy_regex
from triage.model import Finding, Verdict, VerdictKind
from triage.model.evidence import ExitInfo

# MPICH's record of its fatal error in MPI_Init (triage.parsing.mpi_errors: "failed in MPI_Init: ...")
_INIT = lazy_regex(r"\bfailed in P?MPI_Init(?:_thread)?: ")
_SETTLE = ("the launcher's process-manager interface beside the program's (`srun --mpi=list` and the PMI library "
           "`ldd` shows the program linked against, under the job's modules) and that node's slurmd log would "
           "settle it")


def start_failed(verdict: Verdict, main: Finding | None, failures: Sequence[Failure],
                 unattributed: Sequence[ExitInfo]) -> tuple[Verdict, Finding | None]:
    """``verdict`` as the job's failed MPI start-up where it is a crash of ranks every one of which ended by SIGABRT,
    and an MPI_Init fatal error of no rank stands before their records."""
    if verdict.kind is not VerdictKind.CRASH or not verdict.culprit_ranks:
        return verdict, main
    culprits = [f for f in failures if f.rank in verdict.culprit_ranks]
    if not culprits or any(f.signal != int(_signal.SIGABRT) for f in culprits):
        return verdict, main
    # (a launcher's summary record has no line order of its own, -1: its place is not known to be after)
    first = min((f.order for f in culprits if f.order is not None and f.order >= 0), default=None)
    init = next((u for u in unattributed if u.message and _INIT.search(u.message) and not u.collateral
                 and (first is None or (u.order is not None and u.order < first))), None)
    if init is None or init.message is None:
        return verdict, main
    where = f" on {init.host}" if init.host else ""
    body = (f"the job's MPI start-up failed{where}: {init.message[:300]}; {rank_word(verdict.culprit_ranks)} aborted "
            f"after it (MPICH aborts a process whose MPI_Init failed); {_SETTLE}")
    fixed = replace(verdict, kind=VerdictKind.EXCEPTION, culprit_ranks=(), culprit_host=init.host,
                    summary=line(VerdictKind.EXCEPTION, body, qualifier=" (no rank at fault: MPI's start-up failed)"))
    return fixed, (None if main is None else replace(main, kind=VerdictKind.EXCEPTION.value, ranks=(), detail=body))
