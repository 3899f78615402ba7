"""Launchers', frameworks' and libraries' own failure lines, second pass (issue 23 item 3): read from their sources'
formats (NCCL's net transports and proxy service, Ascend HCCL's notify wait, ...), each tested on a variant written
here (other ranks, sizes, addresses, ops and groups than any report's)."""

from __future__ import annotations

from tests.helpers.report import report_lines as report
from triage.model import Report
from triage.parsing.crashlog import CrashLineKind, parse_crash_line
from triage.parsing.desync import parse_hccl_waits


def verdict(result: Report) -> tuple[str, list[int]]:
    return result.verdict.kind.value, sorted(result.verdict.culprit_ranks)


# NCCL's net transports check each send against the receive its peer posted (net_ib.cc, the socket and plugin
# transports alike): "collective mismatch error, local size X remote size Y" is the ranks' calls differing, not the
# network, whether PyTorch's exception carries it ("Last error:") or only NCCL's WARN line says it
def test_nccls_size_check_in_the_last_error_is_a_size_mismatch_not_a_network_error() -> None:
    result = report(
        "[rank5]: Traceback (most recent call last):",
        '[rank5]:   File "/srv/fit.py", line 140, in step',
        "[rank5]:     dist.all_gather_into_tensor(out, shard)",
        "[rank5]: torch.distributed.DistBackendError: NCCL error in: /pytorch/torch/csrc/distributed/c10d/"
        "ProcessGroupNCCL.cpp:3401, invalid usage (run with NCCL_DEBUG=WARN for details), NCCL version 2.23.4",
        "[rank5]: ncclInvalidUsage: This usually reflects invalid usage of NCCL library.",
        "[rank5]: Last error:",
        "[rank5]: NET/IB : req 2/4 tag 11 peer 192.168.7.31<60211> collective mismatch error, local size 8388608 "
        "remote size 4194304")
    assert verdict(result) == ("collective_mismatch", []), result.verdict.summary
    assert result.verdict.subkind is not None and result.verdict.subkind.value == "size"
    assert "8388608" in result.verdict.summary and "4194304" in result.verdict.summary
    assert "192.168.7.31" in result.verdict.summary and "rank 5" in result.verdict.summary


def test_nccls_size_check_in_a_warn_line_alone_names_its_process() -> None:
    result = report(
        "gpu-b7:7001:7001 [2] NCCL INFO comm 0x61a0 rank 6 nranks 8 cudaDev 2 nvmlDev 2 busId 41000 commId 0x4e21 - "
        "Init COMPLETE",
        "gpu-b7:7001:7090 [2] transport/net_socket.cc:530 NCCL WARN NET/Socket : req 0/1 tag 5 peer "
        "10.9.0.4<33310> collective mismatch error, local size 1024 remote size 512",
        "gpu-b7:7001:7090 [2] proxy.cc:1002 NCCL WARN [Proxy Thread] Unexpected error 5 in ncclProxyProgress")
    assert verdict(result) == ("collective_mismatch", []), result.verdict.summary
    assert "rank 6" in result.verdict.summary and "10.9.0.4" in result.verdict.summary
    line = parse_crash_line("NCCL WARN NET/IB : req 0/1 tag 3 peer 10.0.0.5<40112> collective mismatch error, "
                            "local size 65536 remote size 32768")
    assert line is not None and line.kind is CrashLineKind.NCCL_ERROR


def test_nccls_size_check_of_no_known_rank_is_still_a_mismatch() -> None:
    result = report("n4:551:600 [0] transport/net_ib.cc:1121 NCCL WARN NET/IB : req 0/1 tag 9 peer 10.2.2.2<4242> "
                    "collective mismatch error, local size 2048 remote size 1024")
    assert result.verdict.kind.value == "collective_mismatch", result.verdict.summary
    assert "n4" in result.verdict.summary


