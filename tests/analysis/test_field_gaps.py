"""Classes of real pasted logs that triage used to get wrong (tests/realworld/known_gaps.yaml), each
on a variant of the class rather than on the case's own lines."""

from __future__ import annotations

from tests.helpers.report import report_lines as report

OPTS = ("TensorDeviceTypes=TensorOptions(dtype=float (default), device=cuda, layout=Strided (default), "
        "requires_grad=false (default), pinned_memory=false (default), memory_format=(nullopt)))")



def _mismatch(a: int, op_a: str, shape_a: str, b: int, op_b: str, shape_b: str, seq: int = 77) -> str:
    fp = "CollectiveFingerPrint(SequenceNumber={seq}, OpType={op}, TensorShape=[{shape}], TensorDtypes=Float, " + OPTS
    return (f"[rank{a}]: RuntimeError: Detected mismatch between collectives on ranks. Rank {a} is running collective: "
            + fp.format(seq=seq, op=op_a, shape=shape_a) + f", but Rank {b} is running collective: "
            + fp.format(seq=seq, op=op_b, shape=shape_b) + ".")


EXIT_RECORD = ("[2025-03-02 11:02:03,456] torch.distributed.elastic.multiprocessing.api: [ERROR] failed (exitcode: 1) "
               "local_rank: 1 (pid: 4242) of binary: /usr/bin/python3")


def test_two_ranks_one_in_a_side_path_collective_names_that_rank() -> None:
    # speechbrain#2401's class: one rank in a rooted/object collective, the other in the step's all-reduce
    result = report(_mismatch(0, "ALLGATHER", "4096", 1, "BARRIER", "1"), EXIT_RECORD)
    assert result.verdict.kind.value == "collective_mismatch"
    assert result.verdict.culprit_ranks == (1,)
    assert result.verdict.subkind is not None and result.verdict.subkind.value == "op"
    assert "side path" in result.verdict.summary


def test_two_ranks_in_two_step_collectives_blame_no_one_and_the_exit_record_does_not_win() -> None:
    result = report(_mismatch(1, "ALLREDUCE", "1024", 0, "ALLREDUCE", "512"), EXIT_RECORD)
    assert (result.verdict.kind.value, result.verdict.culprit_ranks) == ("collective_mismatch", ())
    assert result.verdict.subkind is not None and result.verdict.subkind.value == "size"
    assert "which of them" in result.verdict.summary


def test_a_store_wait_timeout_before_any_work_is_an_init_hang() -> None:
    result = report("[rank1]: torch.distributed.DistStoreError: wait timeout after 600000ms, keys: /default_pg//cuda//0",
                    "[rank2]: torch.distributed.DistStoreError: wait timeout after 600000ms, keys: /default_pg//cuda//0")
    assert result.verdict.kind.value == "init_hang"
    assert "network" not in result.verdict.summary.lower()


def test_store_wait_timeouts_of_no_known_rank_while_rank_0_works_name_rank_0() -> None:
    # rwth-i6/returnn#1621's class: rank 0 alone evaluates; the others' store wait (DETAIL's check) times out
    result = report("validation: batch 311/400, acc 0.71", "validation: batch 312/400, acc 0.70",
                    "[I ProcessGroupWrapper.cpp:563] [Rank 0] Running collective: CollectiveFingerPrint("
                    "SequenceNumber=9, OpType=ALLREDUCE, TensorShape=[1], TensorDtypes=Float, " + OPTS,
                    "Unhandled exception <class 'RuntimeError'> in thread <_MainThread(MainThread)>, proc 101.",
                    "RuntimeError: Timed out waiting 1800000ms for key: default_pg/9",
                    "Exception raised from doWait at ../torch/csrc/distributed/c10d/TCPStore.cpp:445 (most recent "
                    "call first):")
    assert (result.verdict.kind.value, result.verdict.culprit_ranks) == ("stuck_outside_collective", (0,))
    assert "validation: batch 312/400" in result.verdict.summary


def test_store_wait_timeouts_with_no_rank_at_work_are_not_a_network_error() -> None:
    result = report("Epoch 3: 100%|#####| 500/500 [10:00<00:00, loss=1.2]", "RuntimeError: Socket Timeout",
                    "RuntimeError: Socket Timeout")
    assert result.verdict.kind.value not in ("network_error", "no_problem_found")


