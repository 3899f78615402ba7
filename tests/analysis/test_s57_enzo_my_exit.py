"""Session 57 (round 80's enzo-project/enzo-dev#182): Enzo's my_exit record, "<file>:<line> <N> ABORT ON
EXIT_FAILURE!" (src/enzo/enzo.C: the source line, then MyProcessorNumber), read its source line's number as a rank and
its ABORT as SIGABRT ("rank 918 was killed by SIGABRT"); now a source file's "name.ext:N" is never a rank
(triage.parsing.rank_words, any source language's extension and case), and the record is processor N's own error exit
(triage.parsing.hpc_codes), with the program's message on the line above it; Enzo's fatal exception ("Caught fatal
exception:", its message in quotes, "at <file>:<line>", then the catch's "Failure reported on processor N") is that
rank's exception."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.report import report_log
from triage.parsing.rank_words import named_rank


@pytest.mark.parametrize(("text", "rank", "words"), [
    (("TopGrid dt = 1.234e-03     time = 0.5     cycle = 12\n"
      "Grid_SolveHydroEquations: negative density in cell (4, 17, 9)\n"
      "Grid_SolveHydroEquations.C:231 3 ABORT ON EXIT_FAILURE!\n"
      "--------------------------------------------------------------------------\n"
      "MPI_ABORT was invoked on rank 3 in communicator MPI_COMM_WORLD\nwith errorcode 1.\n"), 3, "negative density"),
    ("EvolveLevel.C:88 12 ABORT ON UNKNOWN EXIT VALUE 7!\n", 12, "exit value 7"),
    (("Caught fatal exception:\n\n   'Could not read the parameter file.'\nat ReadParameterFile.C:1534\n\n"
      "Backtrace:\n\nBT symbol: ./enzo.exe [0x4a3f21]\nBT symbol: ./enzo.exe [0x4125b0]\n"
      "Failure reported on processor 5\n"), 5, "Could not read the parameter file."),
])
def test_enzo_failing_end_is_its_processors_exception(text: str, rank: int, words: str, tmp_path: Path) -> None:
    _code, got = report_log(text, tmp_path)
    verdict = got["verdict"]
    assert verdict["kind"] == "exception", verdict
    assert verdict["culprit_ranks"] == [rank], verdict
    assert words in verdict["summary"], verdict


@pytest.mark.parametrize("line", ["enzo.C:918 0 ABORT", "solver.F90:212 4 stopped", "kernel.cuh:77 2 failed",
                                  "Grid.H:40 1 failed", "mesh.cxx:9 7 failed"])
def test_a_source_files_line_is_no_rank(line: str) -> None:
    assert named_rank(line) is None


def test_a_hosts_rank_is_still_read() -> None:
    assert named_rank("node07:7 failed") == 7
    assert named_rank("gpu-a100.cluster:3 lost its peer") == 3
