"""Classes of real pasted logs (lines from the public bug reports named), loaded and analysed."""

from __future__ import annotations

from tests.helpers.report import report_lines as report
from tests.parsing.test_nccl_ras import REPORT


def test_store_barrier_timeout_is_an_init_hang_with_the_missing_count() -> None:   # metaseq#52
    result = report("RuntimeError: Timed out initializing process group in store based barrier on rank: 4330, for key: "
                    "store_based_barrier_key:522 (world_size=2048, worker_count=1792, timeout=0:30:00)")
    assert result.verdict.kind.value == "init_hang" and not result.verdict.culprit_ranks
    assert "1792 of 2048" in result.verdict.summary and "256" in result.verdict.summary
    assert "of 2048" not in result.extra["coverage"]["summary"]       # 2048 is a subgroup's size here


def test_more_workers_than_the_world_means_a_shared_port() -> None:   # epfml/powersgd#21
    result = report("Timed out initializing process group in store based barrier on rank: 0, for key: "
                    "store_based_barrier_key:1 (world_size=2, worker_count=4, timeout=0:02:00)")
    assert "MASTER_PORT" in result.verdict.summary


def test_store_wait_timeouts_name_the_store_host() -> None:   # sglang#7478
    line = ("[rank{r}]:[W623 15:37:01.824135523 socket.cpp:485] [c10d] waitForInput: socket SocketImpl(fd=100, "
            "addr=[node-0.company.net]:43590, remote=[node-0.company.net]:20000) timed out after 1800000ms")
    result = report(line.format(r=1), line.format(r=7), "[2025-06-23 15:37:01 TP1] Scheduler hit an exception: "
                    "Traceback (most recent call last):", '  File "/sgl/scheduler.py", line 2546, in run')
    assert result.verdict.kind.value == "init_hang"
    assert "node-0.company.net:20000" in result.verdict.summary


def test_a_traceback_cut_before_its_exception_is_failure_evidence() -> None:
    result = report("Traceback (most recent call last):", '  File "train.py", line 3, in <module>', "    main()")
    assert result.verdict.kind.value != "no_problem_found"


def test_duplicate_gpu_blames_both_ranks() -> None:   # verl#161
    result = report('"""',
                    "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:"
                    "275, invalid usage (run with NCCL_DEBUG=WARN for details), NCCL version 2.20.5",
                    "ncclInvalidUsage: This usually reflects invalid usage of NCCL library.", "Last error:",
                    "Duplicate GPU detected : rank 1 and rank 0 both on CUDA device 10", '"""')
    assert result.verdict.culprit_ranks == (0, 1)
    assert "CUDA_VISIBLE_DEVICES" in result.verdict.summary


def test_a_watchdog_line_naming_its_rank_owns_the_lines_after_it() -> None:   # vllm#2682
    result = report(
        "(RayWorkerVllm pid=5304) [E ProcessGroupNCCL.cpp:916] [Rank 7] NCCL watchdog thread terminated with "
        "exception: CUDA error: unknown error",
        "(RayWorkerVllm pid=5304) Exception raised from c10_cuda_check_implementation at ../c10/cuda/CUDAException.cpp:"
        "44 (most recent call first):")
    assert (result.verdict.kind.value, result.verdict.culprit_ranks) == ("crash", (7,))


def test_terminate_then_what_is_one_network_failure() -> None:   # DeepSpeed#2931
    result = report(
        "PHLRR4036:24141:24296 [2] ib_plugin.c:978 NCCL WARN NET/IB : Got completion from peer 10.226.98.98<48598> "
        "with error 12, opcode 0, len 0, vendor err 129",
        "terminate called after throwing an instance of 'std::runtime_error'",
        "  what():  NCCL error: unhandled system error, NCCL version 2.14.3")
    assert result.verdict.kind.value == "network_error" and not result.verdict.culprit_ranks


def test_a_rank_reporting_a_network_error_is_named_but_not_blamed() -> None:   # open-r1-multimodal#7
    result = report(
        "[rank0]: torch.distributed.DistBackendError: NCCL error in: /pytorch/torch/csrc/distributed/c10d/"
        "ProcessGroupNCCL.cpp:2588, internal error - please report this issue to the NCCL developers, NCCL version "
        "2.21.5", "[rank0]: ncclInternalError: Internal check failed.", "[rank0]: Last error:",
        "[rank0]: Bootstrap : no socket interface found")
    assert result.verdict.kind.value == "network_error" and result.verdict.culprit_ranks == ()
    assert "reported by rank 0" in result.verdict.summary


