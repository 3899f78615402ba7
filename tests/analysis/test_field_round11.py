"""Classes of real pasted logs found by rounds 11 and 12 of the real-world corpus and by the gaps earlier
rounds left (a heartbeat monitor's exit for a stuck watchdog, the DeepSpeed launcher's record of a
multi-process launch, a traceback cut at the rendezvous store call, the watchdog's C++ frames alone, a
timeout line cut before its rank, a dump signal from the rank that timed out, torchrun's agent line
cut before its pid, ranks aborting in the same second), each tested on a
variant written here (other ranks, paths, numbers and wording than the cases' own lines)."""

from __future__ import annotations

from tests.helpers.report import report_lines as report


def test_heartbeat_monitor_exit_for_a_stuck_watchdog_is_a_hang_of_that_rank() -> None:
    result = report(
        "[rank3]:[F1107 03:12:55.120000001 ProcessGroupNCCL.cpp:1420] [PG ID 0 PG GUID 0(default_pg) Rank 3] "
        "[PG ID 0 PG GUID 0(default_pg) Rank 3] Terminating the process after attempting to dump debug info, "
        "due to ProcessGroupNCCL watchdog hang.",
        "W1107 03:13:01.000000 4411 torch/multiprocessing/spawn.py:160] Terminating process 4413 via signal SIGTERM")
    assert result.verdict.kind.value == "hang"
    assert "rank 3" in result.verdict.summary


def test_deepspeed_record_of_several_processes_names_no_rank_and_says_why() -> None:
    result = report(
        "[2025-01-09 08:00:01,100] [INFO] [launch.py:319:sigkill_handler] Killing subprocess 5501",
        "[2025-01-09 08:00:01,102] [INFO] [launch.py:319:sigkill_handler] Killing subprocess 5502",
        "[2025-01-09 08:00:01,390] [ERROR] [launch.py:325:sigkill_handler] ['/srv/env/bin/python', '-u', 'sft.py', "
        "'--local_rank=3', '--deepspeed', 'ds.json', '--output_d",
        "ir', '/srv/out'] exits with return code = -11")
    assert result.verdict.kind.value == "crash"
    assert result.verdict.culprit_ranks == ()
    assert "SIGSEGV" in result.verdict.summary and "last process it started" in result.verdict.summary


def test_deepspeed_record_of_a_one_process_launch_names_rank_0() -> None:
    result = report("[ERROR] [launch.py:325:sigkill_handler] ['python', '-u', 'sft.py', '--local_rank=0'] "
                    "exits with return code = -6")
    assert (result.verdict.kind.value, result.verdict.culprit_ranks) == ("crash", (0,))


def test_traceback_cut_at_the_rendezvous_store_call_is_a_store_connection_failure() -> None:
    result = report(
        '  File "/opt/venv/lib/python3.11/site-packages/torch/distributed/elastic/agent/server/api.py", line 720, '
        'in _invoke_run',
        "    num_nodes_waiting = rdzv_handler.num_nodes_waiting()",
        '  File "/opt/venv/lib/python3.11/site-packages/torch/distributed/elastic/rendezvous/c10d_rendezvous_backend.py",'
        ' line 112, in _call_store',
        "    raise RendezvousConnectionError(")
    assert result.verdict.kind.value == "network_error"
    assert "rendezvous store" in result.verdict.summary and result.verdict.culprit_ranks == ()


def test_rendezvous_store_frame_before_its_exception_line_gives_way_to_that_line() -> None:
    result = report(
        '  File "/usr/lib/python3/site-packages/torch/distributed/elastic/rendezvous/c10d_rendezvous_backend.py", '
        "line 110, in _call_store",
        "torch.distributed.elastic.rendezvous.api.RendezvousConnectionError: The connection to the C10d store has "
        "failed. See inner exception for details.")
    assert result.verdict.kind.value == "network_error"
    assert "_call_store frame" not in result.verdict.summary


def test_watchdog_cpp_frames_alone_are_a_hang_of_unknown_rank() -> None:
    result = report(
        "frame #0: c10::Error::Error(c10::SourceLocation, std::string) + 0x98 (0x7f00aa in /env/lib/libc10.so)",
        "frame #1: c10d::ProcessGroupNCCL::WorkNCCL::checkTimeout(std::optional<std::chrono::duration<long, "
        "std::ratio<1l, 1000l> > >) + 0x1e0 (0x7f00bb in /env/lib/libtorch_cuda.so)",
        "frame #2: c10d::ProcessGroupNCCL::watchdogHandler() + 0x240 (0x7f00cc in /env/lib/libtorch_cuda.so)")
    assert result.verdict.kind.value == "hang"
    assert result.verdict.culprit_ranks == () and "checkTimeout" in result.verdict.summary