# NCCL's proxy service: "[Proxy Service 10] Failed to execute operation Connect from rank 14, retcode 6": the proxy
# of rank 10 failed what it ran for rank 14 (of the communicator); the result code says what kind of failure
def test_nccls_proxy_service_failure_names_the_rank_it_ran_for() -> None:
    result = report(
        "hostq:4411:4411 [1] NCCL INFO comm 0x7a10 rank 3 nranks 8 cudaDev 1 nvmlDev 1 busId 2c000 commId 0x33ef - "
        "Init START",
        "hostq:4411:4502 [1] proxy.cc:1521 NCCL WARN [Proxy Service 3] Failed to execute operation Connect from rank "
        "2, retcode 6")
    assert verdict(result) == ("network_error", []), result.verdict.summary
    assert "rank 2 of the communicator" in result.verdict.summary
    line = parse_crash_line("NCCL WARN [Proxy Service 0] Failed to execute operation Setup from rank 1, retcode 3")
    assert line is not None and line.kind is CrashLineKind.NCCL_ERROR and "ncclInternalError" in line.text
    line = parse_crash_line("NCCL WARN [Proxy Service 0] Failed to execute operation Connect from rank 1, retcode 2")
    assert line is not None and line.kind is CrashLineKind.NETWORK


def test_nccls_proxy_failure_as_the_last_error_says_whose_log_settles_it() -> None:
    result = report(
        "[rank12]: torch.distributed.DistBackendError: NCCL error in: /pytorch/torch/csrc/distributed/c10d/"
        "NCCLUtils.hpp:317, remote process exited or there was a network error, NCCL version 2.21.5",
        "[rank12]: ncclRemoteError: A call failed possibly due to a network error or a remote process exiting "
        "prematurely.",
        "[rank12]: Last error:",
        "[rank12]: [Proxy Service 12] Failed to execute operation Connect from rank 13, retcode 6")
    assert result.verdict.kind.value == "network_error", result.verdict.summary
    assert "rank 13 of the communicator" in result.verdict.summary


# Ascend HCCL's notify wait (EI0002) on the world group: its ranks are global ones, and the remote rank that never
# sent its record is the rank that did not reach the collective; another group's ranks are that group's (no blame)
def _hccl(me: int, remote: int, group: str, op: str = "AllReduce") -> str:
    return (f"EI0002: [PID: 3{me}11] 2026-02-03-01:02:03.456.789 The wait execution of the Notify register times out. "
            f"Reason: The Notify register has not received the Notify record from remote rank: [{remote}]. base "
            f"information: [streamID:[2], taskID[77], taskType[Notify Wait], tag[{op}_{group}]]. task information: "
            f"[notify id:[0x0000000100000031], stage:[0], remote rank:[{remote}]]. group information: "
            f"[group:[{group}], user define information[Unspecified], rankSize[16], rankId[{me} {remote}]]")


def test_hccls_world_group_wait_names_the_rank_that_never_came() -> None:
    result = report("[ERROR] 2026-02-03-01:02:03 (PID:3911, Device:1, RankID:9) ERR00100 PTA call acl api failed.",
                    _hccl(9, 12, "hccl_world_group", "Broadcast"))
    assert verdict(result) == ("missing_rank", [12]), result.verdict.summary
    assert "broadcast" in result.verdict.summary


def test_hccls_waits_in_a_ring_blame_the_rank_no_one_heard_from_that_does_not_wait() -> None:
    [lag] = parse_hccl_waits("\n".join([_hccl(3, 2, "hccl_world_group"), _hccl(4, 3, "hccl_world_group"),
                                        _hccl(5, 4, "hccl_world_group")]))
    assert lag.ranks == (2,)
    assert parse_hccl_waits("\n".join([_hccl(0, 1, "hccl_world_group"), _hccl(1, 0, "hccl_world_group")])) == []


def test_hccls_wait_in_another_group_blames_no_global_rank() -> None:
    result = report(_hccl(2, 6, "group_name_31", "AllGather"))
    assert result.verdict.kind.value == "hang", result.verdict.summary
    assert result.verdict.culprit_ranks == ()