def test_rank0_work_line_before_the_others_time_out() -> None:   # transformers#31675
    wd = ("[E ProcessGroupNCCL.cpp:474] [Rank {r}] Watchdog caught collective operation timeout: WorkNCCL(SeqNum="
          "783639, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=1800000) ran for 1800882 milliseconds "
          "before timing out.")
    result = report("Saving the newly created merged model to /opt/ml/model", "--", wd.format(r=7), wd.format(r=1))
    assert (result.verdict.kind.value, result.verdict.culprit_ranks) == ("stuck_outside_collective", (0,))
    assert "inferred" in result.verdict.summary
    # without a line of other work, nobody is named (unless the collective is barrier-shaped, see
    # tests/analysis/test_field_gaps.py: a 1-element all_reduce that every shown rank but 0 waits in)
    alone = report(wd.format(r=7).replace("NumelIn=1, NumelOut=1", "NumelIn=512, NumelOut=512"),
                   wd.format(r=1).replace("NumelIn=1, NumelOut=1", "NumelIn=512, NumelOut=512"))
    assert alone.verdict.kind.value == "hang" and alone.verdict.culprit_ranks == ()
    # rank 0 timing out too: the unprefixed line proves nothing about rank 0
    assert report("Saving the newly created merged model", wd.format(r=0), wd.format(r=1)).verdict.culprit_ranks != (0,)


def test_nccl_ras_names_the_ranks_behind() -> None:   # NVIDIA/nccl#1911
    result = report(*REPORT.splitlines())
    assert result.verdict.kind.value == "missing_rank"
    assert result.verdict.culprit_ranks == tuple(r for r in range(32) if r not in (12, 13))


def test_a_flattened_paste_of_terminate_and_ncclremoteerror_names_the_peer_host() -> None:   # stanford_alpaca#207
    result = report(
        "[E ProcessGroupNCCL.cpp:455] Some NCCL operations have failed or timed out. Due to the asynchronous nature "
        "of CUDA kernels, subsequent GPU operations might run on corrupted/incomplete data. [E ProcessGroupNCCL.cpp:"
        "460] To avoid data inconsistency, we are taking the entire process down. terminate called after throwing an "
        "instance of 'std::runtime_error' what(): NCCL error: remote process exited or there was a network error, "
        "NCCL version 2.14.3 ncclRemoteError: A call failed possibly due to a network error or a remote process "
        "exiting prematurely. Last error: NET/IB : Got completion from peer 11.214.147.122<33482> with error 12, "
        "opcode 32641, len 0, vendor err 129")
    assert result.verdict.kind.value == "network_error" and result.verdict.culprit_host == "11.214.147.122"


def test_nccl_channel_lines_tie_a_warn_to_its_rank() -> None:   # Open-Sora-Plan#386
    result = report(
        "ins-7df:3018453:3024011 [2] NCCL INFO Channel 01 : 2[1040] -> 0[1020] via SHM/direct/direct",
        "ins-7df:3018451:3024010 [0] NCCL INFO Channel 00 : 0[1020] -> 2[1040] via SHM/direct/direct",
        "ins-7df:3018451:3018451 [0] enqueue.cc:1085 NCCL WARN Cuda failure 'out of memory'")
    assert (result.verdict.kind.value, result.verdict.culprit_ranks) == ("exception", (0,))


def test_every_duplicate_gpu_pair_is_one_set_up_error() -> None:   # Megatron-LM#661
    result = report("Last error:", "Duplicate GPU detected : rank 3 and rank 0 both on CUDA device f000",
                    "    torch.distributed.barrier()", "Last error:",
                    "Duplicate GPU detected : rank 7 and rank 0 both on CUDA device f000")
    assert result.verdict.culprit_ranks == (0, 3, 7)


def test_ranks_killed_by_the_same_fault_in_the_same_second_share_the_blame() -> None:   # OpenOCR#71
    entry = ("[{i}]:\n  time      : 2024-12-31_16:45:52\n  host      : server\n  rank      : {r} (local_rank: {r})\n"
             "  exitcode  : -7 (pid: 46739{r})\n  error_file: <N/A>\n  traceback : Signal 7 (SIGBUS) received by "
             "PID 46739{r}")
    result = report("Failures:", entry.format(i=1, r=1), "-" * 40, "Root Cause (first observed failure):",
                    entry.format(i=0, r=0), "=" * 40)
    assert (result.verdict.kind.value, result.verdict.culprit_ranks) == ("crash", (0, 1))


