"""Classes of real pasted logs found by round 40 of the real-world corpus, each tested on a variant written here
(other ranks, files, lines, pids, messages and timeouts than the cases' own)."""

from __future__ import annotations

from tests.helpers.report import report_lines as report
from triage.parsing.crashlog import CrashLineKind, parse_crash_line
from triage.parsing.frameworks import parse_framework_records
from triage.parsing.gloo import parse_gloo_timeout


# AMReX's own abort names the MPI rank after "amrex::Abort::" and says why: GPU out-of-memory on several ranks was read
# as a SIGABRT of no rank (AMReX-Astro/Castro#3344's and BLAST-WarpX/warpx#3398's shape; other ranks, files, lines)
def test_amrex_abort_of_gpu_out_of_memory_is_each_ranks_oom() -> None:
    result = report("... Entering hydro advance on level 1",
                    "amrex::Abort::6::GPU last error detected in file /opt/nyx/amrex/Src/Base/AMReX_Gpu.H line 77: "
                    "out of memory !!!",
                    "SIGABRT",
                    "amrex::Abort::2::GPU last error detected in file /opt/nyx/amrex/Src/Base/AMReX_Gpu.H line 77: "
                    "out of memory !!!",
                    "SIGABRT",
                    "See Backtrace.6 file for details")
    assert result.verdict.kind.value == "exception", result.verdict.summary
    assert "out of memory" in result.verdict.summary, result.verdict
    assert set(result.verdict.culprit_ranks) == {2, 6}, result.verdict


def test_amrex_abort_of_a_hip_allocation_is_that_ranks_oom() -> None:
    result = report("amrex::Abort::5::HIP error in file Src/Base/AMReX_Arena.cpp line 219 hipErrorOutOfMemory !!!",
                    "SIGABRT")
    assert result.verdict.kind.value == "exception", result.verdict.summary
    assert "hipErrorOutOfMemory" in result.verdict.summary, result.verdict
    assert result.verdict.culprit_ranks == (5,), result.verdict


def test_amrex_abort_of_a_cuda_error_is_that_ranks_crash_before_mpichs_abort() -> None:
    # (BLAST-ImpactX/impactx#154's shape: Cray MPICH's Abort of the same rank after it is its consequence)
    result = report("amrex::Abort::3::CUDA error 719 in file Src/Base/AMReX_GpuDevice.cpp line 512: unspecified "
                    "launch failure !!!",
                    "SIGABRT",
                    "MPICH ERROR [Rank 3] [job id 91.0] [Mon Jan  2 03:04:05 2026] [nid004011] - Abort(6) (rank 3 in "
                    "comm 480): application called MPI_Abort(comm=0x84000001, 6) - process 3",
                    "srun: error: nid004011: task 3: Exited with exit code 6")
    assert result.verdict.kind.value == "crash", result.verdict.summary
    assert result.verdict.culprit_ranks == (3,), result.verdict


def test_amrex_abort_in_the_codes_own_words_is_that_ranks_failure() -> None:
    deaths = parse_framework_records("amrex::Abort::1::Error: initial data has rho <~ small_dens !!!\nSIGABRT\n")
    assert [(d.rank, d.raised) for d in deaths] == [(1, True)], deaths
    assert "small_dens" in deaths[0].text


def test_gpu_error_with_its_file_and_line_then_out_of_memory_is_an_oom_line() -> None:
    for text in ("CUDA error 2 in file Src/Base/AMReX_Arena.cpp line 88: out of memory",
                 "cudaErrorMemoryAllocation while copying the halo"):
        found = parse_crash_line(text)
        assert found is not None and found.kind is CrashLineKind.CUDA_OOM, (text, found)


# gloo's TCP pair closed on its timeout: "Application timeout caused pair closure" was read as an exception of the
# spawned process that raised it, not a collective's timeout (lkeab/BCNet#53's shape; another process and call here)
def test_gloo_pair_closure_on_timeout_is_a_hang_of_no_known_culprit() -> None:
    result = report("Traceback (most recent call last):",
                    '  File "train.py", line 40, in <module>',
                    "    mp.spawn(main, nprocs=4)",
                    "Exception: ",
                    "",
                    "-- Process 1 terminated with the following error:",
                    "Traceback (most recent call last):",
                    '  File "/work/engine.py", line 77, in step',
                    "    dist.all_reduce(loss)",
                    "RuntimeError: Application timeout caused pair closure")
    assert result.verdict.kind.value == "hang", result.verdict.summary
    assert result.verdict.culprit_ranks == (), result.verdict
    assert parse_gloo_timeout("RuntimeError: Application timeout caused pair closure") is not None


# Ascend's device runtime reporting an HCCL task that timed out ("hccl fftsplus task timeout occurred"), carried by
# torch_npu's npuSynchronizeDevice RuntimeError (107020, the task timeout): an exception of no rank, not the hang
# (Ascend/pytorch#43's shape; another rank, stream and timeout here)
def test_hccl_fftsplus_task_timeout_is_a_collective_hang() -> None:
    result = report("    work.wait()",
                    "RuntimeError: npuSynchronizeDevice:torch_npu/csrc/core/npu/NPUStream.cpp:401 NPU error, error "
                    "code is 107020",
                    "[ERROR] 2025-01-09-08:00:12 (PID:4012, Device:3, RankID:11) ERR00100 PTA call acl api failed.",
                    "EI9999: Inner Error!",
                    "EI9999: 2025-01-09-08:00:12.001.002  The error from device(chipId:3, dieId:0), serial number is "
                    "4, hccl fftsplus task timeout occurred during task execution, stream_id:9, sq_id:9, task_id:2, "
                    "stuck notify num:3, timeout:600.[FUNC:ProcessStarsHcclFftsPlusTimeoutErrorInfo]"
                    "[FILE:device_error_proc.cc][LINE:1389]")
    assert result.verdict.kind.value == "hang", result.verdict.summary
    assert result.verdict.culprit_ranks == (), result.verdict


# Julia's runtime's signal report ("[pid] signal 11 (2): Segmentation fault", "signal (7): Bus error") was read only
# as an unread failure, so a program that printed itself rank 0 of a world of one ("rank=0, size=1") did not own it
# (CliMA/ClimaOcean.jl#225's shape; another pid, signal and keys here)
def test_julia_signal_report_is_the_sole_processs_crash() -> None:
    result = report("rank = 0, world_size = 1",
                    "",
                    "[99812] signal 7 (2): Bus error",
                    "in expression starting at /home/u/run.jl:22",
                    "memcpy at /lib64/libc.so.6 (unknown line)")
    assert result.verdict.kind.value == "crash", result.verdict.summary
    assert "SIGBUS" in result.verdict.summary, result.verdict
    assert result.verdict.culprit_ranks == (0,), result.verdict


def test_julia_signal_report_without_a_world_names_no_rank() -> None:
    found = parse_crash_line("signal (6): Aborted")
    assert found is not None and found.signal == "SIGABRT", found
    result = report("signal (11): Segmentation fault", "in expression starting at none:0")
    assert result.verdict.kind.value == "crash", result.verdict.summary
    assert result.verdict.culprit_ranks == (), result.verdict
