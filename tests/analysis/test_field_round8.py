"""Classes of real pasted logs found by rounds 8 and 9 of the real-world corpus (MPI/Slurm/IDE records,
blocking-wait timeouts, gloo's mesh set-up, torch.distributed.launch, traceback frames, a cut DETAIL
message), each tested on a variant of the class written here (other ranks, hosts, signals and wording
than the cases' own lines)."""

from __future__ import annotations

from tests.helpers.report import report_lines as report


def test_hydra_box_is_a_crash_at_its_host_with_the_signal_of_its_exit_code() -> None:
    result = report("iteration 40 done",
                    "====================================================",
                    "=   BAD TERMINATION OF ONE OF YOUR APPLICATION PROCESSES",
                    "=   PID 90211 RUNNING AT cn-017",
                    "=   EXIT CODE: 137",
                    "=   CLEANING UP REMAINING PROCESSES",
                    "====================================================")
    assert result.verdict.kind.value == "crash"
    assert "SIGKILL" in result.verdict.summary and "cn-017" in result.verdict.summary


def test_petsc_signal_handler_names_the_rank() -> None:
    result = report("[2]PETSC ERROR: ------------------------------------------------------------------------",
                    "[2]PETSC ERROR: Caught signal number 8 FPE: Floating Point Exception,probably divide by zero",
                    "[2]PETSC ERROR: Signal received")
    assert result.verdict.kind.value == "crash"
    assert result.verdict.culprit_ranks == (2,)
    assert "SIGFPE" in result.verdict.summary


def test_slurm_oom_kill_record_alone_is_a_sigkill_of_no_known_rank() -> None:
    result = report("epoch 2 step 700 loss 0.41",
                    "slurmstepd: error: Detected 4 oom-kill event(s) in StepId=88123.0 cgroup. Some of your "
                    "processes may have been killed by the cgroup out-of-memory handler.")
    assert result.verdict.kind.value == "crash"
    assert result.verdict.culprit_ranks == ()
    assert "SIGKILL" in result.verdict.summary


def test_interrupted_by_signal_takes_the_number_over_a_misspelt_name() -> None:
    result = report("Process finished with exit code 135 (interrupted by signal 7: SIGBOS)")
    assert result.verdict.kind.value == "crash"
    assert "SIGBUS" in result.verdict.summary


def test_a_blocking_wait_timeout_is_a_hang_not_an_all_clear() -> None:
    result = report("[rank2]:[E0301 10:00:00.000000000 ProcessGroupNCCL.cpp:760] [Rank 2] Work WorkNCCL(SeqNum=77, "
                    "OpType=ALLGATHER, NumelIn=8, NumelOut=64, Timeout(ms)=600000) timed out in blocking wait.")
    assert result.verdict.kind.value == "hang"
    assert "2" in result.verdict.summary


def test_gloo_full_mesh_failure_at_set_up_is_a_network_error() -> None:
    result = report("[rank1]:[E0101 00:00:01.000 ProcessGroupGloo.cpp:143] Gloo connectFullMesh failed with "
                    "[../third_party/gloo/gloo/transport/tcp/pair.cc:144] Connection reset by peer")
    assert result.verdict.kind.value == "network_error"


def test_torch_distributed_launch_names_the_worker_a_signal_killed_by_its_local_rank() -> None:
    result = report("subprocess.CalledProcessError: Command '['/usr/bin/python', '-u', 'train.py', "
                    "'--local_rank=3', '--cfg', 'a.yaml']' died with <Signals.SIGBUS: 7>.")
    assert result.verdict.kind.value == "crash"
    assert result.verdict.culprit_ranks == (3,)
    assert "SIGBUS" in result.verdict.summary


def test_a_traceback_frames_source_line_is_not_rank_0s_work() -> None:
    result = report('  File "/opt/torch/nn/parallel/distributed.py", line 900, in _sync_buffers',
                    "    self._distributed_broadcast_coalesced(buffers, bucket_size, authoritative_rank",
                    "RuntimeError: NCCL communicator was aborted on rank 5.  Original reason for failure was: "
                    "[Rank 5] Watchdog caught collective operation timeout: WorkNCCL(OpType=BROADCAST, "
                    "Timeout(ms)=1800000) ran for 1800100 milliseconds before timing out.")
    assert result.verdict.kind.value == "hang"
    assert result.verdict.culprit_ranks == ()


def test_interleaved_broadcast_and_barrier_tracebacks_with_a_cut_detail_message_are_a_mismatch() -> None:
    result = report('  File "/env/lib/torch/distributed/distributed_c10d.py", line 3600, in barrier',
                    '  File "/env/lib/torch/distributed/distributed_c10d.py", line 2100, in broadcast',
                    "    work = group.barrier(opts=opts)",
                    "    work = default_pg.broadcast([tensor], opts)",
                    "RuntimeError: Detected mismatch between collectives on ranks. Rank 3 is running collective: "
                    "CollectiveFingerPrint(SequenceNumber=9, OpType=BROADCAST, TensorShape=[4], TensorDtypes=Int, "
                    "TensorDeviceTypes=TensorOptions(dtype=float (default), device=cuda")
    assert result.verdict.kind.value == "collective_mismatch"
    assert result.verdict.culprit_ranks == ()
    assert "rank 3" in result.verdict.summary