def test_watchdog_frames_next_to_their_timeout_line_add_nothing() -> None:
    result = report(
        "[rank1]:[E1201 10:00:00.000000001 ProcessGroupNCCL.cpp:616] [Rank 1] Watchdog caught collective operation "
        "timeout: WorkNCCL(SeqNum=77, OpType=BROADCAST, NumelIn=8, NumelOut=8, Timeout(ms)=600000) ran for 600031 "
        "milliseconds before timing out.",
        "frame #1: c10d::ProcessGroupNCCL::WorkNCCL::checkTimeout(std::optional<std::chrono::duration<long, "
        "std::ratio<1l, 1000l> > >) + 0x1e0 (0x7f00bb in /env/lib/libtorch_cuda.so)")
    assert result.verdict.kind.value == "hang"
    assert "rank 1 timed out in BROADCAST SeqNum=77" in result.verdict.summary


def test_timeout_line_cut_before_its_rank_is_a_hang_not_an_unlocated_failure() -> None:
    result = report("Watchdog caught collective operation timeout: WorkNCCL(SeqNum=12, OpType=BROADCAST, "
                    "Timeout(ms)=1800000) ran for 1800417 milliseconds before timing out.")
    assert result.verdict.kind.value == "hang"
    assert "broadcast SeqNum=12" in result.verdict.summary and result.verdict.culprit_ranks == ()


def test_dump_signal_from_the_rank_that_timed_out_is_a_hang_it_reported() -> None:
    result = report(
        "[rank2]:[E0301 09:15:00.100000001 ProcessGroupNCCL.cpp:1700] [PG ID 0 PG GUID 0(default_pg) Rank 2] "
        "Received a dump signal due to a collective timeout from rank 6 and we will try our best to dump the debug "
        "info. Last enqueued NCCL work: 5012, last completed NCCL work: 5011.")
    assert result.verdict.kind.value == "hang"
    assert "timed out on rank 6" in result.verdict.summary and result.verdict.culprit_ranks == ()


def test_a_rankless_timeout_next_to_a_real_crash_is_not_called_a_hang() -> None:
    result = report("Watchdog caught collective operation timeout: WorkNCCL(SeqNum=12, OpType=BROADCAST, "
                    "Timeout(ms)=1800000) ran for 1800417 milliseconds before timing out.",
                    "[rank5]: RuntimeError: CUDA error: an illegal memory access was encountered")
    assert result.verdict.kind.value != "hang"


def test_agent_failure_line_cut_before_its_pid_still_names_the_local_rank() -> None:
    result = report("E0511 07:02:11.000000 912 torch/distributed/elastic/multiprocessing/api.py:881] "
                    "failed (exitcode: -11) local_rank: 3")
    assert (result.verdict.kind.value, result.verdict.culprit_ranks) == ("crash", (3,))
    assert "SIGSEGV" in result.verdict.summary


def _record(index: int, rank: int, code: int, second: int) -> list[str]:
    return [f"[{index}]:", f"  time      : 2025-02-03_11:20:{second:02d}", "  host      : gpu-node-07",
            f"  rank      : {rank} (local_rank: {rank})", f"  exitcode  : {code} (pid: {4100 + rank})",
            "  error_file: <N/A>",
            f"  traceback : Signal {-code} (SIG{'ABRT' if code == -6 else 'SEGV'}) received by PID {4100 + rank}"]


def _summary(records: list[list[str]]) -> list[str]:
    lines = ["torch.distributed.elastic.multiprocessing.errors.ChildFailedError:", "=" * 40, "train.py FAILED",
             "-" * 40, "Failures:"]
    for record in records[1:]:
        lines += record
    return lines + ["-" * 40, "Root Cause (first observed failure):"] + records[0] + ["=" * 40]


def test_ranks_aborting_in_the_same_second_name_no_first() -> None:
    result = report(*_summary([_record(0, 2, -6, 41), _record(1, 0, -6, 41), _record(2, 3, -6, 41)]))
    assert result.verdict.kind.value == "crash"
    assert result.verdict.culprit_ranks == ()
    assert "cannot tell which aborted first" in result.verdict.summary


