"""Failure lines: one parser for report, postmortem and the agent (formats from PyTorch, NCCL,
CUDA and glibc as they appear in public bug reports)."""

from __future__ import annotations

import pytest

from triage.parsing.crashlog import CrashLineKind, crash_log_facts, parse_crash_line

CASES = [
    (("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 5 has a total capacity of "
     "79.10 GiB of which 1.06 GiB is free."), CrashLineKind.CUDA_OOM, False),
    ("RuntimeError: CUDA error: an illegal memory access was encountered", CrashLineKind.CUDA_ERROR, False),
    (("Exception raised from c10_cuda_check_implementation at ../c10/cuda/CUDAException.cpp:43 (most recent call "
     "first):"), CrashLineKind.CUDA_ERROR, False),
    ("terminate called after throwing an instance of 'c10::Error'", CrashLineKind.TERMINATE, False),
    (("[E ProcessGroupNCCL.cpp:1414] [PG 2 Rank 3] Process group watchdog thread terminated with exception: CUDA "
     "error: an illegal memory access was encountered"), CrashLineKind.CUDA_ERROR, False),
    ("Fatal Python error: Segmentation fault", CrashLineKind.FATAL_SIGNAL, False),
    (("torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:275, "
     "remote process exited or there was a network error, NCCL version 2.20.5"), CrashLineKind.NETWORK, False),
    ("NET/IB : Got completion from peer 10.0.0.5<50532> with status=12 opcode=0 len=0 vendor err 129",
     CrashLineKind.NETWORK, False),
    (("RuntimeError: [1] is setting up NCCL communicator and retrieving ncclUniqueId from [0] via c10d key-value "
     "store by key '0', but store->get('0') got error: Connection reset by peer"), CrashLineKind.NETWORK, False),
    ("ValueError: Expected input batch_size (32) to match target batch_size (16).", CrashLineKind.EXCEPTION, False),
    ("torch.distributed.elastic.multiprocessing.errors.ChildFailedError:", CrashLineKind.EXCEPTION, True),
    (("RuntimeError: [Rank 3] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=5, OpType=ALLREDUCE, "
     "NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600328 milliseconds before timing out."),
     CrashLineKind.EXCEPTION, True),
]


@pytest.mark.parametrize(("line", "kind", "collateral"), CASES)
def test_failure_lines_are_classified(line: str, kind: CrashLineKind, collateral: bool) -> None:
    parsed = parse_crash_line(line)
    assert parsed is not None
    assert (parsed.kind, parsed.collateral) == (kind, collateral)


def test_a_watchdog_that_gave_up_on_a_timeout_is_never_a_root_failure() -> None:
    parsed = parse_crash_line("what():  [PG 0 Rank 1] Process group watchdog thread terminated with exception: [Rank 1] "
                              "Watchdog caught collective operation timeout: WorkNCCL(SeqNum=5, OpType=ALLREDUCE, "
                              "Timeout(ms)=600000) ran for 600328 milliseconds before timing out.")
    assert parsed is None or parsed.collateral


def test_the_gpu_and_the_peer_are_read_when_the_line_names_them() -> None:
    oom = parse_crash_line("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 3 has a "
                           "total capacity of 79.15 GiB")
    assert oom is not None and oom.gpu == 3
    net = parse_crash_line("NET/IB : Got completion from peer 10.0.0.5<50532> with status=12 opcode=0")
    assert net is not None and net.peer == "10.0.0.5<50532>"


@pytest.mark.parametrize("line", ["step 100 loss 2.31", "  File \"train.py\", line 3, in <module>",
                                  "NCCL INFO Channel 00/02 :    0   1", "", "x" * 30000])
def test_ordinary_lines_are_no_failure(line: str) -> None:
    assert parse_crash_line(line) is None


def test_crash_log_facts_read_a_crashed_process_tail() -> None:
    facts = crash_log_facts(
        "terminate called after throwing an instance of 'c10::DistBackendError'\n"
        "  what():  [PG 0 Rank 1] Process group watchdog thread terminated with exception: [Rank 1] Watchdog "
        "caught collective operation timeout\nFatal Python error: Aborted\n")
    assert facts.terminate_type == "c10::DistBackendError"
    assert facts.watchdog_abort and facts.fatal_is_signal
    assert crash_log_facts("").last_exception is None


def test_nccl_closed_by_remote_peer_is_a_network_failure() -> None:
    old = parse_crash_line("node3:141:158 [0] include/socket.h:416 NCCL WARN Net : Connection closed by remote peer")
    new = parse_crash_line("node3:141:158 [0] misc/socket.cc:49 NCCL WARN socketProgress: Connection closed by remote "
                           "peer node4<57557>")
    assert old is not None and old.kind is CrashLineKind.NETWORK
    assert new is not None and new.kind is CrashLineKind.NETWORK and new.peer == "node4<57557>"


def test_processgroupnccl_taking_its_process_down_is_a_collateral_failure() -> None:
    # PKU-YuanGroup/UniWorld#46's class: the line that says what failed is cut from the paste
    line = parse_crash_line("[E ProcessGroupNCCL.cpp:455] Some NCCL operations have failed or timed out. Due to "
                            "the asynchronous nature of CUDA kernels, subsequent GPU operations might run on "
                            "corrupted/incomplete data.")
    assert line is not None and line.collateral
    assert line.kind is CrashLineKind.NCCL_ERROR
    down = parse_crash_line("[E ProcessGroupNCCL.cpp:461] To avoid data inconsistency, we are taking the entire "
                            "process down.")
    assert down is not None and down.collateral


