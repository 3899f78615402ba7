"""Classes of real pasted logs found by round 37 of the real-world corpus, each tested on a variant written here
(other libraries, files, messages, statuses, wrappings, pids and GPUs than the cases' own)."""

from __future__ import annotations

from tests.helpers.report import report_lines as report
from triage.parsing.crashlog import CrashLineKind, parse_crash_line
from triage.parsing.launchers import parse_rank_deaths


# The NCCLCHECK macro of CUDA's samples, copied into libraries and tests, prints "Failed, NCCL error FILE:LINE 'RESULT'"
# and exits: it was not read (NVIDIA/TransformerEngine#994's Userbuffers line, its result string empty; TensorRT-LLM's
# plugins and nccl-tests print the same words)
def test_ncclcheck_line_is_an_nccl_failure() -> None:
    result = report("[TensorRT-LLM] building the engine for tp_size=4",
                    "Failed, NCCL error /workspace/trt/cpp/plugins/allgatherPlugin.cpp:177 'invalid usage (run with "
                    "NCCL_DEBUG=WARN for details)'")
    assert result.verdict.kind.value == "exception", result.verdict.summary
    assert "allgatherPlugin.cpp:177" in result.verdict.summary
    assert not result.verdict.culprit_ranks


def test_nccl_tests_failure_line_and_its_result() -> None:
    line = parse_crash_line("node7: Test NCCL failure all_gather.cu:88 'internal error - please report this issue'")
    assert line is not None and line.kind is CrashLineKind.NCCL_ERROR, line
    empty = parse_crash_line("Failed, NCCL error comm_overlap.cpp:61 ''")
    assert empty is not None and empty.kind is CrashLineKind.NCCL_ERROR, empty
    network = parse_crash_line("Failed, NCCL error dist.cu:30 'unhandled system error (run with NCCL_DEBUG=INFO)'")
    assert network is not None and network.kind is CrashLineKind.NETWORK, network


def test_a_sentence_about_an_nccl_error_is_no_ncclcheck_line() -> None:
    assert parse_crash_line("Failed, NCCL error looks random to me, any idea?") is None


# UCX's own ERROR-level lines of a connection it could not set up or lost ("connection request failed on listener
# ... with status Destination is unreachable", "no active messages transport to ...") were not read (rapidsai/ucx-py#194's
# shape; other statuses, files, hosts and pids here)
def test_ucx_connection_errors_are_a_network_failure() -> None:
    result = report("[1700000000.100001] [gpu-a:40411:0]     ucp_worker.c:1783 UCX  INFO  ep_cfg[2]: tag(tcp/ens5)",
                    "[1700000003.200002] [gpu-a:40411:0]  rdmacm_cm_ep.c:510  UCX  ERROR received event "
                    "RDMA_CM_EVENT_UNREACHABLE. status = -110. Peer: 10.1.2.3:41000.",
                    "[1700000003.200101] [gpu-a:40411:0]    ucp_ep.c:1470 UCX  ERROR error 'Endpoint timeout' will not "
                    "be handled for ep 0x7f10c4a2b000 - 10.1.2.3")
    assert result.verdict.kind.value == "network_error", result.verdict.summary
    assert not result.verdict.culprit_ranks


def test_other_ucx_errors_are_no_network_failure() -> None:
    line = parse_crash_line("[1700000000.1] [gpu-b:77:0]  cuda_copy_md.c:140 UCX  ERROR cuCtxGetDevice(&cu_device) is "
                            "failed")
    assert line is None or line.kind is not CrashLineKind.NETWORK, line


# Ray's dead-worker record with its words wrapped over lines and its fields (RayTask ID ... Worker PID) each on a line
# of its own, without the exit type older Ray does not give, was not read (stevietrouble/EfficientZero#2's shape; another
# wrapping, pid, address and exit type here)
def test_ray_dead_worker_record_over_several_lines() -> None:
    result = report("(pid=5521) step 300 loss 0.82",
                    "2023-03-01 10:00:00,001\tWARNING worker.py:1829 -- A worker died or was",
                    "killed while executing a task by an unexpected system error.",
                    "To troubleshoot the problem, check the logs for the dead worker.",
                    "RayTask ID: ffffffffffffffff0a1b2c3d4e5f60718293a4b501000000",
                    "Worker ID: 8f3c0d6e2b1a49d7c5e4f3a2b1c0d9e8f7a6b5c4d3e2f1a0b9c8d7e6",
                    "Node ID: 0a9b8c7d6e5f4a3b2c1d0e9f8a7b6c5d4e3f2a1b0c9d8e7f6a5b4c3d",
                    "Worker IP address: 10.8.0.12",
                    "Worker port: 40123",
                    "Worker PID: 7734")
    assert result.verdict.kind.value == "crash", result.verdict.summary
    assert not result.verdict.culprit_ranks
    deaths = parse_rank_deaths("The actor is dead because its worker process\nhas died. Worker PID: 91\n"
                               "Worker exit type: NODE_OUT_OF_MEMORY Worker exit detail: Task was killed\n")
    assert [(d.pid, d.signal) for d in deaths] == [(91, "SIGKILL")], deaths


def test_ray_words_without_the_record_are_not_this_record() -> None:
    deaths = parse_rank_deaths("I read that a worker died or was killed while executing a task by an unexpected "
                               "system error in the docs\nbut my job is fine\n")
    assert not [d for d in deaths if d.pid is not None], deaths


# A lone CUDA out-of-memory line naming "(GPU 0; ...)" was read as rank 0's (the rank inferred from the GPU: one
# process per GPU) in an input that shows no launcher of one process per GPU (openpifpaf/openpifpaf#265's shape;
# another GPU and sizes here): the GPU of one process's OOM is a device, not a rank
def test_a_lone_oom_names_its_gpu_not_a_rank() -> None:
    result = report("Epoch 4: 37% 112/300 [01:02<01:45]",
                    "RuntimeError: CUDA out of memory. Tried to allocate 1.25 GiB (GPU 2; 23.69 GiB total capacity; "
                    "20.11 GiB already allocated; 512.00 MiB free; 21.30 GiB reserved in total by PyTorch)")
    assert result.verdict.kind.value == "exception", result.verdict.summary
    assert not result.verdict.culprit_ranks, result.verdict.summary


def test_an_oom_under_a_launcher_of_one_process_per_gpu_still_names_its_rank() -> None:
    result = report("RuntimeError: CUDA out of memory. Tried to allocate 1.25 GiB (GPU 2; 23.69 GiB total capacity; "
                    "20.11 GiB already allocated; 512.00 MiB free; 21.30 GiB reserved in total by PyTorch)",
                    "WARNING:torch.distributed.elastic.multiprocessing.api:Sending process 4410 closing signal SIGTERM")
    assert result.verdict.culprit_ranks == (2,), result.verdict.summary