# A launcher's record that only tells an exit code of no known rank (DeepSpeed's launcher, torchx's app status, a
# torchelastic record without its rank) says less than the failed process's own failure line of no known rank above
# it: that line is the first failure, the record its echo
def test_deepspeeds_exit_record_after_a_process_traceback_of_no_rank_is_its_echo() -> None:
    result = report(
        "n7: Traceback (most recent call last):",
        'n7:   File "/w/sft.py", line 88, in <module>',
        "n7:     trainer.train()",
        "n7: KeyError: 'labels'",
        "n7: [2026-02-01 10:00:00,100] [INFO] [launch.py:319:sigkill_handler] Killing subprocess 9001",
        "n7: [2026-02-01 10:00:00,200] [ERROR] [launch.py:325:sigkill_handler] ['/usr/bin/python3', '-u', 'sft.py', "
        "'--local_rank=3'] exits with return code = 1")
    assert result.verdict.kind.value == "exception", result.verdict.summary
    assert "KeyError: 'labels'" in result.verdict.summary


def test_torchx_status_after_a_replicas_traceback_is_its_echo() -> None:
    result = report(
        "trainer/2 [1]:Traceback (most recent call last):",
        'trainer/2 [1]:  File "/app/fit.py", line 31, in <module>',
        "trainer/2 [1]:ZeroDivisionError: division by zero",
        "    Roles:",
        "     *trainer[2]:FAILED (exitcode: 1)",
        "        timestamp: 2026-02-01 10:00:00",
        "        hostname: gpu-q2")
    assert "ZeroDivisionError" in result.verdict.summary, result.verdict.summary


def test_an_exit_record_of_a_signal_stays_the_first_failure() -> None:
    result = report(
        "n7: WARNING: dataset shard 4 is empty",
        "n7: [2026-02-01 10:00:00,200] [ERROR] [launch.py:325:sigkill_handler] ['/usr/bin/python3', '-u', 'sft.py', "
        "'--local_rank=0'] exits with return code = -9")
    assert result.verdict.kind.value == "crash", result.verdict.summary


# vLLM's engine cores, "(EngineCore_DP2 pid=5120) ...": the tag names the engine of a data-parallel rank, not a rank
# of the model's groups; a failure on its lines says which engine it was
def test_a_failure_in_vllms_engine_core_says_which_data_parallel_engine() -> None:
    result = report(
        "(EngineCore_DP0 pid=5110) INFO 02-01 10:00:00 [core.py:71] Initializing a V1 LLM engine",
        "(EngineCore_DP2 pid=5120) ERROR 02-01 10:05:00 [core.py:700] EngineCore encountered a fatal error.",
        "(EngineCore_DP2 pid=5120) ERROR 02-01 10:05:00 [core.py:700] Traceback (most recent call last):",
        '(EngineCore_DP2 pid=5120) ERROR 02-01 10:05:00 [core.py:700]   File "/vllm/v1/engine/core.py", line 691, '
        "in run_engine_core",
        "(EngineCore_DP2 pid=5120) ERROR 02-01 10:05:00 [core.py:700] AssertionError: num_tokens exceeds the budget",
        "ERROR 02-01 10:05:01 [core_client.py:564] Engine core proc EngineCore_DP2 died unexpectedly, shutting down "
        "client.")
    assert result.verdict.kind.value == "exception", result.verdict.summary
    assert result.verdict.culprit_ranks == ()
    assert "AssertionError" in result.verdict.summary and "EngineCore_DP2" in result.verdict.summary


# pdsh runs DeepSpeed's launch over several nodes: a CUDA OOM line's GPU there is a local rank on its node, never
# taken for the global rank
def test_an_oom_under_pdsh_names_its_host_not_a_rank_inferred_from_its_gpu() -> None:
    result = report(
        "[2026-02-01 09:00:00,000] [INFO] [runner.py:607:main] cmd = pdsh -S -f 1024 -w n1,n2 export X=1; cd /w; "
        "python -u -m deepspeed.launcher.launch --node_rank=%n sft.py",
        "n2: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 3 has a total capacity of "
        "79.1 GiB of which 0.50 GiB is free.")
    assert result.verdict.culprit_ranks == (), result.verdict.summary
    assert "n2" in result.verdict.summary
