"""Classes of real pasted logs found by the fourth round of the real-world corpus (launchers and
frameworks beyond torchrun), each tested on a variant of the class written here (other ranks,
hosts, signals and wording than the cases' own lines)."""

from __future__ import annotations

from tests.helpers.report import report_lines as report


def test_a_launcher_line_naming_a_rank_and_its_signal_is_a_crash_of_that_rank() -> None:
    result = report("step 120 loss 2.31",
                    "[launcher] rank 5 died from signal 11",
                    "[launcher] shutting down the remaining 7 workers")
    assert result.verdict.kind.value == "crash"
    assert result.verdict.culprit_ranks == (5,)
    assert "SIGSEGV" in result.verdict.summary


def test_a_rank_that_was_killed_with_no_signal_named_is_still_a_crash() -> None:
    result = report("2026-01-02 10:00:01 supervisor: rank 3 was killed, restarting the group")
    assert result.verdict.kind.value == "crash"
    assert result.verdict.culprit_ranks == (3,)


def test_a_rank_that_exited_cleanly_is_no_failure() -> None:
    result = report("rank 2 exited with exit code 0", "[rank2]: training finished")
    assert result.verdict.kind.value == "no_problem_found"


def test_mpirun_names_the_first_rank_a_signal_killed_even_wrapped() -> None:
    result = report("[1,6]<stderr>:Epoch 3/90",
                    "--------------------------------------------------------------------------",
                    "mpiexec noticed that process rank 6 with PID 4411 on node gpu-b07 exited on",
                    "signal 7 (Bus error).",
                    "--------------------------------------------------------------------------")
    assert result.verdict.kind.value == "crash"
    assert result.verdict.culprit_ranks == (6,)
    assert "SIGBUS" in result.verdict.summary


def test_mpirun_first_process_box_names_the_rank_and_its_exit_code() -> None:
    result = report("mpirun detected that one or more processes exited with non-zero status, thus causing",
                    "the job to be terminated. The first process to do so was:",
                    "",
                    "  Process name: [[40192,1],2]",
                    "  Exit code:    1")
    assert result.verdict.culprit_ranks == (2,)


def test_vllm_worker_death_names_its_rank() -> None:
    result = report("INFO 03-01 09:00:00 [core.py:100] engine started",
                    "ERROR 03-01 09:12:44 [multiproc_executor.py:151] Worker proc VllmWorker-6 died unexpectedly, "
                    "shutting down executor.")
    assert result.verdict.kind.value == "crash"
    assert result.verdict.culprit_ranks == (6,)


def test_a_ray_worker_death_is_a_crash_of_no_rank_before_the_drivers_traceback() -> None:
    result = report("(raylet, ip=10.1.2.3) A worker died or was killed while executing a task by an unexpected "
                    "system error. Worker PID: 2211 Worker exit type: SYSTEM_ERROR Worker exit detail: Worker "
                    "unexpectedly exits with a connection error code 2.",
                    "Traceback (most recent call last):",
                    '  File "main_ppo.py", line 12, in <module>')
    assert result.verdict.kind.value == "crash"
    assert result.verdict.culprit_ranks == ()


def test_nccl_connect_refused_is_a_network_error_naming_the_peer() -> None:
    result = report("node3:771:790 [2] misc/socket.cc:484 NCCL WARN socketStartConnect: Connect to "
                    "192.168.7.21<39011> failed : Connection refused",
                    "node3:771:790 [2] NCCL INFO misc/socket.cc:565 -> 2")
    assert result.verdict.kind.value == "network_error"
    assert "192.168.7.21" in result.verdict.summary


def test_nccl_retrying_connect_is_a_network_error() -> None:
    result = report("host-a:12:40 [0] NCCL INFO Call to connect returned Connection refused, retrying")
    assert result.verdict.kind.value == "network_error"


def test_a_store_client_that_cannot_connect_names_the_store_address() -> None:
    result = report("Traceback (most recent call last):",
                    '  File "train.py", line 9, in <module>',
                    "torch.distributed.DistNetworkError: The client socket has timed out after 60000ms while "
                    "trying to connect to (trainer-0.svc, 29400).")
    assert result.verdict.kind.value in ("init_hang", "network_error")     # an init-time failure to connect
    assert "trainer-0.svc:29400" in result.verdict.summary
    assert "after 60 s" in result.verdict.summary      # 60000 ms, not 60000 s


def test_a_store_host_that_does_not_resolve_is_a_network_error() -> None:
    result = report("Traceback (most recent call last):",
                    '  File "/opt/venv/lib/python3.11/site-packages/torch/distributed/rendezvous.py", line 180, in '
                    "_create_c10d_store",
                    "ValueError: host not found: Name or service not known")
    assert result.verdict.kind.value == "network_error"


