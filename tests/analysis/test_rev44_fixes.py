"""Session 44's readers after its review (rev44's findings, issue 23): each class on variants written here, with a
negative beside each."""

from __future__ import annotations

import pytest

from tests.helpers.report import report_lines as report
from triage.errors import InputError
from triage.model import Report

# (3) Ascend HCCL's socket timeout (EI0006, its CANN log's "wait socket establish timeout") is a peer-report: the
# reporter waited for a peer that never answered; a rank's own error in the input is the failure, the report collateral
_EI0006 = ("[rank{r}]:[ERROR] HCCL(40211,python3):2026-01-05-11:02:03.404.505 [hccl_communicator.cc:871] EI0006: "
           "Getting socket times out. Reason: Remote Rank did not send the data in time. Please check the reason for "
           "the rank being stuck")
_WAIT = ("[rank{r}]:[ERROR] HCCL(7781,train):2026-01-05-11:02:03.100.001 [hccl_socket_manager.cc:797] [7790][Wait]"
         "[LinkEstablish]wait socket establish timeout, role[0] rank[{r}] timeout[120 s]")


@pytest.mark.parametrize(("report_line", "reporter"), [(_EI0006, 1), (_WAIT, 0)])
def test_hccls_socket_timeout_yields_to_a_ranks_own_error(report_line: str, reporter: int) -> None:
    result = report("[rank0]: epoch 0 iter 5", "[rank1]: epoch 0 iter 5", report_line.format(r=reporter),
                    f"[rank{reporter}]:RuntimeError: HCCL function error: HcclAllGather, error code is 7",
                    "[rank3]:Traceback (most recent call last):",
                    '[rank3]:  File "loader.py", line 77, in __getitem__',
                    "[rank3]:KeyError: 'sample_000913'")
    assert result.verdict.kind.value == "exception", result.verdict.summary
    assert tuple(result.verdict.culprit_ranks) == (3,), result.verdict.summary
    assert "KeyError" in result.verdict.summary, result.verdict.summary


def test_hccls_socket_timeout_alone_is_a_network_error_with_hccls_own_knobs() -> None:
    result = report("[rank0]: epoch 0 iter 5", "[rank1]: epoch 0 iter 5", _EI0006.format(r=1),
                    "[rank1]:RuntimeError: HCCL function error: HcclAllGather, error code is 7")
    assert result.verdict.kind.value == "network_error", result.verdict.summary
    assert "reported by rank 1" in result.verdict.summary, result.verdict.summary
    told = result.verdict.summary + " ".join(result.next_steps)
    assert "HCCL_CONNECT_TIMEOUT" in told and "ASCEND_GLOBAL_LOG_LEVEL" in told, told
    assert "NCCL_DEBUG=INFO" not in told, told


def test_nccls_network_error_alone_keeps_nccls_knobs() -> None:
    result = report("[rank0]: epoch 0 iter 5", "[rank1]: epoch 0 iter 5",
                    "[rank1]:RuntimeError: NCCL error in: ProcessGroupNCCL.cpp:1275, unhandled system error, "
                    "NCCL version 2.18.1 Last error: socketPollConnect: connect returned Connection timed out")
    assert result.verdict.kind.value == "network_error", result.verdict.summary
    told = result.verdict.summary + " ".join(result.next_steps)
    assert "NCCL_DEBUG" in told and "HCCL_CONNECT_TIMEOUT" not in told, told


# (2) a runtime's error message quoted inside the writer's own sentence (a FAQ, a README's known issue) is no failure
# where the ranks went on after it; where they did not, or a rank printed it at its line's start, it is read as before
_HSA = ("Memory access fault by GPU node-5 (Agent handle: 0x6120aa10) on address 0x7ff0c0000000. Reason: Page not "
        "present or supervisor privilege.")
_TRAIN_ON = ("[rank0]: iter 20 loss 1.71", "[rank1]: iter 20 loss 1.69", "[rank2]: iter 20 loss 1.70")


@pytest.mark.parametrize("said", [
    f"Troubleshooting: with HSA_XNACK=0 on MI210 nodes, {_HSA} Export HSA_XNACK=1 before launching.",
    f"If the kernel reads past its buffer you will see {_HSA}",
    'Tip: when a rank prints "CUDA error: unspecified launch failure" check the driver version first',
    "“CUDA error: an illegal memory access was encountered” was fixed in 2.3, see the release notes",
])
def test_a_runtime_error_quoted_in_prose_the_ranks_went_on_past_is_no_failure(said: str) -> None:
    result = report("[rank0]: iter 10 loss 2.05", "[rank1]: iter 10 loss 2.04", "[rank2]: iter 10 loss 2.06",
                    said, *_TRAIN_ON)
    assert result.verdict.kind.value not in ("crash", "exception"), result.verdict.summary


def test_a_runtime_error_quoted_with_nothing_after_is_still_the_failure() -> None:
    result = report("[rank0]: iter 10 loss 2.05", "[rank1]: iter 10 loss 2.04",
                    '"CUDA error: an illegal memory access was encountered"')
    assert result.verdict.kind.value == "crash", result.verdict.summary
    assert "illegal memory access" in result.verdict.summary, result.verdict.summary