def test_a_rankless_oom_line_without_a_gpu_is_an_exception_of_unknown_rank() -> None:
    # fairseq#869's class, in the wording fairseq prints when it retries a batch
    result = report("| epoch 002:  41%|####      | 1803/4398 [10:11<14:40, loss=5.31]",
                    "| WARNING: ran out of memory, retrying batch",
                    "Traceback (most recent call last):", '  File "train.py", line 12, in <module>')
    assert result.verdict.kind.value == "exception" and not result.verdict.culprit_ranks
    assert "rank unknown" in result.verdict.summary and "out of memory" in result.verdict.summary


def test_a_rankless_oom_line_naming_its_gpu_on_one_node_names_that_local_rank() -> None:
    result = report("RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 3; 15.78 GiB total capacity; "
                    "14.10 GiB already allocated; 1.02 GiB free; 14.20 GiB reserved in total by PyTorch)",
                    "[E ProcessGroupNCCL.cpp:737] [Rank 1] Watchdog caught collective operation timeout: "
                    "WorkNCCL(SeqNum=88, OpType=ALLREDUCE, Timeout(ms)=1800000) ran for 1800532 milliseconds before "
                    "timing out.")
    assert (result.verdict.kind.value, result.verdict.culprit_ranks) == ("exception", (3,))
    assert "inferred from GPU 3" in result.verdict.summary


def test_a_rankless_oom_among_prefixed_lines_names_no_rank() -> None:
    # per-process prefixes (Ray, torchrun --tee): GPU numbers are not ranks there
    result = report("(RayWorkerWrapper pid=4411) INFO 07-01 10:00:00 worker.py:120 loading weights",
                    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.50 GiB. GPU 0 has a total "
                    "capacity of 79.10 GiB of which 1.2 GiB is free.")
    assert result.verdict.kind.value == "exception" and not result.verdict.culprit_ranks


def _running(rank: int, seq: int, op: str, shape: str, dtype: str) -> str:
    return (f"[I ProcessGroupWrapper.cpp:563] [Rank {rank}] Running collective: CollectiveFingerPrint(SequenceNumber="
            f"{seq}, OpType={op}, TensorShape=[{shape}], TensorDtypes={dtype}, " + OPTS)


def test_a_rank_one_running_collective_behind_in_a_different_call_is_a_mismatch() -> None:
    # Lightning#19106's class: the counts drifted (one rank issued a collective fewer), seen in DETAIL's lines
    result = report(_running(0, 41, "ALLREDUCE", "8", "Float"), _running(2, 41, "ALLREDUCE", "8", "Float"),
                    _running(3, 41, "ALLREDUCE", "8", "Float"), _running(1, 40, "ALLREDUCE", "8", "Half"))
    assert (result.verdict.kind.value, result.verdict.culprit_ranks) == ("collective_mismatch", (1,))
    assert result.verdict.subkind is not None and result.verdict.subkind.value == "dtype"
    assert "rank 1 is in all_reduce" in result.verdict.summary


def test_a_rank_one_running_collective_behind_in_the_same_call_is_not_a_mismatch() -> None:
    result = report(_running(0, 41, "ALLREDUCE", "8", "Float"), _running(2, 41, "ALLREDUCE", "8", "Float"),
                    _running(1, 40, "ALLREDUCE", "8", "Float"))
    assert result.verdict.kind.value != "collective_mismatch" and result.verdict.culprit_ranks == (1,)


def test_an_srun_record_of_a_task_killed_by_the_oom_handler_is_the_root_cause() -> None:
    result = report("0: [rank0]:[E1119 13:21:12.512781555 ProcessGroupNCCL.cpp:616] [Rank 0] Watchdog caught collective "
                    "operation timeout: WorkNCCL(SeqNum=77, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)="
                    "600000) ran for 600012 milliseconds before timing out.",
                    "slurmstepd: error: Detected 1 oom-kill event(s) in StepId=4411.0 cgroup.",
                    "srun: error: gpu-node-3: task 6: Out Of Memory")
    assert (result.verdict.kind.value, result.verdict.culprit_ranks) == ("crash", (6,))
    assert "OOM killer" in result.verdict.summary and "gpu-node-3" in result.verdict.summary


