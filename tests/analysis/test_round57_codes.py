"""Round 57's classes (triage/parsing/hpc_codes.py): SAMRAI's program abort (``Program abort called in file ``f''
at line L`` / ``ERROR MESSAGE:``, each line behind ``P=NNNNNNN:`` under SAMRAI's parallel error stream) and MITgcm's
``ABNORMAL END: S/R <ROUTINE>``, each the error of the process that printed it. Variants written here (other ranks,
routines, files, MPI runtimes, one process without the prefix, gfortran's ``STOP`` and MITgcm's ``(PID.TID ...)``
head), with negatives: the words quoted in a sentence and a run that went on after them."""

from __future__ import annotations

import pytest

from tests.helpers.report import report_lines as report
from triage.errors import InputError
from triage.parsing.hpc_codes import banners


def _samrai(rank: int | None, file: str, line: int, *message: str) -> tuple[str, ...]:
    head = f"P={rank:07d}:" if rank is not None else ""
    return (f"{head}Program abort called in file ``{file}'' at line {line}", f"{head}ERROR MESSAGE:",
            *(f"{head}{text}" for text in message))


_OMPI = ("-" * 74, "MPI_ABORT was invoked on rank {r} in communicator MPI_COMM_WORLD", "with errorcode -1.", "",
         "NOTE: invoking MPI_ABORT causes Open MPI to kill all MPI processes.", "-" * 74)


def _ompi(rank: int) -> tuple[str, ...]:
    return tuple(line.format(r=rank) for line in _OMPI)


@pytest.mark.parametrize(("lines", "ranks", "words"), [
    # SAMRAI's abort on two ranks of eight (prefixes), the launcher's record after them
    (("regrid level 2", *_samrai(6, "/src/SAMRAI/hier/PatchLevel.C", 412, "PatchLevel::getBoxes: box count",
                                  "does not match the mapping"),
      *_samrai(1, "/src/SAMRAI/hier/PatchLevel.C", 412, "PatchLevel::getBoxes: box count", "does not match the mapping"),
      *_ompi(6)), [1, 6], "PatchLevel::getBoxes: box count does not match the mapping"),
    # its next line joined to its first (a long line's wrap undone under a tool's head)
    (("step 3", "P=0000005:Program abort called in file ``hier/PatchLevel.C'' at line 77P=0000005:ERROR MESSAGE:",
      "P=0000005:box count mismatch", *_ompi(5)), [5], "box count mismatch"),
    # one process, no prefix: the MPICH abort record after it names the rank
    (("step 10", *_samrai(None, "xfer/RefineSchedule.cpp", 369, "RefineSchedule error: source level finer"),
      "application called MPI_Abort(MPI_COMM_WORLD, -1) - process 0"), [0], "RefineSchedule error: source level finer"),
    # StackTrace's copy of it (one backtick) under srun's task prefix
    (("2: step 4", "2: Program abort called in file `solver.cpp' at line 88", "2: Bytes used = 1024",
      "srun: error: nid001: task 2: Exited with exit code 255"), [2], "solver.cpp line 88"),
    # MITgcm's ABNORMAL END behind its (PID.TID) head: the process number is the rank, its *** ERROR *** line the why
    (("(PID.TID 0002.0001) *** ERROR *** OBCS_CHECK: OB_Jnorth not set for tile 4",
      "(PID.TID 0002.0001) ABNORMAL END: S/R OBCS_CHECK", "application called MPI_Abort(MPI_COMM_WORLD, 1) - process 2"),
     [2], "OBCS_CHECK: OB_Jnorth not set"),
    # its own "*** ERROR *** ABNORMAL END" line and gfortran's STOP after the reason: the reason, not the end again
    (("(PID.TID 0003.0001) *** ERROR *** S/R SEAICE_LSR: ice solver blew up, uice = Inf at i= 17",
      "(PID.TID 0003.0001) *** ERROR *** ABNORMAL END: S/R SEAICE_LSR", "STOP ABNORMAL END: S/R SEAICE_LSR",
      *_ompi(3)), [3], "ice solver blew up"),
    # the same under Open MPI, its head alone
    (("(PID.TID 0006.0001) ABNORMAL END: S/R INI_PARMS", *_ompi(6)), [6], "ABNORMAL END in S/R INI_PARMS"),
    # gfortran's STOP before it, no head: the abort record's rank
    (("EXTERNAL_FIELDS_LOAD, it= 4269600", "STOP ABNORMAL END: S/R GET_PERIODIC_INTERVAL",
      "application called MPI_Abort(MPI_COMM_WORLD, 1) - process 5"), [5], "S/R GET_PERIODIC_INTERVAL"),
])
def test_a_codes_abort_is_that_ranks_error(lines: tuple[str, ...], ranks: list[int], words: str) -> None:
    verdict = report(*lines).verdict
    assert verdict.kind.value == "exception", verdict.summary
    assert words in verdict.summary, verdict.summary
    assert sorted(verdict.culprit_ranks) == ranks, verdict.summary