def test_a_ranks_own_runtime_error_line_is_read_though_the_others_went_on() -> None:
    result = report("[rank0]: iter 10 loss 2.05", "[rank1]: iter 10 loss 2.04", "[rank2]: iter 10 loss 2.06",
                    f"[rank2]: {_HSA}", "[rank0]: iter 11 loss 2.01", "[rank1]: iter 11 loss 2.00")
    assert result.verdict.kind.value == "crash", result.verdict.summary
    assert tuple(result.verdict.culprit_ranks) == (2,), result.verdict.summary


# (1) a code's banner the run went on past, at any distance: progress or the run's own word that it ended well after
# it (a code's normal end line, a test harness's pass), or ctest's result for the test that printed it says Passed
_FILLER = tuple(f"     removing scratch file pwscf.wfc{i}" for i in range(60))
_QE_BOX = (" " + "%" * 78,
           "     Error in routine cdiaghg (191):", "     problems computing cholesky",
           " " + "%" * 78)
_MOOSE = ("*** ERROR ***", 'The following error occurred in the object "bc_left", of type "DirichletBC".', "",
          "boundary 'left_side' does not exist in the mesh")


@pytest.mark.parametrize("lines", [
    ("ERROR: Invalid atom ID in Bonds section of data file (src/read_data.cpp:1432)", "LAMMPS (29 Aug 2024)",
     *_FILLER, "Loop time of 41.2 on 8 procs for 5000 steps with 12000 atoms", "Total wall time: 0:00:41"),
    (*_QE_BOX, *_FILLER, "     PWSCF        :   1m12.40s CPU   1m15.02s WALL", "", "   JOB DONE."),
    (*_MOOSE, "Setting up the mesh", *_FILLER, "Time Step 1, time = 0.5, dt = 0.5", " Solve Converged!"),
    ("      Start  7: kernels/bc_missing_boundary", *_MOOSE, "",
     " 7/12 Test  #7: kernels/bc_missing_boundary ......   Passed    0.88 sec"),
])
def test_a_codes_banner_the_run_went_on_past_is_no_failure(lines: tuple[str, ...]) -> None:
    try:
        result = report(*lines)
    except InputError:
        return                  # (refused: no failure line in it, never a failure)
    assert result.verdict.kind.value not in ("crash", "exception"), result.verdict.summary


def test_a_codes_banner_with_no_progress_after_is_the_failure() -> None:
    result = report(*_QE_BOX, *_FILLER)
    assert result.verdict.kind.value == "exception", result.verdict.summary
    assert "cdiaghg" in result.verdict.summary, result.verdict.summary


def test_a_codes_banner_in_a_test_that_failed_is_the_failure() -> None:
    result = report("      Start  7: kernels/bc_missing_boundary", *_MOOSE, "",
                    " 7/12 Test  #7: kernels/bc_missing_boundary ......***Failed    0.88 sec",
                    "92% tests passed, 1 tests failed out of 12")
    assert result.verdict.kind.value == "exception", result.verdict.summary
    assert "left_side" in result.verdict.summary, result.verdict.summary


def test_mooses_message_is_its_own_line_not_the_next_blocks() -> None:
    result = report(*_MOOSE, "Setting up variable temperature", "Setting up variable pressure")
    assert "left_side' does not exist" in result.verdict.summary, result.verdict.summary
    assert "Setting up" not in result.verdict.summary, result.verdict.summary


# (4) a code's banner and the MPI launcher's record of the same rank's exit after it (Open MPI's "The first process to
# do so was: ... Process name: [[j,1],N] Exit code: C"): the record gives the rank, the banner what failed
_OMPI_FIRST = ("-" * 74, "mpirun detected that one or more processes exited with non-zero status, thus causing",
               "the job to be terminated. The first process to do so was:", "",
               "  Process name: [[31337,1],3]", "  Exit code:    2", "-" * 74)
_GFORTRAN = ("At line 214 of file src/advect.f90 (unit = 10, file = 'fort.10')",
             "Fortran runtime error: End of file", "", "Error termination. Backtrace:",
             "#0  0x4011a2 in advect_ at src/advect.f90:214")


@pytest.mark.parametrize("prefix", ["", "[1,3]<stderr>:"])
def test_a_banner_and_the_launchers_record_of_its_exit_are_one_failure(prefix: str) -> None:
    result = report("[1,0]<stdout>: cycle 1 dt 1.0e-3", "[1,3]<stdout>: cycle 1 dt 1.0e-3",
                    *(prefix + line for line in _GFORTRAN), *_OMPI_FIRST)
    assert tuple(result.verdict.culprit_ranks) == (3,), result.verdict.summary
    assert "Fortran runtime error" in result.verdict.summary and "End of file" in result.verdict.summary, \
        result.verdict.summary
    assert "at line 214 of src/advect.f90" in result.verdict.summary, result.verdict.summary


