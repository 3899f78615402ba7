"""Classes of real pasted logs found by round 17 of the real-world corpus (a store port already taken, NCCL's
shared-memory transport, a launcher that cannot ssh to a node, a CUDA error that says the process has no such GPU,
a backend that lacks a collective), each tested on a variant written here (other hosts, ports, ranks, sizes and
wordings than the cases' own lines)."""

from __future__ import annotations

from tests.helpers.report import report_lines as report
from triage.parsing.crashlog import CrashLineKind, parse_crash_line


def test_a_store_port_already_taken_is_a_network_set_up_failure_not_an_exception() -> None:
    result = report(
        "Traceback (most recent call last):",
        '  File "/opt/venv/lib/python3.9/site-packages/torch/distributed/rendezvous.py", line 189, in _create_c10d_store',
        "    return TCPStore(",
        "RuntimeError: The server socket has failed to listen on any local network address. The server socket has "
        "failed to bind to [::]:23456 (errno: 98 - Address already in use).")
    assert result.verdict.kind.value == "network_error"
    assert "MASTER_PORT" in result.verdict.summary


def test_the_c10d_warnings_of_a_taken_port_are_told_without_an_exception_line() -> None:
    result = report(
        "[W socket.cpp:426] [c10d] The server socket has failed to bind to [::]:29511 (errno: 98 - Address already "
        "in use).",
        "[W socket.cpp:426] [c10d] The server socket has failed to bind to 0.0.0.0:29511 (errno: 98 - Address "
        "already in use).",
        "[E socket.cpp:462] [c10d] The server socket has failed to listen on any local network address.")
    assert result.verdict.kind.value == "network_error"
    line = parse_crash_line("torch.distributed.DistNetworkError: The server socket has failed to listen on any local "
                            "network address. port: 29512, useIpv6: false, code: -98, name: EADDRINUSE, message: "
                            "address already in use")
    assert line is not None and line.kind is CrashLineKind.NETWORK


def test_nccls_shared_memory_segment_failure_is_a_set_up_failure_of_the_node_not_refused() -> None:
    result = report(
        "gpu-a:4411:4502 [2] misc/shmutils.cc:71 NCCL WARN Error: failed to extend /dev/shm/nccl-Ab12Cd to 9637892 "
        "bytes",
        "gpu-a:4411:4502 [2] misc/shmutils.cc:112 NCCL WARN Error while creating shared memory segment "
        "/dev/shm/nccl-Ab12Cd (size 9637888)",
        "gpu-a:4411:4502 [2] NCCL INFO transport/shm.cc:114 -> 2")
    assert result.verdict.kind.value == "network_error"
    assert result.verdict.culprit_ranks == ()
    assert "shm" in result.verdict.summary


def test_the_shared_memory_failure_quoted_in_a_sentence_is_read() -> None:
    result = report("Training stops at start-up with `Error while attaching to shared memory segment "
                    "/dev/shm/nccl-QxY7 (size 11534336)` on the second machine.")
    assert result.verdict.kind.value == "network_error"


def test_a_node_the_launcher_cannot_reach_over_ssh_is_named_as_the_culprit_host() -> None:
    result = report(
        "subprocess.CalledProcessError: Command 'ssh -o PasswordAuthentication=no worker-3 hostname' returned "
        "non-zero exit status 255.",
        "",
        "During handling of the above exception, another exception occurred:",
        "",
        "RuntimeError: Using hostfile at /etc/ds/hosts but host=worker-3 was not reachable via ssh. If you are running "
        "with a single node please remove /etc/ds/hosts or setup passwordless ssh.")
    assert result.verdict.kind.value == "network_error"
    assert result.verdict.culprit_host == "worker-3"


def test_pdsh_telling_an_ssh_failure_names_that_node() -> None:
    result = report("pdsh@head-0: worker-2: ssh exited with exit code 255")
    assert result.verdict.kind.value == "network_error"
    assert result.verdict.culprit_host == "worker-2"


def test_an_invalid_device_ordinal_is_a_launch_misconfiguration_of_that_rank_not_a_gpu_crash() -> None:
    result = report("[rank5]: RuntimeError: CUDA error: invalid device ordinal",
                    "[rank5]: CUDA kernel errors might be asynchronously reported at some other API call, so the "
                    "stacktrace below might be incorrect.")
    assert result.verdict.kind.value == "exception"
    assert result.verdict.culprit_ranks == (5,)
    assert "CUDA_VISIBLE_DEVICES" in result.verdict.summary


def test_two_processes_invalid_device_ordinal_glued_together_is_no_crash() -> None:
    result = report("RuntimeErrorRuntimeError: : CUDA error: invalid device ordinalCUDA error: invalid device ordinal",
                    "Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.")
    assert result.verdict.kind.value == "exception"


def test_the_error_retyped_in_lower_case_is_read_not_refused() -> None:
    result = report("after a few seconds it fails with `runtimeerror: cuda error: invalid device ordinal` on every run")
    assert result.verdict.kind.value == "exception"
    line = parse_crash_line("RuntimeError: CUDA error: no CUDA-capable device is detected")
    assert line is not None and line.kind is CrashLineKind.EXCEPTION


def test_a_backend_that_lacks_the_collective_is_an_exception_even_when_quoted() -> None:
    result = report(
        'Running with the gloo backend I get "ProcessGroupGloo does not support reduce_scatter" every time.',
        "Traceback (most recent call last):",
        '  File "train.py", line 88, in <module>',
        "    dist.reduce_scatter(out, chunks)",
        '  File "/usr/lib/python3/site-packages/torch/distributed/distributed_c10d.py", line 2512, in reduce_scatter')
    assert result.verdict.kind.value == "exception"
    assert "does not support reduce_scatter" in result.verdict.summary