def test_glog_heads_of_equal_length_are_not_taken_for_a_hard_wrap() -> None:   # MoE-LLaVA#20
    wd = ("[E ProcessGroupNCCL.cpp:467] [Rank {r}] Watchdog caught collective operation timeout: WorkNCCL(SeqNum="
          "202558, OpType=_ALLGATHER_BASE, NumelIn={n}, NumelOut={o}, Timeout(ms)=1800000) ran for 1800376 "
          "milliseconds before timing out.")
    result = report(*(wd.format(r=r, n=2359296, o=18874368) for r in (6, 1, 2)), wd.format(r=0, n=75264, o=602112))
    assert (result.verdict.kind.value, result.verdict.culprit_ranks) == ("collective_mismatch", (0,))


def test_pytorch_desync_report_names_the_rank_that_never_joined() -> None:   # pytorch#152623
    result = report(
        "[rank0]:[E515 18:36:47.343377708 ProcessGroupNCCL.cpp:1937] Rank 0",
        "         - [0] Timeout at collective: ALLREDUCE, #315",
        "         - To our best knowledge, the lagging/dead/mismatched ranks that caused the desync are:",
        "             [7] finished collective #182, but didn't join collective #183 (count from 1)",
        "         - Snapshot of ranks' latest states:")
    assert (result.verdict.kind.value, result.verdict.culprit_ranks) == ("missing_rank", (7,))


def test_mp_spawn_records_name_the_process() -> None:
    exited = report("torch.multiprocessing.spawn.ProcessExitedException: process 1 terminated with signal SIGABRT")
    assert (exited.verdict.kind.value, exited.verdict.culprit_ranks) == ("crash", (1,))
    raised = report("torch.multiprocessing.spawn.ProcessRaisedException:", "",
                    "-- Process 2 terminated with the following error:", "Traceback (most recent call last):",
                    '  File "/home/train.py", line 137, in main_worker', "    loss = model(x)",
                    "RuntimeError: CUDA error: device-side assert triggered")
    assert (raised.verdict.kind.value, raised.verdict.culprit_ranks) == ("crash", (2,))
    assert "device-side assert" in raised.verdict.summary


def test_signal_banners_of_folly_and_c10() -> None:
    folly = report("*** Signal 6 (SIGABRT) (0x8bb63000c0dfd) received by PID 790013 (pthread TID 0x7f70965f2640) "
                   "(linux TID 790536) (maybe from PID 790013, UID 572259) (code: -6), stack trace: ***")
    assert folly.verdict.kind.value == "crash" and "SIGABRT" in folly.verdict.summary
    c10 = report("[rank3]: SIGSEGV(11), PID: 18613, Thread 18613: ")
    assert (c10.verdict.kind.value, c10.verdict.culprit_ranks) == ("crash", (3,))


def test_a_rank_waiting_for_the_nccl_unique_id_names_the_rank_that_never_came() -> None:
    result = report("[rank1]: torch.distributed.DistBackendError: [1] is setting up NCCL communicator and retrieving "
                    "ncclUniqueId from [0] via c10d key-value store by key '0', but store->get('0') got error: "
                    "Socket Timeout")
    assert (result.verdict.kind.value, result.verdict.culprit_ranks) == ("init_hang", (0,))


def test_nccls_last_error_detail_says_what_the_exception_above_it_was() -> None:
    """A variant: the generic DistBackendError, then "Last error:" and a network detail on the same
    rank's prefixed lines: the detail decides (a network error naming the peer), not the generic line."""
    result = report(
        "[rank3]: torch.distributed.DistBackendError: NCCL error in: /pytorch/torch/csrc/distributed/c10d/"
        "ProcessGroupNCCL.cpp:3356, remote process exited or there was a network error, NCCL version 2.26.2",
        "[rank3]: ncclRemoteError: A call failed possibly due to a network error or a remote process exiting "
        "prematurely.", "[rank3]: Last error:",
        "[rank3]: socketProgress: Connection closed by remote peer 10.1.2.7<41852>")
    assert result.verdict.kind.value == "network_error"
    assert "10.1.2.7" in result.verdict.summary


def test_a_sigterm_to_torchrun_after_a_rank_failed_is_the_supervisors_reaction() -> None:
    """A variant: rank 2 raises, then torchrun's agent is sent SIGTERM: the exception is the story;
    without the failure before it, the SIGTERM from outside is (the other assertion)."""
    sigterm = ("W0412 10:00:09.100000 4242 torch/distributed/elastic/agent/server/api.py:739] Received 15 death "
               "signal, shutting down workers")
    result = report("[rank2]: ValueError: bad shard index 7", sigterm)
    assert (result.verdict.kind.value, result.verdict.culprit_ranks) == ("exception", (2,))
    alone = report("[rank2]: step 10 loss 0.3", sigterm)
    assert "SIGTERM" in alone.verdict.summary