def test_an_open_mpi_tag_output_prefix_names_the_rank() -> None:
    result = report("[1,3]<stderr>:Traceback (most recent call last):",
                    "[1,3]<stderr>:RuntimeError: ncclCommInitRank failed: unhandled cuda error",
                    "[1,0]<stdout>:epoch 1 step 10")
    assert (result.verdict.kind.value, result.verdict.culprit_ranks) == ("exception", (3,))


def test_a_runner_tag_or_a_wrapped_path_is_not_rank_0_at_work() -> None:   # milabench#269
    # and a path a terminal wrapped onto a line of its own is no work either
    result = report("job-a.node3 [stderr] frame #3: c10d::ProcessGroupNCCL::ncclCommWatchdog() + 0x10c (0x7f5a in ",
                    "/opt/venv/lib/python3.10/site-packages/torch/lib/libtorch_cuda.so)",
                    "job-a.node3 [stderr] ",
                    "job-a.node3 [stderr] [rank6]:[E909 09:55:35.239719860 ProcessGroupNCCL.cpp:1515] [PG 0 "
                    "(default_pg) Rank 6] Process group watchdog thread terminated with exception: [Rank 6] Watchdog "
                    "caught collective operation timeout: WorkNCCL(SeqNum=2070, OpType=ALLREDUCE, NumelIn=1, "
                    "NumelOut=1, Timeout(ms)=600000) ran for 600022 milliseconds before timing out.")
    assert (result.verdict.kind.value, result.verdict.culprit_ranks) == ("hang", ())


def _timeout(rank: int, seq: int, numel: int) -> str:
    return (f"[rank{rank}]:[E1129 11:56:57.205862232 ProcessGroupNCCL.cpp:616] [Rank {rank}] Watchdog caught collective "
            f"operation timeout: WorkNCCL(SeqNum={seq}, OpType=ALLREDUCE, NumelIn={numel}, NumelOut={numel}, "
            "Timeout(ms)=600000) ran for 600024 milliseconds before timing out.")


def test_ranks_but_0_timing_out_in_a_barrier_shaped_all_reduce_name_rank_0() -> None:
    # torchtune#2093's class: rank 0 saves the checkpoint alone while the others wait at the next barrier
    result = report(_timeout(2, 4410, 1), _timeout(3, 4410, 1), _timeout(6, 4410, 1))
    assert (result.verdict.kind.value, result.verdict.culprit_ranks) == ("stuck_outside_collective", (0,))
    assert "inferred" in result.verdict.summary and "barrier" in result.verdict.summary


def test_a_barrier_rule_needs_several_ranks_a_1_element_all_reduce_and_no_line_of_rank_0() -> None:
    for lines in ((_timeout(6, 4410, 1),),                                   # one rank's paste
                  (_timeout(2, 4410, 4096), _timeout(3, 4410, 4096)),        # a gradient all-reduce
                  (_timeout(0, 4410, 1), _timeout(3, 4410, 1))):             # rank 0 waits too
        result = report(*lines)
        assert (result.verdict.kind.value, result.verdict.culprit_ranks) == ("hang", ()), lines


def test_a_hang_in_the_groups_first_collective_is_not_rank_0_at_work() -> None:
    # huggingface/picotron_tutorial#6's shape: every shown rank hangs in SeqNum=1, the all-reduce that
    # created the communicator (rank 0 joined it too)
    result = report(_timeout(1, 1, 1), _timeout(7, 1, 1), _timeout(4, 1, 1))
    assert (result.verdict.kind.value, result.verdict.culprit_ranks) == ("hang", ())


def test_a_python_warning_line_is_not_rank_0_at_work() -> None:   # picotron_tutorial#6
    result = report("/usr/lib/python3/site-packages/hub/file_download.py:896: FutureWarning: `resume_download` is "
                    "deprecated", _timeout(1, 40, 8), _timeout(4, 40, 8))
    assert (result.verdict.kind.value, result.verdict.culprit_ranks) == ("hang", ())
