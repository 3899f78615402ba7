"""Session 56 (fix56c item 8): MPICH's own assertion, MPIR_Assert_fail's "Assertion failed in file
../src/mpi/coll/helper_fns.c at line 107: FALSE" (MPIR_Assert_fail_fmt's message on the next line), then MPID_Abort's
"internal ABORT - process 0" (ch3's mpid_abort.c: the message, PMI_Abort, then exit with the code: an exit, not a
signal), is that rank's MPI error, which MPICH's own check found (triage.parsing.mpi_errors._mpich_assert). Was: rank
0's SIGABRT from the word ABORT (jeffhammond/BigMPI#18, in known_gaps.yaml)."""

from __future__ import annotations

from tests.helpers.paths import REPO
from tests.helpers.report import report_lines
from triage.parsing.mpi_errors import parse_mpi_errors

_ASSERT = "Assertion failed in file ../src/mpi/coll/helper_fns.c at line 107: FALSE"


def test_the_assertion_then_internal_abort_is_that_ranks_mpi_error() -> None:
    report = report_lines("step 3", "[2] " + _ASSERT, "[2] message sizes disagree, sendcount=4 recvcount=8", "",
                          "[2] internal ABORT - process 2")
    verdict = report.verdict
    assert verdict.kind.value == "exception" and verdict.culprit_ranks == (2,), verdict.summary
    assert "MPICH's own check failed (../src/mpi/coll/helper_fns.c:107: FALSE): message sizes disagree" \
        in verdict.summary and "SIGABRT" not in verdict.summary


def test_a_backtrace_between_is_no_message() -> None:
    frames = ("libmpi.so.12(MPL_backtrace_show+0x1c) [0x7f706faaa06c]\n"
              "/usr/lib/libmpi.so.12(MPIR_Assert_fail+0x21) [0x7f706f453f01]\n")
    text = f"{_ASSERT}\n{frames}internal ABORT - process 1"
    errors = [e for e in parse_mpi_errors(text + "\n") if "own check" in e.text]
    assert len(errors) == 1 and errors[0].rank == 1, errors
    assert "FALSE); MPID_Abort ends the process" in errors[0].text, errors[0].text


def test_without_mpids_abort_line_it_is_not_this_record() -> None:
    assert not [e for e in parse_mpi_errors(_ASSERT + "\nsome other line\n") if "own check" in e.text]


def test_bigmpi_18_is_rank_0s_mpi_error() -> None:
    # (jeffhammond/BigMPI#18: MPICH's memcpy overlap check inside MPI_Allreduce's local copy)
    text = (REPO / "tests/realworld/cases/jeffhammond__BigMPI__18/log.txt").read_text(encoding="utf-8")
    report = report_lines(*text.splitlines())
    assert report.verdict.kind.value == "exception" and report.verdict.culprit_ranks == (0,), report.verdict.summary
    assert "memcpy argument memory ranges overlap" in report.verdict.summary
