"""Session 57 (round 80's pism/pism#505): a program's own error head in its name, in capitals, with the message's
indented continuation lines ("PISM ERROR: ..." then "            ..."), as the input's last words, read as a failure of
unknown place ("no reader for these words"); now the program's own error exit (triage.parsing.fatal_ending): an
exception of no rank, unless a line ties it to one."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.report import report_log

# PISM's own message (src/base/grid: PetscPrintf on the communicator, then PetscEnd), as its source words it
PISM_LBZ = ("PISM ERROR: Lbz (1000.000 m) has to be at least twice the vertical grid spacing near the bottom of the "
            "ice,\n            which is 600.000 m. Please choose a different -Lbz value.\n")


@pytest.mark.parametrize("text", [
    PISM_LBZ,
    # another code's head of the same shape, its message over three lines, then the MPI runtime's teardown
    (" t = 1200.0 s  dt = 0.5 s\n"
     "GLACIO ERROR: the surface mass balance file has no 'climatic_mass_balance' variable.\n"
     "              Checked: ./input/smb_2100.nc\n"
     "              Run with -smb_file NAME to choose another file.\n"
     "--------------------------------------------------------------------------\n"
     "Primary job  terminated normally, but 1 process returned\n"
     "a non-zero exit code. Per user-direction, the job has been aborted.\n"
     "--------------------------------------------------------------------------\n"),
])
def test_a_programs_error_block_is_its_exception(text: str, tmp_path: Path) -> None:
    _code, got = report_log(text, tmp_path)
    verdict = got["verdict"]
    assert verdict["kind"] == "exception", verdict
    assert verdict["culprit_ranks"] == [] or verdict["culprit_ranks"] == "unknown", verdict
    assert "own error" in verdict["summary"], verdict


def test_its_rank_prefix_ties_it(tmp_path: Path) -> None:
    text = ("[1] step 40 done\n[0] step 40 done\n"
            "[1] GLACIO ERROR: negative ice thickness at i=12, j=40\n"
            "[1]              (the bed deformation model diverged)\n")
    _code, got = report_log(text, tmp_path)
    assert got["verdict"]["kind"] == "exception", got["verdict"]
    assert got["verdict"]["culprit_ranks"] == [1], got["verdict"]


@pytest.mark.parametrize("text", [
    # the run went on past it: the program's own output after the block
    ("GLACIO ERROR: could not read the optional forcing file\n"
     "              continuing without it\n"
     "step 10 time 100.0 years\nstep 20 time 200.0 years\nstep 30 time 300.0 years\nDone.\n"),
    # the words in a sentence: not the program's
    "I keep getting a GLACIO ERROR: after the restart, any idea?\n",
])
def test_no_failure_where_it_is_none(text: str, tmp_path: Path) -> None:
    _code, got = report_log(text, tmp_path)
    assert "own error" not in got["verdict"]["summary"], got["verdict"]
    assert got["verdict"]["kind"] != "exception" or "GLACIO" not in got["verdict"]["summary"], got["verdict"]


def test_an_mpi_runtimes_record_keeps_its_reader(tmp_path: Path) -> None:
    # (HPE MPT's record of a rank's signal, its indented lines after it: the rank's crash, not MPT's own error)
    text = ("MPT ERROR: Rank 20(g:20) received signal SIGSEGV(11).\n"
            "        Process ID: 58057, Host: node17, Program: /opt/app/bin/solver\n"
            "        MPT Version: HPE MPT 2.25  08/14/21 03:26:14\n")
    _code, got = report_log(text, tmp_path)
    assert got["verdict"]["kind"] == "crash", got["verdict"]
    assert "own error" not in got["verdict"]["summary"], got["verdict"]


def test_a_runtimes_error_log_is_no_programs_error(tmp_path: Path) -> None:
    # (PMIx's and OPAL's ERROR_LOG lines, "<X> ERROR: <what> in file F at line N": their own readers', not a program's)
    text = ("PMIX ERROR: OUT-OF-RESOURCE in file ../src/client/pmix_client.c at line 231\n"
            "OPAL ERROR: Error in file ext3x_client.c at line 112\n")
    code, got = report_log(text, tmp_path)
    assert code == 2 or "own error" not in got["verdict"]["summary"], got


def test_a_librarys_stream_of_error_lines_keeps_its_reader(tmp_path: Path) -> None:
    # (PETSc's error stream: its head on every line; the signal it names is the failure)
    text = ("[0]PETSC ERROR: ------------------------------------------------------------------------\n"
            "[0]PETSC ERROR: Caught signal number 11 SEGV: Segmentation Violation, probably memory access out of range\n"
            "[0]PETSC ERROR: Try option -start_in_debugger or -on_error_attach_debugger\n"
            "[0]PETSC ERROR: or see https://petsc.org/release/faq/#valgrind\n")
    _code, got = report_log(text, tmp_path)
    assert got["verdict"]["kind"] == "crash", got["verdict"]


def test_a_signal_after_the_block_is_the_failure(tmp_path: Path) -> None:
    # (the process died of the signal its handler's record names: not of the error line before it)
    text = ("GLACIO ERROR: could not register the output buffer\n"
            "              (falling short of pinned memory)\n"
            "*** Received signal 11 ***\n")
    _code, got = report_log(text, tmp_path)
    assert got["verdict"]["kind"] == "crash", got["verdict"]
    assert "own error" not in got["verdict"]["summary"], got["verdict"]
