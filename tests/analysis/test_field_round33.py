"""Classes of real pasted logs found by round 33 of the real-world corpus, each tested on a variant written
here (other programs, ranks, hosts, devices, error codes and surrounding lines than the cases' own)."""

from __future__ import annotations

from tests.helpers.report import report_lines as report
from triage.model import Report
from triage.parsing.crashlog import CrashLineKind, parse_crash_line
from triage.parsing.launchers import parse_rank_deaths


def culprits(result: Report) -> list[int]:
    return sorted(result.verdict.culprit_ranks)


# Paddle 1.x's launcher names the trainers whose process ended badly: "ABORT!!! Out of all 4 trainers, the trainer
# process with rank=[0, 2] was aborted. Please check its log." It was read for the SIGSEGV stacks glog printed
# before it, but not for the ranks it names (PaddlePaddle/models#4064's shape; other ranks, counts and lines here)
def test_paddles_abort_line_names_each_trainer_it_lists() -> None:
    deaths = parse_rank_deaths("ERROR 2021-05-16 22:14:00,649 launch_utils.py:545] ABORT!!! Out of all 8 trainers, "
                               "the trainer process with rank=[3, 5, 6] was aborted. Please check its log.")
    assert [death.rank for death in deaths] == [3, 5, 6]
    assert all(death.signal is None and death.exitcode is None for death in deaths)


def test_a_paddle_job_whose_launcher_aborts_two_trainers_after_their_faults_names_both() -> None:
    result = report(
        "INFO 2020-06-02 10:11:12,001 launch.py:223] Local start 8 processes.",
        "W0602 10:14:01.220311 41877 init.cc:216] *** Aborted at 1591092841 (unix time) try \"date -d @1591092841\"",
        "W0602 10:14:01.224519 41877 init.cc:216] *** SIGSEGV (@0x18) received by PID 41877 (TID 0x7f3a) from PID "
        "24; stack trace: ***",
        "W0602 10:14:01.230006 41880 init.cc:216] *** SIGSEGV (@0x18) received by PID 41880 (TID 0x7f3b) from PID "
        "24; stack trace: ***",
        "INFO 2020-06-02 10:14:05,771 utils.py:269] terminate all the procs",
        "ERROR 2020-06-02 10:14:05,771 utils.py:413] ABORT!!! Out of all 8 trainers, the trainer process with "
        "rank=[4, 7] was aborted. Please check its log.",
        "INFO 2020-06-02 10:14:08,774 utils.py:269] terminate all the procs")
    assert result.verdict.kind.value == "crash", result.verdict.summary
    assert culprits(result) == [4, 7], result.verdict.summary


def test_an_abort_line_in_other_words_is_not_paddles_record() -> None:
    assert parse_rank_deaths("the trainer process was aborted by the user, see rank=[0] below") == ()


# srun lists tasks that ended alike on one line ("node: tasks 1-3: Out Of Memory"): when that is its first record,
# each task it lists is a root, not the first of them alone (chrisknewman/tusas#149's shape; another host, range,
# list and end here)
def test_sruns_first_line_of_a_task_range_killed_by_the_oom_handler_names_every_task() -> None:
    result = report(
        "slurmstepd: error: Detected 4 oom_kill events in StepId=88123.0. Some of the step tasks have been OOM Killed.",
        "srun: error: gpu-b07: tasks 4-6,9: Out Of Memory",
        "srun: Terminating StepId=88123.0",
        "slurmstepd: error: *** STEP 88123.0 ON gpu-b07 CANCELLED AT 2024-02-01T03:04:05 ***")
    assert result.verdict.kind.value == "crash", result.verdict.summary
    assert culprits(result) == [4, 5, 6, 9], result.verdict.summary


def test_sruns_first_line_of_tasks_that_exited_alike_names_each_of_them() -> None:
    result = report("srun: error: cn031: tasks 0-2: Exited with exit code 2",
                    "srun: Terminating StepId=5521.0")
    assert culprits(result) == [0, 1, 2], result.verdict.summary


def test_a_later_srun_line_stays_the_first_lines_consequence() -> None:
    # the tasks srun saw end after the first record's (killed when the step was torn down) are not roots
    result = report("srun: error: cn031: task 3: Exited with exit code 1",
                    "srun: error: cn031: tasks 0-2: Killed",
                    "srun: Terminating StepId=5521.0")
    assert culprits(result) == [3], result.verdict.summary


# A CUDA driver API error name ("CUDA_ERROR_ILLEGAL_INSTRUCTION: an illegal instruction was encountered", printed
# by JAX/XLA, CuPy, Numba) is a CUDA error, and an exception whose message goes on over the next lines to say so
# is that CUDA error (marin-community/marin#7956's shape: JAX's JaxRuntimeError; XLA's and other codes here)
def test_cuda_driver_api_error_names_are_cuda_errors() -> None:
    for line in ("CUDA_ERROR_ILLEGAL_ADDRESS: an illegal memory access was encountered",
                 "    CUDA_ERROR_LAUNCH_FAILED: unspecified launch failure",
                 ("RuntimeError: cupy_backends.cuda.api.driver.CUDADriverError: CUDA_ERROR_ECC_UNCORRECTABLE: "
                  "uncorrectable ECC error encountered")):
        parsed = parse_crash_line(line)
        assert parsed is not None and parsed.kind is CrashLineKind.CUDA_ERROR, line
    oom = parse_crash_line("XlaRuntimeError: RESOURCE_EXHAUSTED: CUDA_ERROR_OUT_OF_MEMORY: out of memory")
    assert oom is not None and oom.kind is CrashLineKind.CUDA_OOM
    setup = parse_crash_line("RuntimeError: CUDA_ERROR_NO_DEVICE: no CUDA-capable device is detected")
    assert setup is not None and setup.kind is CrashLineKind.EXCEPTION


def test_an_exception_whose_continued_message_names_a_cuda_error_is_a_crash() -> None:
    result = report(
        "I0731 02:11:09.118 train.py:214] step 161 loss 2.8410",
        "jaxlib.xla_extension.XlaRuntimeError: INTERNAL: Failed to execute XLA Runtime executable: run time error:",
        "  CUDA error: Failed to launch CUDA kernel: fusion_1183:",
        "  CUDA_ERROR_ILLEGAL_ADDRESS: an illegal memory access was encountered")
    assert result.verdict.kind.value == "crash", result.verdict.summary
    assert "CUDA" in result.verdict.summary


def test_an_exception_with_a_cuda_line_far_below_it_stays_an_exception() -> None:
    # a CUDA line many lines later is another event, not this exception's message
    result = report("ValueError: shapes (3,) and (4,) are incompatible",
                    *[f"  frame {n}" for n in range(10)],
                    "note: CUDA_ERROR_ILLEGAL_ADDRESS was seen in an earlier run")
    assert result.verdict.kind.value == "exception", result.verdict.summary