def test_an_abort_seconds_before_the_others_is_still_the_first() -> None:
    result = report(*_summary([_record(0, 2, -6, 12), _record(1, 0, -6, 41), _record(2, 3, -6, 41)]))
    assert result.verdict.culprit_ranks == (2,)


# Issue 23, point 4: a verdict that names no culprit says which ranks the text covers, what failed and
# the one thing that would settle it.
def test_a_network_error_reported_by_one_rank_says_what_would_settle_it() -> None:
    result = report("gpu-a:811:902 [3] NCCL INFO comm 0x55 rank 3 nranks 8 cudaDev 3 busId 4000 - Init COMPLETE",
                    "gpu-a:811:930 [3] misc/socket.cc:540 NCCL WARN Net : Connection closed by remote peer "
                    "gpu-b<40112>")
    summary = result.verdict.summary
    assert result.verdict.kind.value == "network_error" and result.verdict.culprit_ranks == ()
    # (the link's other end settles it: session 36, tests/analysis/test_gaps_s36.py)
    assert "this input holds rank 3 of 8" in summary and "the log of the peer gpu-b" in summary


def test_a_store_barrier_of_too_many_processes_says_what_would_settle_it() -> None:
    result = report("RuntimeError: Timed out initializing process group in store based barrier on rank: 1, for key: "
                    "store_based_barrier_key:1 (world_size=2, worker_count=6, timeout=0:30:00)")
    assert result.verdict.kind.value == "init_hang"
    assert "launch command" in result.verdict.summary and "would settle it" in result.verdict.summary


def test_a_one_sided_mismatch_says_what_would_settle_it() -> None:
    result = report(
        "[rank1]: RuntimeError: Detected mismatch between collectives on ranks. Rank 1 is running collective: "
        "CollectiveFingerPrint(SequenceNumber=40, OpType=ALLREDUCE, TensorShape=[1024], TensorDtypes=Float, "
        "TensorDeviceTypes=TensorOptions(dtype=float (default), device=cuda), but Rank 0 is running collective: "
        "CollectiveFingerPrint(SequenceNumber=40, OpType=ALLREDUCE, TensorShape=[2048], TensorDtypes=Float, "
        "TensorDeviceTypes=TensorOptions(dtype=float (default), device=cuda)).")
    assert (result.verdict.kind.value, result.verdict.culprit_ranks) == ("collective_mismatch", ())
    assert "TORCH_DISTRIBUTED_DEBUG=DETAIL lines" in result.verdict.summary and "would settle it" in result.verdict.summary


def test_an_nccl_failure_tied_to_its_rank_by_nccl_lines_alone_keeps_the_rank_behind_a_pod_tag() -> None:
    lines = ["h-:41:41 [0] NCCL INFO comm 0x9 rank 2 nranks 4 cudaDev 0 busId 1000 - Abort COMPLETE",
             "h-:41:77 [0] misc/socket.cc:538 NCCL WARN Net : Connection closed by remote peer other-host<5001>"]
    plain = report(*lines)
    tagged = report(*(f"[pod/job-worker-1/trainer] {line}" for line in lines))
    assert plain.verdict.kind.value == tagged.verdict.kind.value == "network_error"
    assert "rank 2" in tagged.verdict.summary


def test_a_kernel_assert_without_its_device_side_assert_line_is_a_cuda_crash() -> None:
    # round 13: the per-thread assert lines of a CUDA kernel alone (a paste cut before "device-side assert
    # triggered") were "nothing recognisable"
    result = report("epoch 3 iter 1200 loss 0.84",
                    "/src/pytorch/aten/src/ATen/native/cuda/ScatterGatherKernel.cu:367: operator(): block: [5,0,0], "
                    "thread: [64,0,0] Assertion `idx_dim >= 0 && idx_dim < index_size && \"index out of bounds\"` "
                    "failed.")
    assert result.verdict.kind.value == "crash"
    assert "device-side assert triggered" in result.verdict.summary and "ScatterGatherKernel.cu" in result.verdict.summary
    # a Python assert is no CUDA crash
    python = report("[rank2]: AssertionError: Assertion that x > 0 failed.")
    assert python.verdict.kind.value == "exception" and python.verdict.culprit_ranks == (2,)