def test_the_launchers_exit_record_alone_is_still_read() -> None:
    result = report("[1,0]<stdout>: cycle 1 dt 1.0e-3", "[1,3]<stdout>: cycle 1 dt 1.0e-3", *_OMPI_FIRST)
    assert tuple(result.verdict.culprit_ranks) == (3,), result.verdict.summary
    assert "exited with code 2" in result.verdict.summary, result.verdict.summary


# (4) a traceback that ends in Python's own StopIteration alone (an iterator's next() past its end: no message) is that
# rank's exception; one that ends in KeyboardInterrupt is an interrupt from outside, not the rank's failure
def _stalled_then(last: str) -> Report:
    return report("[1,0]<stderr>:[2026-01-05 11:02:03.404505: W /opt/horovod/common/stall_inspector.cc:107] "
                  + _HVD_HEAD, "[1,0]<stderr>:Missing ranks:", "[1,0]<stderr>:1: [allreduce.dense_3.kernel_0]",
                  "[1,1]<stderr>:Traceback (most recent call last):",
                  '[1,1]<stderr>:  File "fit.py", line 88, in run_epoch',
                  "[1,1]<stderr>:    images, labels = next(batches)", f"[1,1]<stderr>:{last}")


_HVD_HEAD = ("One or more tensors were submitted to be reduced, gathered or broadcasted by subset of ranks and are "
             "waiting for remainder of ranks for more than 60 seconds. This may indicate that different ranks are "
             "trying to submit different tensors or that only subset of ranks is submitting tensors, which will cause "
             "deadlock. ")


@pytest.mark.parametrize("last", ["StopIteration", "StopAsyncIteration"])
def test_a_traceback_ending_in_a_bare_stop_iteration_is_the_ranks_exception(last: str) -> None:
    result = _stalled_then(last)
    assert result.verdict.kind.value == "exception", result.verdict.summary
    assert tuple(result.verdict.culprit_ranks) == (1,) and last in result.verdict.summary, result.verdict.summary


def test_a_traceback_ending_in_a_bare_keyboard_interrupt_is_no_ranks_own_failure() -> None:
    result = _stalled_then("KeyboardInterrupt")
    assert "raised: KeyboardInterrupt" not in result.verdict.summary, result.verdict.summary


# (1, after rev45) ctest --output-on-failure prints a failed test's output after its result line: the banner there is
# that failed test's, whatever the next test's result; a banner then the MPI runtime's abort, then a job script's bare
# "Done." 50 lines on, is still the failure (at a distance only numbered progress or a code's own end line count); a
# bare "Fatal error:" of a test every test of which passed is none
def test_a_banner_after_a_failed_tests_result_line_is_that_tests_failure() -> None:
    result = report(" 6/9 Test #6: kernels/bc_ok ..........   Passed    0.40 sec",
                    " 7/9 Test #7: kernels/bc_missing_boundary ......***Failed    0.88 sec", *_MOOSE, "",
                    " 8/9 Test #8: kernels/bc_other ..........   Passed    0.41 sec",
                    "89% tests passed, 1 tests failed out of 9")
    assert result.verdict.kind.value == "exception", result.verdict.summary
    assert "left_side" in result.verdict.summary, result.verdict.summary


def test_a_banner_then_an_abort_then_a_scripts_done_is_the_failure() -> None:
    result = report("ERROR: Invalid atom ID in Bonds section of data file (src/read_data.cpp:1432)",
                    "Last command: read_data system.data", "-" * 74,
                    "MPI_ABORT was invoked on rank 0 in communicator MPI_COMM_WORLD", "with errorcode 1.", "-" * 74,
                    *(f"+ gzip log.{i}" for i in range(50)), "+ echo Done.", "Done.")
    assert "Invalid atom ID" in result.verdict.summary, result.verdict.summary


def test_a_bare_fatal_error_in_a_test_run_every_test_of_which_passed_is_no_failure() -> None:
    try:
        result = report("[ RUN      ] ErrorHandling.ReportsFatal", "Fatal error:",
                        "Deliberate failure for the handler under test", "[       OK ] ErrorHandling.ReportsFatal",
                        " 3/3 Test #3: ErrorHandlingTests ..........   Passed    0.12 sec", "",
                        "100% tests passed, 0 tests failed out of 3")
    except InputError:
        return
    assert result.verdict.kind.value not in ("crash", "exception", "unknown"), result.verdict.summary
    assert "Fatal error" not in result.verdict.summary or "went on" in result.verdict.summary, result.verdict.summary


def test_numbered_progress_after_the_jobs_abort_record_does_not_clear_a_banner() -> None:
    result = report("ERROR: Invalid atom ID in Bonds section of data file (src/read_data.cpp:1432)",
                    "-" * 74, "MPI_ABORT was invoked on rank 0 in communicator MPI_COMM_WORLD", "with errorcode 1.",
                    "-" * 74, "+ python render.py", *(f"  rendering step {i} -> frames/{i:04d}.png" for i in range(45)))
    assert "Invalid atom ID" in result.verdict.summary, result.verdict.summary
