"""Classes of real pasted logs found by round 63 of the real-world corpus, each tested on a variant written here
(other routines, versions, slots, programs and surrounding lines than the cases' own), with their negatives."""

from __future__ import annotations

import pytest

from tests.helpers.report import report_lines as report
from triage.parsing.log_prefix import split_rank_prefix
from triage.parsing.mpi_errors import parse_mpi_errors
from triage.parsing.unread_failure import unread_failure


# MPICH's own check of an MPI call before MPI_Init or after MPI_Finalize, which aborts the process: it was refused
# (pyscf/pyscf#349's shape: MPICH 3's words; MPICH 4's and Intel MPI's here)
@pytest.mark.parametrize("line", [
    "Attempting to use an MPI routine (internal_Comm_rank) before initializing or after finalizing MPICH",
    "Attempting to use an MPI routine before initializing MPI",
    "Attempting to use an MPI routine after finalizing MPICH",
])
def test_mpichs_call_outside_mpis_lifetime_is_the_processes_error(line: str) -> None:
    result = report("Reading input deck ...", "converged SCF energy = -76.0267", line)
    assert result.verdict.kind.value == "exception", result.verdict.summary
    assert "MPI routine" in result.verdict.summary
    assert result.verdict.culprit_ranks == ()


def test_the_words_in_a_run_that_went_on_are_no_end() -> None:
    # a warning a test suite prints, the job going on for many steps after it
    text = ("note: Attempting to use an MPI routine before initializing MPICH is what you get without mpirun\n"
            + "".join(f"step {step} loss 0.{step % 10}\n" for step in range(100, 150)))
    assert not any("MPI routine" in error.text for error in parse_mpi_errors(text))


# The Folding@home client's head on its log lines and its core's ("11:16:19:WU00:FS00:0xa7:ERROR:") hid GROMACS's fatal
# error from its reader (FoldingAtHome/fah-issues#1307's shape; another slot, core and message here)
def test_the_folding_at_home_head_is_a_prefix() -> None:
    found = split_rank_prefix("07:02:11:WU01:FS02:0x22:ERROR:Fatal error:")
    assert found.rank is None and found.rest == "Fatal error:"
    assert split_rank_prefix("WU01:FS02:FahCore returned: INTERRUPTED (102 = 0x66)").rest.startswith("FahCore")
    result = report("07:02:10:WU01:FS02:0x22:Started FahCore on PID 4411",
                    "07:02:11:WU01:FS02:0x22:ERROR:Fatal error:",
                    "07:02:11:WU01:FS02:0x22:ERROR:There is no domain decomposition for 12 ranks that is compatible "
                    "with the given box and a minimum cell size of 1.0212 nm",
                    "07:02:16:WU01:FS02:0x22:WARNING:Unexpected exit from science code")
    assert result.verdict.kind.value == "exception", result.verdict.summary
    assert "no domain decomposition for 12 ranks" in result.verdict.summary


def test_a_time_alone_is_no_folding_at_home_head() -> None:
    # a clock time before other words is not the client's head
    assert split_rank_prefix("07:02:11:Fatal error: bad input").rest == "07:02:11:Fatal error: bad input"


# A time stamp's seconds before a logger's level ("14:21:52 ERROR: ...") are no count of errors ("3 errors"): a
# viewer's line number before the stamp (the stamp then not taken as the line's head) left the line unread
# (golemfactory/clay#1646 decorated with "[80000] ")
@pytest.mark.parametrize("line", [
    "[80000] 2017-11-09 14:21:52 ERROR    golem.task  b'Task computing error: Subtask failed with exit code 137'",
    "[12] 03:04:05 ERROR: worker ended: exit status 137",
    "(7) 2024-02-01 10:11:12.345 ERRORS: a Segmentation fault in the solver",
])
def test_a_stamps_seconds_before_a_level_are_no_count(line: str) -> None:
    result = report(line)
    assert result.verdict.kind.value == "crash", result.verdict.summary


@pytest.mark.parametrize("line", ["Ran 40 tests: 3 errors, exit status 1", "summary: 12 failed, exit code 2"])
def test_a_count_of_errors_is_still_no_failure(line: str) -> None:
    assert unread_failure(line) is None