@pytest.mark.parametrize(("line", "signal"), [
    ("Epoch 3:  41%|████      | 812/1980 [07:12<10:22,  1.88it/s, loss=0.912]Killed", "SIGKILL"),
    ("100%|██████████| 64/64 [00:03<00:00, 18.2it/s]Aborted (core dumped)", "SIGABRT"),
    ("ERROR: Unexpected bus error encountered in worker. This might be caused by insufficient shared memory (shm).",
     "SIGBUS"),
])
def test_a_death_the_shell_printed_after_an_unterminated_progress_bar_is_a_fatal_signal(line: str,
                                                                                         signal: str) -> None:
    crash = parse_crash_line(line)
    assert crash is not None and crash.kind is CrashLineKind.FATAL_SIGNAL and crash.signal == signal
    assert not crash.collateral


def test_killed_inside_a_sentence_is_not_a_death() -> None:
    assert parse_crash_line("worker 3 was Killed") is None
    assert parse_crash_line("the job in [pool] Killed") is None


@pytest.mark.parametrize("line", [
    "[rank4]:[E0311 04:02:11.3 ProcessGroupNCCL.cpp:733] Stack trace of the failed collective:",
    ("[E0311 04:02:11.4 ProcessGroupNCCL.cpp:1914] [PG ID 0 PG GUID 0(default_pg) Rank 2] Received a dump signal due "
    "to a collective timeout from  rank 5 and we will try our best to dump the debug info."),
    "[E ProcessGroupNCCL.cpp:1153] [PG 2 Rank 1] ProcessGroupNCCL preparing to dump debug info.",
    "[E ProcessGroupNCCL.cpp:1025] [PG 0 Rank 3] Future for ProcessGroup abort timed out after 600000 ms",
    ("[E0311 04:02:11.5 ProcessGroupNCCL.cpp:1895] [PG ID 0 PG GUID 0(default_pg) Rank 3] Process group watchdog "
    "thread terminat"),
])
def test_processgroupnccls_failure_handling_lines_are_collateral_failures(line: str) -> None:
    crash = parse_crash_line(line)
    assert crash is not None and crash.collateral


def test_a_fatal_glog_line_of_processgroupnccl_is_an_abort() -> None:
    crash = parse_crash_line("[F0311 04:10:11.385461578 ProcessGroupNCCL.cpp:1554] [PG ID 0 PG GUID 0(default_pg) "
                             "Rank 2] [PG ID 0 PG GUID 0(default_pg) Rank 2] Heartbeat monitor timed out!")
    assert crash is not None and crash.signal == "SIGABRT" and crash.collateral
    assert parse_crash_line("[F] not a glog line") is None


def test_gloo_full_mesh_failure_is_a_network_failure() -> None:
    line = parse_crash_line("Gloo connectFullMesh failed with [../third_party/gloo/gloo/transport/tcp/pair.cc:144] "
                            "no error")
    assert line is not None and line.kind is CrashLineKind.NETWORK


# PyTorch 1.x (THC) told a CUDA error in its own words: the raise ("cuda runtime error (N) : what at file:line") is a
# CUDA error like the modern "CUDA error: what", its code 2 an out-of-memory; the "THCudaCheck FAIL" print before the
# raise is only its herald (the raise may be caught: THCGeneral.cpp's start-up 'error=11 : invalid argument', the run going on)
@pytest.mark.parametrize(("line", "kind", "collateral"), [
    ("RuntimeError: cuda runtime error (59) : device-side assert triggered at "
     + "/opt/conda/aten/src/THC/generic/THCTensorMathPointwise.cu:265", CrashLineKind.CUDA_ERROR, False),
    ("cuda runtime error (39) : uncorrectable ECC error encountered at /pytorch/aten/src/THC/THCCachingHostAllocator"
     + ".cpp:265", CrashLineKind.CUDA_ERROR, False),
    ("RuntimeError: cuda runtime error (2) : out of memory at /b/aten/src/THC/generic/THCStorage.cu:58",
     CrashLineKind.CUDA_OOM, False),
    ("THCudaCheck FAIL file=/b/aten/src/THC/generic/THCStorage.cu line=58 error=2 : out of memory",
     CrashLineKind.CUDA_OOM, False),
    # (ayooshkathuria/pytorch-yolo-v3#88's line, a Windows build's path)
    ("THCudaCheck FAIL file=..\\aten\\src\\THC\\THCGeneral.cpp line=87 error=30 : unknown error",
     CrashLineKind.CUDA_ERROR, True),
])
def test_thc_era_cuda_errors_are_cuda_errors(line: str, kind: CrashLineKind, collateral: bool) -> None:
    found = parse_crash_line(line)
    assert found is not None and (found.kind, found.collateral) == (kind, collateral), found


@pytest.mark.parametrize("line", [
    "RuntimeError: cuda runtime error (101) : invalid device ordinal at /b/THCGeneral.cpp:7",
    # (no GPU would take the process: an error at device selection too, session 55)
    ("RuntimeError: cuda runtime error (46) : all CUDA-capable devices are busy or unavailable at "
    "/opt/conda/aten/src/THC/THCGeneral.cpp:51")])
def test_a_thc_device_selection_error_stays_a_launch_setup_error(line: str) -> None:
    found = parse_crash_line(line)
    assert found is not None and found.kind is CrashLineKind.EXCEPTION