def _op(host: str, pid: int, gpu: int, op: str, op_count: str, count: int, comm: str, nranks: int = 2) -> str:
    return (f"{host}:{pid}:{pid} [{gpu}] NCCL INFO {op}: opCount {op_count} sendbuff 0x7f1000000000 recvbuff "
            f"0x7f1000000000 count {count} datatype 7 op 0 root 0 comm {comm} [nranks={nranks}] stream 0x5601ab000000")


def test_two_processes_calling_different_ops_at_one_opcount_are_a_mismatch_without_a_culprit() -> None:
    # each process has its own comm pointer; the opCount, not the pointer, lines them up
    result = report(_op("trn2", 8812, 1, "Broadcast", "11", 512, "0x5601aa000000"),
                    _op("trn2", 8811, 0, "Broadcast", "11", 512, "0x5702bb000000"),
                    _op("trn2", 8811, 0, "AllReduce", "12", 65536, "0x5702bb000000"),
                    _op("trn2", 8812, 1, "AllGather", "12", 32768, "0x5601aa000000"))
    assert result.verdict.kind.value == "collective_mismatch"
    assert result.verdict.culprit_ranks == ()
    assert "all_gather" in result.verdict.summary and "all_reduce" in result.verdict.summary
    assert "TORCH_DISTRIBUTED_DEBUG=DETAIL" in result.verdict.summary


def test_processes_of_another_communicator_size_are_not_compared() -> None:
    # a 2-rank subgroup's ops are not the 4-rank group's: the group of 4 all agree
    lines = [_op("n1", 100 + g, g, "AllReduce", "5", 64, f"0x55{g}", nranks=4) for g in range(4)]
    lines.append(_op("n1", 100, 0, "AllGather", "5", 8, "0x77a", nranks=2))
    result = report(*lines)
    assert result.verdict.kind.value == "hang"


def _record(index: int, rank: int, code: str, stamp: str = "2026-06-01_04:10:09") -> list[str]:
    return [f"[{index}]:", f"  time      : {stamp}", "  host      : gpu-node-2", f"  rank      : {rank} (local_rank: {rank})",
            f"  exitcode  : {code} (pid: {900 + rank})", "  error_file: <N/A>",
            "  traceback : To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html"]


def test_several_ranks_exiting_1_in_the_same_second_do_not_make_the_first_listed_the_culprit() -> None:
    lines = ["Failures:", *_record(1, 0, "1"), *_record(2, 5, "1"), "-" * 60, "Root Cause (first observed failure):",
             *_record(0, 4, "1"), "=" * 60]
    result = report(*lines)
    assert result.verdict.kind.value == "exception"
    assert result.verdict.culprit_ranks == ()
    assert "cannot tell" in result.verdict.summary and "ranks 0,4,5" in result.verdict.summary


def test_a_root_cause_a_second_before_the_others_is_still_named() -> None:
    lines = ["Failures:", *_record(1, 0, "1", "2026-06-01_04:10:11"), "-" * 60,
             "Root Cause (first observed failure):", *_record(0, 4, "1"), "=" * 60]
    result = report(*lines)
    assert result.verdict.culprit_ranks == (4,)


def test_a_headerless_record_of_a_signal_is_a_crash_of_its_rank() -> None:
    result = report("  time      : 2026-06-01_04:10:09", "  host      : gpu-node-2", "  rank      : 9 (local_rank: 1)",
                    "  exitcode  : -7 (pid: 5151)", "  error_file: <N/A>",
                    "  traceback : Signal 7 (SIGBUS) received by PID 5151")
    assert result.verdict.kind.value == "crash"
    assert result.verdict.culprit_ranks == (9,)


def test_the_exit_after_a_store_barrier_that_never_filled_is_its_symptom() -> None:
    result = report("[rank2]: RuntimeError: Timed out initializing process group in store based barrier on rank: 2, "
                    "for key: store_based_barrier_key:1 (world_size=2, worker_count=3, timeout=0:10:00)",
                    "Root Cause (first observed failure):", *_record(0, 2, "1"), "=" * 60)
    assert result.verdict.kind.value == "init_hang"
    assert result.verdict.culprit_ranks == ()
    assert "3 processes registered for a group of 2" in result.verdict.summary


def _watchdog(rank: int, seq: int) -> str:
    return (f"[rank{rank}]:[E ProcessGroupNCCL.cpp:616] [Rank {rank}] Watchdog caught collective operation timeout: "
            f"WorkNCCL(SeqNum={seq}, OpType=ALLGATHER, NumelIn=2, NumelOut=8, Timeout(ms)=600000) ran for 600071 "
            "milliseconds before timing out.")


def test_a_hang_whose_culprit_is_absent_names_the_log_that_would_settle_it() -> None:
    result = report(_watchdog(0, 77), _watchdog(1, 77), _watchdog(2, 77))     # world of 4 from NumelOut/NumelIn
    assert result.verdict.kind.value == "hang"
    assert result.verdict.culprit_ranks == ()
    assert "the log of rank 3 would settle it" in result.verdict.summary


