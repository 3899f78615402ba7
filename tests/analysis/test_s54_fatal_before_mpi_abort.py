"""A program's own fatal line before its MPI abort record (fix54a item 4): ``[3] FATAL ERROR: ...`` then Open MPI's
``MPI_ABORT was invoked on rank 3`` (or MPICH's ``application called MPI_Abort(...) - process 3``) was told by the
abort record alone (solver_errors._endings left it to "the record's reader", which reads only the abort); the fatal
line is what failed and is the summary's, the abort how the process ended."""

from __future__ import annotations

import pytest

from triage.analysis.analyze import analyze
from triage.load.inputs import load_log_texts
from triage.model import Report
from triage.parsing.solver_errors import parse_solver_errors

_OMPI = ("--------------------------------------------------------------------------",
         "MPI_ABORT was invoked on rank {r} in communicator MPI_COMM_WORLD", "with errorcode 1.", "",
         "NOTE: invoking MPI_ABORT causes Open MPI to kill all MPI processes.",
         "You may or may not see output from other processes, depending on",
         "exactly when Open MPI kills them.",
         "--------------------------------------------------------------------------")


def report(*lines: str) -> Report:
    return analyze(load_log_texts([("job.log", "\n".join(lines) + "\n")]))


@pytest.mark.parametrize(("fatal", "rank"), [
    ("[3] FATAL ERROR: particle 88121 left the domain (x=1.2e+09)", 3),
    ("FATAL ERROR: particle 88121 left the domain (x=1.2e+09)", 5),         # (no tag: the abort record's rank)
    ("hydro: Fatal error: negative density in cell 40211", 1),
])
def test_the_fatal_line_is_the_failure_the_abort_how_it_ended(fatal: str, rank: int) -> None:
    result = report("Info: step 1200", fatal, *(line.format(r=rank) for line in _OMPI))
    assert result.verdict.kind.value == "exception" and result.verdict.culprit_ranks == (rank,)
    words = fatal.split(": ", 1)[1] if fatal.startswith("hydro") else fatal.split("FATAL ERROR: ", 1)[1]
    assert words in result.verdict.summary and "MPI_ABORT" in result.verdict.summary, result.verdict.summary


def test_mpichs_abort_line() -> None:
    text = ("[2] FATAL ERROR: cannot open mesh.h5\n"
            "application called MPI_Abort(MPI_COMM_WORLD, 1) - process 2\n")
    (death,) = parse_solver_errors(text)
    assert death.rank == 2 and "cannot open mesh.h5" in death.text and "MPI_Abort" in death.text
