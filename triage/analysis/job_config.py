"""A job-wide configuration error (pure): the program's own check says the job's process count does not fit its
configuration (triage.parsing.job_config), and the verdict is the exception the check raised (an MPI_Abort, a code's
fatal-error banner) of the rank or ranks that reported it. Every rank runs that check at set-up, and the rank that
reports it (rank 0 by rule, or each of them) did not cause it: the verdict names no rank, says the check's words, and
says which ranks reported it. A verdict of another kind (a crash, a hang, a timeout) is the input's own story and
stays."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from triage.analysis.ranks import rank_word
from triage.analysis.verdict.headline import line
from triage.model import Finding, Verdict, VerdictKind

JOB_WIDE = "a job-wide configuration error, no rank at fault"
# what settles it: the two numbers the check compared, as the job was launched and as its input asks
_SETTLE = ("the launch's process count (`mpirun -np`, `srun --ntasks`, threads per process) beside what the "
           "program's input asks for (its decomposition, its processor grid) would settle it")


# an MPI abort record's own words (triage.parsing.mpi_errors): the abort says its code, not why
_ABORT = "called MPI_Abort on "


def job_wide(verdict: Verdict, main: Finding | None, misfit: str | None,
             details: Sequence[str] = (), misfit_rank: int | None = None) -> tuple[Verdict, Finding | None]:
    """``verdict`` (and its root-cause finding) as a job-wide configuration error where the input shows the program's
    process-count check (``misfit``) and the verdict is an exception of the ranks that reported it: each culprit's
    failure (``details``) is the check's own words (a code's banner) or an MPI abort that says only its code, and the
    rank whose line says the check (``misfit_rank``, where its prefix names one) is among them. A culprit's error of its
    own (a ValueError, another banner), or an abort of another rank than the check's, is its failure."""
    if misfit is None or verdict.kind is not VerdictKind.EXCEPTION or not verdict.culprit_ranks or not details:
        return verdict, main
    if misfit_rank is not None and misfit_rank not in verdict.culprit_ranks:
        return verdict, main    # (one rank's note, another rank's abort: the abort is that rank's own)
    words = misfit[:40]
    if not all(_ABORT in detail or words in " ".join(detail.split()) for detail in details):
        return verdict, main
    said = verdict.summary.split(": ", 1)[-1]
    body = (f"the job's process count does not fit its configuration: {misfit} ({rank_word(verdict.culprit_ranks)} "
            f"reported it: {said[:200]}); {_SETTLE}")
    fixed = replace(verdict, culprit_ranks=(), culprit_host=None,
                    summary=line(VerdictKind.EXCEPTION, body, qualifier=f" ({JOB_WIDE})"))
    return fixed, (None if main is None else replace(main, ranks=(), detail=body))