def test_a_failure_of_no_known_rank_says_what_would_name_it() -> None:
    result = report("RuntimeError: NCCL error: unhandled system error, NCCL version 2.21.5")
    assert result.verdict.culprit_ranks == ()
    # (a network failure: the link settles it, not which rank reported it; session 36, test_gaps_s36.py)
    assert "rank unknown" in result.verdict.summary
    assert "NCCL_DEBUG=INFO output of every rank" in result.verdict.summary


# Round 5's classes.

def test_the_shells_job_message_is_a_crash_of_the_process_it_names() -> None:
    result = report("serving: loading weights 61%",
                    "./serve.sh: line 12:  40211 Segmentation fault      (core dumped) python -m server --tp 2")
    assert result.verdict.kind.value == "crash"
    assert "SIGSEGV" in result.verdict.summary


def test_torchruns_process_id_agent_line_names_the_local_rank() -> None:
    result = report("[job-worker-0] torch.distributed.elastic.multiprocessing.api: [ERROR] failed (exitcode: -6) for "
                    "binary located at /usr/bin/python3 with local_rank: 3 (process ID: 812)")
    assert result.verdict.kind.value == "crash"
    assert result.verdict.culprit_ranks == (3,)


def test_the_agents_signal_exception_alone_is_a_stop_from_outside() -> None:
    result = report("torch.distributed.elastic.multiprocessing.api.SignalException: Process 5511 got signal: 15")
    assert result.verdict.kind.value == "stopped"           # (a crash of no rank before session 33)
    assert result.verdict.culprit_ranks == ()
    assert "SIGTERM" in result.verdict.summary


def test_a_barrier_timeout_retold_without_numbers_is_an_init_hang() -> None:
    assert report("Error: Timed Out initializing process group in store based barrier").verdict.kind.value == "init_hang"


def test_a_client_whose_connect_timed_out_is_a_network_failure_naming_the_store() -> None:
    result = report("[W socket.cpp:601] [c10d] The client socket has failed to connect to [head-7.local]:29511 "
                    "(errno: 110 - Connection timed out).")
    assert result.verdict.kind.value == "network_error"
    assert result.verdict.culprit_host == "head-7.local"
    assert "head-7.local:29511" in result.verdict.summary and "timed out" in result.verdict.summary


def test_a_retyped_torchrun_record_still_names_its_rank_and_signal() -> None:
    result = report("Root Cause (first observed failure):", "[0]:", "time", "host", "2024-01-02 03:04:05", "gpu-a",
                    "rank5 (local rank: 1)exitcode: -11 (pid: 777)error file: <N/A>",
                    "traceback : signal 11 (SIGSEGV) received by PID 777")
    assert result.verdict.kind.value == "crash"
    assert result.verdict.culprit_ranks == (5,)
    assert "SIGSEGV" in result.verdict.summary


def test_nccl_retries_then_the_failure_naming_the_peer_give_the_peer_host() -> None:
    result = report("hostB:90:91 [0] NCCL INFO Call to connect returned Connection refused, retrying",
                    "hostB:90:91 [0] misc/socket.cc:500 NCCL WARN Connect to 172.16.4.9<40001> failed : Connection "
                    "refused")
    assert result.verdict.kind.value == "network_error"
    assert result.verdict.culprit_host == "172.16.4.9"


# Round 6's classes.

def test_rays_actor_died_error_is_the_drivers_view_of_the_worker_death() -> None:
    result = report("ray.exceptions.ActorDiedError: The actor died unexpectedly before finishing this task.",
                    "(raylet) A worker died or was killed while executing a task by an unexpected system error. "
                    "Worker PID: 321 Worker exit type: SYSTEM_ERROR Worker exit detail: Worker unexpectedly exits")
    assert result.verdict.kind.value == "crash"
    assert "raylet" in result.verdict.summary


def test_ucx_caught_signal_is_a_fatal_signal() -> None:
    result = report("[gpu-3:771 :0:790] Caught signal 11 (Segmentation fault: address not mapped to object at "
                    "address (nil))")
    assert result.verdict.kind.value == "crash"
    assert "SIGSEGV" in result.verdict.summary or "Segmentation" in result.verdict.summary


def test_a_cut_root_record_names_the_ranks_that_failed_in_its_second() -> None:
    lines = ["Failures:", *_record(1, 6, "-11"), "-" * 60, "Root Cause (first observed failure):", "[0]:",
             "  time      : 2026-06-01_04:10:09", "  host      : gpu-node-2", "  rank      : 2 (local_rank: 2)"]
    result = report(*lines)
    assert result.verdict.kind.value == "crash"
    assert result.verdict.culprit_ranks == (2, 6)
    assert "cut before its exit code" in result.verdict.summary


def test_a_short_paste_under_cat_n_keeps_its_verdict() -> None:
    line = "torch.distributed.DistNetworkError: Connection reset by peer"
    assert report(f"     1\t{line}").verdict.kind == report(line).verdict.kind