def test_mitgcms_words_alone_are_an_error_of_no_known_rank() -> None:
    verdict = report("ABNORMAL END: S/R SEAICE_READPARMS", "ABNORMAL END: S/R SEAICE_READPARMS").verdict
    assert verdict.kind.value == "exception", verdict.summary
    assert "MITgcm's ABNORMAL END in S/R SEAICE_READPARMS" in verdict.summary, verdict.summary
    assert not verdict.culprit_ranks, verdict.summary


@pytest.mark.parametrize("lines", [
    # quoted in a sentence, not at a line's start
    ("step 1", "last week the run said ABNORMAL END: S/R INI_PARMS until I fixed data", "step 2"),
    ("If you see Program abort called in file ``a.C'' at line 3, check the input deck.", "step 2"),
    # a Python port's raise of the same words
    ('        raise RuntimeError("ABNORMAL END: S/R W2_SET_CS6_FACETS")', "step 3"),
])
def test_the_same_words_quoted_are_no_failure(lines: tuple[str, ...]) -> None:
    try:
        summary = report(*lines).verdict.summary
    except InputError:
        return
    assert "MITgcm" not in summary and "SAMRAI" not in summary, summary


@pytest.mark.parametrize("banner", [
    _samrai(0, "a.C", 3, "try again with a smaller step"),
    ("(PID.TID 0000.0001) ABNORMAL END: S/R INI_PARMS",),
])
def test_an_abort_the_run_went_on_after_is_no_failure(banner: tuple[str, ...]) -> None:
    # a wrapper that printed the failed attempt, then retried: the run went on and finished
    try:
        result = report(*banner, "retrying with a smaller step", "Step 100 loss 3.1", "Step 200 loss 3.0",
                        "epoch 1 step 300 loss 2.9", "Training finished")
    except InputError:
        return
    assert result.verdict.kind.value != "exception" and not result.verdict.culprit_ranks, result.verdict.summary


def test_the_readers_words_and_places() -> None:
    text = ("x\nP=0000004:Program abort called in file ``b.C'' at line 7\nP=0000004:ERROR MESSAGE:\n"
            "P=0000004:bad box\nP=0000002:other rank's line\n(PID.TID 0003.0001) ABNORMAL END: S/R INI_PARMS\n")
    found = banners(text)
    assert [(rank, what) for rank, what, _, _ in found] == [
        (4, "SAMRAI's program abort (b.C line 7): bad box"), (3, "MITgcm's ABNORMAL END in S/R INI_PARMS")]


@pytest.mark.parametrize(("lines", "reason", "not_reason"), [
    # another routine's message it went on past, output, then the end's own message naming the routine (rev50 F6)
    (("(PID.TID 0001.0001) *** ERROR *** READ_FLD_XY_RS: file \"bathy.bin\" not found, using flat bottom",
      "(PID.TID 0001.0001) EXF_INIT: done", "(PID.TID 0001.0001) *** ERROR *** S/R EXF_CHECK: exf_iprec = 16 bad",
      "(PID.TID 0001.0001) exf_iprec read from data.exf", "(PID.TID 0001.0001) ABNORMAL END: S/R EXF_CHECK"),
     "exf_iprec = 16 bad", "bathy.bin"),
    # rev50's m2.txt: INI_PARMS's recovered message, the solver's output, then CG2D's end with no message of its own
    (("(PID.TID 0000.0001) *** ERROR *** INI_PARMS: Unable to open file \"data.pkg\"",
      "(PID.TID 0000.0001) Trying default: data.pkg.default", " (PID.TID 0000.0001) nIter0 = 0",
      *["(PID.TID 0000.0001) cg2d: Sum(rhs),rhsMax = 1.2E-10 3.4E+00"] * 4,
      "(PID.TID 0000.0001) *** ERROR *** ABNORMAL END: S/R CG2D", "STOP ABNORMAL END: S/R CG2D"),
     "ABNORMAL END in S/R CG2D", "data.pkg"),
])
def test_the_ends_reason_is_its_own_routines_message(lines: tuple[str, ...], reason: str, not_reason: str) -> None:
    summary = report(*lines).verdict.summary
    assert reason in summary and not_reason not in summary, summary
